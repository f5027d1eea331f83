//! An organization's counts (`ORG#…`, `COUNTS`): its members, those its
//! directory holds, and those suspended among them. Each write that adds or
//! ends a membership, or a directory's hold on one, or suspends one, moves
//! them in its own transaction: so the member cap is a condition of the
//! join, and a directory's `totalResults` is one read, whatever the
//! organization's size. An organization older than the counts is counted
//! whole once, by the first directory list that finds them not `exact`, on
//! condition that no write moved them during its walk.

use crate::domain::OrgId;
use crate::store::expr::{Update, or};
use crate::store::items::{self, MemberItem, OrgCountsItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::{Store, StoreError};

/// How a write moves an organization's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::store) struct CountChange {
    /// Memberships added (or, negative, ended).
    pub members: i64,
    /// Memberships the directory holds, added or ended.
    pub directory: i64,
    /// The directory's suspended memberships, added or ended.
    pub suspended: i64,
}

impl CountChange {
    /// A new membership: the directory's when `directory`, suspended when `suspended`.
    pub(in crate::store) fn join(directory: bool, suspended: bool) -> Self {
        Self {
            members: 1,
            directory: i64::from(directory),
            suspended: i64::from(directory && suspended),
        }
    }

    /// `member`'s membership ending.
    pub(in crate::store) fn leave(member: &MemberItem) -> Self {
        let directory = member.directory.is_some();
        Self {
            members: -1,
            directory: -i64::from(directory),
            suspended: -i64::from(directory && member.suspended),
        }
    }
}

/// The cap a join's write holds: the joiner's organizations (a directory's
/// joins also hold the organization's members: see the module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) struct JoinCaps {
    /// Organizations one user may belong to.
    pub organizations: u32,
}

impl JoinCaps {
    /// The cap the deployment's settings give.
    pub(in crate::store) fn of(config: &crate::config::StoreConfig) -> Self {
        Self {
            organizations: config.max_organizations_per_user,
        }
    }
}

/// Moves `org`'s counts by `change`, in the caller's transaction. With
/// `cap`, a write that adds a member is refused at `cap` members
/// (`OrganizationFull`): the cap is a condition of the join.
pub(in crate::store) fn push_counts(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    change: CountChange,
    cap: Option<u32>,
) -> Result<(), StoreError> {
    let update = plan::update(table, keys::org_counts_key(org), |x| {
        let mut update = Update::default()
            .set(x.add_from_zero(attr::VERSION, 1))
            .set(x.eq(attr::ENTITY_TYPE, "OrgCounts"));
        for (attribute, by) in [
            (attr::MEMBERS, change.members),
            (attr::DIRECTORY_MEMBERS, change.directory),
            (attr::SUSPENDED_MEMBERS, change.suspended),
        ] {
            if by != 0 {
                update = update.set(x.add_from_zero(attribute, by));
            }
        }
        let condition = match cap {
            Some(cap) if change.members > 0 => or(x.not_exists(attr::MEMBERS), x.lt(attr::MEMBERS, i64::from(cap))),
            // Any state: the counts follow the write they are part of.
            _ => or(x.not_exists(keys::PK), x.exists(keys::PK)),
        };
        (update, condition)
    })?;
    // Only a join is refused at the cap.
    let joining = cap.filter(|_| change.members > 0);
    plan.push(update, move |old| read_full(old, joining));
    Ok(())
}

/// A new organization's counts: its owner, and whole (`exact`) from the
/// start, so no list ever walks it to count.
pub(in crate::store) fn push_new_counts(plan: &mut TxPlan, table: &str, org: OrgId) -> Result<(), StoreError> {
    let counts = OrgCountsItem {
        members: 1,
        version: 1,
        exact: true,
        ..OrgCountsItem::default()
    };
    let mut item = items::to_item(keys::org_counts_key(org), &counts)?;
    item.insert(
        attr::ENTITY_TYPE.to_owned(),
        aws_sdk_dynamodb::types::AttributeValue::S("OrgCounts".to_owned()),
    );
    let put = plan::put(table, item, |x| x.not_exists(keys::PK))?;
    plan.push(put, |_| Ok(Rejection::Retry));
    Ok(())
}

/// A join refused by the counts: the organization at its cap; else they moved.
fn read_full(old: Option<&Item>, cap: Option<u32>) -> Result<Rejection, StoreError> {
    let counts = plan::old::<OrgCountsItem>(old)?;
    Ok(match (counts, cap) {
        (Some(c), Some(cap)) if c.members >= i64::from(cap) => Rejection::Failed(StoreError::OrganizationFull),
        _ => Rejection::Retry,
    })
}

/// What a walk of the organization's memberships found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::store) struct Walked {
    pub members: i64,
    pub directory: i64,
    pub suspended: i64,
}

impl Store {
    /// `org`'s counts as they stand (strongly consistent).
    pub(in crate::store) async fn org_counts(&self, org: OrgId) -> Result<OrgCountsItem, StoreError> {
        let item = self.get(keys::org_counts_key(org)).await?;
        Ok(item.map(items::from_item).transpose()?.unwrap_or_default())
    }

    /// Sets `org`'s counts to what a walk found, if no write moved them since
    /// `read` (read before the walk); whether they were set.
    pub(in crate::store) async fn settle_counts(
        &self,
        org: OrgId,
        read: &OrgCountsItem,
        walked: Walked,
    ) -> Result<bool, StoreError> {
        let version = read.version;
        self.update_if(keys::org_counts_key(org), |x| {
            let update = Update::default()
                .set(x.eq(attr::MEMBERS, walked.members))
                .set(x.eq(attr::DIRECTORY_MEMBERS, walked.directory))
                .set(x.eq(attr::SUSPENDED_MEMBERS, walked.suspended))
                .set(x.eq(attr::EXACT, true))
                .set(x.add_from_zero(attr::VERSION, 1))
                .set(x.eq(attr::ENTITY_TYPE, "OrgCounts"));
            let unmoved = if version == 0 {
                x.not_exists(attr::VERSION)
            } else {
                x.eq(attr::VERSION, version)
            };
            (update, unmoved)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::items::EntityType;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_join_is_refused_at_the_cap_and_a_leave_never_is() {
        let org = OrgId::new();
        let mut plan = TxPlan::new();
        push_counts(&mut plan, "t", org, CountChange::join(true, true), Some(3)).unwrap();
        assert_well_formed(&plan);
        let update = plan.items()[0].update().unwrap();
        assert!(
            update
                .condition_expression()
                .unwrap_or_default()
                .contains("#members < :members")
        );
        let full = OrgCountsItem {
            members: 3,
            ..OrgCountsItem::default()
        };
        let full = items::to_item(keys::org_counts_key(org), &full).unwrap();
        assert!(matches!(
            plan.read(0, Some(&full)),
            Rejection::Failed(StoreError::OrganizationFull)
        ));
        let mut plan = TxPlan::new();
        let member = MemberItem {
            entity_type: EntityType::Member,
            org_id: org,
            user_id: crate::domain::UserId::parse("u").unwrap(),
            role: crate::domain::Role::Member,
            joined_at: crate::domain::Timestamp::from_unix_millis(0),
            directory: None,
            version: 1,
            suspended: true,
        };
        assert_eq!(
            CountChange::leave(&member),
            CountChange {
                members: -1,
                directory: 0,
                suspended: 0
            },
            "suspended counts only the directory's"
        );
        push_counts(&mut plan, "t", org, CountChange::leave(&member), Some(3)).unwrap();
        assert_well_formed(&plan);
        assert!(matches!(plan.read(0, Some(&full)), Rejection::Retry));
    }
}
