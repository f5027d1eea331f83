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
use crate::domain::{EmailAddress, UserId};
use crate::legacy_password::{self, CostLimits, Unusable};
use crate::store::{MAX_WRONG_PASSWORDS, PasswordSlot, PendingUser, Slot, password_admitted};

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
    let response = Box::pin(cognito::run(app, &event.context, "", async {
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
            // Counted apart: anyone who knows the address can start one, and
            // it ends the legacy password (docs/migration.md#forgot-password-anyone-can-end-a-legacy-password).
            crate::metrics::count(crate::metrics::Metric::MigrationsByPasswordReset);
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
    // A window full as read is refused with no write at all.
    if let Err(retry_after_secs) = password_admitted(&legacy, now) {
        return Err(too_many_attempts(retry_after_secs));
    }
    // The slot is taken before the hash is checked, in a conditional write:
    // concurrent guesses that all read a list with room cannot all get through.
    let slot = match app.store.take_password_slot(&legacy.user_id, now).await {
        Ok(PasswordSlot::Taken(slot)) => slot,
        Ok(PasswordSlot::Full(retry_after_secs)) => return Err(too_many_attempts(retry_after_secs)),
        // Migrated or erased since it was read.
        Ok(PasswordSlot::Gone) => return Err(no_such_user()),
        Err(err) => return Err(cognito::store_failure(err)),
    };
    let hash = legacy.password_hash.clone();
    // The hash is CPU work of up to a second: off the runtime's thread.
    let verified = tokio::task::spawn_blocking(move || legacy_password::verify(&hash, &password, &CostLimits::TRIGGER))
        .await
        .map_err(|_| cognito::refuse("SERVICE_UNAVAILABLE", "Please try again in a moment."))?;
    // The slot's count of checks is what the limit holds; this says one ran.
    tracing::info!(matched = matches!(verified, Ok(true)), "legacy password checked");
    match verified {
        Ok(true) => {
            give_back(app, &legacy.user_id, slot).await;
            Ok(())
        }
        Ok(false) => {
            // The slot stays taken: it counts this wrong password.
            crate::metrics::count(crate::metrics::Metric::WrongLegacyPasswords);
            Err(cognito::refuse("INCORRECT_PASSWORD", "Incorrect username or password."))
        }
        Err(unusable @ (Unusable::TooCostly | Unusable::Malformed)) => {
            give_back(app, &legacy.user_id, slot).await;
            tracing::error!(reason = %unusable, "legacy hash unusable at sign-in; the user must reset");
            Err(cognito::refuse(
                "PASSWORD_RESET_REQUIRED",
                "Reset your password to sign in for the first time.",
            ))
        }
    }
}

/// The refusal once the window's slots are all taken.
fn too_many_attempts(retry_after_secs: u64) -> Diagnostic {
    tracing::info!(
        retry_after_secs,
        limit = MAX_WRONG_PASSWORDS,
        "too many wrong passwords"
    );
    cognito::refuse(
        "TOO_MANY_ATTEMPTS",
        "Too many wrong passwords. Reset your password, or try again later.",
    )
}

/// Returns a slot that counted no wrong password. A failure only leaves it
/// counted until the window moves on: the sign-in goes ahead all the same.
async fn give_back(app: &App, pending: &UserId, slot: Slot) {
    if let Err(err) = app.store.give_back_password_slot(pending, slot).await {
        tracing::warn!(cause = %crate::error::chain(&err), "a password check's slot was not given back");
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
