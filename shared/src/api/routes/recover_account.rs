//! POST /recovery: the holder of a former primary address takes the account
//! back with the one-time link its notice carried. No token of the account's
//! is needed, or accepted in its place: the link is the proof.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::http::Problem;
use crate::http::request::json_body;
use crate::recovery::RecoveryToken;

route! {
    /// POST /recovery.
    RecoverAccount: catalog::RECOVER_ACCOUNT,
    parse,
    reads: Reads {
        json_body: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"token": "{recovery}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::RecoveryLinkInvalid,
        crate::StoreError::TooManyRecoveryAttempts { retry_after_secs: 60 },
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    token: String,
}

/// The longest token accepted as text; anything longer is no token.
const MAX_TOKEN_CHARS: usize = 512;

/// The link's token. Text no token encodes to is bad input, refused before
/// the table (the format is no secret); a well-formed token that undoes
/// nothing is the store's to count as a guess.
pub fn parse(req: &Request) -> Result<RecoveryToken, Problem> {
    let Payload { token } = json_body(req)?;
    if token.chars().count() > MAX_TOKEN_CHARS {
        return Err(Problem::validation("token", "is longer than any recovery token"));
    }
    RecoveryToken::parse(&token).ok_or_else(|| Problem::validation("token", "is not a recovery token"))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, token: &RecoveryToken) {
    let raw = super::fuzzing::body_str(req, "token");
    assert_eq!(RecoveryToken::parse(&raw).as_ref(), Some(token));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use crate::app::App;
    use crate::audit;
    use crate::http::lambda::serve_anyone;
    use crate::http::{Failure, response};

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Recovered<'a> {
        /// The address that signs in again: the one the link was mailed to.
        email: Option<&'a str>,
        /// How many addresses the recovery removed.
        removed_addresses: usize,
    }

    /// The Lambda entry point of POST /recovery: 200 with the address that
    /// signs in again, or 404 for a link that undoes nothing.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve_anyone(req, |req| run(app, req)).await
    }

    async fn run(app: &App, req: Request) -> Result<Response<Body>, Failure> {
        let token = super::parse(&req)?;
        let source = crate::http::request::source_ip(&req);
        let recovered = app.store.follow_recovery_link(&source, &token, app.clock.now()).await?;
        // Admins read it in the audit trail: the account, and the switch undone.
        tracing::info!(
            target: audit::TARGET,
            audit = "account_recovery",
            sub = recovered.profile.user_id.as_str(),
            undone_version = recovered.undone_version,
            removed_addresses = recovered.removed,
            "account recovered from a switch of its primary address"
        );
        response::json(
            StatusCode::OK,
            &Recovered {
                email: recovered.profile.email.as_ref().map(|e| e.as_str()),
                removed_addresses: recovered.removed,
            },
        )
    }
}
