//! GET /me/export: everything the service holds about the caller, as one
//! JSON document (schemas/export/account.v2.json), within a per-user daily limit.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /me/export.
    ExportAccount: catalog::EXPORT_ACCOUNT,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::TooManyExports { retry_after_secs: 60 },
    ],
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::{StatusCode, header};
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::EXPORT_ACCOUNT;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /me/export: the caller's export document.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &EXPORT_ACCOUNT, |caller, _| run(app, caller)).await
    }

    async fn run(app: &App, caller: Caller) -> Result<Response<Body>, Failure> {
        let export = app.store.export_account(&caller.user_id, app.clock.now()).await?;
        let response = response::json(StatusCode::OK, &export)?;
        // Personal data: no cache along the way keeps a copy.
        Ok(response::with_header(response, header::CACHE_CONTROL, "no-store"))
    }
}
