//! GET /emails/availability: lets a client tell whether an address is free before adding it.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailAddress;
use crate::http::Problem;
use crate::http::request::query_param;

route! {
    /// GET /emails/availability.
    CheckEmail: catalog::CHECK_EMAIL,
    parse,
    reads: Reads {
        query: &["email"],
        ..Reads::CALLER
    },
    example: Example {
        query: &[("email", "{free}")],
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::NotAllowed(crate::address_policy::Refusal::Subaddress),
        crate::StoreError::TooManyChecks { retry_after_secs: 60 },
    ],
}

/// The address asked about.
pub fn parse(req: &Request) -> Result<EmailAddress, Problem> {
    query_param(req, "email", EmailAddress::parse)
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &EmailAddress) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde_json::json;

    use crate::app::App;
    use crate::catalog::CHECK_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /emails/availability?email=: the address and whether the caller may add it now.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &CHECK_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email = super::parse(&req)?;
        let available = app
            .store
            .check_availability(&caller.user_id, &email, app.clock.now())
            .await?;
        response::json(StatusCode::OK, &json!({ "email": email, "available": available }))
    }
}
