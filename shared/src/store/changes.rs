//! The table's stream, read back into domain values: a profile change as the
//! stream's old and new images show it, and the change of a profile or an
//! email record as the events read it. The stored format stays inside the
//! store; the stream's consumers see only what changed, and the store knows
//! nothing of the events' format.

use aws_lambda_events::event::dynamodb::EventRecord;

use super::items::{EmailItem, MemberItem, OrgStatus, OrganizationItem, ProfileItem};
use super::keys;
use crate::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use crate::events::{Change, Image, UserImage};

/// A profile as one image of a stream record shows it: what Cognito follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileImage {
    /// Whose profile.
    pub user_id: UserId,
    /// The primary address; `None` once erased.
    pub email: Option<EmailAddress>,
    /// Active, suspended or deleted.
    pub status: UserStatus,
    /// Erased because Cognito no longer has the user: nothing to delete there.
    pub gone_from_cognito: bool,
    /// The address Cognito signs the user in with, as last recorded.
    pub cognito_email: Option<EmailAddress>,
    /// When the reconcile's pass last asked for the primary to be applied again.
    pub sync_requested_at: Option<Timestamp>,
    /// The profile's version: a switch's names the switch.
    pub version: u64,
    /// Set by a recovery: tokens issued before it are refused.
    pub tokens_valid_after: Option<i64>,
}

/// One change of a profile: its image before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileChange {
    /// The profile before the change.
    pub old: ProfileImage,
    /// The profile after the change.
    pub new: ProfileImage,
}

/// A stream record whose image is not a profile. It names the image, never
/// serde's message, which may quote a value of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the record's {0} is not a profile")]
pub struct NotAProfile(pub &'static str);

impl ProfileChange {
    /// The change a stream record carries (a MODIFY of a profile, with both images).
    pub fn from_record(record: &EventRecord) -> Result<Self, NotAProfile> {
        let image = |item: &serde_dynamo::Item, name: &'static str| {
            serde_dynamo::from_item::<_, ProfileItem>(item.clone())
                .map(ProfileImage::from)
                .map_err(|_| NotAProfile(name))
        };
        Ok(Self {
            old: image(&record.change.old_image, "OldImage")?,
            new: image(&record.change.new_image, "NewImage")?,
        })
    }
}

impl From<ProfileItem> for ProfileImage {
    fn from(item: ProfileItem) -> Self {
        Self {
            user_id: item.user_id,
            email: item.email,
            status: item.status,
            gone_from_cognito: item.gone_from_cognito,
            cognito_email: item.cognito_email,
            sync_requested_at: item.sync_requested_at,
            version: item.version,
            tokens_valid_after: item.tokens_valid_after,
        }
    }
}

/// A stream record whose keys or images cannot be read as the item they
/// name. It names the part, never serde's message, which may quote a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the record's {0} cannot be read")]
pub struct Unreadable(pub &'static str);

/// The change a stream record carries, read back into domain values: the
/// images of a profile, an email record, an organization or a member before and after, with the
/// record's id and time. `None` for any other item (claims, counters, the
/// reconcile's), whose changes are no event, and for a pending user's items.
/// Its events, and their envelope, are the publisher's ([`crate::events::envelopes`]).
pub fn change_of_record(record: &EventRecord) -> Result<Option<Change>, Unreadable> {
    let keys: std::collections::HashMap<String, String> =
        serde_dynamo::from_item(record.change.keys.clone()).map_err(|_| Unreadable("Keys"))?;
    let key = |name: &str| keys.get(name).map_or("", String::as_str);
    let kind = keys::classify(key(keys::PK), key(keys::SK));
    // A pending user is no user yet to anyone downstream: its import, its
    // erasure and its move to a sub are no event (the move's new items are).
    let pending = keys::user_of_pk(key(keys::PK))
        .and_then(|user| UserId::parse(user).ok())
        .is_some_and(|user| user.is_pending());
    if pending {
        return Ok(None);
    }
    let image = |item: &serde_dynamo::Item, name: &'static str| -> Result<Option<Image>, Unreadable> {
        if item.is_empty() {
            return Ok(None);
        }
        let bad = |_| Unreadable(name);
        Ok(Some(match kind {
            keys::ItemKind::Profile => {
                let item: ProfileItem = serde_dynamo::from_item(item.clone()).map_err(bad)?;
                let gone_from_cognito = item.gone_from_cognito;
                let last_recovery = item.recoveries.last().map(|r| (r.from_version, r.at));
                Image::User(UserImage {
                    profile: item.into_domain(),
                    gone_from_cognito,
                    last_recovery,
                })
            }
            keys::ItemKind::Organization => {
                let item: OrganizationItem = serde_dynamo::from_item(item.clone()).map_err(bad)?;
                Image::Organization {
                    deleting: item.status == OrgStatus::Deleting,
                    organization: item.into_domain(),
                }
            }
            keys::ItemKind::Member => {
                let item: MemberItem = serde_dynamo::from_item(item.clone()).map_err(bad)?;
                Image::Member(item.into_domain())
            }
            _ => {
                let item: EmailItem = serde_dynamo::from_item(item.clone()).map_err(bad)?;
                Image::Email {
                    user_id: item.user_id.clone(),
                    primary_version: item.primary_version,
                    email: item.into_domain(),
                }
            }
        }))
    };
    match kind {
        // A membership's events come from the organization's half alone: the
        // user's half would say it twice.
        keys::ItemKind::Profile | keys::ItemKind::Email | keys::ItemKind::Organization | keys::ItemKind::Member => {
            Ok(Some(Change {
                record_id: record.event_id.clone(),
                time: Timestamp::from_unix_millis(record.change.approximate_creation_date_time.timestamp_millis()),
                old: image(&record.change.old_image, "OldImage")?,
                new: image(&record.change.new_image, "NewImage")?,
            }))
        }
        _ => Ok(None),
    }
}

/// The user a stream record is about, from its key, which every record
/// carries (for logs, when the images cannot be read).
pub fn user_of_record(record: &EventRecord) -> Option<String> {
    let keys: std::collections::HashMap<String, String> = serde_dynamo::from_item(record.change.keys.clone()).ok()?;
    keys.get(keys::PK)
        .and_then(|pk| keys::user_of_pk(pk))
        .map(str::to_owned)
}

/// The organization a stream record is about, from its key.
pub fn org_of_record(record: &EventRecord) -> Option<crate::domain::OrgId> {
    let keys: std::collections::HashMap<String, String> = serde_dynamo::from_item(record.change.keys.clone()).ok()?;
    keys.get(keys::PK).and_then(|pk| keys::org_of_pk(pk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::NewUser;
    use crate::store::items;

    fn record(old: serde_dynamo::Item, new: serde_dynamo::Item, user: &UserId) -> EventRecord {
        let mut record = EventRecord::default();
        record.change.old_image = old;
        record.change.new_image = new;
        record.change.keys = serde_dynamo::Item::from(keys::profile_key(user));
        record
    }

    fn stored(status: UserStatus) -> serde_dynamo::Item {
        let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let user = NewUser {
            user_id: UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
            email: EmailAddress::parse("ada@example.com").unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        let mut profile = ProfileItem::new(&user, 1, now);
        profile.status = status;
        serde_dynamo::Item::from(items::profile_item(&profile).unwrap())
    }

    #[test]
    fn a_profile_change_reads_both_images_and_names_a_bad_one() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let change = ProfileChange::from_record(&record(
            stored(UserStatus::Active),
            stored(UserStatus::Suspended),
            &user,
        ))
        .unwrap();
        assert_eq!(
            (change.old.status, change.new.status),
            (UserStatus::Active, UserStatus::Suspended)
        );
        assert_eq!(change.new.user_id, user);
        assert_eq!(change.old.email.unwrap().as_str(), "ada@example.com");
        let bad = record(
            serde_dynamo::Item::from(keys::Item::new()),
            stored(UserStatus::Active),
            &user,
        );
        assert_eq!(ProfileChange::from_record(&bad), Err(NotAProfile("OldImage")));
        assert_eq!(user_of_record(&bad).as_deref(), Some(user.as_str()));
    }
}
