use std::convert::Infallible;

use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::SET_USER_STATUS;
use crate::http::routes;
use crate::http::{Caller, Failure, Problem, response, serve};

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, SET_USER_STATUS.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let (user, status) = routes::set_user_status(&req)?;
    if user == admin.user_id {
        return Err(Problem::own_status().into());
    }
    let profile = app.store.set_status(&user, status, app.clock.now()).await?;
    tracing::info!(admin = %admin.user_id, target_user = %user, status = status.as_str(), "status set");
    response::profile(&profile)
}
