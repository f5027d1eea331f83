//! Rolling 24-hour limits, enforced inside the writes they guard.
//!
//! A limit item keeps the times (epoch seconds) of the events it counts within the
//! last 24 hours, oldest first, and a version. A write that counts an event puts
//! the item back with the new list, on condition that the version is the one it
//! read (or that the item is absent), so two concurrent writers cannot both take
//! the last slot: the loser's cancellation carries the item as it is now
//! (ALL_OLD), and it tries again from there. A write that only needs room checks
//! the same version. No item holds an address: they are named by its keyed hash.

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::config::CODES_NEVER_CROWDED_OUT;
use crate::domain::{Timestamp, UserId};
use crate::store::keys::{self, Item};

use super::error::StoreError;
use super::expr::Expr;
use super::items::{self, EntityType, attr};
pub use super::items::{Counter, LimitItem};
use super::plan::{self, Rejection, TxPlan};

/// The length of every limit's window.
pub const WINDOW_SECONDS: i64 = 86_400;

/// What a store operation knows of the counters it writes: each item as last
/// seen, `None` while believed absent. A stale view can only hold fewer events
/// than the item (events are never taken back), so a refusal read from it is
/// final, and an admission is checked again by the write's condition.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Codes issued for the address, by anyone (adds and resends).
    pub codes_issued: Option<LimitItem>,
    /// Codes the user had sent to the address.
    pub codes_requested: Option<LimitItem>,
    /// Codes the user had sent, to any address.
    pub codes_sent: Option<LimitItem>,
    /// Wrong codes the user sent, for any address.
    pub wrong_codes: Option<LimitItem>,
    /// The user with the address: wrong codes, and when the user first added it.
    pub user_address: Option<LimitItem>,
    /// The user's availability checks.
    pub availability_checks: Option<LimitItem>,
    /// The user's exports of their account.
    pub exports: Option<LimitItem>,
    /// A network source's recovery links that undid nothing.
    pub recovery_guesses: Option<LimitItem>,
    /// A network source's SCIM requests whose token proved nothing.
    pub scim_guesses: Option<LimitItem>,
    /// Invitations sent to an address, by any organization.
    pub invitations_to: Option<LimitItem>,
    /// Invitations an organization sent.
    pub invitations_by: Option<LimitItem>,
    /// Invitations an organization sent to an address.
    pub invitations_pair: Option<LimitItem>,
}

impl Seen {
    /// The item of `counter` as last seen.
    pub fn get(&self, counter: Counter) -> Option<&LimitItem> {
        match counter {
            Counter::CodesIssued => self.codes_issued.as_ref(),
            Counter::CodesRequested => self.codes_requested.as_ref(),
            Counter::CodesSent => self.codes_sent.as_ref(),
            Counter::WrongCodes => self.wrong_codes.as_ref(),
            Counter::UserAddress => self.user_address.as_ref(),
            Counter::AvailabilityChecks => self.availability_checks.as_ref(),
            Counter::Exports => self.exports.as_ref(),
            Counter::RecoveryGuesses => self.recovery_guesses.as_ref(),
            Counter::ScimGuesses => self.scim_guesses.as_ref(),
            Counter::InvitationsTo => self.invitations_to.as_ref(),
            Counter::InvitationsBy => self.invitations_by.as_ref(),
            Counter::InvitationsPair => self.invitations_pair.as_ref(),
        }
    }

    /// The item as a failed condition showed it.
    pub fn learn(&mut self, counter: Counter, item: Option<LimitItem>) {
        match counter {
            Counter::CodesIssued => self.codes_issued = item,
            Counter::CodesRequested => self.codes_requested = item,
            Counter::CodesSent => self.codes_sent = item,
            Counter::WrongCodes => self.wrong_codes = item,
            Counter::UserAddress => self.user_address = item,
            Counter::AvailabilityChecks => self.availability_checks = item,
            Counter::Exports => self.exports = item,
            Counter::RecoveryGuesses => self.recovery_guesses = item,
            Counter::ScimGuesses => self.scim_guesses = item,
            Counter::InvitationsTo => self.invitations_to = item,
            Counter::InvitationsBy => self.invitations_by = item,
            Counter::InvitationsPair => self.invitations_pair = item,
        }
    }
}

/// The events still inside the window that ends at `now`.
pub fn recent(item: Option<&LimitItem>, now: Timestamp) -> Vec<i64> {
    recent_of(item.map_or(&[], |i| i.events.as_slice()), now)
}

/// Of `events` (epoch seconds, oldest first), those inside the window that
/// ends at `now`: for any item that keeps its own list of events.
pub fn recent_of(events: &[i64], now: Timestamp) -> Vec<i64> {
    let start = now.unix_seconds() - WINDOW_SECONDS;
    events.iter().copied().filter(|t| *t > start).collect()
}

/// Slots left under `cap` in the window ending at `now`.
pub fn left(item: Option<&LimitItem>, cap: u32, now: Timestamp) -> u32 {
    let used = u32::try_from(recent(item, now).len()).unwrap_or(u32::MAX);
    cap.saturating_sub(used)
}

/// `Ok` when one more event fits under `cap`; otherwise the seconds until the
/// window frees a slot (the oldest event that keeps it full leaves).
pub fn admit(item: Option<&LimitItem>, cap: u32, now: Timestamp) -> Result<(), u64> {
    admit_of(item.map_or(&[], |i| i.events.as_slice()), cap, now)
}

/// [`admit`] over `events` (epoch seconds, oldest first).
pub fn admit_of(events: &[i64], cap: u32, now: Timestamp) -> Result<(), u64> {
    let events = recent_of(events, now);
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    if events.len() < cap {
        return Ok(());
    }
    let blocking = events[events.len() - cap.max(1)];
    let frees_at = blocking + WINDOW_SECONDS;
    Err(u64::try_from(frees_at - now.unix_seconds()).unwrap_or(0).max(1))
}

/// The start of the user's current window of holding an address: the first add
/// within the last 24 hours, or now.
pub fn first_added_at(item: Option<&LimitItem>, now: Timestamp) -> Timestamp {
    item.and_then(|i| i.first_added_at)
        .filter(|first| first.plus_seconds(WINDOW_SECONDS) > now)
        .unwrap_or(now)
}

/// The condition that pins an item to the version seen (or to its absence).
fn pinned(x: &mut Expr, seen: Option<&LimitItem>) -> String {
    match seen {
        None => x.not_exists(keys::PK),
        Some(item) => x.eq(attr::VERSION, item.version),
    }
}

/// Puts the counter back with `event` counted (when given) and `first_added_at`,
/// on condition that it is still as seen.
pub fn count(
    table: &str,
    key: Item,
    seen: Option<&LimitItem>,
    event: Option<Timestamp>,
    first_added_at: Option<Timestamp>,
    now: Timestamp,
) -> Result<TransactWriteItem, StoreError> {
    let mut events = recent(seen, now);
    events.extend(event.map(Timestamp::unix_seconds));
    let item = LimitItem {
        entity_type: EntityType::RateLimit,
        events,
        version: seen.map_or(1, |s| s.version + 1),
        first_added_at,
        // An hour past the window: by then nothing in it counts any more.
        ttl: now.unix_seconds() + WINDOW_SECONDS + 3_600,
    };
    plan::put(table, items::to_item(key, &item)?, |x| pinned(x, seen))
}

/// Checks that the counter is still as seen (so the room read from it is real).
pub fn check(table: &str, key: Item, seen: Option<&LimitItem>) -> Result<TransactWriteItem, StoreError> {
    plan::check(table, key, |x| pinned(x, seen))
}

/// The counter item a failed condition returned, if there was one.
pub fn parse(old: Option<&Item>) -> Result<Option<LimitItem>, StoreError> {
    plan::old(old)
}

/// One counter write of a transaction: the counter, its key, the item as seen,
/// and what to count.
#[derive(Debug, Clone)]
pub(crate) struct CounterWrite<'a> {
    pub counter: Counter,
    pub key: Item,
    pub seen: Option<&'a LimitItem>,
    /// The event to count, or `None` to put the item back with only `first_added_at` changed.
    pub event: Option<Timestamp>,
    pub first_added_at: Option<Timestamp>,
}

/// A counter moved under the write: it comes back as it is now.
fn moved(counter: Counter) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync + 'static {
    move |old| Ok(Rejection::LimitMoved(vec![(counter, parse(old)?)]))
}

/// The caps a code for an address meets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodeCaps {
    /// Codes for the address by anyone, past each requester's first
    /// [`CODES_NEVER_CROWDED_OUT`].
    pub per_address: u32,
    /// Codes one user sends to the address.
    pub per_user_address: u32,
    /// Codes one user sends, to any address.
    pub per_user: u32,
}

impl From<&crate::config::StoreConfig> for CodeCaps {
    fn from(c: &crate::config::StoreConfig) -> Self {
        Self {
            per_address: c.max_codes_per_address,
            per_user_address: c.max_codes_per_user_address,
            per_user: c.max_codes_per_user,
        }
    }
}

/// Whether one more code may go to the address, from what the counters show:
/// `Ok`, or the seconds until the first cap that refuses frees a slot. The
/// address's own count refuses only a requester who has had its first
/// [`CODES_NEVER_CROWDED_OUT`] codes there today: however many accounts a
/// stranger uses, the owner can still add the address and get a code.
pub(crate) fn admit_code(seen: &Seen, caps: CodeCaps, now: Timestamp) -> Result<(), u64> {
    let crowded = left(seen.codes_requested.as_ref(), CODES_NEVER_CROWDED_OUT, now) == 0;
    let refusals = [
        admit(seen.codes_sent.as_ref(), caps.per_user, now),
        admit(seen.codes_requested.as_ref(), caps.per_user_address, now),
        if crowded {
            admit(seen.codes_issued.as_ref(), caps.per_address, now)
        } else {
            Ok(())
        },
    ];
    // The longest wait: after it, every cap has room again.
    match refusals.iter().filter_map(|r| r.err()).max() {
        Some(wait) => Err(wait),
        None => Ok(()),
    }
}

/// Wrong codes already spent on a new code: all but one when the address's
/// count is full. The codes [`admit_code`] lets through past it are the owner's
/// way in, not more guesses: each takes one, so many accounts buy a stranger one
/// guess a code, not five.
pub(crate) fn attempts_spent(seen: &Seen, caps: CodeCaps, max_attempts: u32, now: Timestamp) -> u32 {
    if left(seen.codes_issued.as_ref(), caps.per_address, now) == 0 {
        max_attempts.saturating_sub(1)
    } else {
        0
    }
}

/// The three counters a code for the address (keyed hash) sent by `user`
/// counts in, and their keys.
pub(crate) fn code_counters(user: &UserId, address_hash: &str) -> [(Counter, Item); 3] {
    [
        (Counter::CodesIssued, keys::codes_issued_key(address_hash)),
        (Counter::CodesRequested, keys::codes_requested_key(user, address_hash)),
        (Counter::CodesSent, keys::codes_sent_key(user)),
    ]
}

/// The three counts of a code for the address (keyed hash) sent by `user`.
pub(crate) fn code_counts<'a>(
    seen: &'a Seen,
    user: &UserId,
    address_hash: &str,
    now: Timestamp,
) -> [CounterWrite<'a>; 3] {
    code_counters(user, address_hash).map(|(counter, key)| CounterWrite {
        counter,
        key,
        seen: seen.get(counter),
        event: Some(now),
        first_added_at: None,
    })
}

/// Adds a counted event to `plan`.
pub(crate) fn push_count(
    plan: &mut TxPlan,
    table: &str,
    write: CounterWrite<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let item = count(table, write.key, write.seen, write.event, write.first_added_at, now)?;
    plan.push(item, moved(write.counter));
    Ok(())
}

/// Adds to `plan` a check that a counter still has the room read from it.
pub(crate) fn push_room_check(
    plan: &mut TxPlan,
    table: &str,
    counter: Counter,
    key: Item,
    seen: Option<&LimitItem>,
) -> Result<(), StoreError> {
    plan.push(check(table, key, seen)?, moved(counter));
    Ok(())
}

/// After a write with rate-limit counters: a counter that moved is remembered as
/// it is now, and the operation decides again from it. A counter believed
/// absent that was there is first seen, not raced for (adds do not read them).
pub(crate) fn learn(result: Result<(), Rejection>, seen: &mut Seen) -> Result<(), Rejection> {
    match result {
        Err(Rejection::LimitMoved(moved)) => {
            let mut first_seen = true;
            for (counter, item) in moved {
                first_seen &= seen.get(counter).is_none();
                seen.learn(counter, item);
            }
            Err(if first_seen { Rejection::Again } else { Rejection::Retry })
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::parse("2026-11-21T00:00:00.000Z")
            .unwrap()
            .plus_seconds(seconds)
    }

    fn item(events: &[i64], version: u64) -> LimitItem {
        LimitItem {
            entity_type: EntityType::RateLimit,
            events: events.iter().map(|s| at(*s).unix_seconds()).collect(),
            version,
            first_added_at: None,
            ttl: 0,
        }
    }

    #[test]
    fn admits_until_the_cap_then_says_when_a_slot_frees() {
        assert_eq!(admit(None, 2, at(0)), Ok(()));
        let two = item(&[0, 100], 2);
        assert_eq!(admit(Some(&two), 3, at(200)), Ok(()));
        // Full: the oldest event leaves the window 24 h after it happened.
        assert_eq!(admit(Some(&two), 2, at(200)), Err(86_400 - 200));
        assert_eq!(left(Some(&two), 2, at(200)), 0);
        // A rolling window: once the oldest is 24 h old, one slot is free again.
        assert_eq!(admit(Some(&two), 2, at(86_400)), Ok(()));
        assert_eq!(left(Some(&two), 2, at(86_400)), 1);
        assert_eq!(recent(Some(&two), at(86_400)), vec![at(100).unix_seconds()]);
    }

    #[test]
    fn with_more_events_than_the_cap_the_right_one_blocks() {
        // A cap lowered by configuration: the cap-th newest event decides.
        let many = item(&[0, 10, 20, 30], 4);
        assert_eq!(admit(Some(&many), 2, at(40)), Err(86_400 + 20 - 40));
    }

    #[test]
    fn a_full_address_never_refuses_a_requesters_first_two_codes() {
        let caps = CodeCaps {
            per_address: 10,
            per_user_address: 5,
            per_user: 30,
        };
        let strangers = item(&(0..10).collect::<Vec<_>>(), 10);
        let mut seen = Seen {
            codes_issued: Some(strangers),
            ..Seen::default()
        };
        // The owner, new to the address: the strangers' ten codes do not count.
        assert_eq!(admit_code(&seen, caps, at(100)), Ok(()));
        seen.codes_requested = Some(item(&[50], 1));
        assert_eq!(admit_code(&seen, caps, at(100)), Ok(()));
        // Past the first two, the address's count decides.
        seen.codes_requested = Some(item(&[50, 60], 2));
        assert_eq!(admit_code(&seen, caps, at(100)), Err(86_400 - 100));
        // A code past the address's count gets one attempt, not five.
        assert_eq!(attempts_spent(&seen, caps, 5, at(100)), 4);
        assert_eq!(attempts_spent(&Seen::default(), caps, 5, at(100)), 0);
        // On a quiet address, the pair's own cap.
        seen.codes_issued = None;
        seen.codes_requested = Some(item(&[10, 20, 30, 40, 50], 5));
        assert_eq!(admit_code(&seen, caps, at(100)), Err(86_400 + 10 - 100));
        // And the requester's cap over every address.
        seen.codes_requested = None;
        seen.codes_sent = Some(item(&(0..30).collect::<Vec<_>>(), 30));
        assert_eq!(admit_code(&seen, caps, at(100)), Err(86_400 - 100));
        // Two caps full: the longer wait, after which both have room.
        seen.codes_requested = Some(item(&[50, 60, 70, 80, 90], 5));
        assert_eq!(admit_code(&seen, caps, at(100)), Err(86_400 + 50 - 100));
    }

    #[test]
    fn the_first_add_is_remembered_for_24_hours() {
        let mut seen = item(&[], 1);
        seen.first_added_at = Some(at(0));
        assert_eq!(first_added_at(Some(&seen), at(3_600)), at(0));
        assert_eq!(first_added_at(Some(&seen), at(86_400)), at(86_400));
        assert_eq!(first_added_at(None, at(5)), at(5));
    }

    #[test]
    fn a_count_is_pinned_to_the_version_seen_and_drops_old_events() {
        let seen = item(&[0, 50_000], 7);
        let key = keys::wrong_codes_key(&crate::domain::UserId::parse("u").unwrap());
        let write = count("t", key, Some(&seen), Some(at(90_000)), None, at(90_000)).unwrap();
        let put = write.put().unwrap();
        assert_eq!(put.condition_expression(), Some("#version = :version"));
        assert_eq!(
            put.expression_attribute_values().unwrap()[":version"].as_n().unwrap(),
            "7"
        );
        let stored: LimitItem = items::from_item(put.item().clone()).unwrap();
        assert_eq!(stored.version, 8);
        assert_eq!(
            stored.events,
            vec![at(50_000).unix_seconds(), at(90_000).unix_seconds()]
        );
        assert!(stored.ttl > at(90_000).unix_seconds() + WINDOW_SECONDS);
        assert_eq!(
            put.item()[keys::PK],
            keys::wrong_codes_key(&crate::domain::UserId::parse("u").unwrap())[keys::PK]
        );
        // The expiry is stored under the attribute the table's TTL reads.
        assert!(put.item().contains_key(keys::TTL));

        let fresh = check("t", keys::codes_issued_key("h"), None).unwrap();
        assert_eq!(
            fresh.condition_check().unwrap().condition_expression(),
            "attribute_not_exists(#PK)"
        );
    }
}
