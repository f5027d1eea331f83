//! The actor in an organization's write: the condition that their
//! membership holds the power the action needs and that their profile is
//! active, both inside the transaction, so a role changed or an account
//! suspended after the route read them cannot act. A deployment admin acts
//! on any organization, on the condition that their own profile is active.

use crate::domain::{Actor, OrgId, Power, Role, UserId};
use crate::store::StoreError;
use crate::store::expr::Expr;
use crate::store::items::{MemberItem, OrgStatus, OrganizationItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};

use super::super::profile::push_active_check;

/// The condition that a member's half holds one of the roles of `power`,
/// and that the membership is not suspended (a directory's `active: false`).
pub(super) fn holds(x: &mut Expr, power: Power) -> String {
    let role = x.is_in(attr::ROLE, Role::holding(power).iter().copied());
    crate::store::expr::and([role, x.not_exists(attr::SUSPENDED)])
}

/// A failed check of the actor's membership: no member is told nothing
/// about the organization; a member without the power is refused.
pub(super) fn read_actor(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<MemberItem>(old)? {
        None => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(_) => Rejection::Failed(StoreError::RoleRequired),
    })
}

/// Adds the actor's conditions: their membership holds `power` (unless
/// `own_item`, when the write already conditions the actor's own member item,
/// which one transaction cannot name twice) and their profile is active
/// (unless `own_profile`, likewise).
pub(super) fn push_actor(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    actor: &Actor,
    power: Power,
    own_item: bool,
    own_profile: bool,
) -> Result<(), StoreError> {
    match actor {
        Actor::Member(user) => {
            if !own_item {
                let check = plan::check(table, keys::member_key(org, user), |x| holds(x, power))?;
                plan.push(check, read_actor);
            }
            if !own_profile {
                push_active_check(plan, table, user)?;
            }
        }
        // Their own account must be active, as a member's: a suspended
        // admin is ACCOUNT_INACTIVE here, as on every user route.
        Actor::DeploymentAdmin(admin) => {
            if !own_profile {
                push_active_check(plan, table, admin)?;
            }
        }
    }
    Ok(())
}

/// Whether `actor` would pass the power check on their own member item
/// `mine` (read just before): a deployment admin always does.
pub(super) fn allowed(actor: &Actor, mine: Option<&MemberItem>, power: Power) -> Result<(), StoreError> {
    match (actor, mine) {
        (Actor::DeploymentAdmin(_), _) => Ok(()),
        (Actor::Member(_), None) => Err(StoreError::OrganizationNotFound),
        // A suspended membership holds no power, reading included.
        (Actor::Member(_), Some(m)) if m.suspended => Err(StoreError::RoleRequired),
        (Actor::Member(_), Some(m)) if Role::holding(power).contains(&m.role) => Ok(()),
        (Actor::Member(_), Some(_)) => Err(StoreError::RoleRequired),
    }
}

/// A failed condition on the organization item: gone or being deleted, it is
/// not found; otherwise it moved under the request: read again.
pub(super) fn read_org(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<OrganizationItem>(old)? {
        None => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(org) if org.status == OrgStatus::Deleting => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(_) => Rejection::Retry,
    })
}

/// A failed condition that the organization keeps an owner: the last owner
/// is refused; gone or deleting, not found; otherwise read again.
pub(super) fn read_owners(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<OrganizationItem>(old)? {
        None => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(org) if org.status == OrgStatus::Deleting => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(org) if org.owners <= 1 => Rejection::Failed(StoreError::LastOwner),
        Some(_) => Rejection::Retry,
    })
}

/// The acting user, when their own member item is the target's.
pub(super) fn is_self(actor: &Actor, target: &UserId) -> bool {
    matches!(actor, Actor::Member(user) if user == target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Timestamp;
    use crate::store::items::{self, EntityType};

    fn member(role: Role) -> Item {
        let m = MemberItem {
            entity_type: EntityType::Member,
            org_id: OrgId::new(),
            user_id: UserId::parse("u").unwrap(),
            role,
            joined_at: Timestamp::now(),
            directory: None,
            version: 0,
            suspended: false,
        };
        items::to_item(Item::new(), &m).unwrap()
    }

    #[test]
    fn a_stranger_learns_nothing_and_a_member_is_refused() {
        assert!(matches!(
            read_actor(None).unwrap(),
            Rejection::Failed(StoreError::OrganizationNotFound)
        ));
        assert!(matches!(
            read_actor(Some(&member(Role::Member))).unwrap(),
            Rejection::Failed(StoreError::RoleRequired)
        ));
        let admin = Actor::DeploymentAdmin(UserId::parse("a").unwrap());
        assert!(allowed(&admin, None, Power::Own).is_ok());
        let someone = Actor::Member(UserId::parse("m").unwrap());
        assert!(matches!(
            allowed(&someone, None, Power::Read),
            Err(StoreError::OrganizationNotFound)
        ));
        let m: MemberItem = items::from_item(member(Role::Admin)).unwrap();
        assert!(allowed(&someone, Some(&m), Power::Manage).is_ok());
        assert!(matches!(
            allowed(&someone, Some(&m), Power::Own),
            Err(StoreError::RoleRequired)
        ));
    }

    #[test]
    fn the_power_check_lists_the_roles() {
        let mut x = Expr::default();
        assert_eq!(
            holds(&mut x, Power::Manage),
            "#role IN (:role, :role2) AND attribute_not_exists(#suspended)"
        );
    }
}
