//! Invitations: an owner or admin offers a role to whoever holds an address,
//! verified. One pending invitation per organization and address (its id is
//! derived from both), so inviting again is a resend: a new token, which
//! ends the one before, counted against three caps in the same transaction
//! (the invitation's own sends, the address's from every organization, and
//! the organization's). Accepting deletes the invitation in the join's
//! transaction, on condition that the caller's claim still holds the
//! address and their record of it is verified: repeated or racing accepts
//! make one membership.

use crate::address_policy::CanonicalEmail;
use crate::config::INVITATION_SENDS_PER_DAY;
use crate::domain::{Actor, EmailAddress, Invitation, InvitationId, OrgId, Power, Role, Timestamp};
use crate::invitation::InvitationToken;
use crate::store::expr::{Expr, and};
use crate::store::items::{self, EntityType, InvitationItem, OrgStatus, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, Counter, CounterWrite, Seen};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{retrying, send_by_deadline};
use crate::store::{Store, StoreError};

use super::powers::{allowed, push_actor, read_org};
use crate::store::ops::profile::read_changed;

/// A sent invitation, with the token its mail carries (shown to nobody else).
#[derive(Debug)]
pub struct Invited {
    /// The invitation as its organization sees it.
    pub invitation: Invitation,
    /// The token for the mail's link.
    pub token: InvitationToken,
    /// The organization's name, for the mail.
    pub org_name: crate::domain::OrgName,
}

/// A page of an organization's pending invitations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationPage {
    /// The invitations of the page, by id.
    pub invitations: Vec<Invitation>,
    /// The last invitation of a full page: the next page starts after it.
    pub next: Option<InvitationId>,
}

/// The power an invitation asks of the one who sends or revokes it: owners
/// alone offer (or touch an offer of) the owner's role.
fn power_over(roles: impl IntoIterator<Item = Role>) -> Power {
    if roles.into_iter().any(|r| r == Role::Owner) {
        Power::Own
    } else {
        Power::Manage
    }
}

impl Store {
    /// Invites `email` to `org` in `role`, or sends its pending invitation
    /// again with a new token (and the role given now).
    pub async fn invite(
        &self,
        actor: &Actor,
        org: OrgId,
        email: &EmailAddress,
        role: Role,
        now: Timestamp,
    ) -> Result<Invited, StoreError> {
        let key = self.key()?;
        let canonical = self.policy().canonicalization.canonical(email);
        let id = key.invitation_id(org, &canonical);
        let address = key.address_hash(&canonical);
        let counters = [
            (Counter::InvitationsPair, keys::invitations_pair_key(org, &address)),
            (Counter::InvitationsTo, keys::invitations_to_key(&address)),
            (Counter::InvitationsBy, keys::invitations_by_key(org)),
        ];
        let mut seen = Seen::default();
        self.read_counters(&mut seen, counters.clone()).await?;
        retrying!({
            let existing = self.invitation(org, id).await?;
            let power = power_over(std::iter::once(role).chain(existing.as_ref().map(|i| i.role)));
            let (org_item, mine, actor) = self.org_and_mine(org, actor, power).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            allowed(&actor, mine.as_ref(), power)?;
            // An address the organization's rules refuse is refused now, not
            // at its accept; the accept checks them again, in its write.
            if org_item.rules != crate::domain::AddressRules::default() {
                self.admitted(org, email).await?;
            }
            admit(&seen, self.config(), now)?;
            let token = InvitationToken::generate(org, id).map_err(|_| StoreError::NoRandomSource)?;
            let expires_at = now.plus_seconds(self.config().invitation_ttl_seconds);
            let item = InvitationItem {
                entity_type: EntityType::Invitation,
                org_id: org,
                invitation_id: id,
                email: email.clone(),
                role,
                invited_by: actor.user().clone(),
                created_at: existing.as_ref().map_or(now, |i| i.created_at),
                sent_at: now,
                expires_at,
                token_hash: key.invitation_hash(org, id, token.secret()),
                version: existing.as_ref().map_or(1, |i| i.version + 1),
                ttl: expires_at.unix_seconds() + limits::WINDOW_SECONDS,
            };
            let counts = counters.clone().map(|(counter, key)| CounterWrite {
                counter,
                key,
                seen: seen.get(counter),
                event: Some(now),
                first_added_at: None,
            });
            let plan = invite_plan(
                self.table(),
                &actor,
                power,
                &item,
                existing.as_ref(),
                &canonical,
                counts,
                now,
            )?;
            limits::learn(self.transact(&plan).await, &mut seen)?;
            Ok(Invited {
                invitation: item.into_domain(),
                token,
                org_name: org_item.name,
            })
        })
        .inspect_err(StoreError::count_refusal)
    }

    /// Sends `invitation` of `org` again: a new token, the same caps.
    pub async fn resend_invitation(
        &self,
        actor: &Actor,
        org: OrgId,
        invitation: InvitationId,
        now: Timestamp,
    ) -> Result<Invited, StoreError> {
        // A stranger learns nothing of the organization's invitations.
        let (_, mine, acting) = self.org_and_mine(org, actor, Power::Manage).await?;
        allowed(&acting, mine.as_ref(), Power::Manage)?;
        let found = self.invitation(org, invitation).await?;
        let found = found.ok_or(StoreError::InvitationNotFound)?;
        self.invite(actor, org, &found.email, found.role, now).await
    }

    /// Revokes `invitation` of `org`: its link works no more.
    pub async fn revoke_invitation(
        &self,
        actor: &Actor,
        org: OrgId,
        invitation: InvitationId,
    ) -> Result<(), StoreError> {
        retrying!({
            let (_, mine, acting) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&acting, mine.as_ref(), Power::Manage)?;
            let found = self.invitation(org, invitation).await?;
            let found = found.ok_or(StoreError::InvitationNotFound)?;
            let power = power_over([found.role]);
            allowed(&acting, mine.as_ref(), power)?;
            let mut plan = TxPlan::new();
            push_actor(&mut plan, self.table(), org, &acting, power, false, false)?;
            let delete = plan::delete(self.table(), keys::invitation_key(org, invitation), |x| {
                pinned(x, Some(&found))
            })?;
            plan.push(delete, read_invitation);
            self.transact(&plan).await?;
            Ok(())
        })
    }

    /// A page of at most `limit` pending invitations of `org` (owners and
    /// admins), after `after`. Lapsed ones are listed until DynamoDB's TTL
    /// takes them, so they can be sent again.
    pub async fn list_invitations(
        &self,
        actor: &Actor,
        org: OrgId,
        after: Option<InvitationId>,
        limit: u32,
    ) -> Result<InvitationPage, StoreError> {
        let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
        allowed(&actor, mine.as_ref(), Power::Manage)?;
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::org_pk(org)),
                    x.begins_with(keys::SK, keys::invitation_sk_prefix()),
                ])
            })
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(after.map(|id| keys::invitation_key(org, id)));
        let out = send_by_deadline!(&self.client, query)?;
        let invitations = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| items::from_item::<InvitationItem>(item).map(InvitationItem::into_domain))
            .collect::<Result<Vec<_>, _>>()?;
        let full = out.last_evaluated_key.is_some_and(|k| !k.is_empty());
        let next = full.then(|| invitations.last().map(|i| i.invitation_id)).flatten();
        Ok(InvitationPage { invitations, next })
    }

    /// An invitation of `org`, if it is pending (or lapsed, not yet deleted).
    pub(super) async fn invitation(&self, org: OrgId, id: InvitationId) -> Result<Option<InvitationItem>, StoreError> {
        self.get(keys::invitation_key(org, id))
            .await?
            .map(items::from_item)
            .transpose()
    }
}

/// Whether one more send fits: the organization's to the address (however
/// often it revoked and invited again), the address's and the
/// organization's caps. `Err` carries the longest wait among those that refuse.
fn admit(seen: &Seen, config: &crate::config::StoreConfig, now: Timestamp) -> Result<(), StoreError> {
    let waits = [
        limits::admit(seen.invitations_pair.as_ref(), INVITATION_SENDS_PER_DAY, now),
        limits::admit(seen.invitations_to.as_ref(), config.max_invitations_per_address, now),
        limits::admit(
            seen.invitations_by.as_ref(),
            config.max_invitations_per_organization,
            now,
        ),
    ];
    match waits.iter().filter_map(|w| w.err()).max() {
        Some(retry_after_secs) => Err(StoreError::TooManyInvitations { retry_after_secs }),
        None => Ok(()),
    }
}

/// The condition that the invitation is as read (or, for a new one, absent).
pub(super) fn pinned(x: &mut Expr, seen: Option<&InvitationItem>) -> String {
    match seen {
        None => x.not_exists(keys::PK),
        Some(item) => x.eq(attr::VERSION, item.version),
    }
}

/// A failed condition on an invitation read just before: gone, it was
/// revoked or accepted; otherwise it changed (a resend): read again.
fn read_invitation(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match old {
        None => Rejection::Failed(StoreError::InvitationNotFound),
        Some(_) => Rejection::Retry,
    })
}

/// The send: the actor's powers, the organization active, the invitation as
/// read, and each counter counting this send.
#[allow(clippy::too_many_arguments)]
fn invite_plan(
    table: &str,
    actor: &Actor,
    power: Power,
    item: &InvitationItem,
    existing: Option<&InvitationItem>,
    canonical: &CanonicalEmail,
    counts: [CounterWrite<'_>; 3],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let org = item.org_id;
    let mut plan = TxPlan::new();
    push_actor(&mut plan, table, org, actor, power, false, false)?;
    plan.push(
        plan::check(table, keys::org_key(org), |x| x.eq(attr::STATUS, OrgStatus::Active))?,
        read_org,
    );
    let stored = items::to_item(keys::invitation_keys(org, item.invitation_id, canonical), item)?;
    plan.push(plan::put(table, stored, |x| pinned(x, existing))?, read_changed);
    for count in counts {
        limits::push_count(&mut plan, table, count, now)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserId;
    use crate::store::ops::fixtures::invitation;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn owners_alone_offer_the_owners_role() {
        assert_eq!(power_over([Role::Member]), Power::Manage);
        assert_eq!(power_over([Role::Admin, Role::Member]), Power::Manage);
        assert_eq!(power_over([Role::Member, Role::Owner]), Power::Own);
    }

    #[test]
    fn a_send_is_refused_by_the_first_full_cap_with_its_wait() {
        let now = crate::store::ops::fixtures::now();
        let config = crate::config::StoreConfig::new("t");
        let mut seen = Seen::default();
        assert!(admit(&seen, &config, now).is_ok());
        let counted = |events: Vec<i64>| crate::store::items::LimitItem {
            entity_type: EntityType::RateLimit,
            events,
            version: 1,
            first_added_at: None,
            ttl: 0,
        };
        seen.invitations_pair = Some(counted(
            [-3_000, -2_000, -1_000].map(|ago| now.unix_seconds() + ago).to_vec(),
        ));
        assert!(matches!(
            admit(&seen, &config, now),
            Err(StoreError::TooManyInvitations { retry_after_secs }) if retry_after_secs == 86_400 - 3_000
        ));
        seen.invitations_pair = Some(counted(vec![now.unix_seconds() - 90_000; 3]));
        assert!(
            admit(&seen, &config, now).is_ok(),
            "sends older than a day free their slots"
        );
    }

    #[test]
    fn a_send_names_the_actor_the_organization_the_invitation_and_three_counters() {
        let now = crate::store::ops::fixtures::now();
        let inv = invitation(Role::Member);
        let seen = Seen::default();
        let counts = [
            (Counter::InvitationsPair, keys::invitations_pair_key(inv.org_id, "h")),
            (Counter::InvitationsTo, keys::invitations_to_key("h")),
            (Counter::InvitationsBy, keys::invitations_by_key(inv.org_id)),
        ]
        .map(|(counter, key)| CounterWrite {
            counter,
            key,
            seen: seen.get(counter),
            event: Some(now),
            first_added_at: None,
        });
        let actor = Actor::Member(UserId::parse("admin").unwrap());
        let form = crate::address_policy::Canonicalization::NONE.canonical(&inv.email);
        let plan = invite_plan("t", &actor, Power::Manage, &inv, None, &form, counts, now).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 7);
        assert!(matches!(
            plan.read(0, None),
            Rejection::Failed(StoreError::OrganizationNotFound)
        ));
        assert!(matches!(
            plan.read(2, None),
            Rejection::Failed(StoreError::OrganizationNotFound)
        ));
    }
}
