//! Setting a user's status: one conditioned UpdateItem of the profile, and what
//! its failure means; or, for an admin, one transaction that also checks the
//! admin's own profile is active. Deleting is `delete_user`: it releases every
//! address too.

use crate::domain::{Profile, Timestamp, UserId, UserStatus};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Deleter, Store, StoreError};

use super::profile::{push_acting_admin_check, visible};

impl Store {
    /// Sets a user's status, as the system (no acting admin). Deleting releases
    /// every address in the same transaction; a deleted user stays deleted.
    pub async fn set_status(&self, user: &UserId, status: UserStatus, now: Timestamp) -> Result<Profile, StoreError> {
        if status == UserStatus::Deleted {
            return self.delete_user(user, Deleter::System, now).await;
        }
        self.update_profile_item(user, |x| write(x, user, status, now), read_failure)
            .await
    }

    /// Sets a user's status as `admin`: the same change, in one transaction
    /// with the condition that the admin's own profile is active, so an admin
    /// suspended or deleted after the route admitted them cannot act.
    pub async fn set_status_as_admin(
        &self,
        admin: &UserId,
        user: &UserId,
        status: UserStatus,
        now: Timestamp,
    ) -> Result<StatusSet, StoreError> {
        if status == UserStatus::Deleted {
            let profile = self.delete_user(user, Deleter::Admin(admin), now).await?;
            return Ok(StatusSet { profile, changed: true });
        }
        retrying!({
            let profile = self.get(keys::profile_key(user)).await?;
            let profile = visible(plan::old::<ProfileItem>(profile.as_ref())?.ok_or(StoreError::NotFound)?)?;
            if profile.status == status {
                // Nothing to change: nothing is written, but the write still
                // checks, in one transaction, that the profile is as read and
                // that the admin is active, as a change would.
                self.transact(&unchanged_plan(self.table(), admin, &profile)?).await?;
                return Ok(StatusSet {
                    profile: profile.into_domain(),
                    changed: false,
                });
            }
            self.transact(&admin_plan(self.table(), admin, &profile, status, now)?)
                .await?;
            Ok(StatusSet {
                profile: Profile {
                    status,
                    version: profile.version + 1,
                    updated_at: now,
                    ..profile.into_domain()
                },
                changed: true,
            })
        })
    }
}

/// What an admin's status change did.
#[derive(Debug, Clone)]
pub struct StatusSet {
    /// The profile after it.
    pub profile: Profile,
    /// `false` when the user already had that status: nothing was written.
    pub changed: bool,
}

/// A status the user already has: the profile as read, and the admin active.
fn unchanged_plan(table: &str, admin: &UserId, profile: &ProfileItem) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let check = plan::check(table, keys::profile_key(&profile.user_id), |x| {
        x.eq(attr::VERSION, profile.version)
    })?;
    plan.push(check, read_moved);
    push_acting_admin_check(&mut plan, table, admin)?;
    Ok(plan)
}

/// The admin's change: the profile at the version read, and the admin active.
fn admin_plan(
    table: &str,
    admin: &UserId,
    profile: &ProfileItem,
    status: UserStatus,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let update = plan::update(table, keys::profile_key(&profile.user_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::STATUS, status))
            .set(x.eq(keys::GSI2PK, keys::user_list_pk(status, &profile.user_id)))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now));
        (update, x.eq(attr::VERSION, profile.version))
    })?;
    plan.push(update, read_moved);
    push_acting_admin_check(&mut plan, table, admin)?;
    Ok(plan)
}

/// The target profile moved since it was read: gone or deleted is not found;
/// otherwise read it again and decide again.
fn read_moved(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<ProfileItem>(old)?.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Rejection::Failed(StoreError::NotFound),
        Some(_) => Rejection::Retry,
    })
}

/// The status and the GSI2 partition key it files the profile under, together.
fn write(x: &mut Expr, user: &UserId, status: UserStatus, now: Timestamp) -> (Update, String) {
    let update = Update::default()
        .set(x.eq(attr::STATUS, status))
        .set(x.eq(keys::GSI2PK, keys::user_list_pk(status, user)))
        .set(x.add(attr::VERSION, 1))
        .set(x.eq(attr::UPDATED_AT, now));
    let condition = and([
        x.exists(keys::PK),
        x.ne(attr::STATUS, UserStatus::Deleted),
        x.ne(attr::STATUS, status),
    ]);
    (update, condition)
}

/// Missing or deleted: not found. Already in that status: nothing to change,
/// the profile as it is.
fn read_failure(old: Option<&Item>) -> Result<Profile, StoreError> {
    let old: Option<ProfileItem> = plan::old(old)?;
    visible(old.ok_or(StoreError::NotFound)?).map(ProfileItem::into_domain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ops::fixtures::{now, profile};

    #[test]
    fn the_condition_keeps_deleted_users_deleted() {
        let mut x = Expr::default();
        let user = crate::store::ops::fixtures::user();
        let (update, condition) = write(&mut x, &user, UserStatus::Suspended, now());
        assert_eq!(
            update.text(),
            "SET #status = :status, #GSI2PK = :GSI2PK, #version = #version + :versionBy, #updatedAt = :updatedAt"
        );
        assert_eq!(
            condition,
            "attribute_exists(#PK) AND #status <> :status2 AND #status <> :status"
        );
        let values = x.values_or_none().unwrap();
        assert_eq!(values.len(), 5);
        // The profile is filed under its new status in the same write.
        assert_eq!(
            values[":GSI2PK"].as_s().unwrap(),
            &keys::user_list_pk(UserStatus::Suspended, &user)
        );
    }

    #[test]
    fn an_admin_change_pins_the_version_and_checks_the_admin() {
        use crate::store::ops::fixtures::user;
        let target = plan::old::<ProfileItem>(Some(&profile(UserStatus::Active, 1, 4)))
            .unwrap()
            .unwrap();
        let admin = UserId::parse("admin-a").unwrap();
        let plan = admin_plan("t", &admin, &target, UserStatus::Suspended, now()).unwrap();
        plan::tests::assert_well_formed(&plan);
        let items = plan.items();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].update().unwrap().condition_expression(),
            Some("#version = :version")
        );
        let check = items[1].condition_check().unwrap();
        assert_eq!(check.key(), &keys::profile_key(&admin));
        assert_ne!(check.key(), &keys::profile_key(&user()));
        assert_eq!(
            check.condition_expression(),
            "attribute_exists(#PK) AND #status = :status"
        );
        // The admin's profile failing its check: refused, never retried.
        assert!(matches!(
            plan.read(1, Some(&profile(UserStatus::Suspended, 1, 2))),
            Rejection::Failed(StoreError::AdminInactive)
        ));
        assert!(matches!(
            plan.read(1, None),
            Rejection::Failed(StoreError::AdminInactive)
        ));
        // The target moved: read again; gone: not found.
        assert!(matches!(
            plan.read(0, Some(&profile(UserStatus::Active, 1, 5))),
            Rejection::Retry
        ));
        assert!(matches!(plan.read(0, None), Rejection::Failed(StoreError::NotFound)));
    }

    #[test]
    fn a_failure_is_not_found_or_the_profile_as_it_is() {
        assert!(matches!(read_failure(None), Err(StoreError::NotFound)));
        let deleted = profile(UserStatus::Deleted, 0, 3);
        assert!(matches!(read_failure(Some(&deleted)), Err(StoreError::NotFound)));
        let suspended = profile(UserStatus::Suspended, 1, 3);
        let unchanged = read_failure(Some(&suspended)).unwrap();
        assert_eq!((unchanged.status, unchanged.version), (UserStatus::Suspended, 3));
    }
}
