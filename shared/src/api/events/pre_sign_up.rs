//! Cognito PreSignUp: refuse an address another account signs in with, before
//! Cognito creates the account. That refusal tells a stranger no more than
//! Cognito's own sign-up would (it refuses an address a user of the pool has as
//! its email). Another account's verified secondary address passes here: the
//! confirmation, once the mailbox is proved, closes that sign-up instead
//! (`cognito::create`). An unverified claim never blocks a sign-up: the confirmed
//! sign-up takes it over, so nobody can squat an address they cannot verify. The
//! event is returned unchanged. An address the deployment's policy refuses
//! (a `+tag`, a disposable domain, a domain off the allow-list) is refused
//! first, with ADDRESS_NOT_ALLOWED.

use aws_lambda_events::event::cognito::CognitoEventUserPoolsPreSignup;
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

use super::cognito;
use crate::app::App;
use crate::domain::EmailAddress;

/// The Lambda entry point of Cognito PreSignUp: the event unchanged, ADDRESS_NOT_ALLOWED when the address policy refuses the address, or EMAIL_TAKEN when another account signs in with it.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let parsed = CognitoEventUserPoolsPreSignup::deserialize(&event.payload)
        .map_err(|_| cognito::refuse("INVALID_EVENT", "The sign-up event could not be read."))?;
    let sub = parsed
        .cognito_event_user_pools_header
        .user_name
        .clone()
        .unwrap_or_default();
    Box::pin(cognito::run(app, &event.context, &sub, async {
        let Some(raw) = parsed.request.user_attributes.get("email") else {
            // Nothing to check: Cognito itself requires the address where the pool does.
            return Ok(());
        };
        let email = EmailAddress::parse(raw)
            .map_err(|_| cognito::refuse("VALIDATION_FAILED", "The email address is not valid."))?;
        if let Err(refusal) = app.store.policy().admit(&email) {
            return Err(cognito::not_allowed(refusal));
        }
        match app.store.is_sign_in_address(&email).await {
            Ok(false) => Ok(()),
            Ok(true) => Err(cognito::email_taken()),
            Err(err) => Err(cognito::store_failure(err)),
        }
    }))
    .await?;
    Ok(event.payload)
}
