//! Phase one: the table's profiles, scanned in parallel segments, written as
//! the pass's snapshot chunks (the live, and the deleted whose Cognito user
//! was not known gone).

use futures::stream::{self, StreamExt};
use tokio::time::Instant;

use super::{CHECKPOINT_EVERY, Reconciler, RunError, Step};
use crate::deadline;
use crate::domain::Timestamp;
use crate::reconcile::{self, Pass, Phase, Segment, Sub, Tally};
use crate::store::StoreError;

/// Snapshot chunks written at once when a run flushes its buffers.
const CHUNK_WRITES_AT_ONCE: usize = 64;

impl Reconciler<'_> {
    /// Phase one, for at most [`CHECKPOINT_EVERY`]: every segment reads pages
    /// and buffers the live subs, then writes its buffer as chunks.
    pub(super) async fn scan_table(
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
        let snapshot = SnapshotAt {
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
        snapshot: &SnapshotAt<'_>,
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
            let page = deadline::within(Some(stop), self.store.scan_profiles(index, total, cursor.as_ref())).await;
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
        snapshot: &SnapshotAt<'_>,
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
        snapshot: &SnapshotAt<'_>,
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
            self.store.write_snapshot_chunk(
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
}

/// The snapshot a scan segment writes into.
#[derive(Clone, Copy)]
struct SnapshotAt<'a> {
    pass: &'a str,
    started_at: Timestamp,
}

/// A step whose snapshot was not written: nothing counted, the position as before.
fn unwritten(index: u32, err: &StoreError, before: Segment) -> (Segment, Tally, bool) {
    tracing::warn!(segment = index, cause = %crate::error::chain(err), "snapshot not written; the step is scanned again");
    (before, Tally::default(), false)
}
