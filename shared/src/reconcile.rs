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

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use uuid::Uuid;

use crate::domain::{EmailAddress, Timestamp, UserId};
use crate::identity::ListedUser;

/// A partition of phase two holds about this many users, up to 2M users in
/// all (39,000 at 10M): its table subs are held in memory, 16 bytes each, and
/// its progress between runs is a bit each.
pub const PARTITION_TARGET: u64 = 8_000;
/// The longest partition prefix, in hex digits (256 partitions), and the
/// longest bucket of the snapshot.
pub const MAX_PREFIX_DIGITS: usize = 2;
/// A chunk's bucket is as narrow as leaves it this many subs on average:
/// a small step writes one chunk, not one per bucket.
pub const CHUNK_FILL: usize = 500;
/// A segment writes its buffer out once it holds this many subs (3.2 MB),
/// so 64 segments stay within a small function's memory.
pub const BUFFER_SUBS: usize = 200_000;
/// Subs per snapshot chunk: 16 bytes each, 320 KB, under DynamoDB's 400 KB.
pub const CHUNK_SUBS: usize = 20_000;
/// Table items a Scan page evaluates at most, so one page never outlasts
/// what is left of a run.
pub const SCAN_PAGE_ITEMS: i32 = 1_000;
/// A run stops this many seconds before its Lambda timeout, at most, to
/// write its buffers and checkpoint; running past it is a bug the Duration
/// alarm sees.
pub const RUN_RESERVE_SECONDS: u32 = 5;
/// Snapshot chunks outlive their pass's start by this long, then TTL removes them.
pub const CHUNK_LIFETIME_SECONDS: i64 = 7 * 24 * 3600;
/// A pass older than this is started again: its chunks would expire under it.
pub const MAX_PASS_AGE_SECONDS: u64 = 5 * 24 * 3600;
/// A partition where Cognito lacks more than this share of the profiles (and
/// more than [`MISSING_FLOOR`] of them) is not erased: the pool is the wrong
/// one, or was emptied, far likelier than so many users deleting themselves.
pub const MAX_MISSING_PERCENT: usize = 10;
/// Below this many missing profiles a partition is never held back.
pub const MISSING_FLOOR: usize = 20;

/// Whether a partition of `snapshot` profiles with `missing` of them not
/// listed by Cognito looks like the wrong pool rather than deletions.
pub fn implausibly_many_missing(missing: usize, snapshot: usize) -> bool {
    missing > MISSING_FLOOR && missing * 100 > snapshot * MAX_MISSING_PERCENT
}

/// The partition prefix length for a pass over `live` profiles: the fewest
/// hex digits that bring a partition under [`PARTITION_TARGET`] users. A small
/// pool is one partition and one listing; 10M users are 256 partitions.
pub fn prefix_digits(live: u64) -> usize {
    let mut digits = 0;
    let mut per_partition = live;
    while digits < MAX_PREFIX_DIGITS && per_partition > PARTITION_TARGET {
        per_partition /= 16;
        digits += 1;
    }
    digits
}

/// How many partitions `digits` hex digits cut the sub space into.
pub fn partition_count(digits: usize) -> u32 {
    16u32.pow(u32::try_from(digits).unwrap_or(0))
}

/// The prefix of partition `index` (`""` for the one partition of a small pool).
pub fn partition_prefix(index: u32, digits: usize) -> String {
    if digits == 0 {
        return String::new();
    }
    format!("{index:0digits$x}")
}

/// A Cognito sub, packed: the snapshot stores 16 bytes per user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sub(u128);

impl Sub {
    /// The sub of a user id in Cognito's form (a lower-case UUID); `None` for
    /// anything else, which no ListUsers filter by prefix can find.
    pub fn of(user: &UserId) -> Option<Self> {
        UserId::parse_sub(user.as_str())
            .ok()
            .and_then(|_| Uuid::try_parse(user.as_str()).ok())
            .map(|uuid| Self(uuid.as_u128()))
    }

    /// The user id it packs.
    pub fn user_id(self) -> UserId {
        // A UUID's hyphenated form is always a valid sub.
        UserId::parse_sub(&Uuid::from_u128(self.0).hyphenated().to_string())
            .unwrap_or_else(|_| unreachable!("a UUID is a sub"))
    }

    /// Its snapshot bucket: its first `digits` hex digits.
    pub fn bucket(self, digits: usize) -> String {
        let hex = format!("{:032x}", self.0);
        hex[..digits.min(hex.len())].to_owned()
    }

    /// Whether its hex form starts with `prefix` (hex digits).
    pub fn starts_with(self, prefix: &str) -> bool {
        format!("{:032x}", self.0).starts_with(prefix)
    }
}

/// The snapshot chunks of `subs` (one step of one segment): sorted, grouped
/// by bucket, the bucket as wide as leaves [`CHUNK_FILL`] subs a chunk on
/// average (0 to [`MAX_PREFIX_DIGITS`] hex digits), each chunk at most
/// [`CHUNK_SUBS`]. Pure: the step's writes, in order.
pub fn chunks(mut subs: Vec<Sub>) -> Vec<(String, Vec<Sub>)> {
    subs.sort_unstable();
    subs.dedup();
    let mut digits = 0;
    while digits < MAX_PREFIX_DIGITS && subs.len() / 16usize.pow(u32::try_from(digits + 1).unwrap_or(0)) >= CHUNK_FILL {
        digits += 1;
    }
    let mut out: Vec<(String, Vec<Sub>)> = Vec::new();
    for sub in subs {
        let bucket = sub.bucket(digits);
        match out.last_mut() {
            Some((last, chunk)) if *last == bucket && chunk.len() < CHUNK_SUBS => chunk.push(sub),
            _ => out.push((bucket, vec![sub])),
        }
    }
    out
}

/// Which profiles a snapshot chunk lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Snapshot {
    /// Live (active or suspended) profiles: Cognito must still have their users.
    Live,
    /// Deleted profiles whose Cognito user was not known gone: Cognito must no
    /// longer have them (a delete whose Cognito side never happened).
    Deleted,
}

/// Bytes a packed sub takes in a snapshot chunk.
pub const SUB_BYTES: usize = 16;

/// Subs as a chunk stores them: 16 big-endian bytes each.
pub fn pack(subs: &[Sub]) -> Vec<u8> {
    subs.iter().flat_map(|s| s.0.to_be_bytes()).collect()
}

/// A chunk's subs; `None` if its length is not a whole number of subs.
pub fn unpack(bytes: &[u8]) -> Option<Vec<Sub>> {
    let chunks = bytes.chunks_exact(SUB_BYTES);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|c| {
                let mut raw = [0u8; SUB_BYTES];
                raw.copy_from_slice(c);
                Sub(u128::from_be_bytes(raw))
            })
            .collect(),
    )
}

/// Where the reconcile stands, as the checkpoint item stores it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// The pass under way, if any.
    pub pass: Option<Pass>,
    /// The last pass that finished.
    pub last_complete: Option<PassSummary>,
    /// Requests for a pass (deletions in Cognito whose record named no user)
    /// the last pass started answered; the checkpoint item counts them apart,
    /// with no lease, so none is lost to a run that holds it.
    #[serde(default)]
    pub requests_seen: u64,
}

/// A pass under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pass {
    /// Names the pass's snapshot chunks.
    pub id: String,
    /// Profiles created from this moment on are not the pass's to erase.
    pub started_at: Timestamp,
    /// Its phase and position.
    pub phase: Phase,
    /// What it has found so far.
    pub tally: Tally,
}

/// A pass's phase, with the position a run continues from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "phase")]
pub enum Phase {
    /// Scanning the table's live profiles into the snapshot.
    Table {
        /// One position per scan segment.
        segments: Vec<Segment>,
    },
    /// Listing Cognito partition by partition against the snapshot.
    Cognito {
        /// Hex digits of each partition's prefix.
        digits: usize,
        /// The first partition not yet done; those before it are.
        next: u32,
    },
}

/// One scan segment's position.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// The key (`PK`, `SK`) of the last profile taken; the scan resumes
    /// after it. Only a profile's key (`USER#<sub>`): never an address.
    pub after: Option<(String, String)>,
    /// Chunks this segment has written, which numbers the next.
    pub chunks: u32,
    /// The segment has been read to its end.
    pub done: bool,
}

/// What a pass found, added up across its runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    /// Live profiles the snapshot holds (created before the pass started).
    pub live: u64,
    /// Profiles whose id is not a Cognito sub: no listing can find them, so
    /// they are left alone and counted.
    pub not_a_sub: u64,
    /// Runs the pass has taken so far.
    pub runs: u32,
    /// ListUsers calls made.
    pub list_calls: u64,
    /// Users Cognito listed.
    pub listed: u64,
    /// Profiles Cognito did not list, asked about one by one.
    pub candidates: u64,
    /// Of those, users Cognito still had (created or changed during the listing).
    pub still_present: u64,
    /// Profiles erased: their user is gone from Cognito.
    pub erased: u64,
    /// Confirmed Cognito users created before the pass with no profile: left
    /// to the repair path (the next sign-in creates one), and counted.
    pub without_profile: u64,
    /// Candidates that could not be checked or erased; the next pass retries them.
    pub failed: u64,
    /// Deleted profiles in the snapshot whose Cognito user was not known gone.
    #[serde(default)]
    pub deleted: u64,
    /// Of those, users Cognito still had, deleted there now: deletes whose
    /// Cognito side never happened (the stream's record lost), completed.
    #[serde(default)]
    pub deleted_in_cognito: u64,
    /// Live profiles whose address Cognito holds was not yet recorded (older
    /// profiles, or a record the stream consumer never wrote), recorded now.
    #[serde(default)]
    pub sign_in_recorded: u64,
    /// Live profiles Cognito signs in with another address than the primary (a
    /// switch whose stream record failed for good): the stream consumer asked
    /// to apply the primary again.
    #[serde(default)]
    pub sign_in_resynced: u64,
    /// Confirmed Cognito users with no profile whose address another account
    /// verified: their sign-up closed, the Cognito user deleted.
    #[serde(default)]
    pub sign_ups_closed: u64,
}

/// A finished pass, for the record and the alarm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    /// Which pass.
    pub id: String,
    /// When its first run started it.
    pub started_at: Timestamp,
    /// When its last run finished it.
    pub finished_at: Timestamp,
    /// What it found.
    pub tally: Tally,
}

impl Checkpoint {
    /// Whether a new pass should start at `now`: asked for since the last one
    /// started (`requests` counted on the item), never run, or the last one
    /// started `interval_seconds` ago or more.
    pub fn due(&self, now: Timestamp, interval_seconds: u64, requests: u64) -> bool {
        requests > self.requests_seen
            || self
                .last_complete
                .as_ref()
                .is_none_or(|last| last.started_at.seconds_until(now) >= interval_seconds)
    }
}

impl Pass {
    /// A new pass, scanning the table in `segments` segments.
    pub fn start(id: String, started_at: Timestamp, segments: u32) -> Self {
        Self {
            id,
            started_at,
            phase: Phase::Table {
                segments: vec![Segment::default(); usize::try_from(segments.max(1)).unwrap_or(1)],
            },
            tally: Tally::default(),
        }
    }

    /// Once every segment is read, phase two, cut to the snapshot's size.
    pub fn after_table(&mut self) {
        if let Phase::Table { segments } = &self.phase
            && segments.iter().all(|s| s.done)
        {
            self.phase = Phase::Cognito {
                digits: prefix_digits(self.tally.live),
                next: 0,
            };
        }
    }

    /// Whether every partition is done.
    pub fn is_complete(&self) -> bool {
        matches!(self.phase, Phase::Cognito { digits, next } if next >= partition_count(digits))
    }
}

/// One partition's snapshot: the live and the deleted subs starting with its
/// prefix, sorted, each once. Fixed once phase one is done, so a sub's place
/// in it names the sub across runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionSnapshot {
    /// Live profiles: Cognito must still have their users.
    pub live: Vec<Sub>,
    /// Deleted profiles whose Cognito user was not known gone.
    pub deleted: Vec<Sub>,
}

impl PartitionSnapshot {
    /// The snapshot of `live` and `deleted` as the chunks gave them (in any
    /// order; a chunk written twice after a crash gives a sub twice).
    pub fn new(mut live: Vec<Sub>, mut deleted: Vec<Sub>) -> Self {
        for subs in [&mut live, &mut deleted] {
            subs.sort_unstable();
            subs.dedup();
        }
        Self { live, deleted }
    }
}

/// Which of a partition's live snapshot subs Cognito has listed: a bit each,
/// by the sub's place in [`PartitionSnapshot::live`]. 39,000 subs are 4.9 KB.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed(Vec<u8>);

impl Listed {
    /// None listed yet, for a snapshot of `len` subs.
    pub fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(8)])
    }

    /// The bits as stored; `None` when they do not fit a snapshot of `len`
    /// subs (a progress of another snapshot: the partition starts over).
    pub fn from_bytes(bytes: Vec<u8>, len: usize) -> Option<Self> {
        (bytes.len() == len.div_ceil(8)).then_some(Self(bytes))
    }

    /// The bits, for storing.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    fn mark(&mut self, at: usize) {
        if let Some(byte) = self.0.get_mut(at / 8) {
            *byte |= 1 << (at % 8);
        }
    }

    /// Whether the sub at `at` was listed.
    pub fn has(&self, at: usize) -> bool {
        self.0.get(at / 8).is_some_and(|byte| byte & (1 << (at % 8)) != 0)
    }
}

/// Where a partition of phase two stands between runs, kept in an item of
/// its own: a run that stops inside a partition saves it, and the next goes
/// on from it instead of listing the partition from its first page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionProgress {
    /// ListUsers' token of the next page to list; `None` before the first.
    pub token: Option<String>,
    /// Every page has been listed: what is left is to confirm the
    /// candidates (the live subs not listed) one by one.
    pub listed_all: bool,
    /// What the pages listed so far found (the candidates are counted once
    /// all of them are confirmed).
    pub tally: Tally,
    /// The partition is done, `tally` all it found: a run that finished it
    /// but could not move the checkpoint past it is not redone.
    #[serde(default)]
    pub finished: bool,
    /// Which live subs were listed; stored apart, as binary.
    #[serde(skip)]
    pub listed: Listed,
}

/// One ListUsers page sorted against a partition's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageSort {
    /// Users with a live profile, and the address Cognito signs each in with.
    pub live: Vec<(UserId, EmailAddress)>,
    /// Deleted here and still in Cognito: deletes whose Cognito side never happened.
    pub half_done: Vec<Sub>,
    /// Confirmed users created before the pass, in neither snapshot, and their
    /// address: their profile may have been written since the table was
    /// read (a sign-up confirmed during the pass), or there is none.
    pub unknown: Vec<(UserId, EmailAddress)>,
}

/// Sorts a page of Cognito's users against the partition's snapshot, marking
/// the live subs it lists and counting them in `tally`. A user created after
/// the pass started (`started`, epoch seconds) is not the pass's. Pure.
pub fn sort_page(
    snapshot: &PartitionSnapshot,
    listed: &mut Listed,
    users: &[ListedUser],
    started: i64,
    tally: &mut Tally,
) -> PageSort {
    let mut sorted = PageSort::default();
    for user in users {
        tally.listed += 1;
        let sub = Sub::of(&user.user_id);
        if let Some(at) = sub.and_then(|sub| snapshot.live.binary_search(&sub).ok()) {
            listed.mark(at);
            if let Some(email) = &user.email {
                sorted.live.push((user.user_id.clone(), email.clone()));
            }
        } else if let Some(sub) = sub.filter(|sub| snapshot.deleted.binary_search(sub).is_ok()) {
            sorted.half_done.push(sub);
        } else if user.confirmed
            && user.created_at.is_some_and(|at| at < started)
            && let Some(email) = &user.email
        {
            sorted.unknown.push((user.user_id.clone(), email.clone()));
        }
    }
    sorted
}

/// The live subs of the snapshot Cognito did not list: candidates for erasure.
pub fn unlisted(snapshot: &PartitionSnapshot, listed: &Listed) -> Vec<Sub> {
    snapshot
        .live
        .iter()
        .enumerate()
        .filter(|(at, _)| !listed.has(*at))
        .map(|(_, sub)| *sub)
        .collect()
}

/// What the table says of a confirmed Cognito user found in neither snapshot,
/// read when the page is sorted (strongly consistent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// The user has a profile now: confirmed, repaired or migrated after the
    /// table was read. Theirs; nothing to do.
    HasProfile,
    /// No profile, and another account verified the address: a sign-up
    /// closed at its confirmation, whose Cognito user is deleted.
    OwnedByAnother,
    /// No profile, and nobody else verified the address: left to the repair
    /// path (the next sign-in creates the profile), and counted.
    NoProfile,
}

/// Out of time: the call was not started, so the run can stop cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no time left in the run for another call")]
pub struct OutOfTime;

/// A token bucket in one process: calls of one quota category at most
/// `per_second`, with no burst, so the pass never takes more than its share
/// of the account's quota and leaves the rest to the sign-in path.
#[derive(Debug)]
pub struct Pace {
    interval: Duration,
    next: Mutex<Instant>,
}

impl Pace {
    /// A pace of `per_second` calls (at least one a minute).
    pub fn new(per_second: f64) -> Self {
        let per_second = if per_second.is_finite() && per_second > 1.0 / 60.0 {
            per_second
        } else {
            1.0 / 60.0
        };
        Self {
            interval: Duration::from_secs_f64(1.0 / per_second),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for the next slot; refuses one that would start after `latest`
    /// without taking it, so a run that stops leaves no slot spent.
    pub async fn take(&self, latest: Option<Instant>) -> Result<(), OutOfTime> {
        let at = {
            // The instant inside cannot be left half-written: a poisoned lock is usable.
            let mut next = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = (*next).max(Instant::now());
            if latest.is_some_and(|latest| at > latest) {
                return Err(OutOfTime);
            }
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(raw: &str) -> Sub {
        Sub::of(&UserId::parse(raw).unwrap()).unwrap()
    }

    #[test]
    fn small_pools_are_one_partition_large_ones_256() {
        assert_eq!(prefix_digits(0), 0);
        assert_eq!(prefix_digits(PARTITION_TARGET), 0);
        assert_eq!(prefix_digits(PARTITION_TARGET + 1), 1);
        assert_eq!(prefix_digits(16 * PARTITION_TARGET + 15), 1);
        assert_eq!(prefix_digits(16 * PARTITION_TARGET + 16), 2);
        assert_eq!(prefix_digits(10_000_000), 2);
        assert_eq!(prefix_digits(u64::MAX), MAX_PREFIX_DIGITS);
        assert_eq!(partition_count(0), 1);
        assert_eq!(partition_count(2), 256);
        assert_eq!(partition_prefix(0, 0), "");
        assert_eq!(partition_prefix(10, 1), "a");
        assert_eq!(partition_prefix(10, 2), "0a");
        assert_eq!(partition_prefix(255, 2), "ff");
    }

    #[test]
    fn subs_pack_to_16_bytes_and_back() {
        let subs = [
            sub("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"),
            sub("00000000-0000-4000-8000-000000000001"),
            sub("ffffffff-ffff-4fff-bfff-ffffffffffff"),
        ];
        let bytes = pack(&subs);
        assert_eq!(bytes.len(), 48);
        assert_eq!(unpack(&bytes).unwrap(), subs);
        assert_eq!(unpack(&bytes[..47]), None);
        assert_eq!(subs[0].user_id().as_str(), "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(subs[0].bucket(2), "3f");
        assert_eq!(subs[0].bucket(0), "");
        assert_eq!(subs[1].bucket(2), "00");
        // A bucket is the start of the sub as ListUsers' prefix filter reads it.
        assert!(subs[2].user_id().as_str().starts_with(&subs[2].bucket(2)));
        assert!(subs[0].starts_with("3f1c2"));
        assert!(subs[0].starts_with(""));
        assert!(!subs[0].starts_with("3f1d"));
        assert_eq!(CHUNK_SUBS * 16, 320_000);
    }

    #[test]
    fn a_small_step_is_one_chunk_a_large_one_a_chunk_per_bucket() {
        let subs = |n: u128| -> Vec<Sub> {
            (0..n)
                .map(|i| Sub(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
                .collect()
        };
        let small = chunks(subs(2_000));
        assert_eq!(small.len(), 1);
        assert_eq!(small[0].0, "");
        assert_eq!(small[0].1.len(), 2_000);
        let middle = chunks(subs(20_000));
        assert!(middle.iter().all(|(bucket, _)| bucket.len() == 1));
        assert_eq!(middle.iter().map(|(_, c)| c.len()).sum::<usize>(), 20_000);
        let large = chunks(subs(200_000));
        assert!(
            large
                .iter()
                .all(|(bucket, chunk)| bucket.len() == 2 && chunk.iter().all(|s| s.bucket(2) == *bucket))
        );
        assert_eq!(large.iter().map(|(_, c)| c.len()).sum::<usize>(), 200_000);
        // One bucket's subs over the most a chunk holds go to two chunks.
        let crowded: Vec<Sub> = (0..(CHUNK_SUBS as u128 + 5)).map(Sub).collect();
        let split = chunks(crowded);
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].1.len(), CHUNK_SUBS);
        // Duplicates are one sub.
        assert_eq!(chunks(vec![Sub(7), Sub(7)])[0].1, [Sub(7)]);
    }

    #[test]
    fn a_partition_missing_most_of_its_users_is_held_back() {
        assert!(!implausibly_many_missing(20, 20), "too few to judge");
        assert!(!implausibly_many_missing(21, 2_000), "1 %: deletions");
        assert!(!implausibly_many_missing(200, 2_000), "10 %");
        assert!(implausibly_many_missing(201, 2_000));
        assert!(implausibly_many_missing(8_000, 8_000), "an empty or other pool");
    }

    #[test]
    fn ids_that_are_not_subs_are_not_packed() {
        for raw in [
            "user-a",
            "3F1C2A7E-2B7D-4B0E-9A57-0E0F0B1C2D3E",
            "3f1c2a7e2b7d4b0e9a570e0f0b1c2d3e",
        ] {
            assert_eq!(Sub::of(&UserId::parse(raw).unwrap()), None, "{raw}");
        }
    }

    #[test]
    fn a_pass_is_due_when_asked_never_run_or_an_interval_after_the_last_start() {
        let t0 = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let mut checkpoint = Checkpoint::default();
        assert!(checkpoint.due(t0, 86_400, 0));
        checkpoint.last_complete = Some(PassSummary {
            id: "p".into(),
            started_at: t0,
            finished_at: t0.plus_seconds(3_600),
            tally: Tally::default(),
        });
        assert!(!checkpoint.due(t0.plus_seconds(86_399), 86_400, 0));
        assert!(checkpoint.due(t0.plus_seconds(86_400), 86_400, 0));
        // Asked for since the last pass started; answered once it has.
        assert!(checkpoint.due(t0.plus_seconds(1), 86_400, 1));
        checkpoint.requests_seen = 1;
        assert!(!checkpoint.due(t0.plus_seconds(1), 86_400, 1));
    }

    #[test]
    fn a_pass_moves_to_cognito_once_every_segment_is_read_and_completes_after_the_last_partition() {
        let t0 = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let mut pass = Pass::start("p".into(), t0, 2);
        pass.tally.live = 20_000;
        let Phase::Table { segments } = &mut pass.phase else {
            panic!()
        };
        segments[0].done = true;
        pass.after_table();
        assert!(matches!(pass.phase, Phase::Table { .. }));
        let Phase::Table { segments } = &mut pass.phase else {
            panic!()
        };
        segments[1].done = true;
        pass.after_table();
        assert_eq!(pass.phase, Phase::Cognito { digits: 1, next: 0 });
        assert!(!pass.is_complete());
        pass.phase = Phase::Cognito { digits: 1, next: 15 };
        assert!(!pass.is_complete());
        pass.phase = Phase::Cognito { digits: 1, next: 16 };
        assert!(pass.is_complete());
        // Stored as JSON, read back the same.
        let json = serde_json::to_string(&pass).unwrap();
        assert_eq!(serde_json::from_str::<Pass>(&json).unwrap(), pass);
    }

    fn listed_user(raw: &str, confirmed: bool, created_at: i64, email: Option<&str>) -> ListedUser {
        ListedUser {
            user_id: UserId::parse(raw).unwrap(),
            confirmed,
            created_at: Some(created_at),
            email: email.map(|e| EmailAddress::parse(e).unwrap()),
        }
    }

    #[test]
    fn a_page_marks_the_live_subs_it_lists_and_sorts_the_rest() {
        let live = [
            "00000000-0000-4000-8000-000000000001",
            "00000000-0000-4000-8000-000000000002",
            "00000000-0000-4000-8000-000000000003",
        ];
        let gone = "00000000-0000-4000-8000-000000000009";
        // Given out of order and once twice, as chunks may give them.
        let snapshot = PartitionSnapshot::new(
            vec![sub(live[2]), sub(live[0]), sub(live[1]), sub(live[0])],
            vec![sub(gone)],
        );
        assert_eq!(snapshot.live.len(), 3);
        let mut listed = Listed::new(snapshot.live.len());
        let mut tally = Tally::default();
        let started = 1_000;
        let page = [
            listed_user(live[2], true, 10, Some("c@example.com")),
            listed_user(gone, true, 10, Some("g@example.com")),
            // Confirmed before the pass, in neither snapshot: looked at one by one.
            listed_user("00000000-0000-4000-8000-00000000000a", true, 999, Some("a@example.com")),
            // Created after the pass started, or not confirmed: not the pass's.
            listed_user(
                "00000000-0000-4000-8000-00000000000b",
                true,
                1_000,
                Some("b@example.com"),
            ),
            listed_user("00000000-0000-4000-8000-00000000000c", false, 10, Some("x@example.com")),
        ];
        let sorted = sort_page(&snapshot, &mut listed, &page, started, &mut tally);
        assert_eq!(tally.listed, 5);
        assert_eq!(sorted.live, [(page[0].user_id.clone(), page[0].email.clone().unwrap())]);
        assert_eq!(sorted.half_done, [sub(gone)]);
        assert_eq!(
            sorted.unknown,
            [(page[2].user_id.clone(), page[2].email.clone().unwrap())]
        );
        assert_eq!(unlisted(&snapshot, &listed), [sub(live[0]), sub(live[1])]);
        // The next page, in the next run, from the bits as stored.
        let mut listed = Listed::from_bytes(listed.as_bytes().to_vec(), 3).unwrap();
        sort_page(&snapshot, &mut listed, &page[..0], started, &mut tally);
        let second = [listed_user(live[0], true, 10, None)];
        let sorted = sort_page(&snapshot, &mut listed, &second, started, &mut tally);
        assert!(sorted.live.is_empty(), "no address to settle");
        assert_eq!(unlisted(&snapshot, &listed), [sub(live[1])]);
        // Bits of another snapshot's size are not taken for this one's.
        assert_eq!(Listed::from_bytes(vec![0; 2], 3), None);
        assert_eq!(Listed::new(17).as_bytes().len(), 3);
    }

    #[test]
    fn a_partitions_progress_is_stored_as_json_without_its_bits() {
        let mut listed = Listed::new(9);
        listed.mark(8);
        let progress = PartitionProgress {
            token: Some("next".into()),
            listed_all: false,
            tally: Tally {
                listed: 60,
                ..Tally::default()
            },
            finished: false,
            listed,
        };
        let json = serde_json::to_value(&progress).unwrap();
        assert_eq!(json["token"], "next");
        assert_eq!(json["tally"]["listed"], 60);
        assert!(json.get("listed").is_none());
        let back: PartitionProgress = serde_json::from_value(json).unwrap();
        assert_eq!(back.listed, Listed::default());
        assert!(progress.listed.has(8) && !progress.listed.has(7));
    }

    #[tokio::test(start_paused = true)]
    async fn the_pace_spaces_calls_and_refuses_a_slot_past_the_deadline() {
        let pace = Pace::new(10.0);
        let start = Instant::now();
        for _ in 0..5 {
            pace.take(None).await.unwrap();
        }
        // Five slots at 10 a second: the first at once, the fifth 400 ms later.
        assert_eq!(Instant::now() - start, Duration::from_millis(400));
        let latest = Instant::now() + Duration::from_millis(50);
        assert_eq!(pace.take(Some(latest)).await, Err(OutOfTime));
        // The refused slot was not spent.
        pace.take(None).await.unwrap();
        assert_eq!(Instant::now() - start, Duration::from_millis(500));
    }
}
