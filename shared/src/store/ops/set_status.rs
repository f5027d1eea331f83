//! Setting a user's status: one conditioned UpdateItem of the profile, and what
//! its failure means. Deleting is `delete_user`: it releases every address too.

use crate::domain::{Profile, Timestamp, UserId, UserStatus};
use crate::keys::{self, Item};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{ProfileItem, attr};
use crate::store::plan;
use crate::store::{Store, StoreError};

use super::profile::visible;

impl Store {
    /// Sets a user's status. Deleting releases every address in the same
    /// transaction; a deleted user stays deleted.
    pub async fn set_status(&self, user: &UserId, status: UserStatus, now: Timestamp) -> Result<Profile, StoreError> {
        if status == UserStatus::Deleted {
            return self.delete_user(user, None, now).await;
        }
        self.update_profile_item(user, |x| write(x, status, now), read_failure)
            .await
    }
}

fn write(x: &mut Expr, status: UserStatus, now: Timestamp) -> (Update, String) {
    let update = Update::default()
        .set(x.eq(attr::STATUS, status))
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
        let (update, condition) = write(&mut x, UserStatus::Suspended, now());
        assert_eq!(
            update.text(),
            "SET #status = :status, #version = #version + :versionBy, #updatedAt = :updatedAt"
        );
        assert_eq!(
            condition,
            "attribute_exists(#PK) AND #status <> :status2 AND #status <> :status"
        );
        assert_eq!(x.values_or_none().unwrap().len(), 4);
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
