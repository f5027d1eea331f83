//! A membership's life after its creation: a member joins (both halves, and
//! the member's count), their role changes (both halves, and the owners'
//! count when an owner is made or unmade), and they leave or are removed.
//! Every write keeps an organization's owners above zero by a condition on
//! its count, so two owners demoting each other at once leave one.

use crate::domain::{Actor, Membership, OrgId, Power, Role, Timestamp, UserId};
use crate::store::expr::{Expr, Update, and, or};
use crate::store::items::{self, MemberItem, OrgStatus, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::counts::{CountChange, JoinCaps, push_counts};
use super::create::{halves, push_count_one_more, push_halves};
use super::directory::{at_version, push_release};
use super::powers::{allowed, holds, is_self, push_actor, read_org, read_owners};
use crate::store::ops::profile::{active, read_changed, read_profile};

impl Store {
    /// Makes `user` a member of `org` in `role`, as the organization's own
    /// join paths (an accepted invitation, an enrollment) do: the
    /// organization must be active, the user active and under their maximum.
    /// Joining again changes nothing (`Ok(false)`): one membership, however
    /// many accepts race.
    pub async fn join_organization(
        &self,
        org: OrgId,
        user: &UserId,
        role: Role,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        retrying!({
            if self.get(keys::member_key(org, user)).await?.is_some() {
                return Ok(false);
            }
            let plan = join_plan(self.table(), org, user, role, now, JoinCaps::of(self.config()), None)?;
            self.transact(&plan).await?;
            Ok(true)
        })
    }

    /// Changes `target`'s role to `role`. Owners alone make or unmake
    /// owners; the last owner cannot be unmade; a membership the
    /// organization's directory suspended is not promoted (`MemberSuspended`).
    pub async fn set_member_role(
        &self,
        actor: &Actor,
        org: OrgId,
        target: &UserId,
        role: Role,
    ) -> Result<Membership, StoreError> {
        retrying!({
            let member = self.member(org, target).await;
            let power = member
                .as_ref()
                .map_or(Power::Manage, |m| Role::power_to_change(m.role, Some(role)));
            let (_, mine, actor) = self.org_and_mine(org, actor, power).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let member = member?;
            allowed(&actor, mine.as_ref(), power)?;
            let plan = if member.role == role {
                // Nothing to change, but the same powers, checked in one
                // transaction, as a change would be: a suspended owner's
                // no-op is refused as their change is.
                unchanged_plan(self.table(), &actor, &member, power)?
            } else {
                role_plan(self.table(), &actor, &member, role)?
            };
            self.transact(&plan).await?;
            Ok(MemberItem { role, ..member }.into_domain())
        })
    }

    /// Removes `target` from `org`: a member leaving (the actor is the
    /// target), or an owner or admin removing them. The last owner cannot go.
    pub async fn remove_member(&self, actor: &Actor, org: OrgId, target: &UserId) -> Result<(), StoreError> {
        retrying!({
            let member = self.member(org, target).await;
            let power = member
                .as_ref()
                .map_or(Power::Manage, |m| Role::power_to_change(m.role, None));
            let (_, mine, actor) = self.org_and_mine(org, actor, power).await?;
            if is_self(&actor, target) {
                // Leaving asks no power, only membership.
                allowed(&actor, mine.as_ref(), Power::Read)?;
            } else {
                allowed(&actor, mine.as_ref(), Power::Manage)?;
            }
            let member = member?;
            if !is_self(&actor, target) {
                allowed(&actor, mine.as_ref(), power)?;
            }
            let plan = remove_plan(self.table(), &actor, &member, Removal::ByRequest)?;
            self.transact(&plan).await?;
            Ok(())
        })
    }

    /// The organization's half of `target`'s membership.
    pub(super) async fn member(&self, org: OrgId, target: &UserId) -> Result<MemberItem, StoreError> {
        self.get(keys::member_key(org, target))
            .await?
            .map(items::from_item)
            .transpose()?
            .ok_or(StoreError::MemberNotFound)
    }
}

/// Removes one membership of a user being erased, in its own transaction
/// (a user's memberships outnumber what the erasure's one transaction
/// holds). `forced` (a user Cognito no longer has) removes even the last
/// owner: there is no one left to refuse; the organization keeps no owner
/// until a deployment admin makes one.
pub(in crate::store) async fn remove_for_erasure(
    store: &Store,
    membership: &MemberItem,
    forced: bool,
) -> Result<(), StoreError> {
    retrying!({
        let current = match store
            .get(keys::member_key(membership.org_id, &membership.user_id))
            .await?
        {
            Some(item) => items::from_item::<MemberItem>(item)?,
            None => return Ok(()),
        };
        let removal = if forced { Removal::Forced } else { Removal::Erasure };
        let plan = remove_plan(
            store.table(),
            &Actor::Member(current.user_id.clone()),
            &current,
            removal,
        )?;
        match store.transact(&plan).await {
            // Gone since it was read (a purge, a removal, the member leaving):
            // what the erasure wanted.
            Err(Rejection::Failed(StoreError::MemberNotFound)) => Ok(()),
            other => other,
        }
    })
}

/// Why a membership goes, which decides its conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Removal {
    /// A member leaving, or removed by an owner or admin: the actor's powers,
    /// an active organization, and its last owner stays.
    ByRequest,
    /// The member's account being erased by themselves or an admin: the last owner stays.
    Erasure,
    /// The member is gone from Cognito: nothing can refuse.
    Forced,
}

/// The new membership: both halves new, the member's count, and the organization active.
pub(super) fn join_plan(
    table: &str,
    org: OrgId,
    user: &UserId,
    role: Role,
    now: Timestamp,
    caps: JoinCaps,
    rules_at: Option<u64>,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    push_halves(&mut plan, table, &halves(org, user, role, now))?;
    push_count_one_more(&mut plan, table, user, caps.organizations)?;
    push_org_open(&mut plan, table, org, role == Role::Owner, rules_at)?;
    Ok(plan)
}

/// The organization takes a member: active, and, when the join was decided
/// on its address rules (`rules_at`, the version read), still at that
/// version, so rules changed meanwhile are applied again. An owner joining
/// counts one more owner.
pub(super) fn push_org_open(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    owner: bool,
    rules_at: Option<u64>,
) -> Result<(), StoreError> {
    let open = |x: &mut crate::store::expr::Expr| {
        let active = x.eq(attr::STATUS, OrgStatus::Active);
        match rules_at {
            Some(version) => and([active, x.eq(attr::VERSION, version)]),
            None => active,
        }
    };
    if owner {
        let update = plan::update(table, keys::org_key(org), |x| {
            let update = Update::default().set(x.add(attr::OWNERS, 1));
            (update, open(x))
        })?;
        plan.push(update, read_org);
    } else {
        plan.push(plan::check(table, keys::org_key(org), open)?, read_org);
    }
    Ok(())
}

/// A failed condition on a half of a membership read just before: gone, it
/// was removed; otherwise its role moved: read again.
fn read_half(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match old {
        None => Rejection::Failed(StoreError::MemberNotFound),
        Some(_) => Rejection::Retry,
    })
}

/// A failed condition on the organization's half of a member being
/// promoted: gone, it was removed; suspended, it cannot be promoted;
/// otherwise its role moved: read again.
fn read_promoted(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<MemberItem>(old)? {
        None => Rejection::Failed(StoreError::MemberNotFound),
        Some(member) if member.suspended => Rejection::Failed(StoreError::MemberSuspended),
        Some(_) => Rejection::Retry,
    })
}

/// Whether `to` holds a power `from` does not.
fn promotes(from: Role, to: Role) -> bool {
    [Power::Read, Power::Manage, Power::Own]
        .into_iter()
        .any(|power| Role::holding(power).contains(&to) && !Role::holding(power).contains(&from))
}

/// The change of the owners' count a change of `from` to `to` makes, on the
/// organization item, with its condition: unmaking an owner needs another.
fn push_owners(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    from: Role,
    to: Option<Role>,
    removal: Removal,
) -> Result<(), StoreError> {
    let was_owner = from == Role::Owner;
    let is_owner = to == Some(Role::Owner);
    let key = keys::org_key(org);
    let write = match (was_owner, is_owner) {
        (true, false) => plan::update(table, key, |x| {
            let update = Update::default().set(x.add(attr::OWNERS, -1));
            let condition = match removal {
                Removal::ByRequest => and([x.gt(attr::OWNERS, 1u32), x.eq(attr::STATUS, OrgStatus::Active)]),
                // An organization being deleted keeps no owner: its last may go.
                Removal::Erasure => or(x.gt(attr::OWNERS, 1u32), x.eq(attr::STATUS, OrgStatus::Deleting)),
                Removal::Forced => x.exists(keys::PK),
            };
            (update, condition)
        })?,
        (false, true) => plan::update(table, key, |x| {
            let update = Update::default().set(x.add(attr::OWNERS, 1));
            (update, x.eq(attr::STATUS, OrgStatus::Active))
        })?,
        _ if removal == Removal::ByRequest => plan::check(table, key, |x| x.eq(attr::STATUS, OrgStatus::Active))?,
        // An erasure goes on whether the organization lives or is being deleted.
        _ => return Ok(()),
    };
    plan.push(write, if was_owner { read_owners } else { read_org });
    Ok(())
}

fn role_plan(table: &str, actor: &Actor, member: &MemberItem, role: Role) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let own = is_self(actor, &member.user_id);
    let power = Role::power_to_change(member.role, Some(role));
    let promotion = promotes(member.role, role);
    let halves = [
        keys::member_key(member.org_id, &member.user_id),
        keys::membership_key(&member.user_id, member.org_id),
    ];
    for (i, key) in halves.into_iter().enumerate() {
        let update = plan::update(table, key, |x: &mut Expr| {
            let update = Update::default().set(x.eq(attr::ROLE, role));
            let mut condition = x.eq(attr::ROLE, member.role);
            if own && i == 0 {
                // The actor's own item: its power is this same condition's.
                condition = and([condition, holds(x, power)]);
            }
            if promotion && i == 0 {
                // The organization's half carries the suspension. Promoted, a
                // suspended member would be an admin or owner with no power
                // who still counts toward the last-owner rule.
                condition = and([condition, x.not_exists(attr::SUSPENDED)]);
            }
            (update, condition)
        })?;
        let reading: fn(Option<&Item>) -> Result<Rejection, StoreError> =
            if promotion && i == 0 { read_promoted } else { read_half };
        plan.push(update, reading);
    }
    push_owners(
        &mut plan,
        table,
        member.org_id,
        member.role,
        Some(role),
        Removal::ByRequest,
    )?;
    push_actor(&mut plan, table, member.org_id, actor, power, own, false)?;
    Ok(plan)
}

/// A role the member has already: their half as read, and the actor's powers.
fn unchanged_plan(table: &str, actor: &Actor, member: &MemberItem, power: Power) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let own = is_self(actor, &member.user_id);
    let check = plan::check(table, keys::member_key(member.org_id, &member.user_id), |x| {
        let same = x.eq(attr::ROLE, member.role);
        if own { and([same, holds(x, power)]) } else { same }
    })?;
    plan.push(check, read_half);
    push_actor(&mut plan, table, member.org_id, actor, power, own, false)?;
    Ok(plan)
}

fn remove_plan(table: &str, actor: &Actor, member: &MemberItem, removal: Removal) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let own = is_self(actor, &member.user_id);
    // The organization's half at the version read: its directory names,
    // released beside it, are the ones it holds.
    let delete = plan::delete(table, keys::member_key(member.org_id, &member.user_id), |x| {
        and([x.eq(attr::ROLE, member.role), at_version(x, member)])
    })?;
    plan.push(delete, read_half);
    let delete = plan::delete(table, keys::membership_key(&member.user_id, member.org_id), |x| {
        x.eq(attr::ROLE, member.role)
    })?;
    plan.push(delete, read_half);
    push_release(&mut plan, table, member)?;
    // The member counts one organization fewer. Leaving needs the leaver
    // active, as every change of their own does; an erasure does not.
    let count = plan::update(table, keys::profile_key(&member.user_id), |x| {
        let update = Update::default().set(x.add_from_zero(attr::ORGANIZATIONS, -1));
        let condition = if own && removal == Removal::ByRequest {
            and([active(x), x.gt(attr::ORGANIZATIONS, 0u32)])
        } else {
            and([x.exists(keys::PK), x.gt(attr::ORGANIZATIONS, 0u32)])
        };
        (update, condition)
    })?;
    plan.push(count, if own { read_profile } else { read_changed });
    push_owners(&mut plan, table, member.org_id, member.role, None, removal)?;
    if removal == Removal::ByRequest && !own {
        push_actor(
            &mut plan,
            table,
            member.org_id,
            actor,
            Role::power_to_change(member.role, None),
            false,
            false,
        )?;
    }
    // A directory's member leaves its counts; other memberships are not
    // counted (concurrent joins of one organization would conflict on them).
    if member.directory.is_some() {
        push_counts(&mut plan, table, member.org_id, CountChange::leave(member), None)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::now;

    fn member(role: Role) -> MemberItem {
        MemberItem {
            entity_type: EntityType::Member,
            org_id: OrgId::new(),
            user_id: UserId::parse("target").unwrap(),
            role,
            joined_at: now(),
            directory: None,
            version: 0,
            suspended: false,
        }
    }

    fn org_with(owners: u32) -> Item {
        let org = crate::store::ops::fixtures::organization(owners);
        items::to_item(keys::org_key(org.org_id), &org).unwrap()
    }

    #[test]
    fn unmaking_an_owner_needs_another_in_the_same_write() {
        let actor = Actor::Member(UserId::parse("owner").unwrap());
        let plan = role_plan("t", &actor, &member(Role::Owner), Role::Admin).unwrap();
        plan::tests::assert_well_formed(&plan);
        // Both halves, the owners' count, the actor's role, the actor's profile.
        assert_eq!(plan.items().len(), 5);
        let owners = plan.items()[2].update().unwrap();
        assert_eq!(owners.update_expression(), "SET #owners = #owners - :ownersBy");
        assert_eq!(
            owners.condition_expression(),
            Some("#owners > :owners AND #status = :status")
        );
        assert!(matches!(
            plan.read(2, Some(&org_with(1))),
            Rejection::Failed(StoreError::LastOwner)
        ));
        assert!(matches!(plan.read(2, Some(&org_with(2))), Rejection::Retry));
        assert_eq!(
            plan.items()[3].condition_check().unwrap().condition_expression(),
            "#role IN (:role) AND attribute_not_exists(#suspended)",
            "only an owner unmakes an owner"
        );
    }

    #[test]
    fn a_promotion_is_a_role_that_holds_more() {
        assert!(promotes(Role::Member, Role::Admin));
        assert!(promotes(Role::Member, Role::Owner));
        assert!(promotes(Role::Admin, Role::Owner));
        for (from, to) in [
            (Role::Owner, Role::Admin),
            (Role::Owner, Role::Member),
            (Role::Admin, Role::Member),
            (Role::Admin, Role::Admin),
        ] {
            assert!(!promotes(from, to), "{from:?} to {to:?}");
        }
    }

    /// A suspended membership promoted would be an admin or owner with no
    /// power who still counts toward the last-owner rule: the promotion's
    /// own write refuses it, on the organization's half, which carries the
    /// suspension, and the reading says why.
    #[test]
    fn a_promotion_needs_the_membership_not_suspended_in_the_same_write() {
        let actor = Actor::Member(UserId::parse("owner").unwrap());
        for (from, to) in [
            (Role::Member, Role::Admin),
            (Role::Member, Role::Owner),
            (Role::Admin, Role::Owner),
        ] {
            let target = member(from);
            let plan = role_plan("t", &actor, &target, to).unwrap();
            plan::tests::assert_well_formed(&plan);
            assert_eq!(
                plan.items()[0].update().unwrap().condition_expression(),
                Some("#role = :role2 AND attribute_not_exists(#suspended)"),
                "{from:?} to {to:?}"
            );
            let users_half = plan.items()[1].update().unwrap().condition_expression();
            assert_eq!(
                users_half,
                Some("#role = :role2"),
                "the user's half carries no suspension"
            );
            let key = keys::member_key(target.org_id, &target.user_id);
            let suspended = MemberItem {
                suspended: true,
                ..target.clone()
            };
            let suspended = items::to_item(key.clone(), &suspended).unwrap();
            assert!(matches!(
                plan.read(0, Some(&suspended)),
                Rejection::Failed(StoreError::MemberSuspended)
            ));
            let moved = items::to_item(key, &target).unwrap();
            assert!(matches!(plan.read(0, Some(&moved)), Rejection::Retry));
            assert!(matches!(
                plan.read(0, None),
                Rejection::Failed(StoreError::MemberNotFound)
            ));
        }
        // A demotion gives no power: a suspended owner or admin may be demoted.
        for (from, to) in [(Role::Owner, Role::Admin), (Role::Admin, Role::Member)] {
            let plan = role_plan("t", &actor, &member(from), to).unwrap();
            let condition = plan.items()[0].update().unwrap().condition_expression();
            assert_eq!(condition, Some("#role = :role2"), "{from:?} to {to:?}");
        }
    }

    #[test]
    fn an_owner_demoting_themselves_conditions_their_own_item_once() {
        let target = member(Role::Owner);
        let actor = Actor::Member(target.user_id.clone());
        let plan = role_plan("t", &actor, &target, Role::Member).unwrap();
        plan::tests::assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 4, "both halves, the count, the profile");
        assert_eq!(
            plan.items()[0].update().unwrap().condition_expression(),
            Some("#role = :role2 AND #role IN (:role2) AND attribute_not_exists(#suspended)")
        );
    }

    #[test]
    fn leaving_counts_one_fewer_and_an_erasure_asks_no_powers() {
        let target = member(Role::Member);
        let leaver = Actor::Member(target.user_id.clone());
        let plan = remove_plan("t", &leaver, &target, Removal::ByRequest).unwrap();
        plan::tests::assert_well_formed(&plan);
        // Both halves, the leaver's count (and their active profile), the organization active.
        assert_eq!(plan.items().len(), 4);
        let count = plan.items()[2].update().unwrap();
        assert!(count.condition_expression().unwrap().contains("#status = :status"));
        let erased = remove_plan("t", &leaver, &target, Removal::Erasure).unwrap();
        assert_eq!(erased.items().len(), 3, "no powers, whatever the organization's state");
        let owner = member(Role::Owner);
        let forced = remove_plan("t", &Actor::Member(owner.user_id.clone()), &owner, Removal::Forced).unwrap();
        assert_eq!(
            forced.items()[3].update().unwrap().condition_expression(),
            Some("attribute_exists(#PK)"),
            "a user gone from Cognito goes even as the last owner"
        );
    }
}
