//! GET /me/emails: every address on the caller's account, verified or not.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /me/emails.
    ListEmails: catalog::LIST_EMAILS,
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
    use serde_json::json;

    use crate::app::App;
    use crate::catalog::LIST_EMAILS;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /me/emails: the caller's addresses under `emails`, oldest first.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_EMAILS, |caller, _| run(app, caller)).await
    }

    async fn run(app: &App, caller: Caller) -> Result<Response<Body>, Failure> {
        let emails = app.store.list_emails(&caller.user_id).await?;
        response::json(StatusCode::OK, &json!({ "emails": emails }))
    }
}
