//! `cargo xtask backfill-user-index`: files every profile written before GSI2
//! existed. A parallel scan (`segments` at once) finds the profiles without
//! their GSI2 keys, and each is filed with one conditioned UpdateItem
//! (`Store::file_in_user_list`), paced. The scan's filter is the checkpoint:
//! a filed profile is never returned again, so a run cut short is resumed by
//! running it again, and the service may change statuses meanwhile.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use indicatif::ProgressBar;
use user_service::reconcile::Pace;
use user_service::store::{Filed, Store, StoreError};

/// Items a scan page evaluates at most.
const SCAN_PAGE_ITEMS: i32 = 1_000;
/// Writes in flight at once; the pace bounds their rate.
const WRITES_AT_ONCE: usize = 32;

/// What a run did, profile by profile.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Filed by this run.
    pub filed: u64,
    /// Filed by someone else between the scan and the write.
    pub already: u64,
    /// Deleted from the table between the scan and the write.
    pub gone: u64,
    /// Changed under every attempt: a re-run files them.
    pub changed: u64,
}

impl Tally {
    /// Whether every profile the scan found is filed.
    pub fn is_complete(&self) -> bool {
        self.changed == 0
    }
}

#[derive(Default)]
struct Counts {
    filed: AtomicU64,
    already: AtomicU64,
    gone: AtomicU64,
    changed: AtomicU64,
}

/// Scans for unlisted profiles and files each, at most `per_second` writes
/// a second over all segments. Each page is filed before the next is read,
/// so memory stays one page a segment whatever the table's size.
pub async fn backfill(store: &Store, segments: u32, per_second: f64, bar: &ProgressBar) -> Result<Tally, StoreError> {
    let pace = Pace::new(per_second);
    let counts = Counts::default();
    let segments = segments.max(1);
    let scans = (0..segments).map(|segment| {
        let (pace, counts) = (&pace, &counts);
        async move {
            let mut after = None;
            loop {
                let page = store
                    .scan_unlisted_profiles(segment, segments, SCAN_PAGE_ITEMS, after)
                    .await?;
                let mut writes = futures::stream::iter(&page.profiles)
                    .map(|profile| async move {
                        // No deadline: the pace only spaces the writes.
                        let _ = pace.take(None).await;
                        store.file_in_user_list(profile).await
                    })
                    .buffer_unordered(WRITES_AT_ONCE);
                while let Some(outcome) = writes.next().await {
                    let count = match outcome? {
                        Filed::Done => &counts.filed,
                        Filed::Already => &counts.already,
                        Filed::Gone => &counts.gone,
                        Filed::Changed => &counts.changed,
                    };
                    count.fetch_add(1, Ordering::Relaxed);
                    bar.inc(1);
                }
                match page.next {
                    Some(next) => after = Some(next),
                    None => return Ok::<(), StoreError>(()),
                }
            }
        }
    });
    futures::future::try_join_all(scans).await?;
    Ok(Tally {
        filed: counts.filed.into_inner(),
        already: counts.already.into_inner(),
        gone: counts.gone.into_inner(),
        changed: counts.changed.into_inner(),
    })
}

/// The run's report, one line a count.
pub fn report(tally: &Tally) -> String {
    format!(
        "filed: {}\nfiled by someone else meanwhile: {}\ngone meanwhile: {}\nchanging under every attempt: {}\n",
        tally.filed, tally.already, tally.gone, tally.changed
    )
}
