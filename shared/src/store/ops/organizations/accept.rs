//! Accepting an invitation: the caller, holding the invited address
//! verified, joins in its role in one transaction that uses the invitation
//! up; a repeat gives the one membership. The organization's address rules
//! are read here too, for every join (an enrollment's as well) to pin.

use crate::address_policy::CanonicalEmail;
use crate::domain::{DomainStatus, EmailAddress, Membership, OrgDomain, OrgId, Timestamp, UserId};
use crate::invitation::InvitationToken;
use crate::store::expr::and;
use crate::store::items::{self, ClaimItem, EntityType, InvitationItem, MemberItem, OrgStatus, OrganizationItem, attr};
use crate::store::keys;
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::counts::JoinCaps;
use super::invitations::pinned;
use super::members::{join_plan, push_org_open};
use crate::store::ops::profile::{push_active_check, read_changed, writable};

impl Store {
    /// Accepts the invitation `token` names for `user`, who must hold its
    /// address verified: they join in its role. Accepting again, or at once
    /// from several places, gives the one membership. A member already keeps
    /// their role: the invitation is only used up.
    pub async fn accept_invitation(
        &self,
        user: &UserId,
        token: &InvitationToken,
        now: Timestamp,
    ) -> Result<Membership, StoreError> {
        let key = self.key()?;
        let org = token.org();
        retrying!({
            // The caller's own state first, as on every route: a deleted
            // account, an ended session or a suspension answers before any
            // invitation is read.
            let profile = self.get(keys::profile_key(user)).await?;
            writable(profile.map(items::from_item).transpose()?)?;
            let Some(found) = self.invitation(org, token.invitation()).await? else {
                // Used up: by this user's own earlier accept, the one answer
                // a retry of it must get again.
                return match self.member(org, user).await {
                    Ok(member) => Ok(member.into_domain()),
                    Err(StoreError::MemberNotFound) => Err(StoreError::InvitationNotFound.into()),
                    Err(err) => Err(err.into()),
                };
            };
            if !key.invitation_matches(org, token.invitation(), token.secret(), &found.token_hash) {
                return Err(StoreError::InvitationNotFound.into());
            }
            if found.expires_at <= now {
                return Err(StoreError::InvitationExpired.into());
            }
            let (form, claim) = self.held_claim(user, &found.email).await?;
            let admitted = self.admitted(org, &found.email).await?;
            let member = match self.member(org, user).await {
                Ok(member) => Some(member),
                Err(StoreError::MemberNotFound) => None,
                Err(err) => return Err(err.into()),
            };
            let held = Held {
                form: &form,
                claim: &claim,
            };
            let plan = accept_plan(
                self.table(),
                user,
                &found,
                &held,
                member.is_some(),
                &admitted,
                now,
                JoinCaps::of(self.config()),
            )?;
            self.transact(&plan).await?;
            Ok(member
                .unwrap_or_else(|| MemberItem {
                    entity_type: EntityType::Member,
                    org_id: org,
                    user_id: user.clone(),
                    role: found.role,
                    joined_at: now,
                    directory: None,
                    version: 0,
                    suspended: false,
                })
                .into_domain())
        })
    }

    /// Whether `org`'s address rules admit `email` now: the organization's
    /// version they were read at, and the domain claim a rule of verified
    /// domains relies on, for the join's write to pin.
    pub(super) async fn admitted(&self, org: OrgId, email: &EmailAddress) -> Result<Admitted, StoreError> {
        let item: OrganizationItem = self
            .get(keys::org_key(org))
            .await?
            .map(items::from_item::<OrganizationItem>)
            .transpose()?
            .filter(|o| o.status == OrgStatus::Active)
            .ok_or(StoreError::OrganizationNotFound)?;
        let domain = OrgDomain::of(email);
        let mut verified = Vec::new();
        if item.rules.verified_domains_only {
            let claim = self.domain_claim(&domain).await?;
            if claim.is_some_and(|c| c.org_id == org && c.status == DomainStatus::Verified) {
                verified.push(domain.clone());
            }
        }
        crate::org_policy::admit(self.policy(), &item.rules, &verified, email).map_err(StoreError::NotAllowed)?;
        Ok(Admitted {
            version: item.version,
            domain: item.rules.verified_domains_only.then_some(domain),
        })
    }

    /// The claim by which `user` holds `email`, verified, and the form it is
    /// on (while the table moves between policies, either form).
    async fn held_claim(&self, user: &UserId, email: &EmailAddress) -> Result<(CanonicalEmail, ClaimItem), StoreError> {
        for form in self.policy().forms(email) {
            let Some(claim) = self.claim_on(&form).await? else {
                continue;
            };
            if &claim.user_id != user {
                continue;
            }
            let record = self.get(keys::email_key(user, claim.email_id)).await?;
            let record: Option<items::EmailItem> = record.map(items::from_item).transpose()?;
            if record.is_some_and(|r| r.is_verified) {
                return Ok((form, claim));
            }
        }
        Err(StoreError::InvitationAddressNotHeld)
    }
}

/// What the accept's write pins of the address it decided on: the caller's
/// claim of it, and the form it is on.
struct Held<'a> {
    form: &'a CanonicalEmail,
    claim: &'a ClaimItem,
}

/// What an organization's rules were read at, for a join's write to pin:
/// its version, and the domain whose verified claim a rule relied on.
pub(super) struct Admitted {
    pub(super) version: u64,
    pub(super) domain: Option<OrgDomain>,
}

/// The accept: the invitation used up as read, the caller's claim on the
/// address and their verified record of it unchanged, the organization's
/// rules as read (and the verified domain a rule relied on), and, for one
/// who is not a member yet, the join (both halves, their count, the
/// organization active); for a member, the organization active, their
/// membership and their profile active.
#[allow(clippy::too_many_arguments)]
fn accept_plan(
    table: &str,
    user: &UserId,
    invitation: &InvitationItem,
    held: &Held<'_>,
    already_member: bool,
    admitted: &Admitted,
    now: Timestamp,
    caps: JoinCaps,
) -> Result<TxPlan, StoreError> {
    let org = invitation.org_id;
    let mut plan = if already_member {
        let mut plan = TxPlan::new();
        push_org_open(&mut plan, table, org, false, Some(admitted.version))?;
        // Still a member when the invitation is used up: a removal racing
        // the accept makes it read again (and join).
        let member = plan::check(table, keys::member_key(org, user), |x| x.exists(keys::PK))?;
        plan.push(member, read_changed);
        // A join's count holds this condition; here it stands alone.
        push_active_check(&mut plan, table, user)?;
        plan
    } else {
        join_plan(table, org, user, invitation.role, now, caps, Some(admitted.version))?
    };
    let used = plan::delete(table, keys::invitation_key(org, invitation.invitation_id), |x| {
        and([pinned(x, Some(invitation)), x.gt(attr::EXPIRES_AT, now)])
    })?;
    // Gone or changed under the accept: read again (an accept that won is
    // then this user's membership; a resend, a new token to compare).
    plan.push(used, read_changed);
    let holds = plan::check(table, keys::claim_key(held.form), |x| {
        and([x.eq(attr::USER_ID, user), x.eq(attr::EMAIL_ID, held.claim.email_id)])
    })?;
    plan.push(holds, read_changed);
    let verified = plan::check(table, keys::email_key(user, held.claim.email_id), |x| {
        x.eq(attr::IS_VERIFIED, true)
    })?;
    plan.push(verified, read_changed);
    push_domain_held(&mut plan, table, org, admitted.domain.as_ref())?;
    Ok(plan)
}

/// The domain a rule of verified domains relied on is still the
/// organization's, verified: a domain removed meanwhile makes the join read
/// its rules again.
pub(super) fn push_domain_held(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    domain: Option<&OrgDomain>,
) -> Result<(), StoreError> {
    if let Some(domain) = domain {
        let check = plan::check(table, keys::domain_claim_key(domain), |x| {
            and([
                x.eq(attr::ORG_ID, org),
                x.eq(attr::STATUS, DomainStatus::Verified.as_str()),
            ])
        })?;
        plan.push(check, read_changed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Role;
    use crate::store::ops::fixtures::invitation;
    use crate::store::plan::Rejection;
    use crate::store::plan::tests::assert_well_formed;

    fn caps() -> JoinCaps {
        JoinCaps { organizations: 100 }
    }

    #[test]
    fn an_accept_joins_uses_the_invitation_and_checks_the_address() {
        let now = crate::store::ops::fixtures::now();
        let user = UserId::parse("invitee").unwrap();
        let inv = invitation(Role::Admin);
        let form = crate::address_policy::Canonicalization::NONE.canonical(&inv.email);
        let claim = ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: user.clone(),
            email_id: crate::domain::EmailId::new(),
            expires_at: None,
            reserved_until: None,
            ttl: None,
        };
        let held = Held {
            form: &form,
            claim: &claim,
        };
        let open = Admitted {
            version: 1,
            domain: None,
        };
        let joining = accept_plan("t", &user, &inv, &held, false, &open, now, caps()).unwrap();
        assert_well_formed(&joining);
        // Both halves, the count, the organization, the invitation, the claim, the record.
        assert_eq!(joining.items().len(), 7);
        let member = accept_plan("t", &user, &inv, &held, true, &open, now, caps()).unwrap();
        assert_well_formed(&member);
        assert_eq!(member.items().len(), 6);
        let used = member.items()[3].delete().unwrap();
        assert_eq!(
            used.condition_expression(),
            Some("#version = :version AND #expiresAt > :expiresAt")
        );
        assert!(matches!(
            member.read(0, None),
            Rejection::Failed(StoreError::OrganizationNotFound)
        ));
        assert!(matches!(member.read(1, None), Rejection::Retry));
        assert!(matches!(member.read(3, None), Rejection::Retry));
        let ruled = Admitted {
            version: 1,
            domain: Some(OrgDomain::parse("example.com").unwrap()),
        };
        let bound = accept_plan("t", &user, &inv, &held, false, &ruled, now, caps()).unwrap();
        assert_well_formed(&bound);
        assert_eq!(bound.items().len(), 8, "and the verified domain the rule relied on");
    }
}
