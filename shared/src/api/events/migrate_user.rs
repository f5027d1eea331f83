//! Cognito UserMigration: a user the import left pending signs in for the
//! first time (or asks for a password reset) with an address Cognito does not
//! know. Found by that address, the pending user is handed to Cognito:
//! - at sign-in (`UserMigration_Authentication`), only if the password given
//!   matches the legacy hash: confirmed, no message sent;
//! - on forgot-password (`UserMigration_ForgotPassword`), without a password:
//!   Cognito makes the user RESET_REQUIRED and mails its code.
//!
//! Either way Cognito's attributes are the primary address, verified. The
//! profile moves to the new `sub` when Cognito fires PostAuthentication or
//! PostConfirmation (`cognito::create`). Wrong passwords are counted on the
//! hash; past [`MAX_WRONG_PASSWORDS`] a day the trigger refuses before hashing.
//! Neither the address given nor the password nor the hash is ever logged.

use aws_lambda_events::event::cognito::{
    CognitoEventUserPoolsMigrateUser, CognitoEventUserPoolsMigrateUserTriggerSource as Source,
};
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde::Deserialize;
use serde_json::{Value, json};

use super::cognito;
use crate::app::App;
use crate::domain::EmailAddress;
use crate::legacy_password::{self, CostLimits, Unusable};
use crate::store::{MAX_WRONG_PASSWORDS, PendingUser, password_admitted};

/// The Lambda entry point of Cognito UserMigration: the event with its
/// `response` filled in, or a refusal whose message starts with a stable code.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let parsed = CognitoEventUserPoolsMigrateUser::deserialize(&event.payload)
        .map_err(|_| cognito::refuse("INVALID_EVENT", "The migration event could not be read."))?;
    let header = &parsed.cognito_event_user_pools_header;
    let source = header.trigger_source.clone();
    let user_name = header.user_name.clone().unwrap_or_default();
    let password = parsed.cognito_event_user_pools_migrate_user_request.password;
    // No sub yet: the span names none, and the pending id is logged once found.
    let response = Box::pin(cognito::run(&event.context, "", async {
        migrate(app, source, &user_name, password).await
    }))
    .await?;
    let mut payload = event.payload;
    payload["response"] = response;
    Ok(payload)
}

async fn migrate(
    app: &App,
    source: Option<Source>,
    user_name: &str,
    password: Option<String>,
) -> Result<Value, Diagnostic> {
    let address = EmailAddress::parse(user_name).map_err(|_| no_such_user())?;
    let pending = match app.store.pending_user(&address).await {
        Ok(Some(pending)) => pending,
        Ok(None) => return Err(no_such_user()),
        Err(err) => return Err(cognito::store_failure(err)),
    };
    let pending_id = pending.profile.user_id.clone();
    tracing::info!(pending = %pending_id, "pending user found");
    if pending.profile.status != crate::domain::UserStatus::Active {
        return Err(cognito::refuse("ACCOUNT_SUSPENDED", "This account is suspended."));
    }
    match source {
        Some(Source::ForgotPassword) => {
            crate::metrics::count(crate::metrics::Metric::MigrationsStarted);
            tracing::info!(pending = %pending_id, "migrating without a password: Cognito sends a reset code");
            Ok(response(&pending, false))
        }
        // Authentication, and any source a later Cognito adds: a password is needed.
        _ => {
            let password = password
                .filter(|p| !p.is_empty())
                .ok_or_else(|| cognito::refuse("INVALID_EVENT", "The sign-in carried no password."))?;
            check_password(app, &pending, password).await?;
            crate::metrics::count(crate::metrics::Metric::MigrationsStarted);
            tracing::info!(pending = %pending_id, "legacy password matched: migrating");
            Ok(response(&pending, true))
        }
    }
}

/// Checks `password` against the pending user's legacy hash, within the
/// daily limit of wrong ones; a wrong one is counted.
async fn check_password(app: &App, pending: &PendingUser, password: String) -> Result<(), Diagnostic> {
    let Some(legacy) = pending.password.clone() else {
        // Imported without a password: forgot-password is the way in.
        return Err(cognito::refuse(
            "PASSWORD_RESET_REQUIRED",
            "Reset your password to sign in for the first time.",
        ));
    };
    let now = app.clock.now();
    if let Err(retry_after_secs) = password_admitted(&legacy, now) {
        tracing::info!(
            retry_after_secs,
            limit = MAX_WRONG_PASSWORDS,
            "too many wrong passwords"
        );
        return Err(cognito::refuse(
            "TOO_MANY_ATTEMPTS",
            "Too many wrong passwords. Reset your password, or try again later.",
        ));
    }
    let hash = legacy.password_hash.clone();
    // The hash is CPU work of up to a second: off the runtime's thread.
    let verified = tokio::task::spawn_blocking(move || legacy_password::verify(&hash, &password, &CostLimits::TRIGGER))
        .await
        .map_err(|_| cognito::refuse("SERVICE_UNAVAILABLE", "Please try again in a moment."))?;
    match verified {
        Ok(true) => Ok(()),
        Ok(false) => {
            crate::metrics::count(crate::metrics::Metric::WrongLegacyPasswords);
            if let Err(err) = app.store.count_wrong_password(&legacy, now).await {
                // Counting failed: the sign-in is refused all the same.
                tracing::error!(cause = %crate::error::chain(&err), "wrong password not counted");
            }
            Err(cognito::refuse("INCORRECT_PASSWORD", "Incorrect username or password."))
        }
        Err(unusable @ (Unusable::TooCostly | Unusable::Malformed)) => {
            tracing::error!(reason = %unusable, "legacy hash unusable at sign-in; the user must reset");
            Err(cognito::refuse(
                "PASSWORD_RESET_REQUIRED",
                "Reset your password to sign in for the first time.",
            ))
        }
    }
}

/// The trigger's `response`: the primary address, verified, and no message
/// (Cognito still mails a forgot-password code). Confirmed at sign-in; on
/// forgot-password Cognito leaves the user RESET_REQUIRED until the code.
/// Names and phone stay in the table alone, as for every user.
fn response(pending: &PendingUser, confirmed: bool) -> Value {
    let email = pending
        .profile
        .email
        .as_ref()
        .map(EmailAddress::as_str)
        .unwrap_or_default();
    let mut response = json!({
        "userAttributes": { "email": email, "email_verified": "true" },
        "messageAction": "SUPPRESS",
    });
    if confirmed {
        response["finalUserStatus"] = json!("CONFIRMED");
    }
    response
}

/// What an address no pending user holds gets: Cognito tells the client the
/// user does not exist (or, with PreventUserExistenceErrors, a wrong password).
fn no_such_user() -> Diagnostic {
    cognito::refuse("USER_NOT_FOUND", "User does not exist.")
}
