//! GET /me/emails/{emailId}: one of the caller's addresses, where add-email's Location points.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::GET_EMAIL;
use crate::http::lambda::serve;
use crate::http::request::email_id_param;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of GET /me/emails/{emailId}: that address, if it is the caller's.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, GET_EMAIL.access(), |caller, req| run(app, caller, req)).await
}

/// The target of add-email's `Location`. Another user's id is not found.
async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email_id = email_id_param(&req)?;
    let email = app.store.get_email(&caller.user_id, email_id).await?;
    response::json(StatusCode::OK, &email)
}
