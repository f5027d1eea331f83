//! What the fuzz target holds an admitted request to (built with `--cfg
//! fuzzing` alone): the values a route admitted are the request's own.

use lambda_http::{Body, Request};
use serde_json::Value;

use crate::domain::PersonName;
use crate::http::request::MAX_BODY_BYTES;

/// The body an admitted request carried, read independently of the service.
pub(crate) fn body_json(req: &Request) -> Value {
    let bytes: &[u8] = match req.body() {
        Body::Text(t) => t.as_bytes(),
        Body::Binary(b) => b,
        _ => &[],
    };
    assert!(bytes.len() <= MAX_BODY_BYTES, "an oversized body was admitted");
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// The body's string field `field`, or empty.
pub(crate) fn body_str(req: &Request, field: &str) -> String {
    body_json(req)[field].as_str().map(str::to_owned).unwrap_or_default()
}

/// A name admitted from the body is the body's, parsed.
pub(crate) fn same_name(body: &Value, field: &str, parsed: Option<&PersonName>) {
    match (parsed, body.get(field)) {
        (None, None) => {}
        (Some(name), Some(Value::String(raw))) => assert_eq!(PersonName::parse(raw).as_ref(), Ok(name)),
        (p, raw) => panic!("{field} {p:?} from {raw:?}"),
    }
}
