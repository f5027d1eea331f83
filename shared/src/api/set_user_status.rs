use std::convert::Infallible;

use lambda_http::{Body, Request, Response};
use serde::Deserialize;

use crate::app::App;
use crate::catalog::SET_USER_STATUS;
use crate::domain::{UserId, UserStatus};
use crate::http::request::{json_body, path_param};
use crate::http::{Caller, Failure, response, serve};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetStatus {
    status: UserStatus,
}

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, SET_USER_STATUS.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let user = path_param(&req, "userId", UserId::parse)?;
    let SetStatus { status } = json_body(&req)?;
    let profile = app.store.set_status(&user, status, app.clock.now()).await?;
    tracing::info!(admin = %admin.user_id, target_user = %user, status = status.as_str(), "status set");
    response::profile(&profile)
}
