//! Reading an API Gateway v2 request into domain values. The caller comes only
//! from the JWT authorizer's claims; everything else is parsed, never trusted.

use lambda_http::http::header;
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt};
use serde::de::DeserializeOwned;

use super::problem::Problem;
use crate::domain::{EmailId, IfMatch, Invalid, Timestamp, UserId};

/// Bodies larger than this are refused before parsing.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The verified identity of the request: the token's `sub`, its groups and
/// when its user signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's `sub`: whose account the request acts on.
    pub user_id: UserId,
    /// The token's `cognito:groups`; the admin group, with an active account, opens the admin routes.
    pub groups: Vec<String>,
    /// The token's `auth_time` (Unix seconds): when the user last proved who
    /// they are (password, MFA). Refreshing the tokens keeps it, so a stolen
    /// refresh token cannot make a sign-in recent. `None` when absent or unreadable.
    pub signed_in_at: Option<i64>,
    /// The token's `iat` (Unix seconds): when it was issued, by a sign-in or a refresh.
    pub issued_at: Option<i64>,
}

impl Caller {
    /// When the session this token belongs to signed in: `auth_time`, which a
    /// refresh keeps, else `iat`; a token with neither is from the beginning
    /// of time. A recovery refuses every session older than itself, so a
    /// refresh token that outlived Cognito's sign-out mints nothing we accept.
    pub fn session_signed_in_at(&self) -> i64 {
        self.signed_in_at.or(self.issued_at).unwrap_or(0)
    }

    /// Whether the token lists the caller in `group`.
    pub fn is_in(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// Whether the user signed in at most `window` before `now`. A token
    /// without `auth_time` never counts as recent. One from a little ahead of
    /// our clock does: Cognito signed it, and only the clocks differ.
    pub fn signed_in_within(&self, now: Timestamp, window: std::time::Duration) -> bool {
        let window = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
        self.signed_in_at
            .is_some_and(|at| now.unix_seconds().saturating_sub(at) <= window)
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
    let user_id = UserId::parse_sub(sub).map_err(|_| Problem::unauthenticated())?;
    let groups = claims
        .get("cognito:groups")
        .map(|g| parse_groups(g))
        .unwrap_or_default();
    let signed_in_at = claims.get("auth_time").and_then(|t| parse_seconds(t));
    let issued_at = claims.get("iat").and_then(|t| parse_seconds(t));
    Ok(Caller {
        user_id,
        groups,
        signed_in_at,
        issued_at,
    })
}

/// A NumericDate claim as an HTTP API passes it (`"1763721900"`); a JSON
/// number with a fraction is cut to its seconds.
fn parse_seconds(raw: &str) -> Option<i64> {
    let raw = raw.trim();
    raw.parse::<i64>()
        .ok()
        .or_else(|| raw.parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| f as i64))
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

/// Marks a request whose body was marked base64 but did not decode: the body
/// was dropped before lambda_http could panic on it (see `http::run`).
#[derive(Debug, Clone, Copy)]
pub struct UnreadableBody;

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

/// The caller's IP address as API Gateway saw it: what refusals of a
/// credential (a recovery link, a SCIM token) are counted by.
pub fn source_ip(req: &Request) -> String {
    match req.request_context_ref() {
        Some(lambda_http::request::RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// The request's body as bytes, whatever its kind.
pub fn body_bytes(req: &Request) -> &[u8] {
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

/// The path parameter `name`, required and parsed with `parse`; a 400 names it.
pub fn path_param<T>(req: &Request, name: &str, parse: impl FnOnce(&str) -> Result<T, Invalid>) -> Result<T, Problem> {
    param(req.path_parameters_ref(), name, parse)
}

/// The `{emailId}` of the path: which of the caller's addresses the route acts on.
pub fn email_id_param(req: &Request) -> Result<EmailId, Problem> {
    path_param(req, "emailId", EmailId::parse)
}

/// The query parameter `name`, required and parsed with `parse`; a 400 names it.
pub fn query_param<T>(req: &Request, name: &str, parse: impl FnOnce(&str) -> Result<T, Invalid>) -> Result<T, Problem> {
    param(req.query_string_parameters_ref(), name, parse)
}

/// At most this many entity tags in one If-Match: a client names the one
/// version it read, or a few; each becomes a value in the write's condition.
pub const MAX_IF_MATCH_TAGS: usize = 10;

/// `If-Match` as RFC 9110 (sections 8.8.3 and 13.1.1) defines it: `*`, or a
/// list of entity tags, every field of the header read as one list. A
/// well-formed tag that names no version (`"0"`, `"abc"`) matches nothing
/// (412 from the write, nothing written); a weak tag never matches, as If-Match
/// compares strongly. Only a header that is no entity tag at all is 400.
pub fn if_match(req: &Request) -> Result<IfMatch, Problem> {
    let malformed = || {
        Problem::validation(
            "If-Match",
            "must be * or a list of entity tags, such as \"3\" (the ETag of the profile)",
        )
    };
    let mut fields = req.headers().get_all(header::IF_MATCH).iter().peekable();
    if fields.peek().is_none() {
        return Err(Problem::precondition_required());
    }
    let mut elements = Vec::new();
    for field in fields {
        let text = field.to_str().map_err(|_| malformed())?;
        elements.extend(parse_if_match_list(text).ok_or_else(malformed)?);
    }
    match elements.as_slice() {
        [] => Err(malformed()),
        [IfMatchElement::Any] => Ok(IfMatch::Any),
        _ if elements.contains(&IfMatchElement::Any) => Err(malformed()),
        _ if elements.len() > MAX_IF_MATCH_TAGS => Err(Problem::validation(
            "If-Match",
            format!("must list at most {MAX_IF_MATCH_TAGS} entity tags"),
        )),
        _ => {
            let strong: Vec<&str> = elements
                .iter()
                .filter_map(|e| match e {
                    IfMatchElement::Strong(tag) => Some(tag.as_str()),
                    _ => None,
                })
                .collect();
            if strong.is_empty() {
                return Err(Problem::weak_etag());
            }
            let mut versions: Vec<u64> = strong.into_iter().filter_map(version_of_tag).collect();
            versions.sort_unstable();
            versions.dedup();
            Ok(IfMatch::Versions(versions))
        }
    }
}

/// One element of an If-Match list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IfMatchElement {
    Any,
    Strong(String),
    Weak,
}

/// The elements of one field value: `*` or `#entity-tag`, where
/// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE` and `etagc` is any visible
/// ASCII but `"` (or obs-text, which a header that is a `str` cannot hold).
/// Empty list elements are allowed, as section 5.6.1 asks of recipients.
/// `None` when it is not that grammar.
fn parse_if_match_list(text: &str) -> Option<Vec<IfMatchElement>> {
    let is_ows = |b: u8| b == b' ' || b == b'\t';
    let bytes = text.as_bytes();
    let mut elements = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && (is_ows(bytes[i]) || bytes[i] == b',') {
            i += 1;
        }
        if i == bytes.len() {
            return Some(elements);
        }
        if bytes[i] == b'*' {
            elements.push(IfMatchElement::Any);
            i += 1;
        } else {
            let weak = bytes[i..].starts_with(b"W/");
            if weak {
                i += 2;
            }
            if bytes.get(i) != Some(&b'"') {
                return None;
            }
            let start = i + 1;
            let len = bytes[start..].iter().position(|&b| b == b'"')?;
            let tag = &text[start..start + len];
            if !tag.bytes().all(|b| b == 0x21 || (0x23..=0x7e).contains(&b)) {
                return None;
            }
            elements.push(if weak {
                IfMatchElement::Weak
            } else {
                IfMatchElement::Strong(tag.to_owned())
            });
            i = start + len + 1;
        }
        // An element ends at OWS and a comma, or the end.
        while i < bytes.len() && is_ows(bytes[i]) {
            i += 1;
        }
        if i < bytes.len() && bytes[i] != b',' {
            return None;
        }
    }
}

/// The profile version an opaque tag names: the ETag is the version in
/// decimal, so `"3"` names 3; `"03"`, `"0"` and `"abc"` name none.
fn version_of_tag(tag: &str) -> Option<u64> {
    let version: u64 = tag.parse().ok().filter(|v| *v > 0)?;
    (version.to_string() == tag).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_began_at_its_sign_in_which_a_refresh_keeps() {
        let caller = |signed_in_at, issued_at| Caller {
            user_id: UserId::parse_sub("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
            groups: Vec::new(),
            signed_in_at,
            issued_at,
        };
        assert_eq!(
            caller(Some(100), Some(5_000)).session_signed_in_at(),
            100,
            "refreshed later"
        );
        assert_eq!(caller(None, Some(5_000)).session_signed_in_at(), 5_000);
        assert_eq!(caller(None, None).session_signed_in_at(), 0);
    }

    #[test]
    fn a_sign_in_is_recent_up_to_the_window_and_never_without_auth_time() {
        let now = Timestamp::from_unix_millis(1_800_000_000_000);
        let window = std::time::Duration::from_secs(600);
        let at = |signed_in_at| Caller {
            user_id: UserId::parse_sub("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
            groups: Vec::new(),
            signed_in_at,
            issued_at: None,
        };
        let secs = now.unix_seconds();
        assert!(at(Some(secs)).signed_in_within(now, window));
        assert!(at(Some(secs - 600)).signed_in_within(now, window));
        assert!(!at(Some(secs - 601)).signed_in_within(now, window));
        assert!(at(Some(secs + 30)).signed_in_within(now, window));
        assert!(!at(None).signed_in_within(now, window));
        assert!(!at(Some(i64::MIN)).signed_in_within(now, window));
    }

    #[test]
    fn auth_time_as_an_http_api_passes_it() {
        assert_eq!(parse_seconds("1763721900"), Some(1_763_721_900));
        assert_eq!(parse_seconds(" 1763721900.9 "), Some(1_763_721_900));
        assert_eq!(parse_seconds("soon"), None);
        assert_eq!(parse_seconds("NaN"), None);
        assert_eq!(parse_seconds(""), None);
    }

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

    fn if_match_of(values: &[&str]) -> Result<IfMatch, Problem> {
        let mut builder = lambda_http::http::Request::builder();
        for value in values {
            builder = builder.header(header::IF_MATCH, *value);
        }
        if_match(&builder.body(Body::Empty).unwrap())
    }

    #[test]
    fn if_match_as_rfc_9110_defines_it() {
        let versions = |v: &[u64]| Ok(IfMatch::Versions(v.to_vec()));
        assert_eq!(if_match_of(&["\"3\""]), versions(&[3]));
        assert_eq!(if_match_of(&[" \"3\" "]), versions(&[3]));
        assert_eq!(if_match_of(&["*"]), Ok(IfMatch::Any));
        // Well-formed tags that name no version match nothing: 412, not 400.
        assert_eq!(if_match_of(&["\"0\""]), versions(&[]));
        assert_eq!(if_match_of(&["\"03\""]), versions(&[]));
        assert_eq!(if_match_of(&["\"abc\""]), versions(&[]));
        assert_eq!(if_match_of(&["\"\""]), versions(&[]));
        assert_eq!(if_match_of(&["\"99999999999999999999999\""]), versions(&[]));
        // A list matches if any member does; weak members never do.
        assert_eq!(if_match_of(&["\"3\", \"4\""]), versions(&[3, 4]));
        assert_eq!(if_match_of(&["\"4\",\"3\",\"4\""]), versions(&[3, 4]));
        assert_eq!(if_match_of(&["W/\"3\", \"4\""]), versions(&[4]));
        assert_eq!(if_match_of(&["\"3\"", "\"4\""]), versions(&[3, 4]));
        assert_eq!(if_match_of(&[", \"3\" ,, "]), versions(&[3]));
        // A comma inside a tag is part of it.
        assert_eq!(if_match_of(&["\"3,4\""]), versions(&[]));
        // Only weak tags: 412 with the hint to drop W/.
        assert_eq!(if_match_of(&["W/\"3\""]).unwrap_err().status, 412);
        // Missing: 428.
        assert_eq!(if_match_of(&[]).unwrap_err().status, 428);
        // Not entity tags at all: 400.
        for bad in [
            "garbage",
            "3",
            "\"3",
            "3\"",
            "\"3\"x",
            "\"3\" \"4\"",
            "w/\"3\"",
            "W/3",
            "*, \"3\"",
            "**",
            "",
            " , ",
            "\"a b\"",
        ] {
            let problem = if_match_of(&[bad]).unwrap_err();
            assert_eq!(
                (problem.status.as_u16(), problem.code),
                (400, "VALIDATION_FAILED"),
                "{bad:?}"
            );
        }
        let many = ["\"1\""; MAX_IF_MATCH_TAGS + 1].join(", ");
        assert_eq!(if_match_of(&[&many]).unwrap_err().status, 400);
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
