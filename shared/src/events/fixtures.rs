//! The images the events' tests derive from: a profile, an address, a time.

use super::change::{Image, UserImage};
use crate::domain::{Email, EmailAddress, EmailId, PersonName, Profile, Timestamp, UserId, UserStatus};

pub(super) fn t(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

pub(super) fn profile(version: u64, status: UserStatus) -> Profile {
    Profile {
        user_id: UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
        email: Some(EmailAddress::parse("ada@example.com").unwrap()),
        first_name: Some(PersonName::parse("Ada").unwrap()),
        last_name: None,
        phone: None,
        status,
        version,
        created_at: t("2026-11-25T10:00:00.000Z"),
        updated_at: t("2026-11-25T11:00:00.000Z"),
        email_count: 1,
    }
}

pub(super) fn email(verified: bool, primary: bool) -> Image {
    Image::Email {
        user_id: profile(1, UserStatus::Active).user_id,
        email: Email {
            email_id: EmailId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap(),
            email: EmailAddress::parse("ada.work@example.com").unwrap(),
            is_primary: primary,
            is_verified: verified,
            verified_at: verified.then(|| t("2026-11-25T10:30:00.000Z")),
            created_at: t("2026-11-25T10:00:00.000Z"),
        },
        primary_version: primary.then_some(4),
    }
}

/// The profile after a recovery that undid the switch that wrote version 5.
pub(super) fn recovered(profile: Profile) -> Image {
    Image::User(UserImage {
        profile,
        gone_from_cognito: false,
        last_recovery: Some((5, t("2026-11-25T12:00:00.000Z"))),
    })
}

pub(super) fn user(profile: Profile) -> Image {
    Image::User(UserImage {
        profile,
        gone_from_cognito: false,
        last_recovery: None,
    })
}

/// An organization at `version`, deleted or not.
pub(super) fn organization(version: u64, deleting: bool, name: &str) -> Image {
    Image::Organization {
        organization: crate::domain::Organization {
            rules: Default::default(),
            org_id: crate::domain::OrgId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c").unwrap(),
            name: crate::domain::OrgName::parse(name).unwrap(),
            slug: crate::domain::Slug::parse("acme").unwrap(),
            version,
            owners: 1,
            created_by: profile(1, UserStatus::Active).user_id,
            created_at: t("2026-11-25T10:00:00.000Z"),
            updated_at: t("2026-11-25T11:00:00.000Z"),
        },
        deleting,
    }
}

/// Ada's membership of that organization, in `role`.
pub(super) fn member(role: crate::domain::Role) -> Image {
    Image::Member(crate::domain::Membership {
        org_id: crate::domain::OrgId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c").unwrap(),
        user_id: profile(1, UserStatus::Active).user_id,
        role,
        joined_at: t("2026-11-25T10:00:00.000Z"),
    })
}
