//! Enrollment by domain: a user who holds a verified address at an
//! organization's verified domain sees it among their suggestions (`suggest`
//! and `invite`), and, where the organization invites its domain's users
//! (`invite`), joins it with that address as their proof. Every fact the
//! join relies on is conditioned in its write: the domain's claim (the
//! organization's, verified, inviting), the address's claim and the user's
//! verified record of it, and the organization's rules at the version read.

use crate::domain::{DomainStatus, EmailId, Enrollment, Membership, OrgDomain, OrgId, Role, Timestamp, UserId};
use crate::store::expr::and;
use crate::store::items::{self, EmailItem, EntityType, MemberItem, OrgStatus, OrganizationItem, UserItems, attr};
use crate::store::keys;
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::counts::JoinCaps;
use super::members::join_plan;
use crate::store::ops::profile::{push_active_check, read_changed, visible, writable};

/// An organization a user may join by the domain of one of their addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// The organization.
    pub organization: crate::domain::Organization,
    /// The domain that brings them.
    pub domain: OrgDomain,
    /// `suggest`: ask for an invitation; `invite`: join at once.
    pub enrollment: Enrollment,
    /// The user's address at the domain, which enrollment names.
    pub email_id: EmailId,
}

impl Store {
    /// The organizations `user` may join by a verified domain of one of
    /// their verified addresses, and is not a member of yet.
    pub async fn organization_suggestions(&self, user: &UserId) -> Result<Vec<Suggestion>, StoreError> {
        let found: UserItems = self.user_items(user).await?;
        visible(found.profile.ok_or(StoreError::NotFound)?)?;
        let mut out: Vec<Suggestion> = Vec::new();
        for record in found.emails.iter().filter(|r| r.is_verified) {
            let domain = OrgDomain::of(&record.email);
            if out.iter().any(|s| s.domain == domain) {
                continue;
            }
            let Some(claim) = self.domain_claim(&domain).await? else {
                continue;
            };
            let open = claim.status == DomainStatus::Verified && claim.enrollment != Enrollment::None;
            if !open || found.memberships.iter().any(|m| m.org_id == claim.org_id) {
                continue;
            }
            let org: Option<OrganizationItem> = self
                .get(keys::org_key(claim.org_id))
                .await?
                .map(items::from_item)
                .transpose()?;
            if let Some(org) = org.filter(|o| o.status == OrgStatus::Active) {
                out.push(Suggestion {
                    organization: org.into_domain(),
                    domain,
                    enrollment: claim.enrollment,
                    email_id: record.email_id,
                });
            }
        }
        Ok(out)
    }

    /// `user` joins `org` as a member by their verified address `email_id`
    /// at one of its verified domains that invites its users. Joining again
    /// gives the same membership.
    pub async fn enroll(
        &self,
        user: &UserId,
        org: OrgId,
        email_id: EmailId,
        now: Timestamp,
    ) -> Result<Membership, StoreError> {
        retrying!({
            let profile = self.get(keys::profile_key(user)).await?;
            writable(profile.map(items::from_item).transpose()?)?;
            let record: EmailItem = self
                .get(keys::email_key(user, email_id))
                .await?
                .map(items::from_item)
                .transpose()?
                .filter(|r: &EmailItem| r.is_verified)
                .ok_or(StoreError::NotEnrollable)?;
            let domain = OrgDomain::of(&record.email);
            let claim = self.domain_claim(&domain).await?;
            if !claim.is_some_and(|c| {
                c.org_id == org && c.status == DomainStatus::Verified && c.enrollment == Enrollment::Invite
            }) {
                return Err(StoreError::NotEnrollable.into());
            }
            match self.member(org, user).await {
                Ok(member) => {
                    // A member already: the membership and the proof, checked
                    // in one transaction, as the join would be.
                    let plan = member_plan(self.table(), org, user, &record, &domain)?;
                    self.transact(&plan).await?;
                    return Ok(member.into_domain());
                }
                Err(StoreError::MemberNotFound) => {}
                Err(err) => return Err(err.into()),
            }
            let admitted = self.admitted(org, &record.email).await?;
            let plan = enroll_plan(
                self.table(),
                org,
                user,
                &record,
                &domain,
                admitted.version,
                now,
                JoinCaps::of(self.config()),
            )?;
            self.transact(&plan).await?;
            Ok(MemberItem {
                entity_type: EntityType::Member,
                org_id: org,
                user_id: user.clone(),
                role: Role::Member,
                joined_at: now,
                directory: None,
                version: 0,
                suspended: false,
            }
            .into_domain())
        })
    }
}

/// A repeated enrollment: the membership still there, the caller active,
/// and the proof as a join would check it.
fn member_plan(
    table: &str,
    org: OrgId,
    user: &UserId,
    record: &EmailItem,
    domain: &OrgDomain,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let member = plan::check(table, keys::member_key(org, user), |x| x.exists(keys::PK))?;
    plan.push(member, read_changed);
    push_active_check(&mut plan, table, user)?;
    push_proof(&mut plan, table, org, user, record, domain)?;
    Ok(plan)
}

/// The domain's claim inviting, the address's claim the caller's, and the
/// caller's record of it verified.
fn push_proof(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    user: &UserId,
    record: &EmailItem,
    domain: &OrgDomain,
) -> Result<(), StoreError> {
    let inviting = plan::check(table, keys::domain_claim_key(domain), |x| {
        and([
            x.eq(attr::ORG_ID, org),
            x.eq(attr::STATUS, DomainStatus::Verified.as_str()),
            x.eq(attr::ENROLLMENT, Enrollment::Invite.as_str()),
        ])
    })?;
    plan.push(inviting, |_| Ok(plan::Rejection::Failed(StoreError::NotEnrollable)));
    let holds = plan::check(table, keys::claim_key(&record.canonical()), |x| {
        and([x.eq(attr::USER_ID, user), x.eq(attr::EMAIL_ID, record.email_id)])
    })?;
    plan.push(holds, read_changed);
    let verified = plan::check(table, keys::email_key(user, record.email_id), |x| {
        x.eq(attr::IS_VERIFIED, true)
    })?;
    plan.push(verified, read_changed);
    Ok(())
}

/// The join by domain: both halves, the count, the organization at the
/// version its rules were read, the domain's claim inviting, the address's
/// claim and the verified record.
#[allow(clippy::too_many_arguments)]
fn enroll_plan(
    table: &str,
    org: OrgId,
    user: &UserId,
    record: &EmailItem,
    domain: &OrgDomain,
    rules_at: u64,
    now: Timestamp,
    caps: JoinCaps,
) -> Result<TxPlan, StoreError> {
    let mut plan = join_plan(table, org, user, Role::Member, now, caps, Some(rules_at))?;
    push_proof(&mut plan, table, org, user, record, domain)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn an_enrollment_conditions_every_fact_it_relies_on() {
        let now = crate::store::ops::fixtures::now();
        let user = UserId::parse("u").unwrap();
        let email = crate::domain::EmailAddress::parse("ada@acme.com").unwrap();
        let record = EmailItem::unverified(
            &user,
            EmailId::new(),
            &email,
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            now,
            now,
        );
        let domain = OrgDomain::of(&email);
        let plan = enroll_plan(
            "t",
            OrgId::new(),
            &user,
            &record,
            &domain,
            3,
            now,
            JoinCaps { organizations: 100 },
        )
        .unwrap();
        assert_well_formed(&plan);
        // Both halves, the count, the organization, the domain, the claim, the record.
        assert_eq!(plan.items().len(), 7);
        assert!(matches!(
            plan.read(4, None),
            plan::Rejection::Failed(StoreError::NotEnrollable)
        ));
        let org = plan.items()[3].condition_check().unwrap();
        assert_eq!(org.condition_expression(), "#status = :status AND #version = :version");
    }
}
