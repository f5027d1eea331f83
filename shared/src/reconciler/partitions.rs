//! Phase two: Cognito listed partition by partition against the snapshot, a
//! few partitions at once, each keeping its progress between runs.

use futures::stream::{self, StreamExt};
use tokio::time::Instant;

use super::context::Partitions;
use super::limit::Limit;
use super::{CHECKPOINT_EVERY, Reconciler, RunError, Step};
use crate::deadline;
use crate::reconcile::{self, Checkpoint, Pace, PartitionProgress, PartitionSnapshot, Pass, Phase, Tally};
use crate::store::StoreError;

impl Reconciler<'_> {
    /// Phase two: partitions in order, a few at once; the checkpoint moves past
    /// each one done, in order. A partition the run stops inside keeps its
    /// progress in an item of its own, so the next run goes on from there.
    pub(super) async fn list_cognito(
        &self,
        checkpoint: &mut Checkpoint,
        pass: &mut Pass,
        limit: &Limit,
    ) -> Result<Step, RunError> {
        let Phase::Cognito { digits, next } = pass.phase else {
            return Ok(Step::Done);
        };
        let users = self.users()?;
        let share = f64::from(self.config.quota_share_percent) / 100.0;
        let list_pace = Pace::new(f64::from(self.config.user_list_rps) * share);
        let read_pace = Pace::new(f64::from(self.config.user_read_rps) * share);
        let update_pace = Pace::new(f64::from(self.config.user_update_rps) * share);
        let id = pass.id.clone();
        let context = Partitions {
            store: self.store,
            users,
            pass: &id,
            started_at: pass.started_at,
            clock: self.clock,
            digits,
            list_pace: &list_pace,
            read_pace: &read_pace,
            update_pace: &update_pace,
            limit,
        };
        let at_once = usize::try_from(self.config.partitions_at_once).unwrap_or(1).max(1);
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
                    pass.tally.add(&tally);
                    if let Phase::Cognito { next, .. } = &mut pass.phase {
                        *next += 1;
                    }
                    if let Err(err) = self.save_between_steps(checkpoint, pass).await {
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

/// How far a partition's work got in this run.
enum Worked {
    /// Every page listed and every candidate confirmed.
    Done,
    /// The run stopped inside it; its progress says where.
    Cut,
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
            progress.tally.add(&tally);
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
        progress.tally.add(&tally);
        Ok(Worked::Done)
    }
}
