//! Where the reconcile stands: its checkpoint, the pass under way with its
//! phase and position, and what the pass has found.

use serde::{Deserialize, Serialize};

use super::space::{partition_count, prefix_digits};
use crate::domain::Timestamp;

/// A run stops this many seconds before its Lambda timeout, at most, to
/// write its buffers and checkpoint; running past it is a bug the Duration
/// alarm sees.
pub const RUN_RESERVE_SECONDS: u32 = 5;
/// Snapshot chunks outlive their pass's start by this long, then TTL removes them.
pub const CHUNK_LIFETIME_SECONDS: i64 = 7 * 24 * 3600;
/// A pass older than this is started again: its chunks would expire under it.
pub const MAX_PASS_AGE_SECONDS: u64 = 5 * 24 * 3600;

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

impl Tally {
    /// Adds what one partition, or one page of it, found.
    pub fn add(&mut self, part: &Self) {
        self.deleted_in_cognito += part.deleted_in_cognito;
        self.list_calls += part.list_calls;
        self.listed += part.listed;
        self.candidates += part.candidates;
        self.still_present += part.still_present;
        self.erased += part.erased;
        self.without_profile += part.without_profile;
        self.failed += part.failed;
        self.sign_in_recorded += part.sign_in_recorded;
        self.sign_in_resynced += part.sign_in_resynced;
        self.sign_ups_closed += part.sign_ups_closed;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
