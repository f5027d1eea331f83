//! PATCH /me: the caller changes their names or phone, under If-Match.

use std::convert::Infallible;

use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::UPDATE_PROFILE;
use crate::http::lambda::serve;
use crate::http::{Caller, Failure, response, routes};

/// The Lambda entry point of PATCH /me: the updated profile with its new ETag.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, UPDATE_PROFILE.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let (precondition, patch) = routes::update_profile(&req)?;
    let profile = app
        .store
        .update_profile(&caller.user_id, &precondition, &patch, app.clock.now())
        .await?;
    response::profile(&profile)
}
