//! Every HTTP route's request parsing, as its handler runs it (the caller
//! first, then `http::routes` or the request helpers), on events built the way
//! API Gateway builds them: body, headers, content type, isBase64Encoded, path
//! and query parameters. The outcome is the route's domain values or a stable
//! 4xx problem+json; never a panic, never a 5xx. What is admitted is checked
//! against the input.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use fuzz_support::{EventSpec, assert_parsing_problem};
use lambda_http::RequestExt;
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde_json::{Map, Value};
use user_service::domain::{EmailAddress, EmailId, PersonName, Phone, UserStatus};
use user_service::http::Problem;
use user_service::http::request::{MAX_BODY_BYTES, caller, email_id_param, if_match, query_param};
use user_service::http::routes;

#[derive(Arbitrary, Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum Route {
    GetProfile,
    GetAccount,
    UpdateProfile,
    ListEmails,
    AddEmail,
    SendVerification,
    VerifyEmail,
    SetPrimaryEmail,
    RemoveEmail,
    GetEmail,
    DeleteAccount,
    CheckEmail,
    ExportAccount,
    FindUserByEmail,
    ListUsers,
    SetUserStatus,
}

impl Route {
    fn method_and_path(self) -> (&'static str, &'static str) {
        match self {
            Self::GetProfile => ("GET", "/me"),
            Self::GetAccount => ("GET", "/me/account"),
            Self::UpdateProfile => ("PATCH", "/me"),
            Self::ListEmails => ("GET", "/me/emails"),
            Self::AddEmail => ("POST", "/me/emails"),
            Self::SendVerification => ("POST", "/me/emails/{emailId}/verification"),
            Self::VerifyEmail => ("POST", "/me/emails/{emailId}/verify"),
            Self::SetPrimaryEmail => ("PUT", "/me/primary-email"),
            Self::RemoveEmail => ("DELETE", "/me/emails/{emailId}"),
            Self::GetEmail => ("GET", "/me/emails/{emailId}"),
            Self::DeleteAccount => ("DELETE", "/me"),
            Self::CheckEmail => ("GET", "/emails/availability"),
            Self::ExportAccount => ("GET", "/me/export"),
            Self::FindUserByEmail => ("GET", "/admin/users"),
            Self::ListUsers => ("GET", "/admin/user-list"),
            Self::SetUserStatus => ("PUT", "/admin/users/{userId}/status"),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum ContentType {
    Json,
    JsonCharset,
    ProblemJson,
    TextPlain,
    Missing,
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum Field {
    Email,
    EmailId,
    Code,
    Status,
    FirstName,
    LastName,
    Phone,
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum JsonValue {
    Str(String),
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<String>),
    Object(Vec<(String, String)>),
}

#[derive(Arbitrary, Debug)]
enum BodySpec {
    Missing,
    /// A JSON object built from the fields routes read: reaches the domain parsers.
    Object(Vec<(Field, JsonValue)>),
    Text(String),
    Bytes(Vec<u8>),
    /// A valid-looking object padded past (or up to) the size limit.
    Large {
        pad: u16,
        email: String,
    },
}

#[derive(Arbitrary, Debug)]
enum IfMatch {
    Strong(u64),
    Weak(u64),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    route: Route,
    content_type: ContentType,
    body: BodySpec,
    base64: bool,
    if_match: Option<IfMatch>,
    /// The `{emailId}` or `{userId}` segment; None: a fresh valid UUID.
    path_value: Option<String>,
    query_email: Option<String>,
    extra_headers: Vec<(String, String)>,
    authorized: bool,
}

fn field_name(field: &Field) -> String {
    match field {
        Field::Email => "email".into(),
        Field::EmailId => "emailId".into(),
        Field::Code => "code".into(),
        Field::Status => "status".into(),
        Field::FirstName => "firstName".into(),
        Field::LastName => "lastName".into(),
        Field::Phone => "phone".into(),
        Field::Other(s) => s.clone(),
    }
}

fn json_value(value: &JsonValue) -> Value {
    match value {
        JsonValue::Str(s) => Value::String(s.clone()),
        JsonValue::Null => Value::Null,
        JsonValue::Int(i) => Value::from(*i),
        JsonValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        JsonValue::Bool(b) => Value::Bool(*b),
        JsonValue::List(items) => Value::from(items.clone()),
        JsonValue::Object(pairs) => Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect::<Map<_, _>>(),
        ),
    }
}

fn body_bytes(body: &BodySpec) -> Option<Vec<u8>> {
    match body {
        BodySpec::Missing => None,
        BodySpec::Object(fields) => {
            let object: Map<String, Value> = fields.iter().map(|(f, v)| (field_name(f), json_value(v))).collect();
            Some(Value::Object(object).to_string().into_bytes())
        }
        BodySpec::Text(text) => Some(text.clone().into_bytes()),
        BodySpec::Bytes(bytes) => Some(bytes.clone()),
        BodySpec::Large { pad, email } => {
            let spaces = " ".repeat(MAX_BODY_BYTES - 256 + usize::from(*pad % 512));
            Some(format!("{{{spaces}\"email\":{}}}", Value::String(email.clone())).into_bytes())
        }
    }
}

/// What a route reads from the request, in its handler's order.
fn parse(route: Route, req: &lambda_http::Request) -> Result<(), Problem> {
    let who = caller(req)?;
    assert!(!who.user_id.as_str().is_empty());
    match route {
        Route::GetProfile | Route::GetAccount | Route::ListEmails | Route::ExportAccount => {}
        Route::UpdateProfile => {
            let (precondition, patch) = routes::update_profile(req)?;
            if let user_service::domain::IfMatch::Versions(versions) = precondition {
                assert!(versions.iter().all(|v| *v > 0));
            }
            assert!(!patch.is_empty(), "an empty patch was admitted");
            let body = json_of(req);
            check_name(&body, "firstName", patch.first_name.as_ref());
            check_name(&body, "lastName", patch.last_name.as_ref());
            match (&patch.phone, body.get("phone")) {
                (None, None) => {}
                (Some(None), Some(Value::Null)) => {}
                (Some(Some(phone)), Some(Value::String(raw))) => {
                    assert_eq!(Phone::parse(raw).as_ref(), Ok(phone));
                }
                (p, raw) => panic!("phone {p:?} from {raw:?}"),
            }
        }
        Route::AddEmail => {
            let email = routes::add_email(req)?;
            let raw = json_of(req)["email"].as_str().map(str::to_owned).unwrap_or_default();
            assert_eq!(EmailAddress::parse(&raw).as_ref(), Ok(&email));
        }
        Route::VerifyEmail => {
            let (_, code) = routes::verify_email(req)?;
            let revealed = code.reveal();
            assert!(revealed.len() == 6 && revealed.bytes().all(|b| b.is_ascii_digit()));
        }
        Route::SetPrimaryEmail => {
            let email_id = routes::set_primary_email(req)?;
            let raw = json_of(req)["emailId"].as_str().map(str::to_owned).unwrap_or_default();
            assert_eq!(EmailId::parse(&raw), Ok(email_id));
        }
        Route::SendVerification | Route::RemoveEmail | Route::GetEmail => {
            email_id_param(req)?;
        }
        Route::DeleteAccount => {
            // Whatever parses names real versions only, at most the cap of them.
            if let user_service::domain::IfMatch::Versions(versions) = if_match(req)? {
                assert!(versions.iter().all(|v| *v > 0));
                assert!(versions.len() <= user_service::http::request::MAX_IF_MATCH_TAGS);
            }
        }
        Route::CheckEmail | Route::FindUserByEmail => {
            query_param(req, "email", EmailAddress::parse)?;
        }
        Route::ListUsers => {
            let query = routes::list_users(req)?;
            assert!((1..=user_service::http::list_query::MAX_LIMIT).contains(&query.limit));
            // A cursor accepted is one the service writes: it encodes back to itself.
            if let Some(after) = query.after {
                let cursor = user_service::http::list_query::Cursor {
                    filter: query.filter,
                    after,
                };
                let raw = req.query_string_parameters_ref().and_then(|p| p.first("cursor").map(str::to_owned));
                assert_eq!(raw.as_deref(), Some(cursor.encode().as_str()));
            }
        }
        Route::SetUserStatus => {
            let (_, status) = routes::set_user_status(req)?;
            let raw = json_of(req)["status"].as_str().map(str::to_owned).unwrap_or_default();
            assert_eq!(raw, status.as_str());
            assert!(matches!(
                status,
                UserStatus::Active | UserStatus::Suspended | UserStatus::Deleted
            ));
        }
    }
    Ok(())
}

/// The body an admitted request carried, read independently of the service.
fn json_of(req: &lambda_http::Request) -> Value {
    let bytes: &[u8] = match req.body() {
        lambda_http::Body::Text(t) => t.as_bytes(),
        lambda_http::Body::Binary(b) => b,
        _ => &[],
    };
    assert!(bytes.len() <= MAX_BODY_BYTES, "an oversized body was admitted");
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

fn check_name(body: &Value, field: &str, parsed: Option<&PersonName>) {
    match (parsed, body.get(field)) {
        (None, None) => {}
        (Some(name), Some(Value::String(raw))) => assert_eq!(PersonName::parse(raw).as_ref(), Ok(name)),
        (p, raw) => panic!("{field} {p:?} from {raw:?}"),
    }
}

/// A hand-written seed (fuzz/corpus/request/*.json): one request as a client
/// would describe it. Inputs starting with `{` are read this way, all others
/// through `Arbitrary`, so both the seeds and libFuzzer's mutations count.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Seed {
    route: Route,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    #[serde(default)]
    base64: bool,
    path: Option<String>,
    query_email: Option<String>,
    #[serde(default)]
    authorized: bool,
}

fuzz_target!(|data: &[u8]| {
    if data.first() == Some(&b'{') {
        if let Ok(seed) = serde_json::from_slice::<Seed>(data) {
            run(
                seed.route,
                seed.headers.into_iter().collect(),
                seed.body.map(String::into_bytes),
                seed.base64,
                seed.path,
                seed.query_email,
                seed.authorized,
            );
        }
        return;
    }
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut headers: Vec<(String, String)> = input
        .extra_headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect();
    let content_type = match &input.content_type {
        ContentType::Json => Some("application/json".to_owned()),
        ContentType::JsonCharset => Some("application/json; charset=utf-8".to_owned()),
        ContentType::ProblemJson => Some("application/problem+json".to_owned()),
        ContentType::TextPlain => Some("text/plain".to_owned()),
        ContentType::Missing => None,
        ContentType::Other(s) => Some(s.clone()),
    };
    if let Some(ct) = content_type {
        headers.push(("content-type".into(), ct));
    }
    match &input.if_match {
        Some(IfMatch::Strong(v)) => headers.push(("if-match".into(), format!("\"{v}\""))),
        Some(IfMatch::Weak(v)) => headers.push(("if-match".into(), format!("W/\"{v}\""))),
        Some(IfMatch::Raw(s)) => headers.push(("if-match".into(), s.clone())),
        None => {}
    }
    run(
        input.route,
        headers,
        body_bytes(&input.body),
        input.base64,
        input.path_value,
        input.query_email,
        input.authorized,
    );
});

fn run(
    route: Route,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    base64: bool,
    path_value: Option<String>,
    query_email: Option<String>,
    authorized: bool,
) {
    let (method, raw_path) = route.method_and_path();
    let path_value = path_value.unwrap_or_else(|| EmailId::new().to_string());
    let path_parameters = match route {
        Route::SendVerification | Route::VerifyEmail | Route::RemoveEmail | Route::GetEmail => {
            vec![("emailId", path_value)]
        }
        Route::SetUserStatus => vec![("userId", path_value)],
        _ => vec![],
    };
    // The admin list reads no address: the value is its cursor there, whose codec takes any text.
    let name = if matches!(route, Route::ListUsers) { "cursor" } else { "email" };
    let query = query_email.into_iter().map(|e| (name.to_owned(), e)).collect();
    let claims = authorized.then(|| {
        BTreeMap::from([
            ("sub".to_owned(), "0b6e1e0e-7c3a-4e55-9d1a-3f0c2d9a1b2c".to_owned()),
            ("token_use".to_owned(), "access".to_owned()),
            ("cognito:groups".to_owned(), "[admin]".to_owned()),
        ])
    });
    let spec = EventSpec {
        method,
        raw_path,
        path_parameters,
        query,
        headers,
        body,
        base64,
        claims,
    };
    let Some(req) = spec.to_request() else {
        return;
    };
    if let Err(problem) = parse(route, &req) {
        assert_parsing_problem(&problem);
    }
}
