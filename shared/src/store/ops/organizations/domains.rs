//! An organization's domains: claimed one organization per domain (the
//! claim `DOMAIN#…` is put on condition, as an address's is), proved by an
//! owner or admin who holds an address there, verified by code, and given an
//! enrollment mode. A pending claim holds its domain for
//! `DOMAIN_PENDING_DAYS`; after that another organization may take it over,
//! so nobody squats a company's domain by claiming it first.

use crate::domain::{Actor, DomainStatus, DomainView, Enrollment, OrgDomain, OrgId, Power, Timestamp};
use crate::store::expr::{Update, and, or};
use crate::store::items::{
    self, DomainClaimItem, EmailItem, EntityType, OrgDomainItem, OrgStatus, OrganizationItem, attr,
};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{retrying, send_by_deadline};
use crate::store::{Store, StoreError};

use super::powers::{allowed, push_actor};
use crate::store::ops::profile::read_changed;

use crate::config::{DOMAIN_PENDING_DAYS, MAX_DOMAINS_PER_ORGANIZATION};

impl Store {
    /// Claims `domain` for `org` (owners and admins): pending until proved.
    pub async fn claim_domain(
        &self,
        actor: &Actor,
        org: OrgId,
        domain: &OrgDomain,
        now: Timestamp,
    ) -> Result<DomainView, StoreError> {
        crate::org_policy::claimable(self.policy(), domain).map_err(StoreError::DomainNotClaimable)?;
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let current = self.domain_claim(domain).await?;
            let lapsed = match current {
                None => None,
                Some(c) if c.status == DomainStatus::Pending && c.pending_until.is_some_and(|t| t <= now) => Some(c),
                Some(_) => return Err(StoreError::DomainTaken.into()),
            };
            let item = OrgDomainItem {
                entity_type: EntityType::OrgDomain,
                org_id: org,
                domain: domain.clone(),
                status: DomainStatus::Pending,
                enrollment: Enrollment::None,
                claimed_at: now,
                pending_until: Some(now.plus_seconds(DOMAIN_PENDING_DAYS * 86_400)),
                verified_at: None,
                verified_by: None,
            };
            let plan = claim_plan(self.table(), &actor, &item, lapsed.as_ref())?;
            self.transact(&plan).await?;
            Ok(item.into_domain())
        })
    }

    /// Verifies `org`'s pending `domain` with the actor's own address
    /// `email_id` at it, which they verified by code.
    pub async fn verify_domain(
        &self,
        actor: &Actor,
        org: OrgId,
        domain: &OrgDomain,
        email_id: crate::domain::EmailId,
        now: Timestamp,
    ) -> Result<DomainView, StoreError> {
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let item = self.org_domain(org, domain).await?;
            if item.status == DomainStatus::Verified {
                // Verified already: the same powers, checked in one
                // transaction, as the proof would be (a suspended owner's
                // repeat is refused as their proof is).
                let mut plan = TxPlan::new();
                push_actor(&mut plan, self.table(), org, &actor, Power::Manage, false, false)?;
                let still = plan::check(self.table(), keys::org_domain_key(org, domain), |x| {
                    x.eq(attr::STATUS, DomainStatus::Verified.as_str())
                })?;
                plan.push(still, read_domain);
                self.transact(&plan).await?;
                return Ok(item.into_domain());
            }
            let record: Option<EmailItem> = self
                .get(keys::email_key(actor.user(), email_id))
                .await?
                .map(items::from_item)
                .transpose()?;
            if !record.is_some_and(|r| r.is_verified && &OrgDomain::of(&r.email) == domain) {
                return Err(StoreError::DomainNotProven.into());
            }
            let plan = verify_plan(self.table(), &actor, &item, email_id, now)?;
            self.transact(&plan).await?;
            Ok(OrgDomainItem {
                status: DomainStatus::Verified,
                pending_until: None,
                verified_at: Some(now),
                verified_by: Some(actor.user().clone()),
                ..item
            }
            .into_domain())
        })
    }

    /// Sets how users at `org`'s verified `domain` meet it.
    pub async fn set_enrollment(
        &self,
        actor: &Actor,
        org: OrgId,
        domain: &OrgDomain,
        enrollment: Enrollment,
    ) -> Result<DomainView, StoreError> {
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let item = self.org_domain(org, domain).await?;
            if item.status != DomainStatus::Verified && enrollment != Enrollment::None {
                return Err(StoreError::DomainNotVerified.into());
            }
            let mut plan = TxPlan::new();
            push_actor(&mut plan, self.table(), org, &actor, Power::Manage, false, false)?;
            let mine = plan::update(self.table(), keys::org_domain_key(org, domain), |x| {
                let update = Update::default().set(x.eq(attr::ENROLLMENT, enrollment.as_str()));
                (update, x.eq(attr::STATUS, item.status.as_str()))
            })?;
            plan.push(mine, read_domain);
            let claim = plan::update(self.table(), keys::domain_claim_key(domain), |x| {
                let update = Update::default().set(x.eq(attr::ENROLLMENT, enrollment.as_str()));
                (update, x.eq(attr::ORG_ID, org))
            })?;
            plan.push(claim, read_lost);
            self.transact(&plan).await?;
            Ok(OrgDomainItem { enrollment, ..item }.into_domain())
        })
    }

    /// Removes `domain` from `org`, releasing its claim.
    pub async fn remove_domain(&self, actor: &Actor, org: OrgId, domain: &OrgDomain) -> Result<(), StoreError> {
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            self.org_domain(org, domain).await?;
            let mut plan = TxPlan::new();
            push_actor(&mut plan, self.table(), org, &actor, Power::Manage, false, false)?;
            let record = plan::delete(self.table(), keys::org_domain_key(org, domain), |x| x.exists(keys::PK))?;
            plan.push(record, read_domain);
            let claim = plan::delete(self.table(), keys::domain_claim_key(domain), |x| {
                x.eq(attr::ORG_ID, org)
            })?;
            plan.push(claim, read_lost);
            push_count(&mut plan, self.table(), org, -1)?;
            self.transact(&plan).await?;
            Ok(())
        })
    }

    /// `org`'s domains (owners and admins), by name.
    pub async fn list_domains(&self, actor: &Actor, org: OrgId) -> Result<Vec<DomainView>, StoreError> {
        let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
        allowed(&actor, mine.as_ref(), Power::Manage)?;
        Ok(self
            .org_domains(org)
            .await?
            .into_iter()
            .map(OrgDomainItem::into_domain)
            .collect())
    }

    /// Every domain record of `org`: at most `MAX_DOMAINS_PER_ORGANIZATION`, one page.
    pub(super) async fn org_domains(&self, org: OrgId) -> Result<Vec<OrgDomainItem>, StoreError> {
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::org_pk(org)),
                    x.begins_with(keys::SK, keys::org_domain_sk_prefix()),
                ])
            })
            .consistent_read(true);
        send_by_deadline!(&self.client, query)?
            .items
            .unwrap_or_default()
            .into_iter()
            .map(items::from_item)
            .collect()
    }

    /// The claim of `domain`, if any: strongly consistent.
    pub(super) async fn domain_claim(&self, domain: &OrgDomain) -> Result<Option<DomainClaimItem>, StoreError> {
        self.get(keys::domain_claim_key(domain))
            .await?
            .map(items::from_item)
            .transpose()
    }

    async fn org_domain(&self, org: OrgId, domain: &OrgDomain) -> Result<OrgDomainItem, StoreError> {
        self.get(keys::org_domain_key(org, domain))
            .await?
            .map(items::from_item)
            .transpose()?
            .ok_or(StoreError::DomainNotFound)
    }
}

/// A failed condition on the organization's own domain record: gone, it
/// was removed (or taken over); otherwise it changed: read again.
fn read_domain(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match old {
        None => Rejection::Failed(StoreError::DomainNotFound),
        Some(_) => Rejection::Retry,
    })
}

/// A failed condition that the claim is still the organization's: another
/// organization took a lapsed claim over.
fn read_lost(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match old {
        None => Rejection::Failed(StoreError::DomainNotFound),
        Some(_) => Rejection::Retry,
    })
}

/// A failed count of domains: the organization gone or deleting, or at its maximum.
fn read_count(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<OrganizationItem>(old)? {
        None => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(o) if o.status == OrgStatus::Deleting => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(o) if o.domains >= MAX_DOMAINS_PER_ORGANIZATION => Rejection::Failed(StoreError::DomainLimitReached),
        Some(_) => Rejection::Retry,
    })
}

/// The organization's count of domains moves by `by`: one more on
/// condition of room and an active organization, one less while it has any.
fn push_count(plan: &mut TxPlan, table: &str, org: OrgId, by: i64) -> Result<(), StoreError> {
    let update = plan::update(table, keys::org_key(org), |x| {
        let update = Update::default().set(x.add_from_zero(attr::DOMAINS, by));
        let condition = if by > 0 {
            and([
                x.eq(attr::STATUS, OrgStatus::Active),
                or(
                    x.not_exists(attr::DOMAINS),
                    x.lt(attr::DOMAINS, MAX_DOMAINS_PER_ORGANIZATION),
                ),
            ])
        } else {
            x.gt(attr::DOMAINS, 0u32)
        };
        (update, condition)
    })?;
    plan.push(update, read_count);
    Ok(())
}

/// The claim: the record, the claim (new, or a lapsed pending one taken
/// over from its organization, whose record and count go with it), the
/// organization's count, and the actor's powers.
fn claim_plan(
    table: &str,
    actor: &Actor,
    item: &OrgDomainItem,
    lapsed: Option<&DomainClaimItem>,
) -> Result<TxPlan, StoreError> {
    let org = item.org_id;
    let mut plan = TxPlan::new();
    push_actor(&mut plan, table, org, actor, Power::Manage, false, false)?;
    push_count(&mut plan, table, org, 1)?;
    let record = plan::put(
        table,
        items::to_item(keys::org_domain_key(org, &item.domain), item)?,
        |x| x.not_exists(keys::PK),
    )?;
    // Its own record there already: the organization holds the domain.
    plan.push(record, |_| Ok(Rejection::Failed(StoreError::DomainTaken)));
    let claim = DomainClaimItem {
        entity_type: EntityType::DomainClaim,
        org_id: org,
        status: DomainStatus::Pending,
        enrollment: Enrollment::None,
        pending_until: item.pending_until,
    };
    let stored = items::to_item(keys::domain_claim_key(&item.domain), &claim)?;
    match lapsed {
        None => {
            let put = plan::put(table, stored, |x| x.not_exists(keys::PK))?;
            plan.push(put, read_changed);
        }
        Some(old) => {
            let put = plan::put(table, stored, |x| {
                and([
                    x.eq(attr::ORG_ID, old.org_id),
                    x.eq(attr::STATUS, DomainStatus::Pending.as_str()),
                    x.lt(attr::PENDING_UNTIL, item.claimed_at.plus_seconds(1)),
                ])
            })?;
            plan.push(put, read_changed);
            if old.org_id != org {
                let theirs = plan::delete(table, keys::org_domain_key(old.org_id, &item.domain), |x| {
                    x.eq(attr::STATUS, DomainStatus::Pending.as_str())
                })?;
                plan.push(theirs, read_changed);
                push_count(&mut plan, table, old.org_id, -1)?;
            }
        }
    }
    Ok(plan)
}

/// The proof: the record and the claim verified, on condition that the
/// record is pending and the claim still the organization's, and that the
/// actor's address at the domain is still verified.
fn verify_plan(
    table: &str,
    actor: &Actor,
    item: &OrgDomainItem,
    email_id: crate::domain::EmailId,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let org = item.org_id;
    let mut plan = TxPlan::new();
    push_actor(&mut plan, table, org, actor, Power::Manage, false, false)?;
    let record = plan::update(table, keys::org_domain_key(org, &item.domain), |x| {
        let update = Update::default()
            .set(x.eq(attr::STATUS, DomainStatus::Verified.as_str()))
            .set(x.eq(attr::VERIFIED_AT, now))
            .set(x.eq(attr::VERIFIED_BY, actor.user()))
            .remove(x.name(attr::PENDING_UNTIL));
        (update, x.eq(attr::STATUS, DomainStatus::Pending.as_str()))
    })?;
    plan.push(record, read_domain);
    let claim = plan::update(table, keys::domain_claim_key(&item.domain), |x| {
        let update = Update::default()
            .set(x.eq(attr::STATUS, DomainStatus::Verified.as_str()))
            .remove(x.name(attr::PENDING_UNTIL));
        (update, x.eq(attr::ORG_ID, org))
    })?;
    plan.push(claim, read_lost);
    let proof = plan::check(table, keys::email_key(actor.user(), email_id), |x| {
        x.eq(attr::IS_VERIFIED, true)
    })?;
    plan.push(proof, |_| Ok(Rejection::Failed(StoreError::DomainNotProven)));
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserId;
    use crate::store::ops::fixtures::now;
    use crate::store::plan::tests::assert_well_formed;

    fn record(org: OrgId) -> OrgDomainItem {
        OrgDomainItem {
            entity_type: EntityType::OrgDomain,
            org_id: org,
            domain: OrgDomain::parse("acme.com").unwrap(),
            status: DomainStatus::Pending,
            enrollment: Enrollment::None,
            claimed_at: now(),
            pending_until: Some(now().plus_seconds(3_600)),
            verified_at: None,
            verified_by: None,
        }
    }

    #[test]
    fn a_claim_takes_a_lapsed_one_over_with_its_record_and_count() {
        let actor = Actor::Member(UserId::parse("u").unwrap());
        let org = OrgId::new();
        let fresh = claim_plan("t", &actor, &record(org), None).unwrap();
        assert_well_formed(&fresh);
        // The actor's role and profile, the count, the record, the claim.
        assert_eq!(fresh.items().len(), 5);
        assert!(matches!(
            fresh.read(3, None),
            Rejection::Failed(StoreError::DomainTaken)
        ));
        let lapsed = DomainClaimItem {
            entity_type: EntityType::DomainClaim,
            org_id: OrgId::new(),
            status: DomainStatus::Pending,
            enrollment: Enrollment::None,
            pending_until: Some(now()),
        };
        let over = claim_plan("t", &actor, &record(org), Some(&lapsed)).unwrap();
        assert_well_formed(&over);
        assert_eq!(over.items().len(), 7, "and the other organization's record and count");
    }

    #[test]
    fn a_proof_needs_the_actors_verified_address() {
        let actor = Actor::Member(UserId::parse("u").unwrap());
        let plan = verify_plan("t", &actor, &record(OrgId::new()), crate::domain::EmailId::new(), now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        assert!(matches!(
            plan.read(4, None),
            Rejection::Failed(StoreError::DomainNotProven)
        ));
        assert!(matches!(
            plan.read(3, None),
            Rejection::Failed(StoreError::DomainNotFound)
        ));
    }
}
