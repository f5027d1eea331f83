//! What the two Cognito triggers share: how they log and how they refuse.

use std::future::Future;

use lambda_runtime::{Context, Diagnostic};
use tracing::Instrument;

use std::collections::HashMap;

use crate::StoreError;
use crate::deadline;
use crate::domain::{EmailAddress, NewUser, PersonName, Phone, UserId};
use crate::store::Adopted;

/// Runs a trigger's work in a span carrying the request id and the user's `sub`
/// (like the HTTP handlers'), with retries bounded so it answers within the
/// time Cognito waits (`App::trigger_wait`, 5 s).
pub async fn run<F: Future>(app: &crate::app::App, context: &Context, sub: &str, work: F) -> F::Output {
    let span = tracing::info_span!("trigger", request_id = %context.request_id, sub = %sub);
    let deadline = deadline::from_lambda(context.deadline, Some(app.trigger_wait));
    deadline::within(deadline, work.instrument(span)).await
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
            tracing::error!(cause = %crate::error::chain(&err), retryable = err.is_retryable(), "trigger failed");
            refuse("SERVICE_UNAVAILABLE", "Please try again in a moment.")
        }
    }
}

/// The refusal of a sign-up whose address another user holds: EMAIL_TAKEN, as the client sees it.
pub fn email_taken() -> Diagnostic {
    refuse("EMAIL_TAKEN", "An account with this email address already exists.")
}

/// The refusal of a sign-up with an address the deployment's policy refuses:
/// ADDRESS_NOT_ALLOWED and why, counted, the reason logged (never the address).
pub fn not_allowed(refusal: crate::address_policy::Refusal) -> Diagnostic {
    crate::metrics::count(crate::metrics::Metric::AddressesNotAllowed);
    tracing::info!(reason = refusal.code(), "address refused by the address policy");
    refuse("ADDRESS_NOT_ALLOWED", &refusal.to_string())
}

/// The user Cognito's attributes describe, for the idempotent create; `None`
/// while Cognito has not verified the address (a verified primary is never made
/// of an address Cognito has not verified: a later sign-in creates the profile).
pub fn confirmed_user(sub: &str, attributes: &HashMap<String, String>) -> Result<Option<NewUser>, Diagnostic> {
    let user_id = UserId::parse(sub).map_err(|_| refuse("INVALID_EVENT", "The user has no valid sub."))?;
    if attributes.get("email_verified").map(String::as_str) != Some("true") {
        return Ok(None);
    }
    let email = attributes
        .get("email")
        .and_then(|raw| EmailAddress::parse(raw).ok())
        .ok_or_else(|| refuse("VALIDATION_FAILED", "The email address is not valid."))?;
    // Optional attributes that do not parse are left out rather than failing a sign-up.
    let optional = |name: &str| attributes.get(name).map(String::as_str);
    Ok(Some(NewUser {
        user_id,
        email,
        first_name: optional("given_name").and_then(|n| PersonName::parse(n).ok()),
        last_name: optional("family_name").and_then(|n| PersonName::parse(n).ok()),
        phone: optional("phone_number").and_then(|p| Phone::parse(p).ok()),
    }))
}

/// The idempotent create of a confirmed user, logged by outcome (never by address).
///
/// A sign-up can be confirmed after another account added and verified the
/// same address (both proved the mailbox; the table's verified owner keeps it).
/// Refusing alone would refuse every later sign-in too, for good: the sign-up
/// is closed instead. Its Cognito user, which holds nothing here, is deleted in
/// the event's pool (`pool_id`), and the refusal says what to do.
pub async fn create(
    app: &crate::app::App,
    pool_id: Option<&str>,
    user: &NewUser,
    created: &'static str,
) -> Result<(), Diagnostic> {
    match app.store.create_user(user, app.clock.now()).await {
        Ok(crate::store::Created::New) => {
            crate::metrics::count(crate::metrics::Metric::SignUps);
            tracing::info!("{created}");
        }
        Ok(crate::store::Created::Existing) => tracing::info!("user exists already; repeated delivery"),
        Err(StoreError::EmailTaken) => {
            if adopt(app, user).await? != Adopted::NoPending {
                return Ok(());
            }
            // Closed only for another account's verified claim, or its former
            // primary reserved for a recovery (added back unverified too): an
            // unverified one not yet moved to the policy's new form blocks for
            // a while, and never costs the sign-up.
            return match app.store.verified_holder(&user.email, app.clock.now()).await {
                Ok(Some(holder)) if holder != user.user_id => {
                    close_sign_up(app, pool_id, &user.user_id).await;
                    Err(refuse("EMAIL_TAKEN", SIGN_UP_CLOSED))
                }
                Ok(_) => {
                    tracing::warn!(
                        "sign-up waits: an unverified claim under the previous address policy holds the address"
                    );
                    Err(refuse("SERVICE_UNAVAILABLE", "Please try again in a moment."))
                }
                Err(err) => Err(store_failure(err)),
            };
        }
        Err(err) => return Err(store_failure(err)),
    }
    Ok(())
}

/// A confirmed password reset of a user without a profile: a pending user
/// who migrated through forgot-password, appearing for the first time, moves
/// to this `sub`. Any other reset creates nothing (a sign-in repairs a
/// missing profile).
pub async fn adopt_pending(app: &crate::app::App, user: &NewUser) -> Result<(), Diagnostic> {
    match app.store.profile_status(&user.user_id).await {
        Ok(Some(_)) => return Ok(()),
        Ok(None) => {}
        Err(err) => return Err(store_failure(err)),
    }
    adopt(app, user).await.map(|_| ())
}

/// Moves the pending user holding the address of `user` (who has no
/// profile) to its `sub`: their first appearance after the migration
/// trigger handed them to Cognito, at sign-in or after a forgot-password.
///
/// It asks what a create asks: that Cognito verified the address for this
/// `sub`, which it does for a migrated user only once the trigger matched the
/// legacy password or the user proved the mailbox with Cognito's code.
async fn adopt(app: &crate::app::App, user: &NewUser) -> Result<Adopted, Diagnostic> {
    match app
        .store
        .adopt_pending(&user.email, &user.user_id, app.clock.now())
        .await
    {
        Ok(Adopted::Moved) => {
            tracing::info!("pending user migrated to this sub");
            Ok(Adopted::Moved)
        }
        Ok(Adopted::Existing) => {
            tracing::info!("pending user migrated already; repeated delivery");
            Ok(Adopted::Existing)
        }
        Ok(Adopted::Suspended) => Err(refuse("ACCOUNT_SUSPENDED", "This account is suspended.")),
        Ok(Adopted::NoPending) => Ok(Adopted::NoPending),
        Err(err) => Err(store_failure(err)),
    }
}

/// What a user whose sign-up was closed is told.
pub const SIGN_UP_CLOSED: &str = "Another account verified this email address before this sign-up was confirmed, \
     so this sign-up has been closed. Sign in to that account, or sign up again with another email address.";

/// Deletes the Cognito user of a closed sign-up. A failure is logged and the
/// sign-in is refused all the same: the next one tries again.
async fn close_sign_up(app: &crate::app::App, pool_id: Option<&str>, user: &UserId) {
    let (Some(users), Some(pool_id)) = (&app.users, pool_id.filter(|p| !p.is_empty())) else {
        tracing::error!("sign-up not closed: no Cognito client or no pool in the event");
        return;
    };
    match users.in_pool(pool_id).delete(user).await {
        Ok(_) => tracing::info!("sign-up closed: its address is another account's; the Cognito user is deleted"),
        Err(err) => {
            tracing::error!(cause = %crate::error::chain(&err), "sign-up not closed; the next sign-in tries again")
        }
    }
}
