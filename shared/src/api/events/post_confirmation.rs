//! Cognito PostConfirmation: a confirmed sign-up creates the user, its verified
//! primary address and the address's claim, in one transaction. Cognito retries
//! triggers; every delivery of the same event succeeds and there is one user.

use aws_lambda_events::event::cognito::{
    CognitoEventUserPoolsPostConfirmation, CognitoEventUserPoolsPostConfirmationTriggerSource as Source,
};
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

use super::cognito;
use crate::app::App;

/// The Lambda entry point of Cognito PostConfirmation: creates the confirmed sign-up's user and returns the event unchanged.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let parsed = <CognitoEventUserPoolsPostConfirmation>::deserialize(&event.payload)
        .map_err(|_| cognito::refuse("INVALID_EVENT", "The confirmation event could not be read."))?;
    let header = &parsed.cognito_event_user_pools_header;
    let reset = match header.trigger_source {
        Some(Source::ConfirmSignUp) => false,
        // A confirmed password reset creates nothing, but for a user without
        // a profile: a pending user who migrated through forgot-password
        // appears here first (Cognito fires PostConfirmation on
        // ConfirmForgotPassword), and moves to their new sub.
        Some(Source::ConfirmForgotPassword) => true,
        _ => return Ok(event.payload),
    };
    let attributes = &parsed.request.user_attributes;
    let sub = attributes
        .get("sub")
        .or(header.user_name.as_ref())
        .cloned()
        .unwrap_or_default();
    let pool_id = header.user_pool_id.as_deref();
    Box::pin(cognito::run(app, &event.context, &sub, async {
        let Some(user) = cognito::confirmed_user(&sub, attributes)? else {
            tracing::info!("address not verified by Cognito; the profile waits for a sign-in");
            return Ok(());
        };
        if reset {
            return cognito::adopt_pending(app, &user).await;
        }
        cognito::create(app, pool_id, &user, "user created").await
    }))
    .await?;
    Ok(event.payload)
}
