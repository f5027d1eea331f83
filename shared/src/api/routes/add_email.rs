//! POST /me/emails: the caller adds an address, unverified until its mailed code is entered.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailAddress;
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /me/emails.
    AddEmail: catalog::ADD_EMAIL,
    parse,
    reads: Reads {
        json_body: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"email": "{extra}"}"#),
        ..Example::bare(201)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::EmailTaken,
        crate::StoreError::AlreadyAdded,
        crate::StoreError::NotAllowed(crate::address_policy::Refusal::DisposableDomain),
        crate::StoreError::LimitReached,
        crate::StoreError::TooManyRequests { retry_after_secs: 60 },
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    email: EmailAddress,
}

/// The address to add.
pub fn parse(req: &Request) -> Result<EmailAddress, Problem> {
    let Payload { email } = json_body(req)?;
    Ok(email)
}

#[cfg(fuzzing)]
fn admitted(req: &Request, email: &EmailAddress) {
    let raw = super::fuzzing::body_str(req, "email");
    assert_eq!(EmailAddress::parse(&raw).as_ref(), Ok(email));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::{StatusCode, header};
    use lambda_http::{Body, Request, Response};

    use super::super::codes::{deliver, new_code};
    use crate::app::App;
    use crate::catalog::ADD_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /me/emails: 201 with the new address and its Location; the code goes out by mail.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &ADD_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let email = super::parse(&req)?;
        let code = new_code()?;
        let added = app
            .store
            .add_email(&caller.user_id, &email, &code, app.clock.now())
            .await?;
        deliver(app, added.email_id, &email, &code).await;
        let location = format!("/me/emails/{}", added.email_id);
        Ok(response::with_header(
            response::json(StatusCode::CREATED, &added)?,
            header::LOCATION,
            &location,
        ))
    }
}
