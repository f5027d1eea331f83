//! The pace of the accounts SCIM directories make: each is a Cognito
//! AdminCreateUser, in the UserCreation quota that sign-ups share, so every
//! organization's directory together makes at most `scim_creates_per_second`
//! a second (a counter item per second, conditioned in its own write); past
//! it, the directory is told to retry (429, `Retry-After: 1`), and a
//! company's first sync leaves the rest of the quota to people signing up.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::Timestamp;
use crate::store::expr::{Update, or};
use crate::store::keys::{self, attr};
use crate::store::{Store, StoreError};

/// How long a second's counter is kept after it (DynamoDB's TTL deletes it).
const KEPT_SECONDS: i64 = 3_600;

impl Store {
    /// Counts one account a directory is about to make in Cognito, if this
    /// second has room; `TooManyRequests` (retry after a second) if not.
    pub async fn admit_scim_creation(&self, now: Timestamp) -> Result<(), StoreError> {
        let second = now.unix_seconds();
        let budget = self.config().scim_creates_per_second;
        let written = self
            .update_if(keys::scim_creations_key(second), |x| {
                // A rate-limit counter's shape (its events, none kept: a
                // second's count is its version), a few bytes whatever the budget.
                let events = x.name(attr::EVENTS);
                let none = x.value(attr::EVENTS, AttributeValue::L(Vec::new()));
                let update = Update::default()
                    .set(format!("{events} = if_not_exists({events}, {none})"))
                    .set(x.add_from_zero(attr::VERSION, 1))
                    .set(x.eq(attr::ENTITY_TYPE, "RateLimit"))
                    .set(x.eq(attr::TTL, second + KEPT_SECONDS));
                let condition = or(x.not_exists(attr::VERSION), x.lt(attr::VERSION, budget));
                (update, condition)
            })
            .await?;
        if written {
            Ok(())
        } else {
            Err(StoreError::TooManyRequests { retry_after_secs: 1 })
        }
    }
}
