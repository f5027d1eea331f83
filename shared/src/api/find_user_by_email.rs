use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::FIND_USER_BY_EMAIL;
use crate::domain::EmailAddress;
use crate::http::request::query_param;
use crate::http::{Caller, Failure, response, serve};

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, FIND_USER_BY_EMAIL.access(), |caller, req| {
        run(app, caller, req)
    })
    .await
}

async fn run(app: &App, _admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email = query_param(&req, "email", EmailAddress::parse)?;
    response::json(StatusCode::OK, &app.store.find_by_email(&email).await?)
}
