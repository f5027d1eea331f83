//! Phase two, one partition at a time: its snapshot, which of its subs
//! Cognito listed, its progress between runs, and the sorting of each page of
//! Cognito's users against it.

use serde::{Deserialize, Serialize};

use super::pass::Tally;
use super::space::Sub;
use crate::domain::{EmailAddress, UserId};
use crate::identity::ListedUser;

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

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(raw: &str) -> Sub {
        Sub::of(&UserId::parse(raw).unwrap()).unwrap()
    }

    #[test]
    fn a_partition_missing_most_of_its_users_is_held_back() {
        assert!(!implausibly_many_missing(20, 20), "too few to judge");
        assert!(!implausibly_many_missing(21, 2_000), "1 %: deletions");
        assert!(!implausibly_many_missing(200, 2_000), "10 %");
        assert!(implausibly_many_missing(201, 2_000));
        assert!(implausibly_many_missing(8_000, 8_000), "an empty or other pool");
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
}
