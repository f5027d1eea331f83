//! POST /me/emails/{emailId}/verify: the caller proves they read an address by entering its code.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailId;
use crate::http::Problem;
use crate::http::request::{email_id_param, json_body};
use crate::verification::VerificationCode;

route! {
    /// POST /me/emails/{emailId}/verify.
    VerifyEmail: catalog::VERIFY_EMAIL,
    parse,
    reads: Reads {
        json_body: true,
        path: &["emailId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("emailId", "{unverified}")],
        body: Some(r#"{"code": "{code}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::AlreadyVerified,
        crate::StoreError::VerificationFailed { attempts_left: 2 },
        crate::StoreError::VerificationExpired,
        crate::StoreError::TooManyAttempts { retry_after_secs: 60 },
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    code: VerificationCode,
}

/// The address record and the code.
pub fn parse(req: &Request) -> Result<(EmailId, VerificationCode), Problem> {
    let email_id = email_id_param(req)?;
    let Payload { code } = json_body(req)?;
    Ok((email_id, code))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, (_, code): &(EmailId, VerificationCode)) {
    let revealed = code.reveal();
    assert!(revealed.len() == 6 && revealed.bytes().all(|b| b.is_ascii_digit()));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::VERIFY_EMAIL;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /me/emails/{emailId}/verify: the address, now verified.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &VERIFY_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (email_id, code) = super::parse(&req)?;
        let email = app
            .store
            .verify_email(&caller.user_id, email_id, &code, app.clock.now())
            .await?;
        response::json(StatusCode::OK, &email)
    }
}
