use std::convert::Infallible;

use lambda_http::{Body, Request, Response};
use serde::Deserialize;

use crate::app::App;
use crate::catalog::SET_PRIMARY_EMAIL;
use crate::domain::EmailId;
use crate::http::request::json_body;
use crate::http::{Caller, Failure, response, serve};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SetPrimary {
    email_id: EmailId,
}

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, SET_PRIMARY_EMAIL.access(), |caller, req| {
        run(app, caller, req)
    })
    .await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let SetPrimary { email_id } = json_body(&req)?;
    response::profile(
        &app.store
            .set_primary(&caller.user_id, email_id, app.clock.now())
            .await?,
    )
}
