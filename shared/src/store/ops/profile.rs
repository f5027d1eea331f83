//! The caller's profile in a write: the condition that it is active, and what a
//! failed condition on a profile means. Shared by every write that changes a
//! user's own items.

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::domain::{UserId, UserStatus};
use crate::store::StoreError;
use crate::store::expr::{Expr, and, or};
use crate::store::items::{ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::session;

/// The profile exists and is active, and no recovery ended the session the
/// write comes in (see [`session::revoked`] for why a sign-in in the
/// recovery's own second is ended too).
pub(super) fn active(x: &mut Expr) -> String {
    let active = and([x.exists(keys::PK), x.eq(attr::STATUS, UserStatus::Active)]);
    match session_live(x) {
        Some(live) => and([active, live]),
        None => active,
    }
}

/// No recovery ended the session the write comes in: `None` outside a user's
/// own session (an admin's action on another user, the system's writes).
pub(super) fn session_live(x: &mut Expr) -> Option<String> {
    let at = session::signed_in_at()?;
    Some(or(
        x.not_exists(attr::TOKENS_VALID_AFTER),
        x.lt(attr::TOKENS_VALID_AFTER, at),
    ))
}

/// Why a profile refuses a write, if its own state is the reason.
pub(super) fn refusal(profile: Option<&ProfileItem>) -> Option<StoreError> {
    if profile.is_some_and(session::revoked) {
        return Some(StoreError::SessionRevoked);
    }
    match profile.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Some(StoreError::NotFound),
        Some(UserStatus::Suspended) => Some(StoreError::AccountInactive),
        Some(UserStatus::Active) => None,
    }
}

/// A failed condition on a profile: its state when that refuses the write;
/// otherwise it changed under the request: read again and retry.
pub(super) fn read_profile(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(refusal(plan::old::<ProfileItem>(old)?.as_ref()).map_or(Rejection::Retry, Rejection::Failed))
}

/// A failed condition on a profile an admin is deleting: gone or deleted is
/// not found; any other state (suspended too) only moved under the request, and
/// an admin may delete a suspended user: read again and retry.
pub(super) fn read_deletable(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<ProfileItem>(old)?.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Rejection::Failed(StoreError::NotFound),
        Some(UserStatus::Active | UserStatus::Suspended) => Rejection::Retry,
    })
}

/// A failed condition on a record or claim read just before, or a new record
/// with a fresh id: only a profile's own state is an answer, so this one moved
/// under the request: read again and retry.
pub(super) fn read_changed(_old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(Rejection::Retry)
}

fn active_check(table: &str, user: &UserId) -> Result<TransactWriteItem, StoreError> {
    plan::check(table, keys::profile_key(user), active)
}

/// Adds the check that the caller's profile is active.
pub(super) fn push_active_check(plan: &mut TxPlan, table: &str, user: &UserId) -> Result<(), StoreError> {
    plan.push(active_check(table, user)?, read_profile);
    Ok(())
}

/// A failed check of the acting admin's own profile: it is no longer active
/// (suspended, deleted or gone since the route admitted them), so the admin
/// cannot act. An active profile cannot fail the check: read again.
fn read_acting_admin(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<ProfileItem>(old)?.map(|p| p.status) {
        Some(UserStatus::Active) => Rejection::Retry,
        _ => Rejection::Failed(StoreError::AdminInactive),
    })
}

/// Adds the check that the acting admin's own profile is active, in the same
/// transaction as the admin's action.
pub(super) fn push_acting_admin_check(plan: &mut TxPlan, table: &str, admin: &UserId) -> Result<(), StoreError> {
    plan.push(active_check(table, admin)?, read_acting_admin);
    Ok(())
}

/// A profile as readers see it: deleted users are not found, and a session a
/// recovery ended sees nothing.
pub(in crate::store) fn visible(profile: ProfileItem) -> Result<ProfileItem, StoreError> {
    if session::revoked(&profile) {
        return Err(StoreError::SessionRevoked);
    }
    match profile.status {
        UserStatus::Deleted => Err(StoreError::NotFound),
        _ => Ok(profile),
    }
}

/// A profile a write may change: it exists and is active.
pub(super) fn writable(profile: Option<ProfileItem>) -> Result<ProfileItem, StoreError> {
    let profile = visible(profile.ok_or(StoreError::NotFound)?)?;
    match profile.status {
        UserStatus::Active => Ok(profile),
        _ => Err(StoreError::AccountInactive),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ops::fixtures::{failed, profile};

    #[test]
    fn a_record_or_claim_that_moved_is_retried_not_reported() {
        // Before, any old image was read as a profile: a claim or record that had
        // merely changed became 404 or 403.
        let other = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(read_changed(Some(&other)).unwrap(), Rejection::Retry));
        assert!(matches!(read_changed(None).unwrap(), Rejection::Retry));
    }

    #[test]
    fn on_a_profile_its_own_state_is_the_answer() {
        let suspended = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(
            failed(read_profile(Some(&suspended)).unwrap()),
            StoreError::AccountInactive
        ));
        let deleted = profile(UserStatus::Deleted, 1, 1);
        assert!(matches!(
            failed(read_profile(Some(&deleted)).unwrap()),
            StoreError::NotFound
        ));
        assert!(matches!(failed(read_profile(None).unwrap()), StoreError::NotFound));
        let active = profile(UserStatus::Active, 1, 1);
        assert!(matches!(read_profile(Some(&active)).unwrap(), Rejection::Retry));
    }

    #[test]
    fn an_admin_delete_that_lost_a_race_retries_unless_the_user_is_gone() {
        // A suspension racing the delete moved the version: the delete must try
        // again, not answer ACCOUNT_INACTIVE (the concurrent workload found it).
        let suspended = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(read_deletable(Some(&suspended)).unwrap(), Rejection::Retry));
        let active = profile(UserStatus::Active, 1, 1);
        assert!(matches!(read_deletable(Some(&active)).unwrap(), Rejection::Retry));
        let deleted = profile(UserStatus::Deleted, 1, 1);
        assert!(matches!(
            failed(read_deletable(Some(&deleted)).unwrap()),
            StoreError::NotFound
        ));
        assert!(matches!(failed(read_deletable(None).unwrap()), StoreError::NotFound));
    }

    #[test]
    fn the_active_check_is_well_formed() {
        let mut plan = TxPlan::new();
        push_active_check(&mut plan, "t", &crate::store::ops::fixtures::user()).unwrap();
        plan::tests::assert_well_formed(&plan);
        assert_eq!(
            plan.items()[0].condition_check().unwrap().condition_expression(),
            "attribute_exists(#PK) AND #status = :status"
        );
    }
}
