//! Successful responses.

use lambda_http::http::{HeaderValue, StatusCode, header};
use lambda_http::{Body, Response};
use serde::Serialize;

use super::problem::{Failure, Problem};
use crate::domain::Profile;

/// `value` as a JSON body with `status`; a value that does not serialize is a 500.
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Result<Response<Body>, Failure> {
    let body = serde_json::to_string(value).map_err(|err| Failure {
        problem: Box::new(Problem::internal()),
        cause: Some(Box::new(err)),
    })?;
    let mut response = Response::new(Body::Text(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

/// The strong ETag of a profile: its version.
pub fn etag(version: u64) -> String {
    format!("\"{version}\"")
}

/// A profile with its ETag, for the next If-Match.
pub fn profile(profile: &Profile) -> Result<Response<Body>, Failure> {
    let mut response = json(StatusCode::OK, profile)?;
    if let Ok(value) = HeaderValue::from_str(&etag(profile.version)) {
        response.headers_mut().insert(header::ETAG, value);
    }
    Ok(response)
}

/// An organization with its ETag, for the next If-Match, and `extra` fields
/// beside it (the caller's role).
pub fn organization<T: Serialize>(version: u64, value: &T) -> Result<Response<Body>, Failure> {
    let mut response = json(StatusCode::OK, value)?;
    if let Ok(value) = HeaderValue::from_str(&etag(version)) {
        response.headers_mut().insert(header::ETAG, value);
    }
    Ok(response)
}

/// `response` with the header `name` set to `value`, or unchanged if `value` is no valid header value.
pub fn with_header(mut response: Response<Body>, name: header::HeaderName, value: &str) -> Response<Body> {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
    response
}

/// A response with `status` and no body, such as 202 or 204.
pub fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::Empty);
    *response.status_mut() = status;
    response
}
