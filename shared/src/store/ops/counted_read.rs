//! A read the user pays for from a daily allowance: one transaction that
//! checks the caller's profile is there and counts the read in the caller's
//! counter, pinned to the version read. Past the cap nothing is read and
//! nothing written. The availability check and the export count their reads
//! this way.

use crate::domain::{Timestamp, UserId, UserStatus};
use crate::store::expr::and;
use crate::store::items::{Counter, LimitItem, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, CounterWrite, Seen};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError, session};

use super::profile::session_live;

impl Store {
    /// Counts one read of `user`'s in `counter` (at `key`), under `cap` a
    /// rolling day: `Ok` once counted; `refused` with the seconds until a slot
    /// frees past the cap. A deleted or unknown user is not found, as on every
    /// route; a suspended one may still read (and is counted).
    pub(super) async fn count_read(
        &self,
        user: &UserId,
        (counter, key): (Counter, Item),
        cap: u32,
        now: Timestamp,
        refused: fn(u64) -> StoreError,
    ) -> Result<(), StoreError> {
        let mut seen = Seen::default();
        self.read_counters(&mut seen, [(counter, key.clone())]).await?;
        retrying!({
            let item = seen.get(counter);
            if let Err(retry_after_secs) = limits::admit(item, cap, now) {
                return Err(refused(retry_after_secs).into());
            }
            let plan = plan_count(self.table(), user, (counter, key.clone()), item, now)?;
            limits::learn(self.transact(&plan).await, &mut seen)
        })
    }
}

/// The caller's profile is there and not deleted, no recovery ended the
/// session, and the read is counted.
fn plan_count(
    table: &str,
    user: &UserId,
    (counter, key): (Counter, Item),
    seen: Option<&LimitItem>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let profile = plan::check(table, keys::profile_key(user), |x| {
        let there = and([x.exists(keys::PK), x.ne(attr::STATUS, UserStatus::Deleted)]);
        match session_live(x) {
            Some(live) => and([there, live]),
            None => there,
        }
    })?;
    plan.push(profile, read_caller);
    limits::push_count(
        &mut plan,
        table,
        CounterWrite {
            counter,
            key,
            seen,
            event: Some(now),
            first_added_at: None,
        },
        now,
    )?;
    Ok(plan)
}

/// The caller's profile failed its check: gone or deleted is not found, and
/// a session a recovery ended sees nothing.
fn read_caller(old: Option<&Item>) -> Result<Rejection, StoreError> {
    let profile = plan::old::<ProfileItem>(old)?;
    if profile.as_ref().is_some_and(session::revoked) {
        return Ok(Rejection::Failed(StoreError::SessionRevoked));
    }
    Ok(match profile.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Rejection::Failed(StoreError::NotFound),
        Some(_) => Rejection::Retry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_counted_read_is_the_callers_profile_and_the_count() {
        let user = UserId::parse("u").unwrap();
        let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        for (counter, key) in [
            (Counter::AvailabilityChecks, keys::availability_checks_key(&user)),
            (Counter::Exports, keys::exports_key(&user)),
        ] {
            let plan = plan_count("t", &user, (counter, key.clone()), None, now).unwrap();
            assert_eq!(plan.items().len(), 2);
            assert_well_formed(&plan);
            let put = plan.items()[1].put().unwrap();
            assert_eq!(put.item()[keys::SK], key[keys::SK]);
        }
    }
}
