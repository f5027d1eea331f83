//! DELETE /me: the caller closes their own account, under If-Match.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::app::App;
use crate::catalog::DELETE_ACCOUNT;
use crate::http::lambda::serve;
use crate::http::request::if_match;
use crate::http::{Caller, Failure, response};
use crate::store::Deleter;

/// The Lambda entry point of DELETE /me: 204 once the account is erased and its addresses released.
pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, DELETE_ACCOUNT.access(), |caller, req| run(app, caller, req)).await
}

/// `DELETE /me` with `If-Match`: the caller's addresses are released and the
/// profile erased in one transaction. Cognito learns of it from the table (the
/// profile's change to `deleted`), as it does of an admin's delete.
async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let precondition = if_match(&req)?;
    app.store
        .delete_user(&caller.user_id, Deleter::Owner(&precondition), app.clock.now())
        .await?;
    Ok(response::empty(StatusCode::NO_CONTENT))
}
