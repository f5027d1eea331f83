//! PUT /me/primary-email: the caller moves their primary to another verified address.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailId;
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// PUT /me/primary-email.
    SetPrimaryEmail: catalog::SET_PRIMARY_EMAIL,
    parse,
    reads: Reads {
        json_body: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"emailId": "{secondary}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::NotVerified,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Payload {
    email_id: EmailId,
}

/// The verified address to make primary.
pub fn parse(req: &Request) -> Result<EmailId, Problem> {
    let Payload { email_id } = json_body(req)?;
    Ok(email_id)
}

#[cfg(fuzzing)]
fn admitted(req: &Request, email_id: &EmailId) {
    let raw = super::fuzzing::body_str(req, "emailId");
    assert_eq!(EmailId::parse(&raw), Ok(*email_id));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::SET_PRIMARY_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of PUT /me/primary-email: the caller's profile with the new primary and its new ETag.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &SET_PRIMARY_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email_id = super::parse(&req)?;
        response::profile(
            &app.store
                .set_primary(&caller.user_id, email_id, app.clock.now())
                .await?,
        )
    }
}
