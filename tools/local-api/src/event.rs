//! An HTTP request as an HTTP API (payload format 2.0) event, and the
//! function's response back as HTTP.

use std::collections::HashMap;

use aws_lambda_events::apigw::{
    ApiGatewayRequestAuthorizer, ApiGatewayRequestAuthorizerJwtDescription, ApiGatewayV2httpRequest,
    ApiGatewayV2httpRequestContext, ApiGatewayV2httpRequestContextHttpDescription,
};
use aws_lambda_events::query_map::QueryMap;
use axum::body::Body;
use axum::http::header::{COOKIE, USER_AGENT};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, Uri};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use crate::gateway::json_response;
use crate::routes::Route;

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

/// The event API Gateway would send for this request. The structs are the ones
/// lambda_http parses, so the event cannot drift from what the functions read.
pub fn api_gateway_v2(
    route: &Route,
    path_parameters: HashMap<String, String>,
    claims: HashMap<String, String>,
    request: &Incoming<'_>,
) -> ApiGatewayV2httpRequest {
    // API Gateway joins a repeated header with commas and moves cookies to their
    // own list; the struct would keep only a header's first value.
    let mut headers = HeaderMap::new();
    let mut cookies = Vec::new();
    for name in request.headers.keys() {
        let values: Vec<&str> = request
            .headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if name == COOKIE {
            cookies.extend(values.iter().flat_map(|v| v.split("; ")).map(str::to_owned));
        } else if let Ok(value) = HeaderValue::from_str(&values.join(",")) {
            headers.insert(name.clone(), value);
        }
    }
    let raw_query = request.uri.query().unwrap_or_default();
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
        (true, _) => (None, false),
        (false, Some(text)) => (Some(text.to_owned()), false),
        (false, None) => (Some(BASE64.encode(request.body)), true),
    };
    let now = time::OffsetDateTime::now_utc();

    // The structs are #[non_exhaustive]: built from Default, field by field.
    let mut jwt = ApiGatewayRequestAuthorizerJwtDescription::default();
    jwt.claims = claims;
    let mut authorizer = ApiGatewayRequestAuthorizer::default();
    authorizer.jwt = Some(jwt);
    let mut http = ApiGatewayV2httpRequestContextHttpDescription::default();
    http.method = request.method.clone();
    http.path = Some(request.uri.path().to_owned());
    http.protocol = Some("HTTP/1.1".into());
    http.source_ip = Some(request.source_ip.clone());
    http.user_agent = Some(
        headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
    );
    let mut context = ApiGatewayV2httpRequestContext::default();
    context.route_key = Some(route.key());
    context.account_id = Some("000000000000".into());
    context.stage = Some("$default".into());
    context.request_id = Some(uuid::Uuid::new_v4().to_string());
    // A route open to anyone runs no authorizer: the event carries none.
    context.authorizer = (!route.public).then_some(authorizer);
    context.apiid = Some("local".into());
    context.domain_name = Some(request.host.clone());
    context.domain_prefix = request.host.split('.').next().map(str::to_owned);
    context.time = now
        .format(time::macros::format_description!(
            "[day]/[month repr:short]/[year]:[hour]:[minute]:[second] +0000"
        ))
        .ok();
    context.time_epoch = (now.unix_timestamp_nanos() / 1_000_000) as i64;
    context.http = http;

    let mut event = ApiGatewayV2httpRequest::default();
    event.version = Some("2.0".into());
    event.route_key = Some(route.key());
    event.raw_path = Some(request.uri.path().to_owned());
    event.raw_query_string = Some(raw_query.to_owned());
    event.cookies = (!cookies.is_empty()).then_some(cookies);
    event.headers = headers;
    // Decodes `+` and `%XX`; a repeated key's values are joined with commas.
    let Ok(query) = raw_query.parse::<QueryMap>();
    event.query_string_parameters = query;
    event.path_parameters = path_parameters;
    event.request_context = context;
    event.body = body;
    event.is_base64_encoded = base64;
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

#[cfg(test)]
mod tests {
    use lambda_http::RequestExt;

    use super::*;

    /// The event goes through lambda_http's parser and the functions' own
    /// reading of the caller, as under `cargo lambda watch`.
    #[test]
    fn lambda_http_and_the_functions_read_the_event() {
        let route = Route {
            function: "verify-email".into(),
            method: "POST".into(),
            path: "/me/emails/{emailId}/verify".into(),
            public: false,
        };
        let mut headers = HeaderMap::new();
        headers.append("cookie", HeaderValue::from_static("a=1; b=2"));
        headers.append("x-many", HeaderValue::from_static("1"));
        headers.append("x-many", HeaderValue::from_static("2"));
        headers.append("content-type", HeaderValue::from_static("application/json"));
        let uri: Uri = "/me/emails/a%40b/verify?q=a+b&q=%2Fc".parse().unwrap();
        let incoming = Incoming {
            method: &Method::POST,
            uri: &uri,
            headers: &headers,
            body: br#"{"code":"123456"}"#,
            source_ip: "127.0.0.1".into(),
            host: "127.0.0.1:3000".into(),
        };
        let sub = uuid::Uuid::new_v4().to_string();
        let claims = HashMap::from([
            ("sub".to_owned(), sub.clone()),
            ("token_use".to_owned(), "access".to_owned()),
            ("cognito:groups".to_owned(), "[admin ops]".to_owned()),
        ]);
        let params = HashMap::from([("emailId".to_owned(), "a@b".to_owned())]);
        let event = api_gateway_v2(&route, params, claims, &incoming);
        let request = lambda_http::request::from_str(&serde_json::to_string(&event).unwrap()).unwrap();

        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().path(), "/me/emails/a%40b/verify");
        assert_eq!(request.path_parameters().first("emailId"), Some("a@b"));
        assert_eq!(request.query_string_parameters().all("q"), Some(vec!["a b", "/c"]));
        assert_eq!(request.headers()["x-many"], "1,2");
        assert_eq!(request.headers()["cookie"], "a=1; b=2");
        assert_eq!(request.body().as_ref(), br#"{"code":"123456"}"#);
        let caller = user_service::http::request::caller(&request).unwrap();
        assert_eq!(caller.user_id.to_string(), sub);
        assert_eq!(caller.groups, ["admin", "ops"]);
    }
}
