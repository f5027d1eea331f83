//! POST /me/emails: the caller adds an address, unverified until its mailed code is entered.

use std::convert::Infallible;

use lambda_http::http::{StatusCode, header};
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::ADD_EMAIL;
use crate::http::lambda::serve;
use crate::http::routes;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of POST /me/emails: 201 with the new address and its Location; the code goes out by mail.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, ADD_EMAIL.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email = routes::add_email(&req)?;
    let code = super::new_code()?;
    let added = app
        .store
        .add_email(&caller.user_id, &email, &code, app.clock.now())
        .await?;
    super::deliver(app, added.email_id, &email, &code).await;
    let location = format!("/me/emails/{}", added.email_id);
    Ok(response::with_header(
        response::json(StatusCode::CREATED, &added)?,
        header::LOCATION,
        &location,
    ))
}
