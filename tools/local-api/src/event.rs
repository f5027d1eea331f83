//! An HTTP request as an HTTP API (payload format 2.0) event, and the
//! function's response back as HTTP.

use std::collections::{BTreeMap, HashMap};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, Uri};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::routes::{Route, percent_decode};

/// What the event needs to know about the request besides its route.
pub struct Incoming<'a> {
    pub method: &'a Method,
    pub uri: &'a Uri,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    pub source_ip: String,
    pub host: String,
}

fn is_text(content_type: &str) -> bool {
    let ct = content_type.to_ascii_lowercase();
    ct.is_empty()
        || ct.starts_with("text/")
        || ct.contains("json")
        || ct.contains("xml")
        || ct.contains("x-www-form-urlencoded")
        || ct.contains("javascript")
}

/// The event API Gateway would send for this request.
pub fn api_gateway_v2(
    route: &Route,
    path_parameters: &BTreeMap<String, String>,
    claims: &HashMap<String, String>,
    request: &Incoming<'_>,
) -> Value {
    let mut headers = serde_json::Map::new();
    let mut cookies = Vec::new();
    for name in request.headers.keys() {
        let values: Vec<&str> = request
            .headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if name == "cookie" {
            cookies.extend(values.iter().flat_map(|v| v.split("; ")).map(str::to_owned));
        } else {
            headers.insert(name.as_str().to_owned(), json!(values.join(",")));
        }
    }
    let raw_query = request.uri.query().unwrap_or_default();
    let mut query: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in raw_query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| percent_decode(&s.replace('+', " "));
        query.entry(decode(k)).or_default().push(decode(v));
    }
    let content_type = request
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let text_body = if is_text(content_type) {
        std::str::from_utf8(request.body).ok()
    } else {
        None
    };
    let (body, base64) = match (request.body.is_empty(), text_body) {
        (true, _) => (Value::Null, false),
        (false, Some(text)) => (json!(text), false),
        (false, None) => (json!(BASE64.encode(request.body)), true),
    };
    let now = time::OffsetDateTime::now_utc();
    let user_agent = headers.get("user-agent").cloned().unwrap_or(json!(""));
    let mut event = json!({
        "version": "2.0",
        "routeKey": route.key(),
        "rawPath": request.uri.path(),
        "rawQueryString": raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "authorizer": { "jwt": { "claims": claims, "scopes": null } },
            "domainName": request.host,
            "domainPrefix": request.host.split('.').next().unwrap_or_default(),
            "http": {
                "method": request.method.as_str(),
                "path": request.uri.path(),
                "protocol": "HTTP/1.1",
                "sourceIp": request.source_ip,
                "userAgent": user_agent,
            },
            "requestId": uuid::Uuid::new_v4().to_string(),
            "routeKey": route.key(),
            "stage": "$default",
            "time": now.format(time::macros::format_description!("[day]/[month repr:short]/[year]:[hour]:[minute]:[second] +0000")).unwrap_or_default(),
            "timeEpoch": (now.unix_timestamp_nanos() / 1_000_000) as i64,
        },
        "isBase64Encoded": base64,
    });
    if !cookies.is_empty() {
        event["cookies"] = json!(cookies);
    }
    if !query.is_empty() {
        let joined: BTreeMap<&String, String> = query.iter().map(|(k, v)| (k, v.join(","))).collect();
        event["queryStringParameters"] = json!(joined);
    }
    if !path_parameters.is_empty() {
        event["pathParameters"] = json!(path_parameters);
    }
    if !body.is_null() {
        event["body"] = body;
    }
    event
}

/// The function's API Gateway v2 response as HTTP.
pub fn http_response(payload: &Value) -> Response<Body> {
    let status = payload["statusCode"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok());
    let Some(status) = status else {
        // Payload format 2.0 without statusCode: the payload is the JSON body.
        return json_response(StatusCode::OK, payload);
    };
    let body = match payload["body"].as_str() {
        Some(b) if payload["isBase64Encoded"].as_bool() == Some(true) => BASE64.decode(b).unwrap_or_default(),
        Some(b) => b.as_bytes().to_vec(),
        None => Vec::new(),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in payload["headers"].as_object().into_iter().flatten() {
        if let (Ok(name), Some(Ok(value))) = (
            HeaderName::try_from(name.as_str()),
            value.as_str().map(HeaderValue::from_str),
        ) {
            headers.insert(name, value);
        }
    }
    for (name, values) in payload["multiValueHeaders"].as_object().into_iter().flatten() {
        if headers.contains_key(name.as_str()) {
            continue;
        }
        for value in values.as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) {
                headers.append(name, value);
            }
        }
    }
    for cookie in payload["cookies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if let Ok(value) = HeaderValue::from_str(cookie) {
            headers.append("set-cookie", value);
        }
    }
    response
}

pub fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

/// API Gateway's own answers, before or instead of a function.
pub fn gateway_message(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({ "message": message }))
}
