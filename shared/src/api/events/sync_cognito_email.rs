//! Cognito follows the table. The stream delivers every changed profile (the
//! event source mapping's filter passes profile MODIFY records alone); this
//! compares the old image with the new one, because filters cannot, and writes
//! the latest state to Cognito:
//! - a new primary address becomes Cognito's `email`, verified, and is recorded
//!   on the profile as Cognito's (until then the former primary cannot be
//!   removed); the former primary gets a notice, so a takeover cannot go
//!   unnoticed, with a one-time link that undoes the switch while it can be;
//! - a recovery (the former primary followed that link) makes the restored
//!   primary Cognito's `email`, signs the user out everywhere, and has them set
//!   a new password at their next sign-in, then lets them sign in again (the
//!   recovery held sign-in); the address it replaced is told nothing;
//! - a suspension signs the user out everywhere and disables them; re-activation
//!   enables them;
//! - a deletion signs them out everywhere and deletes the Cognito user, which
//!   frees the address for the next owner's sign-up, and erases the switches
//!   kept for their undoing (with the addresses they reserve).
//!
//! The images decide what changed; each write then sets the state the new image
//! names (this email, disabled, gone), so applying a record again leaves
//! Cognito as the first time did, and only the notice is sent again. Records are
//! processed in order; the first that fails is reported and nothing after it is
//! applied in this invocation: Lambda retries from it (bounded, then the
//! on-failure queue).

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use lambda_runtime::LambdaEvent;

use crate::app::App;
use crate::deadline;
use crate::domain::{EmailAddress, UserId, UserStatus};
use crate::mail::{Mail, RecoveryLink};
use crate::store::changes::{NotAProfile, ProfileChange, ProfileImage, user_of_record};

/// One write to bring Cognito, or the former primary's inbox, up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Revoke every refresh token, before an active user is disabled or deleted.
    SignOutEverywhere,
    /// Disable the Cognito user, so a suspended account cannot sign in.
    Disable,
    /// Enable the Cognito user again, on re-activation.
    Enable,
    /// Delete the Cognito user, freeing the address for the next owner's sign-up.
    Delete,
    /// Make this address Cognito's `email`, already verified: the new primary.
    SetEmail(EmailAddress),
    /// Mail this former primary address that the primary moved away from it,
    /// with a recovery link when the switch that wrote this version can be undone.
    NotifyFormerPrimary(EmailAddress, Option<u64>),
    /// The user must choose a new password at their next sign-in: a recovery's.
    RequireNewPassword,
    /// Lift the recovery's hold on sign-in (the recovery at these epoch
    /// seconds): Cognito is settled, so a sign-in now needs the new password.
    ReleaseSignIn(i64),
    /// Erase the switches kept for a deleted user's recovery, and the addresses they reserve.
    EraseSwitches,
}

/// What a profile change asks of Cognito. Pure: the images alone decide.
pub fn plan(old: &ProfileImage, new: &ProfileImage) -> Vec<Step> {
    if new.status == UserStatus::Deleted {
        let mut steps = match old.status {
            // Erased because Cognito has no such user: a call would spend the
            // UserUpdate quota (25 requests a second, not adjustable) on nothing.
            _ if new.gone_from_cognito => Vec::new(),
            UserStatus::Deleted => Vec::new(),
            // Disabling revoked its tokens already.
            UserStatus::Suspended => vec![Step::Delete],
            UserStatus::Active => vec![Step::SignOutEverywhere, Step::Delete],
        };
        if old.status != UserStatus::Deleted {
            steps.push(Step::EraseSwitches);
        }
        return steps;
    }
    let recovered = new.tokens_valid_after.is_some() && new.tokens_valid_after != old.tokens_valid_after;
    let mut steps = Vec::new();
    match (old.status, new.status) {
        (UserStatus::Suspended, UserStatus::Suspended) => {}
        (_, UserStatus::Suspended) => steps.extend([Step::SignOutEverywhere, Step::Disable]),
        (UserStatus::Suspended | UserStatus::Deleted, UserStatus::Active) => steps.push(Step::Enable),
        _ => {}
    }
    // The reconcile's pass found Cognito holding another address than the
    // primary (a switch whose record failed for good): apply the primary again,
    // here, in the stream's order, so no later switch is overtaken.
    let resync = new.sync_requested_at.is_some() && new.sync_requested_at != old.sync_requested_at;
    if let Some(primary) = &new.email
        && (old.email.as_ref() != Some(primary) || resync)
    {
        steps.push(Step::SetEmail(primary.clone()));
        // Whoever held the address Cognito signed the user in with is told,
        // with the way back if this record is the switch itself; never the
        // address a recovery took the account back from.
        let (former, switch) = if old.email.as_ref() == Some(primary) {
            (new.cognito_email.as_ref().filter(|held| *held != primary), None)
        } else {
            (old.email.as_ref(), Some(new.version))
        };
        // Last: a failure before it retries the record, and the notice is sent once.
        if let Some(former) = former.filter(|_| !recovered) {
            steps.push(Step::NotifyFormerPrimary(former.clone(), switch));
        }
    }
    if let Some(at) = new.tokens_valid_after.filter(|_| recovered) {
        // After the address: Cognito's reset mails the restored primary. Last,
        // the hold: a sign-in before it could use the taker's password.
        steps.extend([
            Step::SignOutEverywhere,
            Step::RequireNewPassword,
            Step::ReleaseSignIn(at),
        ]);
    }
    steps
}

/// Why a record was not applied; it is retried, then goes to the on-failure queue.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error(transparent)]
    NotAProfile(#[from] NotAProfile),
    #[error(transparent)]
    Cognito(#[from] crate::identity::IdentityError),
    #[error("the former primary address was not notified")]
    Notice(#[source] crate::mail::SendError),
    #[error("Cognito's address was not recorded")]
    Store(#[source] crate::StoreError),
    #[error("this function is not configured with {0}")]
    NotConfigured(&'static str),
    #[error("too little time left in the invocation; retried")]
    OutOfTime,
}

/// The Lambda entry point of the table stream's profile changes: applies them to Cognito in order, reporting the first record that failed.
pub async fn handle(app: &App, event: LambdaEvent<Event>) -> Result<DynamoDbEventResponse, lambda_runtime::Diagnostic> {
    let deadline = deadline::from_lambda(event.context.deadline, None);
    let span = tracing::info_span!("stream", request_id = %event.context.request_id);
    let records = event.payload.records;
    Ok(Box::pin(tracing::Instrument::instrument(
        deadline::within(deadline, apply_in_order(app, records)),
        span,
    ))
    .await)
}

/// Applies records in stream order. The first failure is reported and ends the
/// batch: Lambda retries from it, and what follows it for the same user must not
/// be applied before it.
async fn apply_in_order(app: &App, records: Vec<EventRecord>) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for record in &records {
        let sequence = record.change.sequence_number.clone().unwrap_or_default();
        if let Err(err) = apply(app, record).await {
            let sub = user_of_record(record).unwrap_or_default();
            if matches!(&err, RecordError::Cognito(e) if e.is_alias_taken()) {
                // Another Cognito user still holds the address: its own switch is
                // probably in flight on another shard. Retried; if it persists,
                // the record ends in the on-failure queue and its alarm fires.
                tracing::error!(
                    sub,
                    sequence,
                    code = "ALIAS_EXISTS",
                    "another Cognito user holds the new primary address"
                );
            } else {
                tracing::error!(sub, sequence, cause = %crate::error::chain(&err), "profile change not applied to Cognito");
            }
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = Some(sequence);
            response.batch_item_failures.push(failure);
            break;
        }
    }
    response
}

async fn apply(app: &App, record: &EventRecord) -> Result<(), RecordError> {
    let ProfileChange { old, new } = ProfileChange::from_record(record)?;
    if new.user_id.is_pending() {
        // A pending user has no Cognito user to follow it.
        return Ok(());
    }
    let steps = plan(&old, &new);
    if steps.is_empty() {
        return Ok(());
    }
    let users = app.users.as_ref().ok_or(RecordError::NotConfigured("USER_POOL_ID"))?;
    let user = &new.user_id;
    for step in &steps {
        // Each call's timeout is cut to what is left; a step is not started
        // without time for it, so the invocation never outlives its deadline.
        if deadline::current_deadline().is_some_and(|d| deadline::left(d) < crate::identity::MIN_CALL_TIME) {
            return Err(RecordError::OutOfTime);
        }
        let applied = match step {
            Step::SignOutEverywhere => users.sign_out_everywhere(user).await?,
            Step::Disable => users.disable(user).await?,
            Step::Enable => users.enable(user).await?,
            Step::Delete => users.delete(user).await?,
            Step::SetEmail(email) => {
                let applied = users.set_email(user, email).await?;
                if applied == crate::identity::Applied::Done {
                    // Now the former primary may be removed (remove-email waits
                    // for this); a failure retries the record, and the set again.
                    match app.store.confirm_cognito_email(user, email).await {
                        Ok(()) | Err(crate::StoreError::NotFound) => {}
                        Err(err) => return Err(RecordError::Store(err)),
                    }
                }
                applied
            }
            Step::NotifyFormerPrimary(former, switch) => {
                notify(app, user, former, *switch).await?;
                crate::identity::Applied::Done
            }
            Step::RequireNewPassword => users.require_new_password(user).await?,
            Step::EraseSwitches => {
                app.store.erase_switches(user).await.map_err(RecordError::Store)?;
                crate::identity::Applied::Done
            }
            Step::ReleaseSignIn(at) => {
                app.store.release_sign_in(user, *at).await.map_err(RecordError::Store)?;
                crate::identity::Applied::Done
            }
        };
        if applied == crate::identity::Applied::NoSuchUser {
            // Deleted in Cognito already: reconcile-users erases the profile.
            tracing::warn!(sub = %user, step = step.name(), "Cognito has no such user");
        }
    }
    tracing::info!(sub = %user, steps = ?steps.iter().map(Step::name).collect::<Vec<_>>(), "Cognito brought in line");
    Ok(())
}

async fn notify(app: &App, user: &UserId, former: &EmailAddress, switch: Option<u64>) -> Result<(), RecordError> {
    let sender = app.sender.as_ref().ok_or(RecordError::NotConfigured("a mail sender"))?;
    let link = match switch {
        Some(version) => recovery_link(app, user, version).await?,
        None => None,
    };
    let mail = Mail::PrimaryChanged {
        user_id: user,
        recovery: link.as_ref(),
    };
    sender.send(former, &mail).await.map_err(RecordError::Notice)
}

/// A fresh token for the switch, its hash recorded on it, as the notice's
/// link; `None` when the switch takes none (undone, lapsed, older than
/// recovery links, or mailed often enough) or no page is configured.
async fn recovery_link(app: &App, user: &UserId, version: u64) -> Result<Option<RecoveryLink>, RecordError> {
    let Some(page) = app.recovery_page.as_deref() else {
        tracing::warn!(sub = %user, "no ADDRESS_RECOVERY_URL: the notice goes without a recovery link");
        return Ok(None);
    };
    let issued = app.store.issue_recovery_token(user, version, app.clock.now()).await;
    Ok(issued
        .map_err(RecordError::Store)?
        .map(|(token, valid_until)| RecoveryLink {
            url: format!("{page}#token={}", token.encode()),
            valid_until,
        }))
}

impl Step {
    /// For logs: the step without the address it carries.
    pub fn name(&self) -> &'static str {
        match self {
            Self::SignOutEverywhere => "sign-out-everywhere",
            Self::Disable => "disable",
            Self::Enable => "enable",
            Self::Delete => "delete",
            Self::SetEmail(_) => "set-email",
            Self::NotifyFormerPrimary(..) => "notify-former-primary",
            Self::RequireNewPassword => "require-new-password",
            Self::EraseSwitches => "erase-switches",
            Self::ReleaseSignIn(_) => "release-sign-in",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(raw: &str) -> EmailAddress {
        EmailAddress::parse(raw).unwrap()
    }

    fn profile(email: Option<&str>, status: UserStatus) -> ProfileImage {
        ProfileImage {
            user_id: UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
            email: email.map(address),
            status,
            gone_from_cognito: false,
            cognito_email: email.map(address),
            sync_requested_at: None,
            version: 1,
            tokens_valid_after: None,
        }
    }

    use UserStatus::{Active, Deleted, Suspended};

    #[test]
    fn a_pass_asking_again_sets_the_primary_and_tells_the_address_cognito_held() {
        let at = crate::domain::Timestamp::parse("2026-11-25T10:00:00.000Z").unwrap();
        let old = ProfileImage {
            cognito_email: Some(address("old@example.com")),
            ..profile(Some("new@example.com"), Active)
        };
        let asked = ProfileImage {
            sync_requested_at: Some(at),
            ..old.clone()
        };
        assert_eq!(
            plan(&old, &asked),
            [
                Step::SetEmail(address("new@example.com")),
                Step::NotifyFormerPrimary(address("old@example.com"), None),
            ]
        );
        // The same request seen again (the record of recording the address): nothing.
        let recorded = ProfileImage {
            cognito_email: Some(address("new@example.com")),
            ..asked.clone()
        };
        assert_eq!(plan(&asked, &recorded), []);
        // Asked while Cognito's address was right after all: set, nobody told.
        let right = ProfileImage {
            cognito_email: Some(address("new@example.com")),
            ..old.clone()
        };
        let asked_right = ProfileImage {
            sync_requested_at: Some(at),
            ..right.clone()
        };
        assert_eq!(plan(&right, &asked_right), [Step::SetEmail(address("new@example.com"))]);
    }

    #[test]
    fn a_primary_switch_sets_the_email_then_tells_the_former_address() {
        let old = profile(Some("old@example.com"), Active);
        let new = ProfileImage {
            version: 2,
            ..profile(Some("new@example.com"), Active)
        };
        assert_eq!(
            plan(&old, &new),
            [
                Step::SetEmail(address("new@example.com")),
                Step::NotifyFormerPrimary(address("old@example.com"), Some(2)),
            ],
            "the notice carries the way back: the switch that wrote version 2"
        );
    }

    #[test]
    fn edits_that_keep_the_primary_and_status_ask_nothing() {
        // A names or phone edit changes neither image as the sync sees it.
        let old = profile(Some("ada@example.com"), Active);
        let new = profile(Some("ada@example.com"), Active);
        assert_eq!(plan(&old, &new), []);
        assert_eq!(
            plan(
                &profile(Some("a@example.com"), Suspended),
                &profile(Some("a@example.com"), Suspended)
            ),
            []
        );
    }

    #[test]
    fn deletion_signs_out_then_deletes_once() {
        let old = profile(Some("ada@example.com"), Active);
        let new = profile(None, Deleted);
        assert_eq!(
            plan(&old, &new),
            [Step::SignOutEverywhere, Step::Delete, Step::EraseSwitches]
        );
        let suspended = profile(Some("a@example.com"), Suspended);
        assert_eq!(
            plan(&suspended, &new),
            [Step::Delete, Step::EraseSwitches],
            "disabling revoked its tokens"
        );
        assert_eq!(plan(&new, &new), [], "an erased profile that changes again");
    }

    #[test]
    fn a_recovery_restores_the_address_signs_out_and_asks_a_new_password_telling_no_one() {
        let taken = ProfileImage {
            version: 6,
            ..profile(Some("thief@example.com"), Active)
        };
        let recovered = ProfileImage {
            version: 7,
            tokens_valid_after: Some(1_800_000_000),
            ..profile(Some("owner@example.com"), Active)
        };
        assert_eq!(
            plan(&taken, &recovered),
            [
                Step::SetEmail(address("owner@example.com")),
                Step::SignOutEverywhere,
                Step::RequireNewPassword,
                Step::ReleaseSignIn(1_800_000_000),
            ],
            "the address taken back from gets no notice, and no link to undo the recovery"
        );
        // Recorded afterwards (Cognito's address): nothing more.
        let settled = ProfileImage {
            cognito_email: Some(address("owner@example.com")),
            ..recovered.clone()
        };
        assert_eq!(plan(&recovered, &settled), []);
    }

    #[test]
    fn an_erasure_of_a_user_cognito_no_longer_has_asks_nothing_of_cognito() {
        let gone = ProfileImage {
            gone_from_cognito: true,
            ..profile(None, Deleted)
        };
        for status in [Active, Suspended] {
            // The table's own erasure alone: its kept switches.
            assert_eq!(
                plan(&profile(Some("ada@example.com"), status), &gone),
                [Step::EraseSwitches]
            );
        }
    }

    #[test]
    fn suspension_disables_and_reactivation_enables() {
        let active = profile(Some("ada@example.com"), Active);
        let suspended = profile(Some("ada@example.com"), Suspended);
        assert_eq!(plan(&active, &suspended), [Step::SignOutEverywhere, Step::Disable]);
        assert_eq!(plan(&suspended, &active), [Step::Enable]);
    }
}
