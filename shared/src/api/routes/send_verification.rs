//! POST /me/emails/{emailId}/verification: a new code for an unverified address, within its daily limit.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailId;
use crate::http::Problem;
use crate::http::request::email_id_param;

route! {
    /// POST /me/emails/{emailId}/verification.
    SendVerification: catalog::SEND_VERIFICATION,
    parse,
    reads: Reads {
        path: &["emailId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("emailId", "{unverified}")],
        ..Example::bare(202)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::AlreadyVerified,
        crate::StoreError::TooManyRequests { retry_after_secs: 60 },
    ],
}

/// The unverified address record to send a new code to.
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

    use super::super::codes::{deliver, new_code};
    use crate::app::App;
    use crate::catalog::SEND_VERIFICATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /me/emails/{emailId}/verification: 202 once a new code is issued; delivery failures are only logged.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &SEND_VERIFICATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email_id = super::parse(&req)?;
        let code = new_code()?;
        let address = app
            .store
            .issue_code(&caller.user_id, email_id, &code, app.clock.now())
            .await?;
        deliver(app, email_id, &address, &code).await;
        Ok(response::empty(StatusCode::ACCEPTED))
    }
}
