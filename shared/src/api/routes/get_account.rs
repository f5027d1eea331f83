//! GET /me/account: the caller's whole account, profile and addresses, in one read.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /me/account.
    GetAccount: catalog::GET_ACCOUNT,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [crate::StoreError::NotFound],
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::GET_ACCOUNT;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /me/account: the caller's profile with all their addresses.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &GET_ACCOUNT, |caller, _| run(app, caller)).await
    }

    async fn run(app: &App, caller: Caller) -> Result<Response<Body>, Failure> {
        response::json(StatusCode::OK, &app.store.get_account(&caller.user_id).await?)
    }
}
