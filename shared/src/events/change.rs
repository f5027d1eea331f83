//! A change as the events read it: the item's image before and after, and
//! the stream record that carried it. The store reads a stream record into
//! one; the publisher derives its events and wraps them.

use crate::domain::{Email, Membership, Organization, Profile, Timestamp, UserId};

/// A profile, as the events read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserImage {
    /// The profile.
    pub profile: Profile,
    /// Erased because the user deleted themselves in Cognito.
    pub gone_from_cognito: bool,
    /// The latest recovery: the version of the switch it undid, and when.
    pub last_recovery: Option<(u64, crate::domain::Timestamp)>,
}

/// One side of a change, as the events read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    /// A user's profile.
    User(UserImage),
    /// One of a user's addresses.
    Email {
        /// Whose.
        user_id: UserId,
        /// The record.
        email: Email,
        /// The profile's version the switch that made it primary wrote.
        primary_version: Option<u64>,
    },
    /// An organization.
    Organization {
        /// As the API shows it.
        organization: Organization,
        /// Whether it is deleted (its members being removed).
        deleting: bool,
    },
    /// A membership, by the organization's half of it.
    Member(Membership),
}

/// One change of a profile or an email record, as the table's stream recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The stream record's id: the events' ids are derived from it.
    pub record_id: String,
    /// When the change was made: the events' `time`.
    pub time: Timestamp,
    /// The item before, `None` for an item written new.
    pub old: Option<Image>,
    /// The item after, `None` for an item removed.
    pub new: Option<Image>,
}
