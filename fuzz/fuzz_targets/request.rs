//! Every HTTP route's request parsing, as its handler runs it (the caller
//! first, then the route module's `parse`), on events built the way API
//! Gateway builds them: body, headers, content type, isBase64Encoded, path and
//! query parameters. The routes are the list the service dispatches through
//! (`api::routes::ROUTES`), so a new route is fuzzed with no change here. The
//! outcome is the route's domain values or a stable 4xx problem+json; never a
//! panic, never a 5xx. What is admitted is checked against the input by each
//! route module's `admitted` (built with `--cfg fuzzing`).
#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use fuzz_support::{EventSpec, assert_parsing_problem};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde_json::{Map, Value};
use user_service::api::routes::{ROUTES, Route};
use user_service::catalog::Trigger;
use user_service::domain::EmailId;
use user_service::http::request::MAX_BODY_BYTES;

/// The route's method and path, as the catalog declares them.
fn method_and_path(route: &dyn Route) -> (&'static str, &'static str) {
    match route.function().trigger {
        Trigger::Http { method, path, .. } => (method, path),
        _ => unreachable!("the routes' list holds HTTP routes alone"),
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
    /// Which route, by its place in the list.
    route: u8,
    content_type: ContentType,
    body: BodySpec,
    base64: bool,
    if_match: Option<IfMatch>,
    /// The `{emailId}` or `{userId}` segment; None: a fresh valid UUID.
    path_value: Option<String>,
    /// Query parameters: which of the route's (by place) and the value.
    query: Vec<(u8, String)>,
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

/// A hand-written seed (fuzz/corpus/request/*.json): one request as a client
/// would describe it. Inputs starting with `{` are read this way, all others
/// through `Arbitrary`, so both the seeds and libFuzzer's mutations count.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Seed {
    /// The route's function name (`add-email`).
    route: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    #[serde(default)]
    base64: bool,
    path: Option<String>,
    #[serde(default)]
    query: BTreeMap<String, String>,
    #[serde(default)]
    authorized: bool,
}

fuzz_target!(|data: &[u8]| {
    if data.first() == Some(&b'{') {
        if let Ok(seed) = serde_json::from_slice::<Seed>(data)
            && let Some(route) = ROUTES.iter().find(|r| r.function().name == seed.route)
        {
            run(
                *route,
                seed.headers.into_iter().collect(),
                seed.body.map(String::into_bytes),
                seed.base64,
                seed.path,
                seed.query.into_iter().collect(),
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
    let route = ROUTES[usize::from(input.route) % ROUTES.len()];
    let reads = route.reads().query;
    let query = input
        .query
        .into_iter()
        .filter(|_| !reads.is_empty())
        .map(|(at, value)| (reads[usize::from(at) % reads.len()].to_owned(), value))
        .collect();
    run(
        route,
        headers,
        body_bytes(&input.body),
        input.base64,
        input.path_value,
        query,
        input.authorized,
    );
});

fn run(
    route: &dyn Route,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    base64: bool,
    path_value: Option<String>,
    query: Vec<(String, String)>,
    authorized: bool,
) {
    let (method, raw_path) = method_and_path(route);
    let path_value = path_value.unwrap_or_else(|| EmailId::new().to_string());
    // Every `{name}` of the route's path, all given the one value.
    let path_parameters = raw_path
        .split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| (name, path_value.clone()))
        .collect();
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
    if let Err(problem) = route.parse(&req) {
        assert_parsing_problem(&problem);
    }
}
