//! A user about to be written whole: a confirmed sign-up's, or an imported
//! account with its status, creation time and further addresses.

use super::email_address::EmailAddress;
use super::ids::{ImportKey, UserId};
use super::person::{PersonName, Phone};
use super::profile::UserStatus;
use super::timestamp::Timestamp;

/// What a confirmed sign-up knows about the new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// The `sub` Cognito gave the user.
    pub user_id: UserId,
    /// The address Cognito verified; it becomes the first record, verified and primary.
    pub email: EmailAddress,
    /// The `given_name` attribute, if present and valid; an invalid one is left out.
    pub first_name: Option<PersonName>,
    /// The `family_name` attribute, if present and valid; an invalid one is left out.
    pub last_name: Option<PersonName>,
    /// The `phone_number` attribute, if present and valid E.164; an invalid one is left out.
    pub phone: Option<Phone>,
}

/// A user written whole at once by the bulk import: the sign-up's user, with
/// the status and creation time the other system had, and more addresses.
#[derive(Debug, Clone)]
pub struct NewAccount {
    /// The user and its primary address, verified.
    pub user: NewUser,
    /// Active or suspended.
    pub status: UserStatus,
    /// When the user signed up (there, for an imported user).
    pub created_at: Timestamp,
    /// The addresses beside the primary.
    pub more: Vec<AdditionalEmail>,
    /// For an imported user, the keyed hash that names the line's person: the
    /// account's erasure records it, and no import creates it again.
    pub import_key: Option<ImportKey>,
}

impl NewAccount {
    /// A confirmed sign-up: active, created `now`, with its one address.
    pub fn signed_up(user: NewUser, now: Timestamp) -> Self {
        Self {
            user,
            status: UserStatus::Active,
            created_at: now,
            more: Vec::new(),
            import_key: None,
        }
    }
}

/// An address an imported user has beside the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdditionalEmail {
    /// The address.
    pub email: EmailAddress,
    /// Whether the other system had it verified: a verified one holds its claim
    /// for good, an unverified one until it expires.
    pub verified: bool,
}
