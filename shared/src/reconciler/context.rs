//! What every partition of a run shares: the store, the pool, the pass, the
//! paces of each quota category, and where the run stops.

use super::limit::Limit;
use crate::clock::Clock;
use crate::domain::Timestamp;
use crate::identity::UserPool;
use crate::reconcile::Pace;
use crate::store::Store;

/// What every partition of a run shares.
pub(super) struct Partitions<'a> {
    pub(super) store: &'a Store,
    pub(super) users: &'a UserPool,
    pub(super) pass: &'a str,
    pub(super) started_at: Timestamp,
    pub(super) clock: &'a Clock,
    pub(super) digits: usize,
    pub(super) list_pace: &'a Pace,
    pub(super) read_pace: &'a Pace,
    pub(super) update_pace: &'a Pace,
    pub(super) limit: &'a Limit,
}
