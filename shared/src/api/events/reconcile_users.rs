//! Erasure that reaches everyone. A user who deletes themselves in Cognito
//! (DeleteUser with their own access token) fires no trigger, yet must not
//! leave a profile, claims and personal data behind. Two routes reach them:
//!
//! - **As it happens.** CloudTrail records the DeleteUser call, with the
//!   user's `sub`, and an EventBridge rule delivers the record here within
//!   minutes. The user is erased once this pool confirms it has no such user
//!   (the record does not name the pool; another pool's user has no profile
//!   here). A record that names no user starts a pass at once.
//! - **The pass**, the safety net for what delivery (best effort) misses: the
//!   diff of `crate::reconcile`, resumable from its checkpoint. The schedule
//!   runs this every 15 minutes: a run continues the pass under way, or starts
//!   one when the last started `RECONCILE_INTERVAL_HOURS` ago, and stops
//!   before its deadline. One run at a time holds the checkpoint's lease.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::app::App;
use crate::config::ReconcileConfig;
use crate::deadline;
use crate::domain::{EmailAddress, Timestamp, UserId};
use crate::identity::{IdentityError, UserPool};
use crate::metrics::{self, Metric};
use crate::reconcile::{
    self, Checkpoint, OutOfTime, Pace, PartitionProgress, PartitionSnapshot, Pass, PassSummary, Phase, Segment, Sub,
    Tally, Unknown,
};
use crate::store::{Deleter, SignInSettled, Store, StoreError};

/// The detail type of a CloudTrail record EventBridge delivers.
const API_CALL: &str = "AWS API Call via CloudTrail";

/// Snapshot chunks written at once when a run flushes its buffers.
const CHUNK_WRITES_AT_ONCE: usize = 64;

/// How often the scan phase writes its position, so a run that is killed
/// loses at most this much work.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Held back from the deadline to flush the snapshot buffers and write the
/// checkpoint: a quarter of the run, at least [`MIN_RESERVE`] (but never
/// more than half), at most this.
const RESERVE: Duration = Duration::from_secs(reconcile::RUN_RESERVE_SECONDS as u64);
const MIN_RESERVE: Duration = Duration::from_secs(1);

/// A lease outlives its run's deadline by this much, so a run that was killed
/// holding it delays the next by no more.
const LEASE_GRACE_SECONDS: i64 = 60;

/// The Lambda entry point: a CloudTrail record of a DeleteUser call, or the schedule's tick.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let span = tracing::info_span!("reconcile", request_id = %event.context.request_id);
    let deadline = deadline::from_lambda(event.context.deadline, None);
    // In the app's clock, as the lease is read: the time the run has, and the grace.
    let lease_until = match deadline {
        Some(d) => app
            .clock
            .now()
            .plus_seconds(i64::try_from(deadline::left(d).as_secs()).unwrap_or(0) + LEASE_GRACE_SECONDS),
        None => app.clock.now().plus_seconds(15 * 60),
    };
    let run = Run {
        app,
        // Not the request id: a duplicate delivery of the same invocation
        // must not share its lease.
        id: uuid::Uuid::new_v4().to_string(),
        lease_until,
    };
    let work = async move {
        match Delivery::of(&event.payload) {
            Delivery::Deleted(Some(user)) => run.erase_one(&user).await,
            Delivery::Deleted(None) => {
                // Counted with no lease, so a run that holds it cannot lose the request.
                run.store()
                    .request_reconcile_pass()
                    .await
                    .map_err(|e| failure(&RunError::Store(e)))?;
                run.tick().await
            }
            Delivery::FailedCall => Ok(json!({ "ignored": "the DeleteUser call failed" })),
            Delivery::Tick => run.tick().await,
        }
    };
    Box::pin(deadline::within(deadline, tracing::Instrument::instrument(work, span))).await
}

/// What an event asks of the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// CloudTrail's record of a successful DeleteUser: the user's `sub`, when the record names it.
    Deleted(Option<UserId>),
    /// A DeleteUser that failed (the record has an error code): nobody was deleted.
    FailedCall,
    /// The schedule, or anything else: move the pass on.
    Tick,
}

impl Delivery {
    /// Reads an EventBridge event. Cognito records the user's `sub` (never
    /// the username) in `additionalEventData.sub` for user-token calls.
    pub fn of(event: &Value) -> Self {
        if event["detail-type"] != API_CALL || event["detail"]["eventName"] != "DeleteUser" {
            return Self::Tick;
        }
        let detail = &event["detail"];
        if detail["errorCode"].as_str().is_some_and(|code| !code.is_empty()) {
            return Self::FailedCall;
        }
        Self::Deleted(
            detail["additionalEventData"]["sub"]
                .as_str()
                .and_then(|sub| UserId::parse_sub(sub).ok()),
        )
    }
}

/// Why a run stopped short of its work.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cognito(#[from] IdentityError),
    #[error("the user pool is not configured")]
    NoPool,
    #[error(
        "Cognito lacks {missing} of {of} profiles of one partition: the wrong pool, or an emptied one; nothing erased"
    )]
    Implausible { missing: usize, of: usize },
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

struct Run<'a> {
    app: &'a App,
    id: String,
    lease_until: Timestamp,
}

impl Run<'_> {
    fn store(&self) -> &Store {
        &self.app.store
    }

    fn users(&self) -> Result<&UserPool, RunError> {
        self.app.users.as_ref().ok_or(RunError::NoPool)
    }

    fn config(&self) -> &ReconcileConfig {
        &self.app.reconcile
    }

    /// Erases one user CloudTrail saw delete themselves, once this pool
    /// confirms it has no such user. A replay, or a user erased already,
    /// changes nothing; so does another pool's user, who has no profile here.
    async fn erase_one(&self, user: &UserId) -> Result<Value, Diagnostic> {
        let users = self.users().map_err(|e| failure(&e))?;
        if users.has_user(user).await.map_err(|e| failure(&RunError::Cognito(e)))? {
            // The user pool still has them: the call was in another pool, or
            // the record is not what it seems. Nothing to erase.
            tracing::info!(sub = %user, "a DeleteUser record for a user this pool still has");
            return Ok(json!({ "erased": 0 }));
        }
        match erase(self.store(), user, self.app.clock.now()).await {
            Ok(Erased::Now) => Ok(json!({ "erased": 1 })),
            Ok(Erased::Before) => Ok(json!({ "erased": 0 })),
            Err(err) => Err(failure(&RunError::Store(err))),
        }
    }

    /// Moves the pass on as far as this run's time allows, or starts one when
    /// it is due or was asked for.
    async fn tick(&self) -> Result<Value, Diagnostic> {
        let now = self.app.clock.now();
        let Some((mut checkpoint, requests)) = self
            .store()
            .take_reconcile_lease(&self.id, now, self.lease_until)
            .await
            .map_err(|e| failure(&RunError::Store(e)))?
        else {
            tracing::info!("another run holds the reconcile's lease");
            return Ok(json!({ "skipped": "another run holds the lease" }));
        };
        let interval = u64::from(self.config().interval_hours) * 3_600;
        let mut pass = match checkpoint.pass.take() {
            // Its snapshot would expire under it: start again.
            Some(pass) if pass.started_at.seconds_until(now) > reconcile::MAX_PASS_AGE_SECONDS => {
                tracing::warn!(pass = %pass.id, "a pass too old to finish; a new one starts");
                self.start_pass(&mut checkpoint, now, requests)
            }
            Some(pass) => pass,
            None if checkpoint.due(now, interval, requests) => self.start_pass(&mut checkpoint, now, requests),
            None => {
                self.save(&checkpoint, true).await?;
                return Ok(json!({ "idle": true }));
            }
        };
        pass.tally.runs += 1;
        let reserve = deadline::current_deadline().map_or(RESERVE, |d| {
            let left = deadline::left(d);
            (left / 4).clamp(MIN_RESERVE.min(left / 2), RESERVE)
        });
        // Half the reserve for the snapshot's buffers and partitions' progress, half for the checkpoint.
        let limit = Limit {
            latest: deadline::current_deadline().map(|d| d.checked_sub(reserve).unwrap_or(d)),
            flush_by: deadline::current_deadline().map(|d| d.checked_sub(reserve / 2).unwrap_or(d)),
            list_calls_left: self.config().list_calls_per_run.map(AtomicU32::new),
        };
        let outcome = self.advance(&mut checkpoint, &mut pass, &limit).await;
        let failed = pass.tally.failed;
        let answer = if pass.is_complete() {
            let summary = PassSummary {
                id: pass.id.clone(),
                started_at: pass.started_at,
                finished_at: self.app.clock.now(),
                tally: pass.tally,
            };
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
            metrics::count(Metric::ReconcilePassesCompleted);
            checkpoint.last_complete = Some(summary);
            json!({ "complete": true, "tally": tally_json(&tally) })
        } else {
            let answer =
                json!({ "complete": false, "phase": phase_name(&pass.phase), "tally": tally_json(&pass.tally) });
            checkpoint.pass = Some(pass);
            answer
        };
        self.save(&checkpoint, true).await?;
        match outcome {
            Err(err) => Err(failure(&err)),
            // An error makes the run count as failed, so the function's error
            // alarm fires; the next pass retries those users.
            Ok(()) if failed > 0 && answer["complete"] == true => Err(Diagnostic {
                error_type: "SWEEP_FAILED".to_owned(),
                error_message: "some users could not be checked or erased; see the log".to_owned(),
            }),
            Ok(()) => Ok(answer),
        }
    }

    fn start_pass(&self, checkpoint: &mut Checkpoint, now: Timestamp, requests: u64) -> Pass {
        checkpoint.requests_seen = requests;
        // v7: a pass's snapshot partition sorts by when it started.
        let id = uuid::Uuid::now_v7().to_string();
        tracing::info!(pass = %id, "reconcile pass started");
        Pass::start(id, now, self.config().scan_segments)
    }

    async fn save(&self, checkpoint: &Checkpoint, release: bool) -> Result<(), Diagnostic> {
        self.store()
            .save_reconcile(&self.id, checkpoint, release)
            .await
            .map_err(|e| failure(&RunError::Store(e)))
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
            checkpoint.pass = Some(pass.clone());
            self.store().save_reconcile(&self.id, checkpoint, false).await?;
            checkpoint.pass = None;
        }
    }

    /// Phase one, for at most [`CHECKPOINT_EVERY`]: every segment reads pages
    /// and buffers the live subs, then writes its buffer as chunks.
    async fn scan_table(
        &self,
        pass: &mut Pass,
        latest: Option<Instant>,
        flush_by: Option<Instant>,
    ) -> Result<Step, RunError> {
        let Phase::Table { segments } = &mut pass.phase else {
            return Ok(Step::Done);
        };
        let stop = Instant::now() + CHECKPOINT_EVERY;
        let stop = latest.map_or(stop, |latest| latest.min(stop));
        let total = u32::try_from(segments.len()).unwrap_or(1);
        let snapshot = Snapshot {
            pass: &pass.id,
            started_at: pass.started_at,
        };
        let work = segments.iter().cloned().enumerate().map(|(i, segment)| {
            let index = u32::try_from(i).unwrap_or(0);
            deadline::within(flush_by, self.scan_segment(&snapshot, index, total, segment, stop))
        });
        let results = futures::future::join_all(work).await;
        let mut out_of_time = false;
        for (i, result) in results.into_iter().enumerate() {
            let (segment, tally, finished) = result?;
            segments[i] = segment;
            pass.tally.live += tally.live;
            pass.tally.deleted += tally.deleted;
            pass.tally.not_a_sub += tally.not_a_sub;
            out_of_time |= !finished && latest.is_some_and(|l| Instant::now() >= l);
        }
        Ok(if out_of_time { Step::OutOfTime } else { Step::Done })
    }

    /// One segment until `stop` or its end: its new position, what it counted,
    /// and whether it stopped for want of time (`false`) or not. Its buffer
    /// is written before the position that counts it: if the writes fail (out
    /// of time, or DynamoDB), the step counts for nothing and the next run
    /// scans it again from the position before it.
    async fn scan_segment(
        &self,
        snapshot: &Snapshot<'_>,
        index: u32,
        total: u32,
        before: Segment,
        stop: Instant,
    ) -> Result<(Segment, Tally, bool), RunError> {
        let mut segment = before.clone();
        // Where the scan goes on within this run: any item's key. The
        // position stored is a profile's key alone (`USER#<sub>`): the key of
        // a claim would put an address in the checkpoint.
        let mut cursor = segment.after.clone();
        let mut live: Vec<Sub> = Vec::new();
        let mut deleted: Vec<Sub> = Vec::new();
        let mut tally = Tally::default();
        let mut finished = true;
        'pages: while !segment.done {
            if Instant::now() >= stop {
                finished = false;
                break;
            }
            // Cut to the run's work time: the writes below need the rest.
            let page = deadline::within(Some(stop), self.store().scan_profiles(index, total, cursor.as_ref())).await;
            let page = match page {
                Ok(page) => page,
                Err(_) if Instant::now() >= stop => {
                    finished = false;
                    break;
                }
                Err(err) => return Err(err.into()),
            };
            for profile in page.profiles {
                // Checked per item: a page cut here goes on after its last item taken.
                if Instant::now() >= stop {
                    finished = false;
                    break 'pages;
                }
                segment.after = Some(profile.key.clone());
                cursor = Some(profile.key);
                let Some(kind) = profile.snapshot else {
                    continue;
                };
                // A live profile younger than the pass is not the pass's to erase.
                if kind == reconcile::Snapshot::Live && profile.created_at >= snapshot.started_at {
                    continue;
                }
                let Some(sub) = Sub::of(&profile.user_id) else {
                    tally.not_a_sub += 1;
                    continue;
                };
                match kind {
                    reconcile::Snapshot::Live => {
                        tally.live += 1;
                        live.push(sub);
                    }
                    reconcile::Snapshot::Deleted => {
                        tally.deleted += 1;
                        deleted.push(sub);
                    }
                }
            }
            match page.next {
                Some(next) => cursor = Some(next),
                None => segment.done = true,
            }
            if live.len() + deleted.len() >= reconcile::BUFFER_SUBS {
                let buffers = [std::mem::take(&mut live), std::mem::take(&mut deleted)];
                if let Err(err) = self.write_both(snapshot, index, &mut segment, buffers).await {
                    return Ok(unwritten(index, &err, before));
                }
            }
        }
        match self.write_both(snapshot, index, &mut segment, [live, deleted]).await {
            Ok(()) => Ok((segment, tally, finished)),
            Err(err) => Ok(unwritten(index, &err, before)),
        }
    }

    /// The live and the deleted buffers, each as its snapshot's chunks.
    async fn write_both(
        &self,
        snapshot: &Snapshot<'_>,
        index: u32,
        segment: &mut Segment,
        [live, deleted]: [Vec<Sub>; 2],
    ) -> Result<(), StoreError> {
        self.write_chunks(snapshot, reconcile::Snapshot::Live, index, segment, live)
            .await?;
        self.write_chunks(snapshot, reconcile::Snapshot::Deleted, index, segment, deleted)
            .await
    }

    /// Writes `subs` as the segment's next chunks, a few at once.
    async fn write_chunks(
        &self,
        snapshot: &Snapshot<'_>,
        kind: reconcile::Snapshot,
        index: u32,
        segment: &mut Segment,
        subs: Vec<Sub>,
    ) -> Result<(), StoreError> {
        let chunks = reconcile::chunks(subs);
        let first = segment.chunks;
        segment.chunks += u32::try_from(chunks.len()).unwrap_or(u32::MAX);
        let expires = snapshot.started_at.plus_seconds(reconcile::CHUNK_LIFETIME_SECONDS);
        let writes = chunks.iter().enumerate().map(|(n, (bucket, subs))| {
            let chunk = first + u32::try_from(n).unwrap_or(u32::MAX);
            self.store().write_snapshot_chunk(
                crate::store::ChunkAt {
                    pass: snapshot.pass,
                    snapshot: kind,
                    bucket,
                    segment: index,
                    chunk,
                },
                subs,
                expires,
            )
        });
        let results: Vec<_> = stream::iter(writes)
            .buffer_unordered(CHUNK_WRITES_AT_ONCE)
            .collect()
            .await;
        results.into_iter().collect::<Result<Vec<()>, _>>().map(|_| ())
    }

    /// Phase two: partitions in order, a few at once; the checkpoint moves past
    /// each one done, in order. A partition the run stops inside keeps its
    /// progress in an item of its own, so the next run goes on from there.
    async fn list_cognito(
        &self,
        checkpoint: &mut Checkpoint,
        pass: &mut Pass,
        limit: &Limit,
    ) -> Result<Step, RunError> {
        let Phase::Cognito { digits, next } = pass.phase else {
            return Ok(Step::Done);
        };
        let users = self.users()?;
        let share = f64::from(self.config().quota_share_percent) / 100.0;
        let list_pace = Pace::new(f64::from(self.config().user_list_rps) * share);
        let read_pace = Pace::new(f64::from(self.config().user_read_rps) * share);
        let update_pace = Pace::new(f64::from(self.config().user_update_rps) * share);
        let id = pass.id.clone();
        let context = Partitions {
            store: self.store(),
            users,
            pass: &id,
            started_at: pass.started_at,
            clock: &self.app.clock,
            digits,
            list_pace: &list_pace,
            read_pace: &read_pace,
            update_pace: &update_pace,
            limit,
        };
        let at_once = usize::try_from(self.config().partitions_at_once).unwrap_or(1).max(1);
        let mut done = stream::iter(next..reconcile::partition_count(digits))
            .map(|index| context.partition(index))
            .buffered(at_once);
        let mut step = Step::Done;
        let mut error = None;
        while let Some(result) = done.next().await {
            match result {
                // Past a partition the run stopped inside, the checkpoint
                // stays: a partition finished after it says so in its progress.
                Ok(Some(_)) if matches!(step, Step::OutOfTime) => {}
                Ok(Some(tally)) => {
                    add(&mut pass.tally, &tally);
                    if let Phase::Cognito { next, .. } = &mut pass.phase {
                        *next += 1;
                    }
                    checkpoint.pass = Some(pass.clone());
                    let saved = self.store().save_reconcile(&self.id, checkpoint, false).await;
                    checkpoint.pass = None;
                    if let Err(err) = saved {
                        error = Some(RunError::Store(err));
                        break;
                    }
                }
                // The partitions in flight stop by themselves and save their
                // progress; those not started yet return at once.
                Ok(None) => step = Step::OutOfTime,
                Err(err) => {
                    error = Some(err);
                    break;
                }
            }
        }
        match error {
            Some(err) => Err(err),
            None => Ok(step),
        }
    }
}

/// The snapshot a scan segment writes into.
#[derive(Clone, Copy)]
struct Snapshot<'a> {
    pass: &'a str,
    started_at: Timestamp,
}

/// A step whose snapshot was not written: nothing counted, the position as before.
fn unwritten(index: u32, err: &StoreError, before: Segment) -> (Segment, Tally, bool) {
    tracing::warn!(segment = index, cause = %crate::error::chain(err), "snapshot not written; the step is scanned again");
    (before, Tally::default(), false)
}

/// Where a run stops: at its work time (`latest`), or, for its next page,
/// once it has made the ListUsers calls it may
/// ([`ReconcileConfig::list_calls_per_run`], which tests set). What it has to
/// save then is written by `flush_by`.
struct Limit {
    latest: Option<Instant>,
    flush_by: Option<Instant>,
    list_calls_left: Option<AtomicU32>,
}

impl Limit {
    /// The run's work time is up.
    fn out_of_time(&self) -> bool {
        self.latest.is_some_and(|latest| Instant::now() >= latest)
    }

    /// The run may start no more partitions: its time is up, or its budget
    /// of ListUsers calls is spent.
    fn done(&self) -> bool {
        self.out_of_time()
            || self
                .list_calls_left
                .as_ref()
                .is_some_and(|left| left.load(Ordering::SeqCst) == 0)
    }

    /// Takes one ListUsers call of the run's budget; `false` when none is left.
    fn take_list_call(&self) -> bool {
        self.list_calls_left.as_ref().is_none_or(|left| {
            left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        })
    }
}

/// How far a partition's work got in this run.
enum Worked {
    /// Every page listed and every candidate confirmed.
    Done,
    /// The run stopped inside it; its progress says where.
    Cut,
}

/// What every partition of a run shares.
struct Partitions<'a> {
    store: &'a Store,
    users: &'a UserPool,
    pass: &'a str,
    started_at: Timestamp,
    clock: &'a crate::clock::Clock,
    digits: usize,
    list_pace: &'a Pace,
    read_pace: &'a Pace,
    update_pace: &'a Pace,
    limit: &'a Limit,
}

impl Partitions<'_> {
    /// One partition, from where an earlier run left it: `None` when this run
    /// stopped inside it (its progress saved), else what the whole partition found.
    async fn partition(&self, index: u32) -> Result<Option<Tally>, RunError> {
        if self.limit.done() {
            return Ok(None);
        }
        let prefix = reconcile::partition_prefix(index, self.digits);
        let loaded = Box::pin(deadline::within(self.limit.latest, self.load(&prefix))).await;
        let (snapshot, mut progress) = match loaded {
            Ok(loaded) => loaded,
            Err(_) if self.limit.out_of_time() => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        if progress.finished {
            return Ok(Some(progress.tally));
        }
        let worked = Box::pin(deadline::within(
            self.limit.latest,
            self.work(&prefix, &snapshot, &mut progress),
        ))
        .await;
        match worked {
            Ok(Worked::Done) => {
                progress.finished = true;
                // Not saved: the next run does the candidates again, which changes nothing.
                self.save(&prefix, &progress).await.ok();
                Ok(Some(progress.tally))
            }
            Ok(Worked::Cut) => {
                self.save(&prefix, &progress).await.ok();
                Ok(None)
            }
            // A call cut by the run's end: what the pages before it did is kept.
            Err(_) if self.limit.out_of_time() => {
                self.save(&prefix, &progress).await.ok();
                Ok(None)
            }
            // Listed again from its start by the next run: the pool may be
            // the right one by then (USER_POOL_ID fixed).
            Err(err @ RunError::Implausible { .. }) => {
                let fresh = PartitionProgress {
                    listed: reconcile::Listed::new(snapshot.live.len()),
                    ..PartitionProgress::default()
                };
                self.save(&prefix, &fresh).await.ok();
                Err(err)
            }
            // What the pages before the failure did stands.
            Err(err) => {
                self.save(&prefix, &progress).await.ok();
                Err(err)
            }
        }
    }

    /// The partition's snapshot, and its progress (a new one when none was
    /// saved, or when it was saved for a snapshot of another size).
    async fn load(&self, prefix: &str) -> Result<(PartitionSnapshot, PartitionProgress), StoreError> {
        let live = self
            .store
            .snapshot_subs(self.pass, reconcile::Snapshot::Live, prefix)
            .await?;
        let deleted = self
            .store
            .snapshot_subs(self.pass, reconcile::Snapshot::Deleted, prefix)
            .await?;
        let snapshot = PartitionSnapshot::new(live, deleted);
        let progress = self
            .store
            .partition_progress(self.pass, prefix, snapshot.live.len())
            .await?
            .unwrap_or_else(|| PartitionProgress {
                listed: reconcile::Listed::new(snapshot.live.len()),
                ..PartitionProgress::default()
            });
        Ok((snapshot, progress))
    }

    /// Saves a partition's progress, in the time the run keeps for it. A
    /// failure is logged: the next run redoes the work since the last save.
    async fn save(&self, prefix: &str, progress: &PartitionProgress) -> Result<(), StoreError> {
        let expires = self.started_at.plus_seconds(reconcile::CHUNK_LIFETIME_SECONDS);
        let saved = deadline::within(
            self.limit.flush_by,
            self.store.save_partition_progress(self.pass, prefix, progress, expires),
        )
        .await;
        if let Err(err) = &saved {
            tracing::warn!(cause = %crate::error::chain(err), "a partition's progress was not saved; its last pages are listed again");
        }
        saved
    }

    /// Lists the partition's pages from its token on, doing each page's work
    /// before the next, then confirms the candidates. Each page moves the
    /// progress only once its work is done: a page cut short is listed again,
    /// and everything done for it is idempotent.
    async fn work(
        &self,
        prefix: &str,
        snapshot: &PartitionSnapshot,
        progress: &mut PartitionProgress,
    ) -> Result<Worked, RunError> {
        let started = self.started_at.unix_seconds();
        let mut saved_at = Instant::now();
        while !progress.listed_all {
            if self.limit.out_of_time()
                || !self.limit.take_list_call()
                || self.list_pace.take(self.limit.latest).await.is_err()
            {
                return Ok(Worked::Cut);
            }
            let page = match self.users.list_users(prefix, progress.token.clone()).await {
                Ok(page) => page,
                Err(err) if progress.token.is_some() && err.is_invalid_parameter() => {
                    // A token Cognito no longer takes: the listing starts over,
                    // and what it listed stays listed.
                    tracing::warn!("a saved ListUsers token was refused; the partition is listed from its start");
                    progress.token = None;
                    continue;
                }
                Err(err) => return Err(err.into()),
            };
            let mut tally = Tally {
                list_calls: 1,
                ..Tally::default()
            };
            let mut listed = progress.listed.clone();
            let sorted = reconcile::sort_page(snapshot, &mut listed, &page.users, started, &mut tally);
            let page_done = self.complete_deletes(&sorted.half_done, &mut tally).await?
                && self.settle_sign_ins(&sorted.live, &mut tally).await?
                && self.look_at_unknown(sorted.unknown, &mut tally).await?;
            if !page_done {
                return Ok(Worked::Cut);
            }
            add(&mut progress.tally, &tally);
            progress.listed = listed;
            progress.listed_all = page.next.is_none();
            progress.token = page.next;
            if saved_at.elapsed() >= CHECKPOINT_EVERY {
                self.save(prefix, progress).await.ok();
                saved_at = Instant::now();
            }
        }
        let candidates = reconcile::unlisted(snapshot, &progress.listed);
        if reconcile::implausibly_many_missing(candidates.len(), snapshot.live.len()) {
            // The pool is the wrong one, or was emptied: erase nobody, and
            // fail the run so its alarm fires. The pass stays at this partition.
            return Err(RunError::Implausible {
                missing: candidates.len(),
                of: snapshot.live.len(),
            });
        }
        let mut tally = Tally::default();
        if !self.confirm_gone(candidates, &mut tally).await? {
            return Ok(Worked::Cut);
        }
        add(&mut progress.tally, &tally);
        Ok(Worked::Done)
    }

    /// Deletes in Cognito the users deleted here whose Cognito side never
    /// happened. `false` when the run's time ran out first.
    async fn complete_deletes(&self, half_done: &[Sub], tally: &mut Tally) -> Result<bool, RunError> {
        for sub in half_done {
            if self.limit.out_of_time() || self.update_pace.take(self.limit.latest).await.is_err() {
                return Ok(false);
            }
            let user = sub.user_id();
            match self.users.delete(&user).await {
                Err(_) if self.limit.out_of_time() => return Ok(false),
                Ok(crate::identity::Applied::Done) => {
                    tally.deleted_in_cognito += 1;
                    tracing::info!(sub = %user, "deleted here, still in Cognito: deleted there");
                }
                Ok(crate::identity::Applied::NoSuchUser) => {}
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
    async fn confirm_gone(&self, mut candidates: Vec<Sub>, tally: &mut Tally) -> Result<bool, RunError> {
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
    async fn settle_sign_ins(&self, listed: &[(UserId, EmailAddress)], tally: &mut Tally) -> Result<bool, RunError> {
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
    async fn look_at_unknown(&self, unknown: Vec<(UserId, EmailAddress)>, tally: &mut Tally) -> Result<bool, RunError> {
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
                Ok(crate::identity::Applied::Done) => {
                    tally.sign_ups_closed += 1;
                    tracing::info!(sub = %user, "sign-up closed: its address is another account's; the Cognito user is deleted");
                }
                Ok(crate::identity::Applied::NoSuchUser) => {}
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

/// Whether this erasure did it, or an earlier one had.
enum Erased {
    Now,
    Before,
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

fn add(total: &mut Tally, part: &Tally) {
    total.deleted_in_cognito += part.deleted_in_cognito;
    total.list_calls += part.list_calls;
    total.listed += part.listed;
    total.candidates += part.candidates;
    total.still_present += part.still_present;
    total.erased += part.erased;
    total.without_profile += part.without_profile;
    total.failed += part.failed;
    total.sign_in_recorded += part.sign_in_recorded;
    total.sign_in_resynced += part.sign_in_resynced;
    total.sign_ups_closed += part.sign_ups_closed;
}

fn phase_name(phase: &Phase) -> &'static str {
    match phase {
        Phase::Table { .. } => "table",
        Phase::Cognito { .. } => "cognito",
    }
}

fn tally_json(tally: &Tally) -> Value {
    serde_json::to_value(tally).unwrap_or(Value::Null)
}

fn failure(err: &RunError) -> Diagnostic {
    tracing::error!(cause = %crate::error::chain(err), "reconcile run failed");
    Diagnostic {
        error_type: "SWEEP_FAILED".to_owned(),
        error_message: match err {
            RunError::Store(_) => "the table could not be read or written",
            RunError::Cognito(_) => "Cognito could not be asked",
            RunError::NoPool => "the user pool is not configured",
            RunError::Implausible { .. } => {
                "Cognito lacks too many of the table's users: nothing was erased; see the log"
            }
        }
        .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(detail: Value) -> Value {
        json!({
            "version": "0",
            "detail-type": API_CALL,
            "source": "aws.cognito-idp",
            "detail": detail,
        })
    }

    #[test]
    fn a_delete_user_record_names_the_user_by_sub() {
        let sub = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
        let event = record(json!({ "eventName": "DeleteUser", "additionalEventData": { "sub": sub } }));
        assert_eq!(
            Delivery::of(&event),
            Delivery::Deleted(Some(UserId::parse_sub(sub).unwrap()))
        );
    }

    #[test]
    fn a_record_without_a_sub_starts_a_pass_and_a_failed_call_is_ignored() {
        let unnamed = record(json!({ "eventName": "DeleteUser", "additionalEventData": {} }));
        assert_eq!(Delivery::of(&unnamed), Delivery::Deleted(None));
        let forged = record(json!({ "eventName": "DeleteUser", "additionalEventData": { "sub": "PROFILE" } }));
        assert_eq!(Delivery::of(&forged), Delivery::Deleted(None));
        let failed = record(json!({ "eventName": "DeleteUser", "errorCode": "NotAuthorizedException" }));
        assert_eq!(Delivery::of(&failed), Delivery::FailedCall);
        let empty_code = record(json!({ "eventName": "DeleteUser", "errorCode": "" }));
        assert_eq!(Delivery::of(&empty_code), Delivery::Deleted(None));
    }

    #[test]
    fn anything_else_is_the_schedule() {
        assert_eq!(
            Delivery::of(&json!({ "detail-type": "Scheduled Event" })),
            Delivery::Tick
        );
        let other_call = record(json!({ "eventName": "AdminDeleteUser" }));
        assert_eq!(Delivery::of(&other_call), Delivery::Tick);
        assert_eq!(Delivery::of(&json!(null)), Delivery::Tick);
    }
}
