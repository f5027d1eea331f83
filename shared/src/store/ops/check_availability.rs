//! An availability check, counted: one transaction that checks the caller's
//! profile is there and counts the check in the caller's counter, pinned to
//! the version read, then the read of the address's claim. Past the per-user
//! cap nothing is read: a user cannot learn, address by address, which ones
//! have accounts.

use crate::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use crate::store::expr::and;
use crate::store::items::{Counter, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, CounterWrite, Seen};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

impl Store {
    /// Whether `user` could add `email` now, counted against the user's
    /// availability checks (`AVAILABILITY_CHECKS_PER_USER` a rolling day).
    /// A deleted or unknown user is not found, as on every route. An address
    /// the policy refuses is refused as the add would refuse it, uncounted:
    /// the policy is the deployment's, not anyone's secret.
    pub async fn check_availability(
        &self,
        user: &UserId,
        email: &EmailAddress,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        self.policy.admit(email).map_err(StoreError::NotAllowed)?;
        let key = keys::availability_checks_key(user);
        let cap = self.config().max_availability_checks;
        let mut seen = Seen::default();
        self.read_counters(&mut seen, [(Counter::AvailabilityChecks, key.clone())])
            .await?;
        retrying!({
            let counter = seen.get(Counter::AvailabilityChecks);
            if let Err(retry_after_secs) = limits::admit(counter, cap, now) {
                return Err(StoreError::TooManyChecks { retry_after_secs }.into());
            }
            let plan = plan_check(self.table(), user, key.clone(), counter, now)?;
            limits::learn(self.transact(&plan).await, &mut seen)
        })?;
        self.is_available(email, now).await
    }
}

/// The caller's profile is there and not deleted, and the check is counted.
fn plan_check(
    table: &str,
    user: &UserId,
    key: Item,
    counter: Option<&crate::store::items::LimitItem>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let profile = plan::check(table, keys::profile_key(user), |x| {
        and([x.exists(keys::PK), x.ne(attr::STATUS, UserStatus::Deleted)])
    })?;
    plan.push(profile, read_caller);
    limits::push_count(
        &mut plan,
        table,
        CounterWrite {
            counter: Counter::AvailabilityChecks,
            key,
            seen: counter,
            event: Some(now),
            first_added_at: None,
        },
        now,
    )?;
    Ok(plan)
}

/// The caller's profile failed its check: gone or deleted is not found.
fn read_caller(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<ProfileItem>(old)?.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Rejection::Failed(StoreError::NotFound),
        Some(_) => Rejection::Retry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_check_is_the_callers_profile_and_the_count() {
        let user = UserId::parse("u").unwrap();
        let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let plan = plan_check("t", &user, keys::availability_checks_key(&user), None, now).unwrap();
        assert_eq!(plan.items().len(), 2);
        assert_well_formed(&plan);
    }
}
