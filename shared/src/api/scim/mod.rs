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

/// Runs `handler` for a SCIM request: the token proven first (none is 401;
/// a wrong or revoked one is 401 too, counted against the caller's address,
/// and past the day's allowance 429), then the handler, within the
/// invocation's deadline. Logged by the organization, never by a value of
/// the request.
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
            .authenticate_scim(&request::source_ip(&req), authorization, app.clock.now())
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
                // A plain string (`invalidValue`), or no field at all: log queries match it as written.
                match refused.error.scim_type {
                    Some(kind) => {
                        tracing::info!(
                            status = refused.error.status,
                            scim_type = kind.as_str(),
                            "SCIM request refused"
                        );
                    }
                    None => tracing::info!(status = refused.error.status, "SCIM request refused"),
                }
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

// The Lambda entry points, one per function of the catalog (`scim-*`).

/// `ANY /scim/v2/{proxy+}` (scim-discovery).
pub async fn discovery(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    let method = req.method().clone();
    let path = req
        .path_parameters_ref()
        .and_then(|p| p.first("proxy"))
        .unwrap_or_default()
        .to_owned();
    serve(app, req, "discovery", move |_, r| async move {
        discovery::answer(&r, &method, &path)
    })
    .await
}

/// `GET /scim/v2/Users` (scim-list-users).
pub async fn list_users(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "list", |c, r| users::list(app, c, r)).await
}

/// `POST /scim/v2/Users` (scim-create-user).
pub async fn create_user(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "create", |c, r| users::create(app, c, r)).await
}

/// `GET /scim/v2/Users/{userId}` (scim-get-user).
pub async fn get_user(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "get", |c, r| users::get(app, c, r)).await
}

/// `PUT /scim/v2/Users/{userId}` (scim-replace-user).
pub async fn replace_user(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "replace", |c, r| users::replace(app, c, r)).await
}

/// `PATCH /scim/v2/Users/{userId}` (scim-patch-user).
pub async fn patch_user(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "patch", |c, r| users::patch(app, c, r)).await
}

/// `DELETE /scim/v2/Users/{userId}` (scim-delete-user).
pub async fn delete_user(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, "delete", |c, r| users::delete(app, c, r)).await
}

/// A SCIM function of the catalog, by its entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScimRoute {
    /// scim-discovery.
    Discovery,
    /// scim-list-users.
    ListUsers,
    /// scim-create-user.
    CreateUser,
    /// scim-get-user.
    GetUser,
    /// scim-replace-user.
    ReplaceUser,
    /// scim-patch-user.
    PatchUser,
    /// scim-delete-user.
    DeleteUser,
}

impl ScimRoute {
    /// Every SCIM route, in the catalog's order, with its entry.
    pub const ALL: [(Self, &'static crate::catalog::Function); 7] = [
        (Self::Discovery, &crate::catalog::SCIM_DISCOVERY),
        (Self::ListUsers, &crate::catalog::SCIM_LIST_USERS),
        (Self::CreateUser, &crate::catalog::SCIM_CREATE_USER),
        (Self::GetUser, &crate::catalog::SCIM_GET_USER),
        (Self::ReplaceUser, &crate::catalog::SCIM_REPLACE_USER),
        (Self::PatchUser, &crate::catalog::SCIM_PATCH_USER),
        (Self::DeleteUser, &crate::catalog::SCIM_DELETE_USER),
    ];

    /// The route of a catalog entry, if it is a SCIM route.
    pub fn of(function: &crate::catalog::Function) -> Option<Self> {
        Self::ALL.iter().find(|(_, f)| *f == function).map(|(route, _)| *route)
    }

    /// Its handler: the response, never an error. Boxed, as a route's is.
    pub fn handle<'a>(self, app: &'a App, req: Request) -> crate::api::routes::Handled<'a> {
        match self {
            Self::Discovery => Box::pin(discovery(app, req)),
            Self::ListUsers => Box::pin(list_users(app, req)),
            Self::CreateUser => Box::pin(create_user(app, req)),
            Self::GetUser => Box::pin(get_user(app, req)),
            Self::ReplaceUser => Box::pin(replace_user(app, req)),
            Self::PatchUser => Box::pin(patch_user(app, req)),
            Self::DeleteUser => Box::pin(delete_user(app, req)),
        }
    }
}

/// Answers any request under `/scim/v2` as the HTTP API's routes would
/// (`path` is what follows `/scim/v2/`): the tests' way in.
pub async fn dispatch(app: &App, req: Request, path: &str) -> Result<Response<Body>, Infallible> {
    use lambda_http::http::Method;
    use std::collections::HashMap;
    let trimmed = path.trim_matches('/');
    let (first, rest) = trimmed.split_once('/').map_or((trimmed, None), |(a, b)| (a, Some(b)));
    let user = |req: Request, id: &str| req.with_path_parameters(HashMap::from([("userId".to_owned(), id.to_owned())]));
    match (first, rest, req.method().clone()) {
        ("Users", None, Method::GET) => list_users(app, req).await,
        ("Users", None, Method::POST) => create_user(app, req).await,
        ("Users", Some(id), Method::GET) if !id.contains('/') => get_user(app, user(req, id)).await,
        ("Users", Some(id), Method::PUT) if !id.contains('/') => replace_user(app, user(req, id)).await,
        ("Users", Some(id), Method::PATCH) if !id.contains('/') => patch_user(app, user(req, id)).await,
        ("Users", Some(id), Method::DELETE) if !id.contains('/') => delete_user(app, user(req, id)).await,
        _ => {
            let req = req.with_path_parameters(HashMap::from([("proxy".to_owned(), trimmed.to_owned())]));
            discovery(app, req).await
        }
    }
}
