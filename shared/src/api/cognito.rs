//! What the two Cognito triggers share: how they log and how they refuse.

use std::future::Future;
use std::time::Duration;

use lambda_runtime::{Context, Diagnostic};
use tracing::Instrument;

use crate::StoreError;
use crate::store::retry;

/// Cognito waits this long for a trigger, whatever the function's timeout.
pub const COGNITO_WAITS: Duration = Duration::from_secs(5);

/// Runs a trigger's work in a span carrying the request id and the user's `sub`
/// (like the HTTP handlers'), with retries bounded so it answers within Cognito's 5 s.
pub async fn run<F: Future>(context: &Context, sub: &str, work: F) -> F::Output {
    let span = tracing::info_span!("trigger", request_id = %context.request_id, sub = %sub);
    let deadline = retry::from_lambda(context.deadline, Some(COGNITO_WAITS));
    retry::within(deadline, work.instrument(span)).await
}

/// A refusal Cognito shows to the client: the message starts with a stable code.
pub fn refuse(code: &'static str, message: &str) -> Diagnostic {
    tracing::info!(code, "sign-up refused");
    Diagnostic {
        error_type: code.to_owned(),
        error_message: format!("{code}: {message}"),
    }
}

/// A store failure: a stable code for the client, the cause chain for the log.
pub fn store_failure(err: StoreError) -> Diagnostic {
    match err {
        StoreError::EmailTaken => email_taken(),
        err => {
            tracing::error!(cause = %crate::error_chain(&err), retryable = err.is_retryable(), "trigger failed");
            refuse("SERVICE_UNAVAILABLE", "Please try again in a moment.")
        }
    }
}

pub fn email_taken() -> Diagnostic {
    refuse("EMAIL_TAKEN", "An account with this email address already exists.")
}
