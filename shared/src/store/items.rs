//! Stored item shapes (the non-key attributes) and their mapping to domain types.
//! Keys come from `keys`; attribute names used in expressions come from `attr`.
#![cfg_attr(not(feature = "test-support"), allow(unreachable_pub))]

use serde::{Deserialize, Serialize};

use crate::domain::{Email, EmailAddress, EmailId, PersonName, Phone, Profile, Timestamp, UserId, UserStatus};
use crate::store::keys::{self, Item};

use super::error::StoreError;

/// Attribute names that appear in condition and update expressions.
pub(crate) use super::keys::attr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntityType {
    User,
    Email,
    EmailClaim,
    RateLimit,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileItem {
    pub entity_type: EntityType,
    pub user_id: UserId,
    /// The primary address; gone, with the names and phone, once the user is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<EmailAddress>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<PersonName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<PersonName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
    pub status: UserStatus,
    pub version: u64,
    pub email_count: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailItem {
    pub entity_type: EntityType,
    pub email_id: EmailId,
    pub user_id: UserId,
    pub email: EmailAddress,
    pub is_primary: bool,
    pub is_verified: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<Timestamp>,
    pub created_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_code_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_expires_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_sent_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimItem {
    pub entity_type: EntityType,
    pub user_id: UserId,
    pub email_id: EmailId,
    /// Present while the address is unverified: after it, another user may take the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

impl ClaimItem {
    /// A claim that still holds its address: verified, or unverified and not yet expired.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|expires| expires > now)
    }
}

impl ProfileItem {
    pub fn new(user: &crate::domain::NewUser, email_count: u32, now: Timestamp) -> Self {
        Self {
            entity_type: EntityType::User,
            user_id: user.user_id.clone(),
            email: Some(user.email.clone()),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            phone: user.phone.clone(),
            status: UserStatus::Active,
            version: 1,
            email_count,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn into_domain(self) -> Profile {
        Profile {
            user_id: self.user_id,
            email: self.email,
            first_name: self.first_name,
            last_name: self.last_name,
            phone: self.phone,
            status: self.status,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
            email_count: self.email_count,
        }
    }
}

impl EmailItem {
    pub fn verified_primary(user: &UserId, email: &EmailAddress, now: Timestamp) -> Self {
        Self {
            entity_type: EntityType::Email,
            email_id: EmailId::new(),
            user_id: user.clone(),
            email: email.clone(),
            is_primary: true,
            is_verified: true,
            verified_at: Some(now),
            created_at: now,
            verification_code_hash: None,
            verification_expires_at: None,
            verification_attempts: None,
            verification_sent_at: None,
        }
    }

    pub fn unverified(
        user: &UserId,
        email_id: EmailId,
        email: &EmailAddress,
        code_hash: String,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Self {
        Self {
            entity_type: EntityType::Email,
            email_id,
            user_id: user.clone(),
            email: email.clone(),
            is_primary: false,
            is_verified: false,
            verified_at: None,
            created_at: now,
            verification_code_hash: Some(code_hash),
            verification_expires_at: Some(expires_at),
            verification_attempts: Some(0),
            verification_sent_at: Some(now),
        }
    }

    /// The claim of this record: permanent once verified, else held until `expires_at`.
    pub fn claim(&self, expires_at: Option<Timestamp>) -> ClaimItem {
        ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: self.user_id.clone(),
            email_id: self.email_id,
            expires_at: if self.is_verified { None } else { expires_at },
        }
    }

    pub fn into_domain(self) -> Email {
        Email {
            email_id: self.email_id,
            email: self.email,
            is_primary: self.is_primary,
            is_verified: self.is_verified,
            verified_at: self.verified_at,
            created_at: self.created_at,
        }
    }
}

/// What GSI1 holds of an email record (projection INCLUDE: `keys::GSI1_PROJECTED`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedEmail {
    pub user_id: UserId,
    pub is_verified: bool,
    pub created_at: Timestamp,
}

/// Which counter an item of a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Codes issued for one address, by anyone (adds and resends).
    CodesIssued,
    /// Wrong codes one user sent, for any address.
    WrongCodes,
    /// One user and one address: wrong codes, and when the user first added it.
    UserAddress,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitItem {
    pub entity_type: EntityType,
    /// Epoch seconds of the counted events, oldest first.
    pub events: Vec<i64>,
    pub version: u64,
    /// For `UserAddress`: when the current 24-hour window of holding the address began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_added_at: Option<Timestamp>,
    /// Epoch seconds after which DynamoDB may delete the item; nothing relies on it.
    pub ttl: i64,
}

/// The whole stored item: keys from `keys`, attributes from the struct.
pub fn to_item<T: Serialize>(keys: Item, value: &T) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(value).map_err(StoreError::Corrupt)?;
    item.extend(keys);
    Ok(item)
}

pub fn from_item<T: for<'de> Deserialize<'de>>(item: Item) -> Result<T, StoreError> {
    serde_dynamo::from_item(item).map_err(StoreError::Corrupt)
}

pub fn profile_item(item: &ProfileItem) -> Result<Item, StoreError> {
    to_item(keys::profile_key(&item.user_id), item)
}

pub fn email_item(item: &EmailItem) -> Result<Item, StoreError> {
    to_item(keys::email_record_keys(&item.user_id, item.email_id, &item.email), item)
}

pub fn claim_item(email: &EmailAddress, item: &ClaimItem) -> Result<Item, StoreError> {
    to_item(keys::claim_key(email), item)
}

/// The items of one user's partition (PK = USER#…), split by kind.
#[derive(Debug, Default)]
pub struct UserItems {
    pub profile: Option<ProfileItem>,
    pub emails: Vec<EmailItem>,
}

impl UserItems {
    pub fn from_items(items: Vec<Item>) -> Result<Self, StoreError> {
        let mut out = Self::default();
        for item in items {
            let kind = keys::classify(
                keys::key_string(&item, keys::PK).unwrap_or_default(),
                keys::key_string(&item, keys::SK).unwrap_or_default(),
            );
            match kind {
                keys::ItemKind::Profile => out.profile = Some(from_item(item)?),
                keys::ItemKind::Email => out.emails.push(from_item(item)?),
                keys::ItemKind::Claim | keys::ItemKind::Limit | keys::ItemKind::Unknown => {}
            }
        }
        sort_oldest_first(&mut out.emails);
        Ok(out)
    }
}

pub fn sort_oldest_first(emails: &mut [EmailItem]) {
    emails.sort_by_key(|e| (e.created_at, e.email_id));
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::domain::NewUser;

    /// Every attribute constant names a field the items are stored with, so an
    /// expression built from the constants addresses what the items hold.
    #[test]
    fn attribute_names_are_the_stored_field_names() {
        let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let user = UserId::parse("u").unwrap();
        let email = EmailAddress::parse("a@example.com").unwrap();
        let profile = ProfileItem::new(
            &NewUser {
                user_id: user.clone(),
                email: email.clone(),
                first_name: Some(PersonName::parse("A").unwrap()),
                last_name: Some(PersonName::parse("B").unwrap()),
                phone: Some(Phone::parse("+15555550100").unwrap()),
            },
            1,
            now,
        );
        let mut record = EmailItem::unverified(&user, EmailId::new(), &email, "h".into(), now, now);
        record.verified_at = Some(now);
        let claim = record.claim(Some(now));
        let stored: BTreeSet<String> = [
            profile_item(&profile).unwrap(),
            email_item(&record).unwrap(),
            claim_item(&email, &claim).unwrap(),
        ]
        .into_iter()
        .flat_map(|item| item.into_keys())
        .collect();
        for name in attr::ALL {
            assert!(stored.contains(*name), "{name} is not a stored attribute");
        }
    }
}
