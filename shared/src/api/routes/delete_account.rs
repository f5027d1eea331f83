//! DELETE /me: the caller closes their own account, under If-Match.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::IfMatch;
use crate::http::Problem;
use crate::http::request::if_match;

route! {
    /// DELETE /me.
    DeleteAccount: catalog::DELETE_ACCOUNT,
    parse,
    reads: Reads {
        if_match: true,
        ..Reads::CALLER
    },
    example: Example {
        if_match: true,
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::VersionMismatch { current: 2 },
        crate::StoreError::NothingToMatch,
        crate::StoreError::LastOwner,
    ],
}

/// The `If-Match` precondition.
pub fn parse(req: &Request) -> Result<IfMatch, Problem> {
    if_match(req)
}

/// Whatever parses names real versions only, at most the cap of them.
#[cfg(fuzzing)]
fn admitted(_: &Request, precondition: &IfMatch) {
    if let IfMatch::Versions(versions) = precondition {
        assert!(versions.iter().all(|v| *v > 0));
        assert!(versions.len() <= crate::http::request::MAX_IF_MATCH_TAGS);
    }
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::DELETE_ACCOUNT;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};
    use crate::store::Deleter;

    /// The Lambda entry point of DELETE /me: 204 once the account is erased and its addresses released.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &DELETE_ACCOUNT, |caller, req| run(app, caller, req)).await
    }

    /// `DELETE /me` with `If-Match`: the caller's addresses are released and the
    /// profile erased in one transaction. Cognito learns of it from the table (the
    /// profile's change to `deleted`), as it does of an admin's delete.
    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let precondition = super::parse(&req)?;
        app.store
            .delete_user(&caller.user_id, Deleter::Owner(&precondition), app.clock.now())
            .await?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
