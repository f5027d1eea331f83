//! A user as the API shows them: the status, the profile and its versions
//! (and the If-Match that names them), the addresses, the admin list's
//! entries, and a change to the profile.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::email_address::EmailAddress;
use super::ids::{EmailId, UserId};
use super::invalid::Invalid;
use super::person::{PersonName, Phone};
use super::timestamp::Timestamp;

/// Where an account stands, which decides whether its owner may sign in and change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum UserStatus {
    /// In normal use: the user may sign in and change the account.
    Active,
    /// Blocked by an admin: sign-in is refused, and the account can be read but not changed.
    Suspended,
    /// Closed: the profile is erased, its addresses released, and it reads as not found.
    Deleted,
}

impl UserStatus {
    /// The spelling stored in the table and shown in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
            Self::Deleted => "deleted",
        }
    }
}

impl TryFrom<String> for UserStatus {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<UserStatus> for &'static str {
    fn from(value: UserStatus) -> Self {
        value.as_str()
    }
}

impl FromStr for UserStatus {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "active" => Ok(Self::Active),
            "suspended" => Ok(Self::Suspended),
            "deleted" => Ok(Self::Deleted),
            _ => Err(Invalid("must be one of active, suspended, deleted")),
        }
    }
}

/// A user's profile as the API shows it. A deleted user's is erased: no
/// address, names or phone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// The owner's Cognito `sub`; every item of the user is keyed by it.
    pub user_id: UserId,
    /// The primary address; `None` once the user is deleted.
    pub email: Option<EmailAddress>,
    /// The given name, if the user gave one; erased on delete.
    pub first_name: Option<PersonName>,
    /// The family name, if the user gave one; erased on delete.
    pub last_name: Option<PersonName>,
    /// An optional contact number; erased on delete.
    pub phone: Option<Phone>,
    /// Whether the user may sign in and change the account.
    pub status: UserStatus,
    /// The profile's version, for If-Match: each write adds one.
    pub version: u64,
    /// When the confirmed sign-up created the profile.
    pub created_at: Timestamp,
    /// When the profile last changed.
    pub updated_at: Timestamp,
    /// How many email records the user has: not shown, but checked against the per-user maximum.
    #[serde(skip)]
    pub email_count: u32,
}

/// One user in the admin list: what GSI2 projects of the profile. A deleted
/// user's is erased: no address or names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserSummary {
    /// The user's Cognito `sub`: `PUT /admin/users/{userId}/status` takes it.
    pub user_id: UserId,
    /// The primary address; `None` once the user is deleted.
    pub email: Option<EmailAddress>,
    /// The given name, if the user gave one.
    pub first_name: Option<PersonName>,
    /// The family name, if the user gave one.
    pub last_name: Option<PersonName>,
    /// Active, suspended or deleted.
    pub status: UserStatus,
    /// When the confirmed sign-up created the profile: the list's order.
    pub created_at: Timestamp,
}

/// A place in the admin list, which is ordered by creation time, then sub:
/// a page starts after one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPosition {
    /// The creation time of the user the list is past.
    pub created_at: Timestamp,
    /// That user's `sub`, which orders users created in the same millisecond.
    pub user_id: UserId,
}

/// One of a user's email addresses as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Email {
    /// Names the record in the `/me/emails/{emailId}` routes.
    pub email_id: EmailId,
    /// The normalised address.
    pub email: EmailAddress,
    /// Whether this is the profile's address, the one Cognito's `email` follows.
    pub is_primary: bool,
    /// Whether the user proved they receive mail here; until then the claim on it can expire.
    pub is_verified: bool,
    /// When the address was verified; `None` while it is not.
    pub verified_at: Option<Timestamp>,
    /// When the address was added.
    pub created_at: Timestamp,
}

/// A profile and all its addresses, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Account {
    /// The user's profile, as `GET /me` shows it.
    pub profile: Profile,
    /// Every email record of the user, oldest first.
    pub emails: Vec<Email>,
}

/// A change to what the profile shows. `None` leaves a field as it is;
/// `phone: Some(None)` removes the phone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilePatch {
    /// A new given name, or `None` to keep the current one.
    pub first_name: Option<PersonName>,
    /// A new family name, or `None` to keep the current one.
    pub last_name: Option<PersonName>,
    /// `Some(Some(_))` sets the phone, `Some(None)` removes it, `None` keeps it.
    pub phone: Option<Option<Phone>>,
}

impl ProfilePatch {
    /// Whether the patch changes nothing; the route refuses such a request.
    pub fn is_empty(&self) -> bool {
        self.first_name.is_none() && self.last_name.is_none() && self.phone.is_none()
    }
}

/// Which versions of a profile a conditional write may change: `If-Match`, as
/// RFC 9110 (section 13.1.1) reads it. The write carries it as its condition.
///
/// ```
/// use user_service::domain::IfMatch;
///
/// let listed = IfMatch::Versions(vec![3, 4]);
/// assert!(listed.matches(4) && !listed.matches(5));
/// assert!(IfMatch::Any.matches(7));
/// // `"0"` is a well-formed tag that names no version: it matches nothing.
/// assert!(!IfMatch::Versions(vec![]).matches(1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: any current profile; none (a deleted or unknown user) fails it.
    Any,
    /// The versions the strong entity tags named. Empty when no listed tag
    /// names a version (`"0"`, `"abc"`, only weak tags): it matches nothing.
    Versions(Vec<u64>),
}

impl IfMatch {
    /// Whether a profile at `version` satisfies the precondition.
    pub fn matches(&self, version: u64) -> bool {
        match self {
            Self::Any => true,
            Self::Versions(versions) => versions.contains(&version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_matches_any_listed_version_or_any_with_a_star() {
        assert!(IfMatch::Any.matches(1));
        assert!(IfMatch::Versions(vec![3, 4]).matches(4));
        assert!(!IfMatch::Versions(vec![3, 4]).matches(5));
        assert!(!IfMatch::Versions(vec![]).matches(1));
    }

    #[test]
    fn status_round_trips() {
        for s in [UserStatus::Active, UserStatus::Suspended, UserStatus::Deleted] {
            assert_eq!(s.as_str().parse::<UserStatus>().unwrap(), s);
        }
        assert!("gone".parse::<UserStatus>().is_err());
    }
}
