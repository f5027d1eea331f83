//! Verification codes, as the routes that issue one hand it out: a fresh
//! code, and its delivery, whose failure loses nothing.

use crate::app::App;
use crate::domain::{EmailAddress, EmailId};
use crate::http::{Failure, Problem};
use crate::mail::Mail;
use crate::metrics::{self, Metric};
use crate::verification::VerificationCode;

/// A fresh code; the OS random source failing is our fault, not the caller's.
pub(super) fn new_code() -> Result<VerificationCode, Failure> {
    VerificationCode::generate().map_err(|err| Failure {
        problem: Box::new(Problem::internal()),
        cause: Some(Box::new(err)),
    })
}

/// Sends a code. A failed delivery loses nothing: the address stays and
/// send-verification issues a new code, so it is logged (without the address or
/// the code), not returned.
pub(super) async fn deliver(app: &App, email_id: EmailId, to: &EmailAddress, code: &VerificationCode) {
    let Some(sender) = &app.sender else {
        tracing::error!(email_id = %email_id, "verification code not delivered: this function has no sender (catalog: sends_email)");
        return;
    };
    metrics::count(Metric::CodesIssued);
    let mail = Mail::VerificationCode {
        email_id,
        code,
        valid_for_seconds: app.store.config().code_ttl_seconds,
    };
    if let Err(err) = sender.send(to, &mail).await {
        tracing::error!(email_id = %email_id, cause = %crate::error::chain(&err), "verification code not delivered");
    }
}
