//! Cognito PostAuthentication: the repair path. A confirmed Cognito user without
//! a profile gets one at sign-in, through the same idempotent create as
//! post-confirmation: a user whose post-confirmation failed after Cognito's
//! retries, and a user made with AdminCreateUser (which fires no confirmation).
//! Only once Cognito has verified the address. A deleted or suspended account
//! cannot sign in: the sync disables a suspended user in Cognito, but until it
//! has (stream lag, retries, the failure queue) a sign-in would mint fresh
//! tokens for an account an admin has stopped. Likewise, a recovered account
//! cannot sign in until the sync has signed every session out and required a
//! new password: until then the password is one the taker may know.
//! The event is returned unchanged.

use aws_lambda_events::event::cognito::CognitoEventUserPoolsPostAuthentication;
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde::Deserialize;
use serde_json::Value;

use super::cognito;
use crate::app::App;
use crate::domain::{UserId, UserStatus};

/// The Lambda entry point of Cognito PostAuthentication: refuses deleted, suspended and just-recovered accounts, creates a missing profile, returns the event.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let parsed = CognitoEventUserPoolsPostAuthentication::deserialize(&event.payload)
        .map_err(|_| cognito::refuse("INVALID_EVENT", "The sign-in event could not be read."))?;
    let attributes = &parsed.request.user_attributes;
    let sub = attributes
        .get("sub")
        .or(parsed.cognito_event_user_pools_header.user_name.as_ref())
        .cloned()
        .unwrap_or_default();
    let pool_id = parsed.cognito_event_user_pools_header.user_pool_id.as_deref();
    Box::pin(cognito::run(app, &event.context, &sub, async {
        let user_id =
            UserId::parse(&sub).map_err(|_| cognito::refuse("INVALID_EVENT", "The user has no valid sub."))?;
        match app.store.sign_in_standing(&user_id).await {
            Ok(Some((UserStatus::Deleted, _))) => {
                return Err(cognito::refuse("ACCOUNT_DELETED", "This account was deleted."));
            }
            Ok(Some((UserStatus::Suspended, _))) => {
                return Err(cognito::refuse("ACCOUNT_SUSPENDED", "This account is suspended."));
            }
            Ok(Some((_, true))) => {
                return Err(cognito::refuse(
                    "ACCOUNT_RECOVERY_PENDING",
                    "This account was just recovered. Try again in a moment.",
                ));
            }
            Ok(Some(_)) => return Ok(()),
            Ok(None) => {}
            Err(err) => return Err(cognito::store_failure(err)),
        }
        let Some(user) = cognito::confirmed_user(&sub, attributes)? else {
            tracing::info!("no profile, and Cognito has not verified the address yet");
            return Ok(());
        };
        cognito::create(app, pool_id, &user, "user created at sign-in (repair)").await
    }))
    .await?;
    Ok(event.payload)
}
