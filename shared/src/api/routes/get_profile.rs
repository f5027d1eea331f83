//! GET /me: the caller's profile, whose ETag the changes to it send back in If-Match.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /me.
    GetProfile: catalog::GET_PROFILE,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [crate::StoreError::NotFound],
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::GET_PROFILE;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /me: the caller's profile with its ETag.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &GET_PROFILE, |caller, _| run(app, caller)).await
    }

    async fn run(app: &App, caller: Caller) -> Result<Response<Body>, Failure> {
        response::profile(&app.store.get_profile(&caller.user_id).await?)
    }
}
