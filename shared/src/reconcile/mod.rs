//! The reconcile pass as data and arithmetic, without a network: how the sub
//! space is cut, how subs are packed into snapshot chunks, where a pass stands
//! (its checkpoint), when the next one is due, and the pace of Cognito calls.
//!
//! A pass diffs the table's live profiles against Cognito's users. Phase one
//! scans the table in parallel segments and writes the live subs, bucketed by
//! their first two hex digits, as snapshot chunks. Phase two cuts the sub space
//! into partitions by prefix; per partition it reads that prefix's chunks and
//! pages through Cognito's ListUsers filtered by the same prefix. A sub the
//! table has and Cognito did not list is confirmed gone with AdminGetUser, then
//! erased. No call per user but for those: a user Cognito lists costs a
//! sixtieth of a ListUsers call, which does not count as activity for billing.
//! A partition keeps its place between runs ([`PartitionProgress`]): the
//! token of its next page and which of its snapshot's subs Cognito listed, so
//! every run moves the pass on, however little it may call.

mod pace;
mod partition;
mod pass;
mod space;

pub use pace::{OutOfTime, Pace};
pub use partition::{
    Listed, MAX_MISSING_PERCENT, MISSING_FLOOR, PageSort, PartitionProgress, PartitionSnapshot, Unknown,
    implausibly_many_missing, sort_page, unlisted,
};
pub use pass::{
    CHUNK_LIFETIME_SECONDS, Checkpoint, MAX_PASS_AGE_SECONDS, Pass, PassSummary, Phase, RUN_RESERVE_SECONDS, Segment,
    Tally,
};
pub use space::{
    BUFFER_SUBS, CHUNK_FILL, CHUNK_SUBS, MAX_PREFIX_DIGITS, PARTITION_TARGET, SCAN_PAGE_ITEMS, SUB_BYTES, Snapshot,
    Sub, chunks, pack, partition_count, partition_prefix, prefix_digits, unpack,
};
