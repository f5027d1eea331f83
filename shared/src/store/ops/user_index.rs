//! Filing profiles written before GSI2 existed (`cargo xtask
//! backfill-user-index`): a scan for profiles without their GSI2 keys, and
//! one conditioned UpdateItem each that sets them from the profile's status
//! and creation time. The service keeps running meanwhile: a status change
//! between the scan and the write fails the condition, and the write is made
//! again from the profile as it is then.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};

use crate::domain::{Timestamp, UserId, UserStatus};
use crate::store::expr::{Expr, Update, and, or};
use crate::store::items::{self, EntityType, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

/// A profile without its GSI2 keys, as the scan read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnlistedProfile {
    /// The user.
    pub user_id: UserId,
    /// Its status when read: the GSI2 partition key follows it.
    pub status: UserStatus,
    /// When it was created: the GSI2 sort key.
    pub created_at: Timestamp,
}

/// A page of the scan for unlisted profiles, and where the next one starts.
#[derive(Debug)]
pub struct UnlistedPage {
    /// The page's profiles without GSI2 keys (other items are filtered out).
    pub profiles: Vec<UnlistedProfile>,
    /// The key to go on from; `None` at the end of the segment.
    pub next: Option<Item>,
}

/// What filing one profile did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filed {
    /// Its GSI2 keys are set now.
    Done,
    /// Someone else set them since the scan (a sign-up path, another run): nothing written.
    Already,
    /// The profile is gone: nothing to file.
    Gone,
    /// It kept changing under every attempt: a re-run files it.
    Changed,
}

/// Attempts at filing a profile whose status keeps changing under the write.
const FILING_ATTEMPTS: u32 = 5;

impl Store {
    /// One page of segment `segment` of `segments` of a scan for profiles
    /// without both GSI2 keys, from `after`. At most `limit` items are evaluated.
    pub async fn scan_unlisted_profiles(
        &self,
        segment: u32,
        segments: u32,
        limit: i32,
        after: Option<Item>,
    ) -> Result<UnlistedPage, StoreError> {
        let mut x = Expr::default();
        let user_type: AttributeValue =
            serde_dynamo::to_attribute_value(EntityType::User).map_err(StoreError::Corrupt)?;
        let filter = and([x.eq(attr::ENTITY_TYPE, user_type), unlisted(&mut x)]);
        let request = self.scan_segment(&x, filter, (segment, segments), limit, after);
        let page = send_by_deadline!(&self.client, request)?;
        let profiles = page
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| {
                let profile: ProfileItem = items::from_item(item)?;
                Ok(UnlistedProfile {
                    user_id: profile.user_id,
                    status: profile.status,
                    created_at: profile.created_at,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(UnlistedPage {
            profiles,
            next: page.last_evaluated_key.filter(|k| !k.is_empty()),
        })
    }

    /// Sets `profile`'s GSI2 keys, conditioned on its status and creation time
    /// being as read and the keys still missing. A profile that changed is
    /// filed again as it is now (the failed write returns it), a few times.
    pub async fn file_in_user_list(&self, profile: &UnlistedProfile) -> Result<Filed, StoreError> {
        let mut profile = profile.clone();
        for _ in 0..FILING_ATTEMPTS {
            let mut x = Expr::default();
            let (update, condition) = filing(&mut x, &profile);
            let request = self
                .client
                .update_item()
                .table_name(self.table())
                .set_key(Some(keys::profile_key(&profile.user_id)))
                .update_expression(update.text())
                .condition_expression(condition)
                .set_expression_attribute_names(x.names_or_none())
                .set_expression_attribute_values(x.values_or_none())
                .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
            let old = match send_by_deadline!(&self.client, request) {
                Ok(_) => return Ok(Filed::Done),
                Err(err) => match err.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => failed.item().cloned(),
                    _ => return Err(err.into()),
                },
            };
            let Some(old) = old else {
                return Ok(Filed::Gone);
            };
            if keys::key_string(&old, keys::GSI2PK).is_some() && keys::key_string(&old, keys::GSI2SK).is_some() {
                return Ok(Filed::Already);
            }
            let now: ProfileItem = items::from_item(old)?;
            profile = UnlistedProfile {
                user_id: now.user_id,
                status: now.status,
                created_at: now.created_at,
            };
        }
        Ok(Filed::Changed)
    }
}

/// Without one of its GSI2 keys. A status change on a profile the backfill
/// has not reached sets GSI2PK alone (it does not know the creation time):
/// such a profile still needs its sort key.
fn unlisted(x: &mut Expr) -> String {
    or(x.not_exists(keys::GSI2PK), x.not_exists(keys::GSI2SK))
}

/// Both GSI2 keys from the profile as read, if it still is as read.
fn filing(x: &mut Expr, profile: &UnlistedProfile) -> (Update, String) {
    let update = Update::default()
        .set(x.eq(keys::GSI2PK, keys::user_list_pk(profile.status, &profile.user_id)))
        .set(x.eq(keys::GSI2SK, keys::user_list_sk(profile.created_at, &profile.user_id)));
    let condition = and([
        x.exists(keys::PK),
        x.eq(attr::STATUS, profile.status),
        x.eq(attr::CREATED_AT, profile.created_at),
        unlisted(x),
    ]);
    (update, condition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ops::fixtures::{now, user};

    #[test]
    fn filing_sets_both_keys_only_on_the_profile_as_read() {
        let mut x = Expr::default();
        let profile = UnlistedProfile {
            user_id: user(),
            status: UserStatus::Suspended,
            created_at: now(),
        };
        let (update, condition) = filing(&mut x, &profile);
        assert_eq!(update.text(), "SET #GSI2PK = :GSI2PK, #GSI2SK = :GSI2SK");
        assert_eq!(
            condition,
            "attribute_exists(#PK) AND #status = :status AND #createdAt = :createdAt AND \
             (attribute_not_exists(#GSI2PK) OR attribute_not_exists(#GSI2SK))"
        );
        let values = x.values_or_none().unwrap();
        assert_eq!(
            values[":GSI2PK"].as_s().unwrap(),
            &keys::user_list_pk(UserStatus::Suspended, &user())
        );
        assert_eq!(values[":GSI2SK"].as_s().unwrap(), &keys::user_list_sk(now(), &user()));
    }
}
