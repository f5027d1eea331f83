//! The work on each user a page of phase two sorts out: deletes to complete
//! in Cognito, profiles Cognito lacks to confirm gone and erase, sign-in
//! addresses to settle, and sign-ups to close.

use std::collections::HashMap;

use super::context::Partitions;
use super::{RunError, erase};
use crate::domain::{EmailAddress, UserId};
use crate::identity::Applied;
use crate::reconcile::{Sub, Tally, Unknown};
use crate::store::SignInSettled;

impl Partitions<'_> {
    /// Deletes in Cognito the users deleted here whose Cognito side never
    /// happened. `false` when the run's time ran out first.
    pub(super) async fn complete_deletes(&self, half_done: &[Sub], tally: &mut Tally) -> Result<bool, RunError> {
        for sub in half_done {
            if self.limit.out_of_time() || self.update_pace.take(self.limit.latest).await.is_err() {
                return Ok(false);
            }
            let user = sub.user_id();
            match self.users.delete(&user).await {
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Ok(Applied::Done) => {
                    tally.deleted_in_cognito += 1;
                    tracing::info!(sub = %user, "deleted here, still in Cognito: deleted there");
                }
                Ok(Applied::NoSuchUser) => {}
                Err(err) => {
                    tally.failed += 1;
                    tracing::error!(sub = %user, cause = %crate::error::chain(&err), "Cognito could not delete the user");
                }
            }
        }
        Ok(true)
    }

    /// Confirms with Cognito, one by one, that the candidates are gone, and
    /// erases them. `false` when the run's time ran out first: the next run
    /// confirms them all again (an erasure done is found done).
    pub(super) async fn confirm_gone(&self, mut candidates: Vec<Sub>, tally: &mut Tally) -> Result<bool, RunError> {
        candidates.sort_unstable();
        for sub in candidates {
            if self.limit.out_of_time() || self.read_pace.take(self.limit.latest).await.is_err() {
                return Ok(false);
            }
            tally.candidates += 1;
            let user = sub.user_id();
            match self.users.has_user(&user).await {
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Ok(true) => tally.still_present += 1,
                Ok(false) => match erase(self.store, &user, self.clock.now()).await {
                    Ok(_) => tally.erased += 1,
                    Err(_) if self.limit.out_of_time() => return Ok(false),
                    Err(err) => {
                        tally.failed += 1;
                        tracing::error!(sub = %user, cause = %crate::error::chain(&err), "erasure failed");
                    }
                },
                Err(err) => {
                    tally.failed += 1;
                    tracing::error!(sub = %user, cause = %crate::error::chain(&err), "Cognito could not be asked");
                }
            }
        }
        Ok(true)
    }

    /// Compares the address Cognito lists for each user with the profile: a
    /// right one not yet recorded is recorded; a wrong one (a switch of the
    /// primary whose stream record failed for good, so the former primary
    /// could still reset the password) is recorded as it is, and the stream
    /// consumer, Cognito's one writer, is asked to apply the primary again.
    /// `false` when the run's time ran out first.
    pub(super) async fn settle_sign_ins(
        &self,
        listed: &[(UserId, EmailAddress)],
        tally: &mut Tally,
    ) -> Result<bool, RunError> {
        for batch in listed.chunks(crate::store::BATCH_GET_KEYS) {
            if self.limit.out_of_time() {
                return Ok(false);
            }
            let users: Vec<UserId> = batch.iter().map(|(user, _)| user.clone()).collect();
            let views = match self.store.sign_in_views(&users).await {
                Ok(views) => views,
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Err(err) => return Err(err.into()),
            };
            let holds: HashMap<&UserId, &EmailAddress> = batch.iter().map(|(user, email)| (user, email)).collect();
            for view in views {
                // Checked per user: a page cut short is listed again, and every write here is idempotent.
                if self.limit.out_of_time() {
                    return Ok(false);
                }
                let Some(held) = holds.get(&view.user_id) else {
                    continue;
                };
                match self.store.settle_sign_in(&view, held, self.clock.now()).await {
                    Ok(SignInSettled::InLine | SignInSettled::Moved) => {}
                    Ok(SignInSettled::Recorded) => tally.sign_in_recorded += 1,
                    Ok(SignInSettled::Resync) => {
                        tally.sign_in_resynced += 1;
                        tracing::warn!(sub = %view.user_id, "Cognito signs the user in with another address than the primary: asked to apply the primary again");
                    }
                    Err(_) if self.limit.out_of_time() => return Ok(false),
                    Err(err) => {
                        tally.failed += 1;
                        tracing::error!(sub = %view.user_id, cause = %crate::error::chain(&err), "Cognito's address could not be settled");
                    }
                }
            }
        }
        Ok(true)
    }

    /// Confirmed Cognito users created before the pass that neither snapshot
    /// lists. Most were confirmed, repaired or migrated after the table was
    /// read, and have their profile now: they are left alone. One without a
    /// profile whose address another account verified is a sign-up closed at
    /// its confirmation (its trigger closes it at sign-in too, but a person
    /// told so may never sign in again): left in the pool, it would keep the
    /// address from its verified owner there, so its Cognito user is deleted.
    /// Any other is left to the repair path, and counted. `false` when the
    /// run's time ran out first.
    pub(super) async fn look_at_unknown(
        &self,
        unknown: Vec<(UserId, EmailAddress)>,
        tally: &mut Tally,
    ) -> Result<bool, RunError> {
        for (user, email) in unknown {
            // The slot first: the delete follows the reads at once.
            if self.limit.out_of_time() || self.update_pace.take(self.limit.latest).await.is_err() {
                return Ok(false);
            }
            match self.store.unknown_user(&user, &email).await {
                Ok(Unknown::HasProfile) => continue,
                Ok(Unknown::NoProfile) => {
                    tally.without_profile += 1;
                    continue;
                }
                Ok(Unknown::OwnedByAnother) => tally.without_profile += 1,
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Err(err) => return Err(err.into()),
            }
            match self.users.delete(&user).await {
                Ok(Applied::Done) => {
                    tally.sign_ups_closed += 1;
                    tracing::info!(sub = %user, "sign-up closed: its address is another account's; the Cognito user is deleted");
                }
                Ok(Applied::NoSuchUser) => {}
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Err(err) => {
                    tally.failed += 1;
                    tracing::error!(sub = %user, cause = %crate::error::chain(&err), "a closed sign-up could not be deleted");
                }
            }
        }
        Ok(true)
    }
}
