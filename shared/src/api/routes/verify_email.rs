//! POST /me/emails/{emailId}/verify: the caller proves they read an address by entering its code.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::VERIFY_EMAIL;
use crate::http::lambda::serve;
use crate::http::routes;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of POST /me/emails/{emailId}/verify: the address, now verified.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, VERIFY_EMAIL.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let (email_id, code) = routes::verify_email(&req)?;
    let email = app
        .store
        .verify_email(&caller.user_id, email_id, &code, app.clock.now())
        .await?;
    response::json(StatusCode::OK, &email)
}
