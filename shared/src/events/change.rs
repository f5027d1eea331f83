//! A change as the events read it: the item's image before and after.

use crate::domain::{Email, Profile, UserId};

/// A profile, as the events read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserImage {
    /// The profile.
    pub profile: Profile,
    /// Erased because the user deleted themselves in Cognito.
    pub gone_from_cognito: bool,
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
}
