//! Driving handlers in process with requests built from `events/` files.

use lambda_http::{Body, Request, Response};
use serde_json::{Value, json};

use crate::events;

/// An API Gateway v2 event from `events/<name>.json`, adjusted.
#[derive(Debug, Clone)]
pub struct Event(pub Value);

impl Event {
    pub fn load(name: &str) -> Self {
        Self(events::load(name))
    }

    /// The event of `function`'s route, `events/<name>.json`.
    pub fn of(function: &user_service::catalog::Function) -> Self {
        Self::load(function.name)
    }

    /// As `sub`, with a token issued just now (`iat`) whose user signed in
    /// just now (`auth_time`): the routes that need a recent sign-in admit it.
    /// `signed_in_at` then moves the sign-in alone, as a refresh does.
    pub fn caller(mut self, sub: &str) -> Self {
        let now = user_service::domain::Timestamp::now().unix_seconds();
        let claims = &mut self.0["requestContext"]["authorizer"]["jwt"]["claims"];
        claims["sub"] = json!(sub);
        claims["iat"] = json!(now.to_string());
        self.signed_in_at(now)
    }

    /// A token whose user signed in at `unix_seconds` (`auth_time`), as an
    /// HTTP API passes the claim: a string.
    pub fn signed_in_at(mut self, unix_seconds: i64) -> Self {
        self.0["requestContext"]["authorizer"]["jwt"]["claims"]["auth_time"] = json!(unix_seconds.to_string());
        self
    }

    /// A token without `auth_time`.
    pub fn without_auth_time(mut self) -> Self {
        if let Some(claims) = self.0["requestContext"]["authorizer"]["jwt"]["claims"].as_object_mut() {
            claims.remove("auth_time");
        }
        self
    }

    pub fn groups(mut self, groups: &str) -> Self {
        self.0["requestContext"]["authorizer"]["jwt"]["claims"]["cognito:groups"] = json!(groups);
        self
    }

    pub fn no_groups(mut self) -> Self {
        if let Some(claims) = self.0["requestContext"]["authorizer"]["jwt"]["claims"].as_object_mut() {
            claims.remove("cognito:groups");
        }
        self
    }

    pub fn anonymous(mut self) -> Self {
        if let Some(ctx) = self.0["requestContext"].as_object_mut() {
            ctx.remove("authorizer");
        }
        self
    }

    pub fn body(mut self, body: Value) -> Self {
        self.0["body"] = json!(body.to_string());
        self
    }

    pub fn raw_body(mut self, body: &str) -> Self {
        self.0["body"] = json!(body);
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.0["headers"][name] = json!(value);
        self
    }

    pub fn without_header(mut self, name: &str) -> Self {
        if let Some(h) = self.0["headers"].as_object_mut() {
            h.remove(name);
        }
        self
    }

    pub fn path_param(mut self, name: &str, value: &str) -> Self {
        self.0["pathParameters"][name] = json!(value);
        self
    }

    pub fn query(self, name: &str, value: &str) -> Self {
        self.queries(&[(name, value)])
    }

    /// Exactly `params` as the query, in order (none: no query at all).
    pub fn queries(mut self, params: &[(&str, &str)]) -> Self {
        if params.is_empty() {
            return self.no_query();
        }
        // RFC 3986's unreserved characters stay; everything else is escaped.
        const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'.')
            .remove(b'_')
            .remove(b'~');
        let mut map = serde_json::Map::new();
        let mut raw = Vec::new();
        for (name, value) in params {
            map.insert((*name).to_owned(), json!(value));
            raw.push(format!(
                "{name}={}",
                percent_encoding::utf8_percent_encode(value, ESCAPED)
            ));
        }
        self.0["queryStringParameters"] = serde_json::Value::Object(map);
        self.0["rawQueryString"] = json!(raw.join("&"));
        self
    }

    pub fn no_query(mut self) -> Self {
        if let Some(o) = self.0.as_object_mut() {
            o.remove("queryStringParameters");
        }
        self.0["rawQueryString"] = json!("");
        self
    }

    /// The request a function's handler gets for this event, as
    /// `user_service::http::run` makes it (an undecodable base64 body dropped
    /// and marked).
    pub fn request(&self) -> Request {
        let event = serde_json::from_value(self.0.clone()).expect("an API Gateway v2 event");
        user_service::http::lambda::request_from_event(event)
    }
}

/// A response taken apart for assertions.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: lambda_http::http::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn from(response: Response<Body>) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = match response.body() {
            Body::Text(t) => serde_json::from_str(t).unwrap_or(Value::String(t.clone())),
            Body::Binary(b) => serde_json::from_slice(b).unwrap_or(Value::Null),
            _ => Value::Null,
        };
        Self { status, headers, body }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an RFC 9457 problem with this status and code.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.body["code"].as_str()),
            (status, Some(code)),
            "body: {}",
            self.body
        );
        assert_eq!(self.header("content-type"), Some("application/problem+json"));
        assert_eq!(self.body["status"], json!(status));
        for key in ["type", "title", "detail"] {
            assert!(self.body[key].is_string(), "problem has {key}: {}", self.body);
        }
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) {
        assert_eq!(self.status, status, "body: {}", self.body);
    }
}

/// The last verification code the `log` sender issued for `email_id`, among
/// JSON log lines.
pub fn logged_code(lines: &[Value], email_id: &str) -> Option<String> {
    lines
        .iter()
        .rev()
        .find(|l| l["message"] == "verification code issued" && l["email_id"] == email_id)
        .and_then(|l| l["code"].as_str().map(str::to_owned))
}
