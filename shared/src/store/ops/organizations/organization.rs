//! Renaming and deleting an organization: each one transaction with the
//! organization pinned at the version read, and the actor's powers.
//! Deleting marks the organization and releases its slug at once; its
//! members are removed afterwards, a page at a time (`purge`).

use crate::domain::{Actor, IfMatch, OrgId, Organization, OrganizationPatch, Power, Role, Timestamp};
use crate::store::expr::{Expr, Update, and, or};
use crate::store::items::{self, MemberItem, OrgDomainItem, OrgStatus, OrganizationItem, ProfileItem, PurgeItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::powers::{allowed, push_actor};
use crate::store::ops::profile::read_changed;
use crate::store::ops::visible;

impl Store {
    /// The organization, the actor's own member item and the actor's
    /// profile, read together (one round trip). A caller whose account is
    /// deleted, or whose session a recovery ended, reads nothing, as on
    /// every route; a deployment admin who is a member with the power
    /// `power` acts as that member (their own account's state then answers).
    pub(super) async fn org_and_mine(
        &self,
        org: OrgId,
        actor: &Actor,
        power: Power,
    ) -> Result<(OrganizationItem, Option<MemberItem>, Actor), StoreError> {
        // Boxed: three SDK calls' futures side by side would make every
        // route's future several times larger.
        let (org_item, mine, profile) = tokio::join!(
            Box::pin(self.get(keys::org_key(org))),
            Box::pin(self.get(keys::member_key(org, actor.user()))),
            Box::pin(self.get(keys::profile_key(actor.user()))),
        );
        let profile: ProfileItem = profile?
            .map(items::from_item)
            .transpose()?
            .ok_or(StoreError::NotFound)?;
        visible(profile)?;
        let org_item: Option<OrganizationItem> = org_item?.map(items::from_item).transpose()?;
        let mine: Option<MemberItem> = mine?.map(items::from_item).transpose()?;
        let org_item = org_item
            .filter(|o| o.status == OrgStatus::Active)
            .ok_or(StoreError::OrganizationNotFound)?;
        let actor = match (actor, &mine) {
            (Actor::DeploymentAdmin(user), Some(m)) if Role::holding(power).contains(&m.role) => {
                Actor::Member(user.clone())
            }
            _ => actor.clone(),
        };
        Ok((org_item, mine, actor))
    }

    /// Renames the organization, or changes its address rules, at a version
    /// `precondition` matches.
    pub async fn update_organization(
        &self,
        actor: &Actor,
        org: OrgId,
        precondition: &IfMatch,
        patch: &OrganizationPatch,
        now: Timestamp,
    ) -> Result<Organization, StoreError> {
        retrying!({
            let (current, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            matching(&current, precondition)?;
            let plan = update_plan(self.table(), &actor, &current, patch, now)?;
            self.transact(&plan).await?;
            Ok(Organization {
                name: patch.name.clone().unwrap_or_else(|| current.name.clone()),
                rules: patch.rules.unwrap_or(current.rules),
                version: current.version + 1,
                updated_at: now,
                ..current.into_domain()
            })
        })
    }

    /// Deletes the organization at a version `precondition` matches: from
    /// this write on, no reader sees it and nobody joins it; its slug is free.
    pub async fn delete_organization(
        &self,
        actor: &Actor,
        org: OrgId,
        precondition: &IfMatch,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        retrying!({
            let (current, mine, actor) = self.org_and_mine(org, actor, Power::Own).await?;
            allowed(&actor, mine.as_ref(), Power::Own)?;
            matching(&current, precondition)?;
            let domains = self.org_domains(org).await?;
            let plan = delete_plan(self.table(), &actor, &current, &domains, now)?;
            self.transact(&plan).await?;
            Ok(())
        })
    }
}

/// The organization satisfies If-Match, or the version it is at is the answer.
fn matching(org: &OrganizationItem, precondition: &IfMatch) -> Result<(), StoreError> {
    if precondition.matches(org.version) {
        Ok(())
    } else {
        Err(StoreError::OrganizationVersionMismatch { current: org.version })
    }
}

/// The organization moved since it was read: gone or deleting, not found;
/// otherwise read it again (the precondition is decided on what is read).
fn read_moved(old: Option<&Item>) -> Result<Rejection, StoreError> {
    super::powers::read_org(old)
}

/// A change of the live organization at the version read: `change`, a new
/// version and time.
fn push_pinned(
    plan: &mut TxPlan,
    table: &str,
    org: &OrganizationItem,
    now: Timestamp,
    change: impl FnOnce(&mut Expr) -> Update,
) -> Result<(), StoreError> {
    let update = plan::update(table, keys::org_key(org.org_id), |x| {
        let update = change(x).set(x.add(attr::VERSION, 1)).set(x.eq(attr::UPDATED_AT, now));
        let condition = and([x.eq(attr::VERSION, org.version), x.eq(attr::STATUS, OrgStatus::Active)]);
        (update, condition)
    })?;
    plan.push(update, read_moved);
    Ok(())
}

fn update_plan(
    table: &str,
    actor: &Actor,
    org: &OrganizationItem,
    patch: &OrganizationPatch,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let rules = patch
        .rules
        .map(|rules| {
            serde_dynamo::to_attribute_value::<_, aws_sdk_dynamodb::types::AttributeValue>(rules)
                .map_err(StoreError::Corrupt)
        })
        .transpose()?;
    let mut plan = TxPlan::new();
    push_pinned(&mut plan, table, org, now, |x| {
        let mut update = Update::default();
        if let Some(name) = &patch.name {
            update = update.set(x.eq(attr::NAME, name.as_str()));
        }
        if let Some(rules) = rules {
            update = update.set(x.eq(attr::RULES, rules));
        }
        update
    })?;
    push_actor(&mut plan, table, org.org_id, actor, Power::Manage, false, false)?;
    Ok(plan)
}

/// The deletion: the organization marked deleting at the version read (and
/// with the domains read: a claim made meanwhile moves its count), its slug
/// and every domain's claim released, the purge's item, the actor an owner.
fn delete_plan(
    table: &str,
    actor: &Actor,
    org: &OrganizationItem,
    domains: &[OrgDomainItem],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let update = plan::update(table, keys::org_key(org.org_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::STATUS, OrgStatus::Deleting))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now));
        let counted = if org.domains == 0 {
            or(x.not_exists(attr::DOMAINS), x.eq(attr::DOMAINS, 0u32))
        } else {
            x.eq(attr::DOMAINS, org.domains)
        };
        let condition = and([
            x.eq(attr::VERSION, org.version),
            x.eq(attr::STATUS, OrgStatus::Active),
            counted,
        ]);
        (update, condition)
    })?;
    plan.push(update, read_moved);
    for domain in domains {
        let release = plan::delete(table, keys::domain_claim_key(&domain.domain), |x| {
            x.eq(attr::ORG_ID, org.org_id)
        })?;
        // Taken over once lapsed since it was read: read again.
        plan.push(release, read_changed);
    }
    let release = plan::delete(table, keys::slug_key(&org.slug), |x| x.eq(attr::ORG_ID, org.org_id))?;
    plan.push(release, |_| {
        Ok(Rejection::Failed(StoreError::Inconsistent(
            "an organization's slug claim names another",
        )))
    });
    // The purge's work: its members are removed from the next scheduled run on.
    let purge = PurgeItem::new(org.org_id, now);
    let put = plan::put(table, items::to_item(keys::purge_key(org.org_id), &purge)?, |x| {
        x.not_exists(keys::PK)
    })?;
    plan.push(put, read_moved);
    push_actor(&mut plan, table, org.org_id, actor, Power::Own, false, false)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserId;
    use crate::store::ops::fixtures::now;

    fn org() -> OrganizationItem {
        OrganizationItem {
            version: 3,
            ..crate::store::ops::fixtures::organization(1)
        }
    }

    #[test]
    fn a_delete_pins_the_version_releases_the_slug_and_checks_an_owner() {
        let actor = Actor::Member(UserId::parse("u").unwrap());
        let plan = delete_plan("t", &actor, &org(), &[], now()).unwrap();
        plan::tests::assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        let check = plan.items()[3].condition_check().unwrap();
        assert_eq!(
            check.condition_expression(),
            "#role IN (:role) AND attribute_not_exists(#suspended)"
        );
        assert_eq!(
            plan.items()[0].update().unwrap().condition_expression(),
            Some(
                "#version = :version AND #status = :status2 AND (attribute_not_exists(#domains) OR #domains = :domains)"
            )
        );
        let admin = Actor::DeploymentAdmin(UserId::parse("a").unwrap());
        let plan = delete_plan("t", &admin, &org(), &[], now()).unwrap();
        assert_eq!(plan.items().len(), 4, "an admin's own profile, no membership");
    }

    #[test]
    fn if_match_is_decided_on_the_organization_read() {
        assert!(matching(&org(), &IfMatch::Versions(vec![3])).is_ok());
        assert!(matching(&org(), &IfMatch::Any).is_ok());
        assert!(matches!(
            matching(&org(), &IfMatch::Versions(vec![2])),
            Err(StoreError::OrganizationVersionMismatch { current: 3 })
        ));
    }
}
