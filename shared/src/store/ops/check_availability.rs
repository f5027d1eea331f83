//! An availability check, counted (`counted_read`): the caller's profile is
//! checked and the check counted in one transaction, then the address's claim
//! is read. Past the per-user cap nothing is read: a user cannot learn,
//! address by address, which ones have accounts.

use crate::domain::{EmailAddress, Timestamp, UserId};
use crate::store::items::Counter;
use crate::store::keys;
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
        let counter = (Counter::AvailabilityChecks, keys::availability_checks_key(user));
        let cap = self.config().max_availability_checks;
        self.count_read(user, counter, cap, now, |retry_after_secs| StoreError::TooManyChecks {
            retry_after_secs,
        })
        .await?;
        // The caller's own claim, even lapsed, is an address they have added
        // already: the add would answer so, and so does the check.
        let claims = self.claims(email).await?;
        Ok(claims.iter().all(|c| c.user_id != *user && !c.is_live(now)))
    }
}
