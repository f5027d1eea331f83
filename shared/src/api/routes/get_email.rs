//! GET /me/emails/{emailId}: one of the caller's addresses, where add-email's Location points.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailId;
use crate::http::Problem;
use crate::http::request::email_id_param;

route! {
    /// GET /me/emails/{emailId}.
    GetEmail: catalog::GET_EMAIL,
    parse,
    reads: Reads {
        path: &["emailId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("emailId", "{unverified}")],
        ..Example::bare(200)
    },
    refusals: [crate::StoreError::NotFound],
}

/// The address record the path names.
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
    use crate::catalog::GET_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /me/emails/{emailId}: that address, if it is the caller's.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &GET_EMAIL, |caller, req| run(app, caller, req)).await
    }

    /// The target of add-email's `Location`. Another user's id is not found.
    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email_id = super::parse(&req)?;
        let email = app.store.get_email(&caller.user_id, email_id).await?;
        response::json(StatusCode::OK, &email)
    }
}
