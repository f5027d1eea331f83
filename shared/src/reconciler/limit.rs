//! Where a run stops: its work time, and the budget of ListUsers calls tests give it.

use std::sync::atomic::{AtomicU32, Ordering};

use tokio::time::Instant;

/// Where a run stops: at its work time (`latest`), or, for its next page,
/// once it has made the ListUsers calls it may
/// ([`ReconcileConfig::list_calls_per_run`](crate::config::ReconcileConfig::list_calls_per_run),
/// which tests set). What it has to save then is written by `flush_by`.
pub(super) struct Limit {
    pub(super) latest: Option<Instant>,
    pub(super) flush_by: Option<Instant>,
    pub(super) list_calls_left: Option<AtomicU32>,
}

impl Limit {
    /// The run's work time is up.
    pub(super) fn out_of_time(&self) -> bool {
        self.latest.is_some_and(|latest| Instant::now() >= latest)
    }

    /// The run may start no more partitions: its time is up, or its budget
    /// of ListUsers calls is spent.
    pub(super) fn done(&self) -> bool {
        self.out_of_time()
            || self
                .list_calls_left
                .as_ref()
                .is_some_and(|left| left.load(Ordering::SeqCst) == 0)
    }

    /// Takes one ListUsers call of the run's budget; `false` when none is left.
    pub(super) fn take_list_call(&self) -> bool {
        self.list_calls_left.as_ref().is_none_or(|left| {
            left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        })
    }
}
