//! A recovery's hold on sign-in always ends. The stream consumer ends it
//! within seconds of the recovery; when its record fails for good (the
//! on-failure queue), every run of the reconcile, before the pass, finishes
//! the holds older than the stream's share: what the consumer would have
//! done (Cognito's address, every session signed out, a new password
//! required), then the release. The hold items are the checkpoint: a
//! finished one is deleted, so the next run starts from the oldest left.

use super::limit::Limit;
use super::{Reconciler, RunError};
use crate::identity::UserPool;
use crate::reconcile::Pace;
use crate::store::{Hold, Store, StoreError};

/// How long a recovery's hold is left to the stream consumer: its retries
/// (five, halving the batch, each under its 60 s timeout) are over well
/// within it, so the reconcile seldom repeats a step the consumer is still
/// retrying. With the schedule's 15 minutes, a hold ends at most 30 minutes
/// after its recovery (45 when a killed run still held the lease), while
/// Cognito and the table answer.
pub const HOLD_LEFT_TO_STREAM_SECONDS: i64 = 15 * 60;

/// Hold items read a page at a time.
const HOLDS_PAGE: u32 = 25;

/// Cognito calls each hold makes: its address, the sign-out, the reset.
const CALLS_PER_HOLD: usize = 3;

/// What became of one hold item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEnded {
    /// The recovery's steps are done and its hold lifted: the owner signs
    /// in, with a new password.
    Finished,
    /// The profile is not held by that recovery (released, held by a later
    /// one, erased, or the recovery never committed): the item is deleted.
    Stale,
}

/// What a run did with the holds it found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HoldsTally {
    /// Holds finished.
    pub finished: u32,
    /// Stale hold items deleted.
    pub stale: u32,
    /// Holds that failed; the next run tries them again.
    pub failed: u32,
}

/// Finishes the recovery that `hold` names, as the stream consumer would,
/// and lifts its hold; a hold item the profile no longer bears out is
/// deleted. Each step sets a state, so running it again leaves Cognito as
/// the first time did (a password reset asked again mails another code).
/// The release is conditioned on the primary the steps set: a primary that
/// moved meanwhile is set and released again, a few times at most.
pub async fn finish_hold(store: &Store, users: &UserPool, hold: &Hold) -> Result<HoldEnded, RunError> {
    for _ in 0..3 {
        let Some(held) = store.sign_in_hold(&hold.user).await?.filter(|held| held.hold == *hold) else {
            store.forget_hold(hold).await?;
            return Ok(HoldEnded::Stale);
        };
        // As the consumer's plan orders them: the address, so the reset mails
        // the restored primary; the release last, once no password the taker
        // may know still signs in. A user Cognito no longer has is nothing to
        // hold: its calls answer NoSuchUser and the hold goes.
        users.set_email(&hold.user, &held.primary).await?;
        users.sign_out_everywhere(&hold.user).await?;
        users.require_new_password(&hold.user).await?;
        if store.finish_hold(&held).await? {
            return Ok(HoldEnded::Finished);
        }
    }
    Err(RunError::Store(StoreError::Contended))
}

impl Reconciler<'_> {
    /// Finishes the holds of recoveries older than the stream's share,
    /// oldest first, at the pass's share of Cognito's UserUpdate quota; one
    /// hold at a time, stopping when the run's time is up. Without a pool
    /// there is nothing to finish them with.
    pub(super) async fn finish_holds(&self, limit: &Limit) -> HoldsTally {
        let mut tally = HoldsTally::default();
        let Some(users) = self.users else {
            return tally;
        };
        let share = f64::from(self.config.quota_share_percent) / 100.0;
        let pace = Pace::new(f64::from(self.config.user_update_rps) * share);
        let before = self.clock.now().plus_seconds(-HOLD_LEFT_TO_STREAM_SECONDS);
        let mut after: Option<Hold> = None;
        loop {
            let page = match self.store.held_recoveries(before, after.as_ref(), HOLDS_PAGE).await {
                Ok(page) => page,
                Err(err) => {
                    tally.failed += 1;
                    tracing::error!(cause = %crate::error::chain(&err), "recoveries' holds could not be listed");
                    return tally;
                }
            };
            for hold in &page {
                if limit.out_of_time() || !take_calls(&pace, limit).await {
                    return tally;
                }
                match finish_hold(self.store, users, hold).await {
                    Ok(HoldEnded::Finished) => {
                        tally.finished += 1;
                        tracing::info!(sub = %hold.user, recovered_at = hold.recovered_at, "a recovery's hold the stream left is finished: Cognito followed, sign-in released");
                    }
                    Ok(HoldEnded::Stale) => tally.stale += 1,
                    Err(_) if limit.out_of_time() => return tally,
                    Err(err) => {
                        tally.failed += 1;
                        tracing::error!(sub = %hold.user, recovered_at = hold.recovered_at, cause = %crate::error::chain(&err), "a recovery's hold could not be finished; the next run tries again");
                    }
                }
            }
            if page.len() < HOLDS_PAGE as usize {
                return tally;
            }
            after = page.last().cloned();
        }
    }
}

/// Waits for a hold's Cognito calls at the pace; `false` when they would
/// start past the run's time.
async fn take_calls(pace: &Pace, limit: &Limit) -> bool {
    for _ in 0..CALLS_PER_HOLD {
        if pace.take(limit.latest).await.is_err() {
            return false;
        }
    }
    true
}
