//! The events one change makes, derived from its old and new images alone.

use serde_json::{Map, Value, json};

use super::catalogue::{EventType, PROFILE_FIELDS, Personal};
use super::change::{Image, UserImage};
use crate::domain::{Email, Membership, Organization, Profile, UserId, UserStatus};

/// One domain event, before its envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its type.
    pub kind: EventType,
    /// What it is about, the CloudEvents `subject`: the user's sub, or the
    /// organization's id ([`EventType::subject`]).
    pub subject: String,
    /// Its `data`, with exactly the fields its type lists.
    pub data: Map<String, Value>,
}

/// The events one change makes, from its images alone: `old` is `None` for
/// an item written new, `new` for an item removed. A change that is no event
/// (a resend's code, a claim moved between forms) makes none.
pub fn derive(old: Option<&Image>, new: Option<&Image>, personal: Personal) -> Vec<Event> {
    match (old, new) {
        (None, Some(Image::User(new))) => vec![user_created(&new.profile)],
        (Some(Image::User(old)), Some(Image::User(new))) => user_changed(&old.profile, old.last_recovery, new),
        (None, Some(Image::Email { user_id, email, .. })) => {
            vec![email_event(EventType::EmailAdded, user_id, email, personal)]
        }
        (
            Some(Image::Email { email: old, .. }),
            Some(Image::Email {
                user_id,
                email: new,
                primary_version,
            }),
        ) => {
            let mut events = Vec::new();
            if !old.is_verified && new.is_verified {
                events.push(email_event(EventType::EmailVerified, user_id, new, personal));
            }
            if !old.is_primary && new.is_primary {
                let mut event = email_event(EventType::EmailPrimaryChanged, user_id, new, personal);
                if let Some(version) = primary_version {
                    event.data.insert("version".to_owned(), json!(version));
                }
                events.push(event);
            }
            events
        }
        (Some(Image::Email { user_id, email, .. }), None) => {
            vec![email_event(EventType::EmailRemoved, user_id, email, personal)]
        }
        (old, Some(Image::Organization { organization, deleting })) => {
            let was = match old {
                Some(Image::Organization { organization, deleting }) => Some((organization, *deleting)),
                _ => None,
            };
            organization_changed(was, organization, *deleting)
        }
        (None, Some(Image::Member(member))) => vec![membership_event(EventType::MembershipCreated, member, None)],
        (Some(Image::Member(old)), Some(Image::Member(new))) if old.role != new.role => {
            vec![membership_event(EventType::MembershipRoleChanged, new, Some(old))]
        }
        (Some(Image::Member(member)), None) => vec![membership_event(EventType::MembershipRemoved, member, None)],
        // A profile removed outright (never by the service: an erased profile
        // stays as its tombstone), or images of two kinds: no event.
        _ => Vec::new(),
    }
}

fn user_created(profile: &Profile) -> Event {
    event(
        EventType::UserCreated,
        &profile.user_id,
        [
            ("version", json!(profile.version)),
            ("status", json!(profile.status.as_str())),
            ("createdAt", json!(profile.created_at.to_string())),
        ],
    )
}

fn user_changed(old: &Profile, old_recovery: Option<(u64, crate::domain::Timestamp)>, image: &UserImage) -> Vec<Event> {
    let new = &image.profile;
    let status_event = match (old.status, new.status) {
        (from, UserStatus::Deleted) if from != UserStatus::Deleted => Some(EventType::UserDeleted),
        (UserStatus::Active, UserStatus::Suspended) => Some(EventType::UserSuspended),
        (UserStatus::Suspended, UserStatus::Active) => Some(EventType::UserReactivated),
        _ => None,
    };
    let mut events = Vec::new();
    if let Some((undone, at)) = image.last_recovery.filter(|_| new.status == UserStatus::Active)
        && old_recovery != image.last_recovery
    {
        events.push(event(
            EventType::UserRecovered,
            &new.user_id,
            [
                ("version", json!(new.version)),
                ("undoneVersion", json!(undone)),
                ("recoveredAt", json!(at.to_string())),
            ],
        ));
    }
    match status_event {
        // The erasure empties the names: that is the deletion, not an update.
        Some(EventType::UserDeleted) => {
            return vec![event(
                EventType::UserDeleted,
                &new.user_id,
                [
                    ("version", json!(new.version)),
                    ("goneFromCognito", json!(image.gone_from_cognito)),
                    ("deletedAt", json!(new.updated_at.to_string())),
                ],
            )];
        }
        Some(kind) => events.push(event(
            kind,
            &new.user_id,
            [
                ("version", json!(new.version)),
                ("updatedAt", json!(new.updated_at.to_string())),
            ],
        )),
        None => {}
    }
    let changed: Vec<&str> = [
        old.first_name != new.first_name,
        old.last_name != new.last_name,
        old.phone != new.phone,
    ]
    .into_iter()
    .zip(PROFILE_FIELDS)
    .filter_map(|(changed, name)| changed.then_some(name))
    .collect();
    if !changed.is_empty() && new.status != UserStatus::Deleted {
        events.push(event(
            EventType::UserUpdated,
            &new.user_id,
            [
                ("version", json!(new.version)),
                ("changed", json!(changed)),
                ("updatedAt", json!(new.updated_at.to_string())),
            ],
        ));
    }
    events
}

/// An organization written or changed: created, renamed or deleted. Its
/// owners' count moves with membership events, which say it; the
/// organization's own item going (the purge's end) is no event.
fn organization_changed(old: Option<(&Organization, bool)>, new: &Organization, deleting: bool) -> Vec<Event> {
    let org = |kind, fields: Vec<(&str, Value)>| Event {
        kind,
        subject: new.org_id.to_string(),
        data: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
    };
    let version = ("version", json!(new.version));
    match old {
        None if !deleting => vec![org(
            EventType::OrganizationCreated,
            vec![
                version,
                ("createdBy", json!(new.created_by.as_str())),
                ("createdAt", json!(new.created_at.to_string())),
            ],
        )],
        Some((_, false)) if deleting => vec![org(
            EventType::OrganizationDeleted,
            vec![version, ("deletedAt", json!(new.updated_at.to_string()))],
        )],
        // Its name or its address rules: what members and neighbours see of it.
        Some((before, false)) if !deleting && (before.name != new.name || before.rules != new.rules) => vec![org(
            EventType::OrganizationUpdated,
            vec![version, ("updatedAt", json!(new.updated_at.to_string()))],
        )],
        _ => Vec::new(),
    }
}

/// A membership's event, from the organization's half of it.
fn membership_event(kind: EventType, member: &Membership, before: Option<&Membership>) -> Event {
    let mut data = Map::new();
    data.insert("userId".to_owned(), json!(member.user_id.as_str()));
    data.insert("role".to_owned(), json!(member.role.as_str()));
    match kind {
        EventType::MembershipCreated => {
            data.insert("joinedAt".to_owned(), json!(member.joined_at.to_string()));
        }
        EventType::MembershipRoleChanged => {
            if let Some(before) = before {
                data.insert("previousRole".to_owned(), json!(before.role.as_str()));
            }
        }
        _ => {}
    }
    Event {
        kind,
        subject: member.org_id.to_string(),
        data,
    }
}

fn email_event(kind: EventType, user: &UserId, email: &Email, personal: Personal) -> Event {
    let mut data = Map::new();
    data.insert("emailId".to_owned(), json!(email.email_id.to_string()));
    match kind {
        EventType::EmailAdded => {
            data.insert("isPrimary".to_owned(), json!(email.is_primary));
            data.insert("isVerified".to_owned(), json!(email.is_verified));
            data.insert("createdAt".to_owned(), json!(email.created_at.to_string()));
        }
        EventType::EmailVerified => {
            let at = email.verified_at.unwrap_or(email.created_at);
            data.insert("verifiedAt".to_owned(), json!(at.to_string()));
        }
        _ => {}
    }
    if personal == Personal::Addresses {
        data.insert("address".to_owned(), json!(email.email.as_str()));
    }
    Event {
        kind,
        subject: user.to_string(),
        data,
    }
}

fn event<const N: usize>(kind: EventType, user: &UserId, fields: [(&str, Value); N]) -> Event {
    Event {
        kind,
        subject: user.to_string(),
        data: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::fixtures::{email, profile, user};

    fn kinds(events: &[Event]) -> Vec<&'static str> {
        events.iter().map(|e| e.kind.name()).collect()
    }

    #[test]
    fn each_change_of_an_organization_makes_its_events_about_the_organization() {
        use crate::domain::Role;
        use crate::events::fixtures::{member, organization};
        let created = derive(None, Some(&organization(1, false, "Acme")), Personal::None);
        assert_eq!(kinds(&created), ["organization.created"]);
        assert_eq!(created[0].subject, "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c");
        assert_eq!(created[0].data["createdBy"], "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert!(
            !format!("{:?}", created[0].data).contains("Acme"),
            "no name: ids and times only"
        );
        let renamed = derive(
            Some(&organization(1, false, "Acme")),
            Some(&organization(2, false, "Acme EU")),
            Personal::None,
        );
        assert_eq!(kinds(&renamed), ["organization.updated"]);
        // An owner made or unmade moves the count: the membership's event says so.
        let counted = derive(
            Some(&organization(1, false, "Acme")),
            Some(&organization(1, false, "Acme")),
            Personal::None,
        );
        assert!(counted.is_empty());
        let deleted = derive(
            Some(&organization(2, false, "Acme")),
            Some(&organization(3, true, "Acme")),
            Personal::None,
        );
        assert_eq!(kinds(&deleted), ["organization.deleted"]);
        // The purge's end, and its rounds: no event.
        assert!(derive(Some(&organization(3, true, "Acme")), None, Personal::None).is_empty());

        let joined = derive(None, Some(&member(Role::Member)), Personal::None);
        assert_eq!(kinds(&joined), ["membership.created"]);
        assert_eq!(joined[0].data["role"], "member");
        let promoted = derive(Some(&member(Role::Member)), Some(&member(Role::Owner)), Personal::None);
        assert_eq!(kinds(&promoted), ["membership.role_changed"]);
        assert_eq!(
            (
                promoted[0].data["role"].clone(),
                promoted[0].data["previousRole"].clone()
            ),
            (json!("owner"), json!("member"))
        );
        assert!(derive(Some(&member(Role::Admin)), Some(&member(Role::Admin)), Personal::None).is_empty());
        let left = derive(Some(&member(Role::Admin)), None, Personal::None);
        assert_eq!(kinds(&left), ["membership.removed"]);
        assert_eq!(left[0].data["userId"], "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
    }

    #[test]
    fn each_change_of_a_profile_makes_its_events() {
        let active = profile(1, UserStatus::Active);
        let created = derive(None, Some(&user(active.clone())), Personal::None);
        assert_eq!(kinds(&created), ["user.created"]);
        assert_eq!(created[0].data["version"], 1);
        assert_eq!(created[0].data["status"], "active");

        let mut renamed = profile(2, UserStatus::Active);
        renamed.first_name = None;
        renamed.phone = Some(crate::domain::Phone::parse("+15555550100").unwrap());
        let updated = derive(Some(&user(active.clone())), Some(&user(renamed)), Personal::None);
        assert_eq!(kinds(&updated), ["user.updated"]);
        assert_eq!(updated[0].data["changed"], json!(["firstName", "phone"]));
        assert_eq!(updated[0].data["version"], 2);

        let suspended = profile(2, UserStatus::Suspended);
        let events = derive(
            Some(&user(active.clone())),
            Some(&user(suspended.clone())),
            Personal::None,
        );
        assert_eq!(kinds(&events), ["user.suspended"]);
        let events = derive(
            Some(&user(suspended)),
            Some(&user(profile(3, UserStatus::Active))),
            Personal::None,
        );
        assert_eq!(kinds(&events), ["user.reactivated"]);

        // The erasure empties names: one user.deleted, no update.
        let mut erased = profile(3, UserStatus::Deleted);
        erased.first_name = None;
        erased.email = None;
        let events = derive(Some(&user(active.clone())), Some(&user(erased.clone())), Personal::None);
        assert_eq!(kinds(&events), ["user.deleted"]);
        assert_eq!(events[0].data["version"], 3);
        assert_eq!(events[0].data["goneFromCognito"], false);
        let gone = Image::User(UserImage {
            profile: erased.clone(),
            gone_from_cognito: true,
            last_recovery: None,
        });
        let events = derive(Some(&user(profile(1, UserStatus::Active))), Some(&gone), Personal::None);
        assert_eq!(events[0].data["goneFromCognito"], true);
        // A change that is no event: the same profile, or a deleted one touched again.
        assert!(derive(Some(&user(active.clone())), Some(&user(active)), Personal::None).is_empty());
        assert!(derive(Some(&user(erased.clone())), Some(&user(erased)), Personal::None).is_empty());
    }

    #[test]
    fn each_change_of_an_address_makes_its_events_and_no_address_by_default() {
        let added = derive(None, Some(&email(false, false)), Personal::None);
        assert_eq!(kinds(&added), ["email.added"]);
        assert_eq!(added[0].data["isVerified"], false);
        assert!(!format!("{:?}", added[0].data).contains('@'));
        let verified = derive(Some(&email(false, false)), Some(&email(true, false)), Personal::None);
        assert_eq!(kinds(&verified), ["email.verified"]);
        assert_eq!(verified[0].data["verifiedAt"], "2026-11-25T10:30:00.000Z");
        let primary = derive(Some(&email(true, false)), Some(&email(true, true)), Personal::None);
        assert_eq!(kinds(&primary), ["email.primary_changed"]);
        assert_eq!(
            primary[0].data["version"], 4,
            "switches are ordered by the profile's version"
        );
        let removed = derive(Some(&email(true, false)), None, Personal::None);
        assert_eq!(kinds(&removed), ["email.removed"]);
        // A resend, a moved claim: no event.
        assert!(derive(Some(&email(false, false)), Some(&email(false, false)), Personal::None).is_empty());
        // Addresses only when the deployment asks.
        let with = derive(None, Some(&email(true, true)), Personal::Addresses);
        assert_eq!(with[0].data["address"], "ada.work@example.com");
    }

    #[test]
    fn a_recovery_is_one_user_recovered_naming_the_switch_it_undid() {
        let before = user(profile(6, UserStatus::Active));
        let after = super::super::fixtures::recovered(profile(7, UserStatus::Active));
        let events = derive(Some(&before), Some(&after), Personal::None);
        assert_eq!(kinds(&events), ["user.recovered"]);
        assert_eq!(events[0].data["undoneVersion"], 5);
        assert_eq!(events[0].data["version"], 7);
        // The same recovery seen again (Cognito's address recorded after): nothing.
        assert!(derive(Some(&after), Some(&after), Personal::None).is_empty());
    }
}
