//! GET /emails/availability: lets a client tell whether an address is free before adding it.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde_json::json;

use crate::app::App;
use crate::catalog::CHECK_EMAIL;
use crate::domain::EmailAddress;
use crate::http::lambda::serve;
use crate::http::request::query_param;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of GET /emails/availability?email=: the address and whether the caller may add it now.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, CHECK_EMAIL.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email = query_param(&req, "email", EmailAddress::parse)?;
    let available = app
        .store
        .check_availability(&caller.user_id, &email, app.clock.now())
        .await?;
    response::json(StatusCode::OK, &json!({ "email": email, "available": available }))
}
