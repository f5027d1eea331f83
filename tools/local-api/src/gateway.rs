//! JSON answers as API Gateway gives them: a function's JSON body, and the
//! gateway's own answers, before or instead of a function.

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode};
use serde_json::{Value, json};

/// A JSON body with `status`.
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
