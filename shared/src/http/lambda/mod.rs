//! The HTTP functions on Lambda: the runtime loop ([`run`]) and the wrapper
//! every API handler runs in ([`serve`]): the caller, the admin admission, the
//! invocation's deadline, and every outcome turned into a response.

mod problems;

use std::convert::Infallible;
use std::future::Future;

use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpResponse;
use lambda_http::http::HeaderValue;
use lambda_http::http::header::SET_COOKIE;
use lambda_http::{Body, Request, RequestExt, Response};
use tracing::Instrument;

use super::request::Caller;
use super::{Failure, Problem, request};
use crate::StoreError;
use crate::app::App;
use crate::audit::AdminAction;
use crate::catalog::{Access, Function};
use crate::deadline;
use crate::domain::UserStatus;
use crate::metrics::Metric;

/// Runs an HTTP function: `lambda_http::run`, except that a body marked
/// base64 that does not decode is answered 400 instead of panicking.
///
/// lambda_http turns the event into a `Request` before any handler runs, and
/// aws_lambda_events decodes a base64 body there with `.expect(…)`
/// (`Body::from_maybe_encoded`): an undecodable body panics, the invocation
/// fails and API Gateway answers 500. So the body is checked first with the
/// same decoder (`base64`'s STANDARD engine); one that does not decode is
/// dropped, and the request carries [`request::UnreadableBody`], which
/// [`serve`] answers with VALIDATION_FAILED after authenticating the caller.
pub async fn run<'a, S>(handler: S) -> Result<(), lambda_runtime::Error>
where
    S: lambda_http::Service<Request, Response = Response<Body>, Error = Infallible> + Clone,
    S::Future: Send + 'a,
{
    use lambda_http::request::LambdaRequest;
    use lambda_http::{LambdaEvent, service_fn};

    lambda_runtime::run(service_fn(move |event: LambdaEvent<LambdaRequest>| {
        let LambdaEvent { payload, context } = event;
        // The same request the tests deliver in-process, plus what only Lambda has.
        let mut req = request_from_event(payload);
        // As lambda_http's Adapter does: the trace id, for the handler's spans.
        if let Some(trace) = context
            .xray_trace_id
            .as_deref()
            .and_then(|id| HeaderValue::from_str(id).ok())
        {
            req.headers_mut().insert("x-amzn-trace-id", trace);
        }
        let req = req.with_lambda_context(context);
        let mut inner = handler.clone();
        async move {
            let response = match inner.call(req).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok::<_, lambda_runtime::Error>(api_gateway_response(response))
        }
    }))
    .await
}

/// The HTTP API's payload 2.0 response. lambda_http's Adapter would first
/// re-decode every text body by its charset through encoding_rs, whose tables
/// (150 KiB of each binary, resident once mapped) serve no purpose here: every
/// body this service writes is UTF-8 already.
fn api_gateway_response(response: Response<Body>) -> ApiGatewayV2httpResponse {
    let (parts, body) = response.into_parts();
    let (is_base64_encoded, body) = match body {
        Body::Empty => (false, None),
        text @ Body::Text(_) => (false, Some(text)),
        binary @ Body::Binary(_) => (true, Some(binary)),
        _ => (false, None),
    };
    let mut headers = parts.headers;
    // Payload 2.0 carries Set-Cookie in `cookies`, not among the headers.
    let cookies = headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_owned)
        .collect();
    headers.remove(SET_COOKIE);
    let mut out = ApiGatewayV2httpResponse::default();
    out.status_code = i64::from(parts.status.as_u16());
    out.headers = headers;
    out.body = body;
    out.is_base64_encoded = is_base64_encoded;
    out.cookies = cookies;
    out
}

/// Drops a body marked base64 that does not decode; `true` when it did.
fn drop_undecodable_body(event: &mut lambda_http::request::LambdaRequest) -> bool {
    match event {
        lambda_http::request::LambdaRequest::ApiGatewayV2(request) => drop_undecodable_api_body(request),
        _ => false,
    }
}

/// The `Request` [`run`] hands a handler for `event`, without the Lambda
/// context: for tests that deliver events in-process, so they meet exactly
/// what a deployed function does.
pub fn request_from_event(mut event: lambda_http::request::LambdaRequest) -> Request {
    let unreadable = drop_undecodable_body(&mut event);
    mark_unreadable(event.into(), unreadable)
}

/// `req`, marked [`request::UnreadableBody`] when its body was dropped.
fn mark_unreadable(mut req: Request, unreadable: bool) -> Request {
    if unreadable {
        req.extensions_mut().insert(request::UnreadableBody);
    }
    req
}

/// Runs `handler` for the verified caller of `function`'s route and turns every
/// outcome into a response: expected failures are problem responses, never
/// `Err` (API Gateway would answer 502) and never a panic. Before the handler:
/// the admin admission of an admin route, and the recent sign-in of a route
/// that can hand over an account. Logs carry the request id and `sub`.
pub async fn serve<F, Fut>(
    app: &App,
    req: Request,
    function: &Function,
    handler: F,
) -> Result<Response<Body>, Infallible>
where
    F: FnOnce(Caller, Request) -> Fut,
    Fut: Future<Output = Result<Response<Body>, Failure>>,
{
    let span = tracing::info_span!("request", request_id = %request::request_id(&req), sub = tracing::field::Empty);
    // Retries stop in time to answer before the function's timeout.
    let deadline = req
        .lambda_context_ref()
        .and_then(|ctx| deadline::from_lambda(ctx.deadline, None));
    // Boxed: the store's futures are large, and every handler's future holds this one.
    let outcome = Box::pin(deadline::within(deadline, async {
        let caller = request::caller(&req)?;
        tracing::Span::current().record("sub", caller.user_id.as_str());
        let session = caller.session_signed_in_at();
        if function.access() == Access::Admin {
            // The admin's own session, on their own profile; what they then
            // read and change is someone else's.
            crate::store::session::within(session, admit_admin(app, &caller))
                .await
                .inspect_err(|refused| {
                    AdminAction {
                        action: "admit",
                        admin: &caller.user_id,
                        target: None,
                        outcome: refused.problem.code,
                        metric: Some(Metric::AdminActionsRefused),
                    }
                    .record();
                })?;
        }
        if function.needs_recent_sign_in && !caller.signed_in_within(app.clock.now(), app.reauthentication_window) {
            let max_age = u32::try_from(app.reauthentication_window.as_secs()).unwrap_or(u32::MAX);
            return Err(Problem::reauthentication_required(max_age).into());
        }
        if req.extensions().get::<request::UnreadableBody>().is_some() {
            return Err(Problem::validation("body", "is marked base64 but does not decode").into());
        }
        match function.access() {
            Access::User => crate::store::session::within(session, handler(caller, req)).await,
            // A directory's route is served by `api::scim::serve`, never here.
            Access::Admin | Access::Anyone | Access::Directory => handler(caller, req).await,
        }
    }))
    .instrument(span.clone())
    .await;
    Ok(respond(&span, outcome))
}

/// Runs `handler` for a route anyone may call ([`Access::Anyone`]): no
/// caller, and every outcome turned into a response as [`serve`] does. What
/// the request carries must prove itself (a recovery link's token).
pub async fn serve_anyone<F, Fut>(req: Request, handler: F) -> Result<Response<Body>, Infallible>
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Result<Response<Body>, Failure>>,
{
    // No caller to name: the span says so, as the log checks read it.
    let span = tracing::info_span!("request", request_id = %request::request_id(&req), access = "anyone");
    let deadline = req
        .lambda_context_ref()
        .and_then(|ctx| deadline::from_lambda(ctx.deadline, None));
    let outcome = Box::pin(deadline::within(deadline, async {
        if req.extensions().get::<request::UnreadableBody>().is_some() {
            return Err(Problem::validation("body", "is marked base64 but does not decode").into());
        }
        handler(req).await
    }))
    .instrument(span.clone())
    .await;
    Ok(respond(&span, outcome))
}

/// The response to an outcome: a failure as its problem, logged; then the status, logged.
fn respond(span: &tracing::Span, outcome: Result<Response<Body>, Failure>) -> Response<Body> {
    let response = match outcome {
        Ok(response) => response,
        Err(failure) => span.in_scope(|| log_failure(&failure)).problem.clone().into_response(),
    };
    span.in_scope(|| tracing::info!(status = response.status().as_u16(), "request handled"));
    response
}

/// An admin is a member of the admin group whose own account is active: the
/// token's group alone outlives a suspension or a deletion.
async fn admit_admin(app: &App, caller: &Caller) -> Result<(), Failure> {
    if !caller.is_in(&app.admin_group) {
        return Err(Problem::forbidden().into());
    }
    match app.store.get_profile(&caller.user_id).await {
        Ok(profile) if profile.status == UserStatus::Active => Ok(()),
        Ok(_) | Err(StoreError::NotFound) => Err(Problem::forbidden_inactive_admin().into()),
        Err(err) => Err(err.into()),
    }
}

/// 5xx: the whole cause chain, for us. 4xx: the code only, no request values.
fn log_failure(failure: &Failure) -> &Failure {
    let problem = &failure.problem;
    if problem.status.is_server_error() {
        let chain = failure
            .cause
            .as_deref()
            .map(|c| crate::error::chain(c))
            .unwrap_or_default();
        tracing::error!(code = problem.code, status = problem.status.as_u16(), cause = %chain, "request failed");
    } else {
        tracing::info!(code = problem.code, status = problem.status.as_u16(), "request refused");
    }
    failure
}

/// Drops a body marked base64 that does not decode, with the decoder
/// aws_lambda_events itself uses; `true` when it did.
fn drop_undecodable_api_body(request: &mut lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequest) -> bool {
    use base64::Engine as _;
    let undecodable = request.is_base64_encoded
        && request
            .body
            .as_deref()
            .is_some_and(|body| base64::engine::general_purpose::STANDARD.decode(body).is_err());
    if undecodable {
        request.body = None;
        request.is_base64_encoded = false;
    }
    undecodable
}

#[cfg(test)]
mod tests {
    use lambda_http::http::StatusCode;

    use super::*;

    #[test]
    fn a_text_body_goes_out_as_it_is_with_its_status_and_headers() -> Result<(), lambda_http::http::Error> {
        let response = Response::builder()
            .status(StatusCode::CREATED)
            .header("content-type", "application/json")
            .header("etag", "\"3\"")
            .body(Body::Text(r#"{"name":"Zoë"}"#.to_owned()))?;
        let out = api_gateway_response(response);
        assert_eq!(out.status_code, 201);
        assert!(!out.is_base64_encoded);
        assert_eq!(out.body, Some(Body::Text(r#"{"name":"Zoë"}"#.to_owned())));
        assert_eq!(out.headers.get("etag").map(HeaderValue::as_bytes), Some(&b"\"3\""[..]));
        assert!(out.cookies.is_empty());
        Ok(())
    }

    #[test]
    fn no_body_is_no_body_and_a_binary_one_is_marked_base64() -> Result<(), lambda_http::http::Error> {
        let empty = api_gateway_response(Response::builder().status(204).body(Body::Empty)?);
        assert_eq!(
            (empty.status_code, empty.body, empty.is_base64_encoded),
            (204, None, false)
        );
        let binary = api_gateway_response(Response::builder().body(Body::Binary(vec![0xff, 0]))?);
        assert!(binary.is_base64_encoded);
        assert_eq!(binary.body, Some(Body::Binary(vec![0xff, 0])));
        Ok(())
    }

    #[test]
    fn set_cookie_moves_to_the_cookies_of_payload_2_0() -> Result<(), lambda_http::http::Error> {
        let response = Response::builder()
            .header(SET_COOKIE, "a=1")
            .header(SET_COOKIE, "b=2")
            .body(Body::Empty)?;
        let out = api_gateway_response(response);
        assert_eq!(out.cookies, vec!["a=1".to_owned(), "b=2".to_owned()]);
        assert!(out.headers.get(SET_COOKIE).is_none());
        Ok(())
    }
}
