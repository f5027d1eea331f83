//! Creating an organization: the organization, its slug's claim and the
//! creator's membership (both halves), with the creator's profile counting
//! one more organization, in one transaction.

use crate::domain::{NewOrganization, OrgId, Organization, Role, Timestamp, UserId};
use crate::store::expr::{Update, and, or};
use crate::store::items::{self, EntityType, MemberItem, OrgStatus, OrganizationItem, ProfileItem, SlugItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::super::profile::{active, read_changed, refusal};
use super::counts::push_new_counts;

impl Store {
    /// Creates an organization owned by `user`, who must be active and belong
    /// to fewer than the configured maximum of organizations.
    pub async fn create_organization(
        &self,
        user: &UserId,
        new: &NewOrganization,
        now: Timestamp,
    ) -> Result<Organization, StoreError> {
        let org = OrganizationItem {
            entity_type: EntityType::Organization,
            domains: 0,
            scim_tokens: 0,
            rules: Default::default(),
            org_id: OrgId::new(),
            name: new.name.clone(),
            slug: new.slug.clone(),
            status: OrgStatus::Active,
            version: 1,
            owners: 1,
            created_by: user.clone(),
            created_at: now,
            updated_at: now,
        };
        let mut plan = plan(self.table(), &org, self.config().max_organizations_per_user)?;
        // DynamoDB runs a resent transaction with this token once: an SDK
        // retry of a commit whose answer was lost is not a SlugTaken.
        plan.client_request_token = Some(uuid::Uuid::new_v4().to_string());
        retrying!({
            self.transact(&plan).await?;
            Ok(org.clone().into_domain())
        })
    }
}

/// The creator's membership, both halves.
pub(super) fn halves(org: OrgId, user: &UserId, role: Role, now: Timestamp) -> [MemberItem; 2] {
    let half = |entity_type| MemberItem {
        entity_type,
        org_id: org,
        user_id: user.clone(),
        role,
        joined_at: now,
        directory: None,
        version: 0,
        suspended: false,
    };
    [half(EntityType::Member), half(EntityType::Membership)]
}

/// The puts of both halves of a new membership, each on condition that it is new.
pub(super) fn push_halves(plan: &mut TxPlan, table: &str, member: &[MemberItem; 2]) -> Result<(), StoreError> {
    let [under_org, under_user] = member;
    let keys = [
        keys::member_key(under_org.org_id, &under_org.user_id),
        keys::membership_key(&under_user.user_id, under_user.org_id),
    ];
    for (key, half) in keys.into_iter().zip(member) {
        let put = plan::put(table, items::to_item(key, half)?, |x| x.not_exists(keys::PK))?;
        plan.push(put, read_changed);
    }
    Ok(())
}

/// The profile counts one more organization, on condition that it is
/// active, its session live, and under `max`.
pub(super) fn push_count_one_more(plan: &mut TxPlan, table: &str, user: &UserId, max: u32) -> Result<(), StoreError> {
    let update = plan::update(table, keys::profile_key(user), |x| {
        let update = Update::default().set(x.add_from_zero(attr::ORGANIZATIONS, 1));
        let room = or(x.not_exists(attr::ORGANIZATIONS), x.lt(attr::ORGANIZATIONS, max));
        let condition = and([active(x), room]);
        (update, condition)
    })?;
    plan.push(update, move |old| read_room(old, max));
    Ok(())
}

/// A failed count on the joining profile: its own state, or no room.
fn read_room(old: Option<&Item>, max: u32) -> Result<Rejection, StoreError> {
    let profile = plan::old::<ProfileItem>(old)?;
    if let Some(err) = refusal(profile.as_ref()) {
        return Ok(Rejection::Failed(err));
    }
    Ok(match profile {
        Some(p) if p.organizations >= max => Rejection::Failed(StoreError::OrganizationLimitReached),
        _ => Rejection::Retry,
    })
}

fn plan(table: &str, org: &OrganizationItem, max: u32) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let put = plan::put(table, items::to_item(keys::org_key(org.org_id), org)?, |x| {
        x.not_exists(keys::PK)
    })?;
    plan.push(put, read_changed);
    let slug = SlugItem {
        entity_type: EntityType::SlugClaim,
        org_id: org.org_id,
    };
    let claim = plan::put(table, items::to_item(keys::slug_key(&org.slug), &slug)?, |x| {
        x.not_exists(keys::PK)
    })?;
    plan.push(claim, |_| Ok(Rejection::Failed(StoreError::SlugTaken)));
    push_halves(
        &mut plan,
        table,
        &halves(org.org_id, &org.created_by, Role::Owner, org.created_at),
    )?;
    push_count_one_more(&mut plan, table, &org.created_by, max)?;
    // The owner is its first member, counted whole from the start.
    push_new_counts(&mut plan, table, org.org_id)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserStatus;
    use crate::store::ops::fixtures::profile;

    #[test]
    fn a_creation_is_five_items_and_reads_each_refusal() {
        let plan = plan("t", &crate::store::ops::fixtures::organization(1), 2).unwrap();
        plan::tests::assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 6, "and the organization's counts");
        assert!(matches!(plan.read(1, None), Rejection::Failed(StoreError::SlugTaken)));
        let count = plan.items()[4].update().unwrap();
        assert_eq!(
            count.condition_expression(),
            Some(
                "attribute_exists(#PK) AND #status = :status AND (attribute_not_exists(#organizations) OR #organizations < :organizations)"
            )
        );
        let mut full = profile(UserStatus::Active, 1, 1);
        full.insert(
            "organizations".into(),
            aws_sdk_dynamodb::types::AttributeValue::N("2".into()),
        );
        assert!(matches!(
            plan.read(4, Some(&full)),
            Rejection::Failed(StoreError::OrganizationLimitReached)
        ));
        assert!(matches!(
            plan.read(4, Some(&profile(UserStatus::Suspended, 1, 1))),
            Rejection::Failed(StoreError::AccountInactive)
        ));
        assert!(matches!(
            plan.read(4, Some(&profile(UserStatus::Active, 1, 1))),
            Rejection::Retry
        ));
    }
}
