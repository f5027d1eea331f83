//! Deleting a user: status deleted, the profile erased, every record and claim
//! released, in one transaction. The profile's version and count pin the set of
//! records read just before.

use crate::domain::{Profile, Timestamp, UserId, UserStatus};
use crate::keys;
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and};
use crate::store::items::{EmailItem, ProfileItem, attr};
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::claim::push_own_claim_delete;
use super::profile::{read_changed, read_deletable, read_profile, visible, writable};

impl Store {
    /// Deletes a user: every address released and the profile erased (no address,
    /// names or phone) in one transaction. With `expected_version` (the user
    /// closing their own account) the profile must be active and at that version.
    pub async fn delete_user(
        &self,
        user: &UserId,
        expected_version: Option<u64>,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        retrying!({
            let items = self.user_items(user).await?;
            let profile = match expected_version {
                None => visible(items.profile.ok_or(StoreError::NotFound)?)?,
                Some(expected) => {
                    let profile = writable(items.profile)?;
                    if profile.version != expected {
                        return Err(StoreError::VersionMismatch {
                            current: profile.version,
                        }
                        .into());
                    }
                    profile
                }
            };
            let by_admin = expected_version.is_none();
            let plan = plan(self.table(), &profile, &items.emails, now, by_admin)?;
            self.transact(&plan).await?;
            metrics::count(Metric::UsersDeleted);
            Ok(Profile {
                email: None,
                first_name: None,
                last_name: None,
                phone: None,
                status: UserStatus::Deleted,
                version: profile.version + 1,
                updated_at: now,
                email_count: 0,
                ..profile.into_domain()
            })
        })
    }
}

/// `by_admin`: an admin may delete a suspended user, so a profile that moved
/// under the delete is read again; the user's own delete needs it active.
fn plan(
    table: &str,
    profile: &ProfileItem,
    records: &[EmailItem],
    now: Timestamp,
    by_admin: bool,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let erase = plan::update(table, keys::profile_key(&profile.user_id), |x| {
        // Erasure in the same write that releases the addresses.
        let update = Update::default()
            .set(x.eq(attr::STATUS, UserStatus::Deleted))
            .set(x.eq(attr::EMAIL_COUNT, 0u32))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now))
            .remove(x.name(attr::EMAIL))
            .remove(x.name(attr::FIRST_NAME))
            .remove(x.name(attr::LAST_NAME))
            .remove(x.name(attr::PHONE));
        let condition = and([
            x.eq(attr::VERSION, profile.version),
            x.eq(attr::EMAIL_COUNT, profile.email_count),
        ]);
        (update, condition)
    })?;
    plan.push(erase, if by_admin { read_deletable } else { read_profile });
    for record in records {
        let delete = plan::delete(table, keys::email_key(&record.user_id, record.email_id), |x| {
            x.exists(keys::PK)
        })?;
        plan.push(delete, read_changed);
        push_own_claim_delete(&mut plan, table, record)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailAddress, EmailId};
    use crate::store::ops::fixtures::{address, new_user, now, user};
    use crate::store::plan::Rejection;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn delete_user_releases_every_record_and_claim() {
        let profile = ProfileItem::new(&new_user(), 2, now());
        let a = EmailItem::verified_primary(&user(), &address(), now());
        let b_address = EmailAddress::parse("b@example.com").unwrap();
        let b = EmailItem::unverified(&user(), EmailId::new(), &b_address, "h".into(), now(), now());
        let plan = plan("t", &profile, &[a, b], now(), true).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        let claims: Vec<_> = plan
            .items()
            .iter()
            .filter_map(|i| i.delete())
            .map(|d| d.key().clone())
            .filter(|key| {
                keys::classify(
                    keys::key_string(key, keys::PK).unwrap(),
                    keys::key_string(key, keys::SK).unwrap(),
                ) == keys::ItemKind::Claim
            })
            .collect();
        assert_eq!(claims, vec![keys::claim_key(&address()), keys::claim_key(&b_address)]);
        // A profile that moved since it was read: read again.
        assert!(matches!(
            plan.read(0, Some(&crate::store::ops::fixtures::profile(UserStatus::Active, 3, 2))),
            Rejection::Retry
        ));
        assert!(matches!(plan.read(1, None), Rejection::Retry));
    }
}
