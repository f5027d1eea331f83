//! What the two Cognito triggers share: how they log and how they refuse.

use lambda_runtime::{Context, Diagnostic};

use crate::StoreError;

/// A span carrying the request id and the user's `sub`, like the HTTP handlers'.
pub fn span(context: &Context, sub: &str) -> tracing::Span {
    tracing::info_span!("trigger", request_id = %context.request_id, sub = %sub)
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
