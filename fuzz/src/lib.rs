//! What the fuzz targets share: an API Gateway v2 event built the way API Gateway
//! builds one, and the properties every parsing outcome must have.

use std::collections::BTreeMap;

use base64::Engine;
use lambda_http::Request;
use lambda_http::http::header;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};
use user_service::http::Problem;
use user_service::http::problem::PROBLEM_JSON;

/// The codes request parsing may answer with: each a stable 4xx.
pub const PARSING_CODES: &[(&str, u16)] = &[
    ("UNAUTHENTICATED", 401),
    ("VALIDATION_FAILED", 400),
    ("PAYLOAD_TOO_LARGE", 413),
    ("UNSUPPORTED_MEDIA_TYPE", 415),
    ("PRECONDITION_REQUIRED", 428),
    ("VERSION_MISMATCH", 412),
];

/// One HTTP API request as the fields a client and the authorizer control.
#[derive(Debug, Default, Clone)]
pub struct EventSpec<'a> {
    pub method: &'a str,
    pub raw_path: &'a str,
    pub path_parameters: Vec<(&'a str, String)>,
    /// Query parameters as the client sent them, before URL encoding.
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// API Gateway base64-encodes a body it does not take for text.
    pub base64: bool,
    /// `requestContext.authorizer.jwt.claims`; None: no authorizer ran.
    pub claims: Option<BTreeMap<String, String>>,
}

impl EventSpec<'_> {
    /// The payload-format-2.0 event API Gateway would send. A body that is not
    /// UTF-8 can only arrive base64-encoded, so it is sent that way.
    pub fn to_event(&self) -> Value {
        let query = self
            .query
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    utf8_percent_encode(k, NON_ALPHANUMERIC),
                    utf8_percent_encode(v, NON_ALPHANUMERIC)
                )
            })
            .collect::<Vec<_>>()
            .join("&");
        let headers: BTreeMap<&str, &str> = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let path_parameters: BTreeMap<&str, &str> =
            self.path_parameters.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (body, base64) = match &self.body {
            None => (Value::Null, false),
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) if !self.base64 => (Value::String(text.to_owned()), false),
                _ => (
                    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
                    true,
                ),
            },
        };
        let mut context = json!({
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "requestId": "fuzz",
            "routeKey": format!("{} {}", self.method, self.raw_path),
            "stage": "$default",
            "time": "22/Nov/2026:06:00:00 +0000",
            "timeEpoch": 1_795_000_000_000_i64,
            "http": {
                "method": self.method,
                "path": self.raw_path,
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.1",
                "userAgent": "fuzz"
            }
        });
        if let Some(claims) = &self.claims {
            context["authorizer"] = json!({ "jwt": { "claims": claims, "scopes": [] } });
        }
        json!({
            "version": "2.0",
            "routeKey": format!("{} {}", self.method, self.raw_path),
            "rawPath": self.raw_path,
            "rawQueryString": query,
            "headers": headers,
            "pathParameters": path_parameters,
            "requestContext": context,
            "body": body,
            "isBase64Encoded": base64,
        })
    }

    /// The request lambda_http hands a function, or None when the event itself
    /// cannot be read (a header API Gateway would not forward, say): such an
    /// event never reaches a handler.
    pub fn to_request(&self) -> Option<Request> {
        lambda_http::request::from_str(&self.to_event().to_string()).ok()
    }
}

/// A refusal is a stable 4xx code from the parsing set, and its response is
/// problem+json carrying that code and status: never a 5xx, never a bare error.
pub fn assert_parsing_problem(problem: &Problem) {
    let status = problem.status.as_u16();
    assert!(
        PARSING_CODES.contains(&(problem.code, status)),
        "request parsing answered {status} {}: not a parsing refusal",
        problem.code
    );
    let response = problem.clone().into_response();
    assert_eq!(response.status().as_u16(), status);
    assert_eq!(
        response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some(PROBLEM_JSON)
    );
    let body: Value = match response.body() {
        lambda_http::Body::Text(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    assert_eq!(body["code"], problem.code, "problem body without its code");
    assert_eq!(body["status"], status, "problem body without its status");
}

/// Unicode general category Cf: the invisible characters no parsed value may keep.
pub fn is_format(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    c.general_category() == GeneralCategory::Format
}

/// No control or format character survived parsing.
pub fn assert_visible(what: &str, value: &str) {
    assert!(
        !value.chars().any(|c| c.is_control() || is_format(c)),
        "{what} kept a control or format character"
    );
}
