//! POST /me/emails/{emailId}/verification: a new code for an unverified address, within its daily limit.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::SEND_VERIFICATION;
use crate::http::lambda::serve;
use crate::http::request::email_id_param;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of POST /me/emails/{emailId}/verification: 202 once a new code is issued; delivery failures are only logged.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, SEND_VERIFICATION.access(), |caller, req| {
        run(app, caller, req)
    })
    .await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email_id = email_id_param(&req)?;
    let code = super::new_code()?;
    let address = app
        .store
        .issue_code(&caller.user_id, email_id, &code, app.clock.now())
        .await?;
    super::deliver(app, email_id, &address, &code).await;
    Ok(response::empty(StatusCode::ACCEPTED))
}
