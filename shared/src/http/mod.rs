//! The HTTP edge: one wrapper every API handler runs in, request parsing,
//! responses and problem mapping.

pub mod problem;
pub mod request;
pub mod response;

use std::convert::Infallible;
use std::future::Future;

use lambda_http::{Body, Request, Response};
use tracing::Instrument;

use crate::app::App;
use crate::catalog::Access;
pub use problem::{Failure, Problem};
pub use request::Caller;

/// Runs `handler` for the verified caller and turns every outcome into a
/// response: expected failures are problem responses, never `Err` (API Gateway
/// would answer 502) and never a panic. Logs carry the request id and `sub`.
pub async fn serve<F, Fut>(app: &App, req: Request, access: Access, handler: F) -> Result<Response<Body>, Infallible>
where
    F: FnOnce(Caller, Request) -> Fut,
    Fut: Future<Output = Result<Response<Body>, Failure>>,
{
    let span = tracing::info_span!("request", request_id = %request::request_id(&req), sub = tracing::field::Empty);
    let outcome = async {
        let caller = request::caller(&req)?;
        tracing::Span::current().record("sub", caller.user_id.as_str());
        if access == Access::Admin && !caller.is_in(&app.admin_group) {
            return Err(Problem::forbidden().into());
        }
        handler(caller, req).await
    }
    .instrument(span.clone())
    .await;
    let response = match outcome {
        Ok(response) => response,
        Err(failure) => span.in_scope(|| log_failure(&failure)).problem.clone().into_response(),
    };
    span.in_scope(|| tracing::info!(status = response.status().as_u16(), "request handled"));
    Ok(response)
}

/// 5xx: the whole cause chain, for us. 4xx: the code only, no request values.
fn log_failure(failure: &Failure) -> &Failure {
    let problem = &failure.problem;
    if problem.status.is_server_error() {
        let chain = failure
            .cause
            .as_deref()
            .map(|c| crate::error_chain(c))
            .unwrap_or_default();
        tracing::error!(code = problem.code, status = problem.status.as_u16(), cause = %chain, "request failed");
    } else {
        tracing::info!(code = problem.code, status = problem.status.as_u16(), "request refused");
    }
    failure
}
