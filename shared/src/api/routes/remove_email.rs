//! DELETE /me/emails/{emailId}: the caller drops an address other than the primary, releasing it.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailId;
use crate::http::Problem;
use crate::http::request::email_id_param;

route! {
    /// DELETE /me/emails/{emailId}.
    RemoveEmail: catalog::REMOVE_EMAIL,
    parse,
    reads: Reads {
        path: &["emailId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("emailId", "{secondary}")],
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::PrimaryEmail,
        crate::StoreError::SignInAddressPending,
    ],
}

/// The address record to remove.
pub fn parse(req: &Request) -> Result<EmailId, Problem> {
    email_id_param(req)
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &EmailId) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::REMOVE_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /me/emails/{emailId}: 204 once the address is gone and free for others.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &REMOVE_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email_id = super::parse(&req)?;
        app.store
            .remove_email(&caller.user_id, email_id, app.clock.now())
            .await?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
