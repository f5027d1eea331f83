//! The SCIM 2.0 routes' HTTP face (RFC 7644), under `/scim/v2`: a
//! directory's bearer token proven before anything else, each request read
//! into the protocol's values ([`crate::scim`]), the provisioning engine
//! ([`crate::provisioning`]) or a store read called, and every outcome
//! answered as `application/scim+json`, errors in RFC 7644 section 3.12's
//! shape. A SCIM client reads no `application/problem+json`: these routes
//! never answer it.

pub mod discovery;
pub mod users;

use std::convert::Infallible;
use std::future::Future;

use lambda_http::http::{StatusCode, header};
use lambda_http::request::RequestContext;
use lambda_http::{Body, Request, RequestExt, Response};
use serde_json::Value;
use tracing::Instrument;

use crate::app::App;
use crate::deadline;
use crate::http::request;
use crate::provisioning::{Refused, scim_error};
use crate::scim::ScimError;
use crate::store::ScimClient;

/// Every SCIM response's media type (RFC 7644 section 3.1).
pub const MEDIA_TYPE: &str = "application/scim+json";

/// What a SCIM handler answers: a response, or a refusal.
pub type Answer = Result<Response<Body>, Refused>;

/// Runs `handler` for a SCIM request: the token proven first (a wrong,
/// revoked or missing one is 401, counted against the caller's address, and
/// past the day's allowance 429), then the handler, within the invocation's
/// deadline. Logged by the organization, never by a value of the request.
pub async fn serve<F, Fut>(
    app: &App,
    req: Request,
    operation: &'static str,
    handler: F,
) -> Result<Response<Body>, Infallible>
where
    F: FnOnce(ScimClient, Request) -> Fut,
    Fut: Future<Output = Answer>,
{
    let span = tracing::info_span!(
        "request",
        request_id = %request::request_id(&req),
        access = "directory",
        operation,
        org = tracing::field::Empty,
    );
    let deadline = req
        .lambda_context_ref()
        .and_then(|ctx| deadline::from_lambda(ctx.deadline, None));
    let outcome = Box::pin(deadline::within(deadline, async {
        let authorization = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let client = app
            .store
            .authenticate_scim(&source_ip(&req), authorization, app.clock.now())
            .await
            .map_err(scim_error)?;
        tracing::Span::current().record("org", tracing::field::display(client.org));
        handler(client, req).await
    }))
    .instrument(span.clone())
    .await;
    let response = match outcome {
        Ok(response) => response,
        Err(refused) => {
            span.in_scope(|| {
                tracing::info!(status = refused.error.status, scim_type = ?refused.error.scim_type.map(|t| t.as_str()), "SCIM request refused");
            });
            refusal(&refused)
        }
    };
    span.in_scope(|| tracing::info!(status = response.status().as_u16(), "request handled"));
    Ok(response)
}

/// A refusal as RFC 7644 section 3.12's error, with `Retry-After` when
/// waiting helps and, on a 401, the scheme to authenticate with (RFC 6750).
pub fn refusal(refused: &Refused) -> Response<Body> {
    let error = &refused.error;
    let mut response = scim_json(
        StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &error.body(),
    );
    let headers = response.headers_mut();
    if let Some(secs) = refused.retry_after_secs {
        headers.insert(header::RETRY_AFTER, secs.into());
    }
    if error.status == 401 {
        headers.insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"scim\""),
        );
    }
    response
}

/// `value` as `application/scim+json`.
pub fn scim_json(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(Body::Text(value.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(MEDIA_TYPE));
    response
}

/// The SCIM base URL the client called (`https://host/scim/v2`): what every
/// `meta.location` begins with.
pub fn base_url(req: &Request) -> String {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| h.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b)))
        .unwrap_or("localhost");
    let scheme = match req.headers().get("x-forwarded-proto").and_then(|v| v.to_str().ok()) {
        Some("http") => "http",
        _ => "https",
    };
    format!("{scheme}://{host}/scim/v2")
}

/// The request's query parameters, as pairs.
pub fn query_pairs(req: &Request) -> Vec<(String, String)> {
    req.query_string_parameters_ref()
        .map(|q| q.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect())
        .unwrap_or_default()
}

/// The request's body as JSON: at most [`request::MAX_BODY_BYTES`] (413), a
/// JSON object (400 `invalidSyntax`). Any JSON media type is read: clients
/// send `application/scim+json` or `application/json`.
pub fn json_body(req: &Request) -> Result<Value, ScimError> {
    let bytes = request::body_bytes(req);
    if bytes.len() > request::MAX_BODY_BYTES {
        return Err(ScimError::status(413, "the request body is larger than 16 KiB"));
    }
    if req.extensions().get::<request::UnreadableBody>().is_some() {
        return Err(ScimError::invalid_syntax(
            "the body is marked base64 but does not decode",
        ));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ScimError::invalid_syntax("the body must be a JSON object")),
        Err(_) => Err(ScimError::invalid_syntax("the body is not JSON")),
    }
}

/// The caller's IP address as API Gateway saw it: what a token that proves
/// nothing is counted by.
fn source_ip(req: &Request) -> String {
    match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// Answers any request under `/scim/v2` by its method and path (`path` is
/// what follows `/scim/v2/`): what `make dev`'s API and the tests call.
/// Deployed, each operation is its own function, the HTTP API routing to it.
pub async fn dispatch(app: &App, req: Request, path: &str) -> Result<Response<Body>, Infallible> {
    use lambda_http::http::Method;
    let method = req.method().clone();
    let trimmed = path.trim_matches('/');
    let (first, rest) = trimmed.split_once('/').map_or((trimmed, None), |(a, b)| (a, Some(b)));
    match (first, rest, &method) {
        ("Users", None, &Method::GET) => serve(app, req, "list", |c, r| users::list(app, c, r)).await,
        ("Users", None, &Method::POST) => serve(app, req, "create", |c, r| users::create(app, c, r)).await,
        ("Users", Some(id), m) if !id.contains('/') && id != ".search" => {
            let req = with_user_param(req, id);
            match *m {
                Method::GET => serve(app, req, "get", |c, r| users::get(app, c, r)).await,
                Method::PUT => serve(app, req, "replace", |c, r| users::replace(app, c, r)).await,
                Method::PATCH => serve(app, req, "patch", |c, r| users::patch(app, c, r)).await,
                Method::DELETE => serve(app, req, "delete", |c, r| users::delete(app, c, r)).await,
                _ => {
                    let refused = || async { Err(ScimError::status(405, "the method is not served on a User").into()) };
                    serve(app, req, "other", |_, _| refused()).await
                }
            }
        }
        _ => {
            let path = trimmed.to_owned();
            serve(app, req, "discovery", move |_, r| async move {
                discovery::answer(&r, &method, &path)
            })
            .await
        }
    }
}

fn with_user_param(req: Request, id: &str) -> Request {
    use std::collections::HashMap;
    let params: HashMap<String, String> = HashMap::from([("userId".to_owned(), id.to_owned())]);
    req.with_path_parameters(params)
}
