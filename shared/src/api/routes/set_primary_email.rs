//! PUT /me/primary-email: the caller moves their primary to another verified address.

use std::convert::Infallible;

use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::SET_PRIMARY_EMAIL;
use crate::http::lambda::serve;
use crate::http::routes;
use crate::http::{Caller, Failure, response};

/// The Lambda entry point of PUT /me/primary-email: the caller's profile with the new primary and its new ETag.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, SET_PRIMARY_EMAIL.access(), |caller, req| {
        run(app, caller, req)
    })
    .await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let email_id = routes::set_primary_email(&req)?;
    response::profile(
        &app.store
            .set_primary(&caller.user_id, email_id, app.clock.now())
            .await?,
    )
}
