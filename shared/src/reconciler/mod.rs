//! The reconcile's engine: the pass run against the table and the pool. One
//! run at a time holds the checkpoint's lease; a run continues the pass under
//! way, or starts one when it is due, moves it on as far as its time allows
//! (phase one in [`scan`], phase two in [`partitions`], the per-user work in
//! [`users`]), and writes the checkpoint before its deadline. Before the
//! pass, each run finishes the recoveries' holds on sign-in the stream left
//! ([`holds`]). The arithmetic it follows is the pure part beside it
//! ([`crate::reconcile`]); the handler that runs it on Lambda is
//! `api::events::reconcile_users`.

mod context;
mod holds;
mod limit;
mod partitions;
mod scan;
mod users;

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use tokio::time::Instant;

pub use self::holds::{HOLD_LEFT_TO_STREAM_SECONDS, HoldEnded, HoldsTally, finish_hold};
use self::limit::Limit;
use crate::clock::Clock;
use crate::config::ReconcileConfig;
use crate::deadline;
use crate::domain::{Timestamp, UserId};
use crate::identity::{IdentityError, UserPool};
use crate::metrics::{self, Metric};
use crate::reconcile::{Checkpoint, OutOfTime, Pass, PassSummary, Phase, Tally};
use crate::store::{Deleter, Store, StoreError};

/// How often a run writes where it stands, so a run that is killed loses at
/// most this much work.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Held back from the deadline to flush the snapshot buffers and write the
/// checkpoint: a quarter of the run, at least [`MIN_RESERVE`] (but never
/// more than half), at most this.
const RESERVE: Duration = Duration::from_secs(crate::reconcile::RUN_RESERVE_SECONDS as u64);
const MIN_RESERVE: Duration = Duration::from_secs(1);

/// A lease outlives its run's deadline by this much, so a run that was killed
/// holding it delays the next by no more.
const LEASE_GRACE_SECONDS: i64 = 60;

/// A run without a deadline (a tool's, a test's) holds the lease this long.
const LEASE_WITHOUT_DEADLINE_SECONDS: i64 = 15 * 60;

/// Why a run stopped short of its work.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The table could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Cognito could not be asked.
    #[error(transparent)]
    Cognito(#[from] IdentityError),
    /// The function has no user pool.
    #[error("the user pool is not configured")]
    NoPool,
    /// Recoveries' holds on sign-in that could not be finished; the next run
    /// tries them again, and the function's error alarm fires meanwhile.
    #[error("{failed} recoveries' holds on sign-in could not be finished")]
    HoldsUnfinished {
        /// Holds that failed.
        failed: u32,
    },
    /// A partition where Cognito lacks too many of the table's users.
    #[error(
        "Cognito lacks {missing} of {of} profiles of one partition: the wrong pool, or an emptied one; nothing erased"
    )]
    Implausible {
        /// Profiles Cognito did not list.
        missing: usize,
        /// Profiles of the partition.
        of: usize,
    },
}

/// What a run did with the pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ticked {
    /// Another run holds the lease.
    Skipped,
    /// No pass under way, and none due.
    Idle,
    /// The pass finished in this run, having found this.
    Complete(Tally),
    /// The run's time is up with the pass in this phase; the checkpoint says where.
    Continues {
        /// The phase it stopped in.
        phase: Phase,
        /// What the pass has found so far.
        tally: Tally,
    },
}

/// What became of a user CloudTrail saw delete themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Erased {
    /// Erased by this run.
    Now,
    /// Erased before, or never here.
    Before,
    /// The pool still has them: the call was in another pool, or the record
    /// is not what it seems. Nothing erased.
    StillInPool,
}

/// How far one step of the pass got.
enum Step {
    /// Done: the pass may go on.
    Done,
    /// The run's time is up; the checkpoint says where to go on.
    OutOfTime,
}

impl From<OutOfTime> for Step {
    fn from(_: OutOfTime) -> Self {
        Self::OutOfTime
    }
}

/// One run of the reconcile.
pub struct Reconciler<'a> {
    store: &'a Store,
    users: Option<&'a UserPool>,
    config: &'a ReconcileConfig,
    clock: &'a Clock,
    id: String,
    lease_until: Timestamp,
}

impl<'a> Reconciler<'a> {
    /// A run that must be done by `deadline` (none: a tool's or a test's run).
    pub fn new(
        store: &'a Store,
        users: Option<&'a UserPool>,
        config: &'a ReconcileConfig,
        clock: &'a Clock,
        deadline: Option<Instant>,
    ) -> Self {
        // In the run's clock, as the lease is read: the time the run has, and the grace.
        let held = deadline.map_or(LEASE_WITHOUT_DEADLINE_SECONDS, |d| {
            i64::try_from(deadline::left(d).as_secs()).unwrap_or(0) + LEASE_GRACE_SECONDS
        });
        Self {
            store,
            users,
            config,
            clock,
            // Its own id, not the request's: a duplicate delivery of the same
            // invocation must not share its lease.
            id: uuid::Uuid::new_v4().to_string(),
            lease_until: clock.now().plus_seconds(held),
        }
    }

    fn users(&self) -> Result<&'a UserPool, RunError> {
        self.users.ok_or(RunError::NoPool)
    }

    /// Erases one user CloudTrail saw delete themselves, once this pool
    /// confirms it has no such user. A replay, or a user erased already,
    /// changes nothing; so does another pool's user, who has no profile here.
    pub async fn erase_one(&self, user: &UserId) -> Result<Erased, RunError> {
        if self.users()?.has_user(user).await? {
            tracing::info!(sub = %user, "a DeleteUser record for a user this pool still has");
            return Ok(Erased::StillInPool);
        }
        Ok(erase(self.store, user, self.clock.now()).await?)
    }

    /// A pass asked for (a deletion whose record named no user), then a tick.
    /// The request is counted with no lease, so a run that holds it cannot lose it.
    pub async fn requested(&self) -> Result<Ticked, RunError> {
        self.store.request_reconcile_pass().await?;
        self.tick().await
    }

    /// Moves the pass on as far as this run's time allows, or starts one when
    /// it is due or was asked for.
    pub async fn tick(&self) -> Result<Ticked, RunError> {
        let now = self.clock.now();
        let Some((mut checkpoint, requests)) = self.store.take_reconcile_lease(&self.id, now, self.lease_until).await?
        else {
            tracing::info!("another run holds the reconcile's lease");
            return Ok(Ticked::Skipped);
        };
        // First the holds the stream left: they bound how long an owner
        // waits (docs/operations.md), and they are few.
        let limit = self.limit();
        let holds = self.finish_holds(&limit).await;
        let interval = u64::from(self.config.interval_hours) * 3_600;
        let mut pass = match checkpoint.pass.take() {
            // Its snapshot would expire under it: start again.
            Some(pass) if pass.started_at.seconds_until(now) > crate::reconcile::MAX_PASS_AGE_SECONDS => {
                tracing::warn!(pass = %pass.id, "a pass too old to finish; a new one starts");
                self.start_pass(&mut checkpoint, now, requests)
            }
            Some(pass) => pass,
            None if checkpoint.due(now, interval, requests) => self.start_pass(&mut checkpoint, now, requests),
            None => {
                self.store.save_reconcile(&self.id, &checkpoint, true).await?;
                return with_holds(&holds, Ok(Ticked::Idle));
            }
        };
        pass.tally.runs += 1;
        let outcome = self.advance(&mut checkpoint, &mut pass, &limit).await;
        let ticked = if pass.is_complete() {
            let summary = PassSummary {
                id: pass.id.clone(),
                started_at: pass.started_at,
                finished_at: self.clock.now(),
                tally: pass.tally,
            };
            log_complete(&summary);
            metrics::count(Metric::ReconcilePassesCompleted);
            checkpoint.last_complete = Some(summary);
            Ticked::Complete(pass.tally)
        } else {
            let ticked = Ticked::Continues {
                phase: pass.phase.clone(),
                tally: pass.tally,
            };
            checkpoint.pass = Some(pass);
            ticked
        };
        // Written whatever the outcome: what the run did stands.
        self.store.save_reconcile(&self.id, &checkpoint, true).await?;
        with_holds(&holds, outcome.map(|()| ticked))
    }

    /// Where this run stops: half the reserve for the snapshot's buffers and
    /// the partitions' progress, half for the checkpoint.
    fn limit(&self) -> Limit {
        let deadline = deadline::current_deadline();
        let reserve = deadline.map_or(RESERVE, |d| {
            let left = deadline::left(d);
            (left / 4).clamp(MIN_RESERVE.min(left / 2), RESERVE)
        });
        Limit {
            latest: deadline.map(|d| d.checked_sub(reserve).unwrap_or(d)),
            flush_by: deadline.map(|d| d.checked_sub(reserve / 2).unwrap_or(d)),
            list_calls_left: self.config.list_calls_per_run.map(AtomicU32::new),
        }
    }

    fn start_pass(&self, checkpoint: &mut Checkpoint, now: Timestamp, requests: u64) -> Pass {
        checkpoint.requests_seen = requests;
        // v7: a pass's snapshot partition sorts by when it started.
        let id = uuid::Uuid::now_v7().to_string();
        tracing::info!(pass = %id, "reconcile pass started");
        Pass::start(id, now, self.config.scan_segments)
    }

    /// Runs the pass's phases until it is complete or the run's time is up,
    /// writing the checkpoint as it goes.
    async fn advance(&self, checkpoint: &mut Checkpoint, pass: &mut Pass, limit: &Limit) -> Result<(), RunError> {
        loop {
            let step = match &pass.phase {
                Phase::Table { .. } => self.scan_table(pass, limit.latest, limit.flush_by).await?,
                Phase::Cognito { .. } => self.list_cognito(checkpoint, pass, limit).await?,
            };
            if matches!(step, Step::OutOfTime) || pass.is_complete() {
                return Ok(());
            }
            pass.after_table();
            // A checkpoint between steps: a run killed later loses no more.
            self.save_between_steps(checkpoint, pass).await?;
        }
    }

    /// Writes the checkpoint with `pass` where it stands, keeping the lease.
    async fn save_between_steps(&self, checkpoint: &mut Checkpoint, pass: &Pass) -> Result<(), StoreError> {
        checkpoint.pass = Some(pass.clone());
        let saved = self.store.save_reconcile(&self.id, checkpoint, false).await;
        checkpoint.pass = None;
        saved
    }
}

/// A run that failed to finish some holds fails, once its pass has moved on,
/// so the function's error alarm fires while an owner is still held.
fn with_holds(holds: &HoldsTally, ticked: Result<Ticked, RunError>) -> Result<Ticked, RunError> {
    if holds.finished + holds.stale + holds.failed > 0 {
        tracing::info!(
            finished = holds.finished,
            stale = holds.stale,
            failed = holds.failed,
            "recoveries' holds on sign-in"
        );
    }
    match ticked {
        Ok(_) if holds.failed > 0 => Err(RunError::HoldsUnfinished { failed: holds.failed }),
        other => other,
    }
}

fn log_complete(summary: &PassSummary) {
    let tally = summary.tally;
    tracing::info!(
        pass = %summary.id,
        live = tally.live,
        runs = tally.runs,
        list_calls = tally.list_calls,
        candidates = tally.candidates,
        erased = tally.erased,
        still_present = tally.still_present,
        without_profile = tally.without_profile,
        deleted_in_cognito = tally.deleted_in_cognito,
        sign_in_recorded = tally.sign_in_recorded,
        sign_in_resynced = tally.sign_in_resynced,
        sign_ups_closed = tally.sign_ups_closed,
        not_a_sub = tally.not_a_sub,
        failed = tally.failed,
        "reconcile pass complete"
    );
}

/// Erases a user Cognito no longer has: profile erased, every address
/// released, in one transaction; the tombstone says Cognito has no such user.
async fn erase(store: &Store, user: &UserId, now: Timestamp) -> Result<Erased, StoreError> {
    match store.delete_user(user, Deleter::GoneFromCognito, now).await {
        Ok(_) => {
            tracing::info!(sub = %user, "deleted in Cognito: profile erased, addresses released");
            Ok(Erased::Now)
        }
        Err(StoreError::NotFound) => Ok(Erased::Before),
        Err(err) => Err(err),
    }
}
