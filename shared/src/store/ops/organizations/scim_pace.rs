//! The pace of the accounts SCIM directories make: each is a Cognito
//! AdminCreateUser, in the UserCreation quota that sign-ups share. Three
//! counters, each conditioned, in one transaction: every organization's
//! directories together make at most `scim_creates_per_second` a second,
//! one organization at most its share of that
//! (`scim_creates_per_organization_per_second`), and at most
//! `scim_creates_per_organization_per_day` in a UTC day. Past any, the
//! directory is told to retry (429 with `Retry-After`) and nothing counts:
//! a company's first sync leaves the rest of the quota to people signing
//! up, and no organization's looping directory keeps every other's at 429.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::{OrgId, Timestamp};
use crate::store::expr::{Update, or};
use crate::store::keys::{self, Item, attr};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

/// How long a second's counter is kept after it (DynamoDB's TTL deletes it).
const KEPT_SECONDS: i64 = 3_600;
const DAY_SECONDS: i64 = 86_400;

/// One counter of the pace: its item, its budget, and when a refusal frees.
struct Counter {
    key: Item,
    budget: u32,
    expires: i64,
    retry_after_secs: u64,
}

/// The three counters a creation at `now` counts in, for `org`.
fn counters(org: OrgId, now: Timestamp, budgets: [u32; 3]) -> [Counter; 3] {
    let [deployment, organization, daily] = budgets;
    let second = now.unix_seconds();
    let day = second.div_euclid(DAY_SECONDS);
    let day_ends = (day + 1) * DAY_SECONDS;
    [
        Counter {
            key: keys::scim_creations_key(second),
            budget: deployment,
            expires: second + KEPT_SECONDS,
            retry_after_secs: 1,
        },
        Counter {
            key: keys::scim_org_creations_second_key(org, second),
            // A share above the whole is the whole.
            budget: organization.min(deployment),
            expires: second + KEPT_SECONDS,
            retry_after_secs: 1,
        },
        Counter {
            key: keys::scim_org_creations_day_key(org, day),
            budget: daily,
            expires: day_ends + DAY_SECONDS,
            retry_after_secs: u64::try_from(day_ends - second).unwrap_or(1).max(1),
        },
    ]
}

/// One more on each counter, each below its budget; a counter at its budget
/// refuses the whole, with its own wait.
fn pace_plan(table: &str, counters: [Counter; 3]) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    for counter in counters {
        let Counter {
            key,
            budget,
            expires,
            retry_after_secs,
        } = counter;
        let update = plan::update(table, key, |x| {
            // A rate-limit counter's shape (its events, none kept: the count
            // is its version), a few bytes whatever the budget.
            let events = x.name(attr::EVENTS);
            let none = x.value(attr::EVENTS, AttributeValue::L(Vec::new()));
            let update = Update::default()
                .set(format!("{events} = if_not_exists({events}, {none})"))
                .set(x.add_from_zero(attr::VERSION, 1))
                .set(x.eq(attr::ENTITY_TYPE, "RateLimit"))
                .set(x.eq(attr::TTL, expires));
            let condition = or(x.not_exists(attr::VERSION), x.lt(attr::VERSION, budget));
            (update, condition)
        })?;
        plan.push(update, move |_| {
            Ok(Rejection::Failed(StoreError::TooManyRequests { retry_after_secs }))
        });
    }
    Ok(plan)
}

impl Store {
    /// Counts one account `org`'s directory is about to make in Cognito, if
    /// the deployment's second, the organization's second and its day all
    /// have room; `TooManyRequests` (with the refusing counter's wait) if not,
    /// and nothing is counted.
    pub async fn admit_scim_creation(&self, org: OrgId, now: Timestamp) -> Result<(), StoreError> {
        let config = self.config();
        let budgets = [
            config.scim_creates_per_second,
            config.scim_creates_per_organization_per_second,
            config.scim_creates_per_organization_per_day,
        ];
        // Creations counted in the same instant conflict: read as a retry.
        retrying!({
            let plan = pace_plan(self.table(), counters(org, now, budgets))?;
            self.transact(&plan).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_creation_counts_in_the_deployments_second_the_organizations_second_and_its_day() {
        let now = Timestamp::from_unix_millis(86_400_000 * 3 + 1_000 * 3_590);
        let org = OrgId::new();
        let plan = pace_plan("t", counters(org, now, [25, 12, 100])).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 3);
        // Each refusal says how long to wait: a second, or the rest of the day.
        let waits: Vec<u64> = (0..3)
            .map(|i| match plan.read(i, None) {
                Rejection::Failed(StoreError::TooManyRequests { retry_after_secs }) => retry_after_secs,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(waits, [1, 1, 86_400 - 3_590]);
    }

    #[test]
    fn an_organizations_share_is_never_more_than_the_whole() {
        let [_, organization, _] = counters(OrgId::new(), Timestamp::from_unix_millis(0), [10, 50, 100]);
        assert_eq!(organization.budget, 10);
    }
}
