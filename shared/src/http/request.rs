//! Reading an API Gateway v2 request into domain values. The caller comes only
//! from the JWT authorizer's claims; everything else is parsed, never trusted.

use lambda_http::http::header;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt};
use serde::de::DeserializeOwned;

use super::problem::Problem;
use crate::domain::{EmailId, Invalid, UserId};

/// Bodies larger than this are refused before parsing.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The verified identity of the request: the token's `sub` and its groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user_id: UserId,
    pub groups: Vec<String>,
}

impl Caller {
    pub fn is_in(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// The caller from `requestContext.authorizer.jwt.claims`; no claims, no caller.
pub fn caller(req: &Request) -> Result<Caller, Problem> {
    let claims = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx
            .authorizer
            .as_ref()
            .and_then(|a| a.jwt.as_ref())
            .map(|jwt| &jwt.claims),
        _ => None,
    }
    .ok_or_else(Problem::unauthenticated)?;
    // The authorizer admits access tokens only (the route scope); an ID token
    // reaching a function would be a misconfigured API, so it is refused here too.
    if claims.get("token_use").map(String::as_str) != Some("access") {
        return Err(Problem::unauthenticated());
    }
    let sub = claims.get("sub").ok_or_else(Problem::unauthenticated)?;
    let user_id = UserId::parse(sub).map_err(|_| Problem::unauthenticated())?;
    let groups = claims
        .get("cognito:groups")
        .map(|g| parse_groups(g))
        .unwrap_or_default();
    Ok(Caller { user_id, groups })
}

/// An HTTP API passes a list claim as `[admin editors]`; other issuers send a
/// JSON array (`["admin","editors"]`) or a single name. All three are accepted.
/// Names are split on whitespace only: a group named `ops,admin` is not `admin`.
pub fn parse_groups(raw: &str) -> Vec<String> {
    let raw = raw.trim();
    if let Ok(list) = serde_json::from_str::<Vec<String>>(raw) {
        return list;
    }
    let inner = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')).unwrap_or(raw);
    inner.split_whitespace().map(str::to_owned).collect()
}

/// The request id to log: Lambda's when running under Lambda, else API Gateway's.
pub fn request_id(req: &Request) -> String {
    if let Some(ctx) = req.lambda_context_ref() {
        return ctx.request_id.clone();
    }
    match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.request_id.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

fn body_bytes(req: &Request) -> &[u8] {
    match req.body() {
        Body::Empty => &[],
        Body::Text(text) => text.as_bytes(),
        Body::Binary(bytes) => bytes,
        _ => &[],
    }
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The JSON body as `T`: JSON only (415), at most 16 KiB (413), no unknown
/// fields and every value well-formed (400 naming the field).
pub fn json_body<T: DeserializeOwned>(req: &Request) -> Result<T, Problem> {
    let bytes = body_bytes(req);
    if bytes.len() > MAX_BODY_BYTES {
        return Err(Problem::payload_too_large(MAX_BODY_BYTES));
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !is_json(content_type) {
        return Err(Problem::unsupported_media_type());
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::validation("body", "a JSON object is required"));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { "body".to_owned() } else { path };
        Problem::validation(&field, describe_json_error(err.inner()))
    })?;
    // What `serde_json::from_slice` checks and a bare Deserializer does not:
    // nothing but whitespace after the value. `{..}x` or `{..}{..}` is no JSON.
    de.end()
        .map_err(|err| Problem::validation("body", describe_json_error(&err)))?;
    Ok(value)
}

/// serde_json's message without the line and column, which mean nothing to a client.
fn describe_json_error(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// A value parsed with its domain parser; errors name the field.
fn field<T>(name: &str, raw: &str, parse: impl FnOnce(&str) -> Result<T, Invalid>) -> Result<T, Problem> {
    parse(raw).map_err(|e| Problem::validation(name, e))
}

/// A required parameter from a path or query map, parsed; errors name it.
fn param<T>(
    params: Option<&lambda_http::aws_lambda_events::query_map::QueryMap>,
    name: &str,
    parse: impl FnOnce(&str) -> Result<T, Invalid>,
) -> Result<T, Problem> {
    let raw = params
        .and_then(|p| p.first(name))
        .ok_or_else(|| Problem::validation(name, "is required"))?;
    field(name, raw, parse)
}

pub fn path_param<T>(req: &Request, name: &str, parse: impl FnOnce(&str) -> Result<T, Invalid>) -> Result<T, Problem> {
    param(req.path_parameters_ref(), name, parse)
}

pub fn email_id_param(req: &Request) -> Result<EmailId, Problem> {
    path_param(req, "emailId", EmailId::parse)
}

pub fn query_param<T>(req: &Request, name: &str, parse: impl FnOnce(&str) -> Result<T, Invalid>) -> Result<T, Problem> {
    param(req.query_string_parameters_ref(), name, parse)
}

/// The version an `If-Match: "<version>"` header names. RFC 9110 compares
/// If-Match strongly: a weak tag (`W/"3"`) never matches, so it fails the
/// precondition (412) rather than passing as its strong twin.
pub fn if_match_version(req: &Request) -> Result<u64, Problem> {
    let malformed = || Problem::validation("If-Match", "must be the ETag of the profile, such as \"3\"");
    let raw = req
        .headers()
        .get(header::IF_MATCH)
        .ok_or_else(Problem::precondition_required)?
        .to_str()
        .map_err(|_| malformed())?
        .trim();
    if raw.starts_with("W/") {
        return Err(Problem::weak_etag());
    }
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|tag| !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|tag| tag.parse::<u64>().ok())
        .filter(|v| *v > 0)
        .ok_or_else(malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_in_every_form() {
        assert_eq!(parse_groups("[admin editors]"), vec!["admin", "editors"]);
        assert_eq!(parse_groups(r#"["admin","editors"]"#), vec!["admin", "editors"]);
        assert_eq!(parse_groups("admin"), vec!["admin"]);
        assert_eq!(parse_groups("[]"), Vec::<String>::new());
        assert_eq!(parse_groups(""), Vec::<String>::new());
        // Commas are part of a name: `ops,admin` is one group, not admin.
        assert_eq!(parse_groups("[ops,admin]"), vec!["ops,admin"]);
        assert_eq!(parse_groups("ops,admin"), vec!["ops,admin"]);
        assert_eq!(parse_groups("[ops  admin]"), vec!["ops", "admin"]);
    }

    #[test]
    fn nothing_may_follow_the_json_value() {
        let request = |body: &str| {
            lambda_http::http::Request::builder()
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::Text(body.to_owned()))
                .unwrap()
        };
        assert!(json_body::<serde_json::Value>(&request("{\"email\":\"a@b.c\"} \n")).is_ok());
        for body in ["{\"email\":\"a@b.c\"}x", "{\"email\":\"a@b.c\"}{\"email\":\"d@e.f\"}"] {
            let problem = json_body::<serde_json::Value>(&request(body)).unwrap_err();
            assert_eq!(
                (problem.code, problem.field.as_deref()),
                ("VALIDATION_FAILED", Some("body"))
            );
        }
    }

    #[test]
    fn json_content_types() {
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/merge-patch+json"));
        assert!(!is_json("text/plain"));
        assert!(!is_json(""));
    }
}
