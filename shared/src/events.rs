//! Domain events: the catalogue, the one source the code, the JSON Schemas
//! (`schemas/events/`) and docs/events.md follow; each event's derivation from
//! a change's old and new images, pure; and the CloudEvents 1.0 envelope.
//!
//! Events name users by `sub` and addresses by email id. They carry no
//! address, name or phone unless the deployment asks for addresses
//! ([`Personal::Addresses`]): an archived event cannot be erased later.

use serde_json::{Map, Value, json};

use crate::domain::{Email, Profile, Timestamp, UserId, UserStatus};

/// Every type of event, in the order the docs list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// A confirmed sign-up got its profile.
    UserCreated,
    /// The user changed their names or phone.
    UserUpdated,
    /// An admin suspended the user.
    UserSuspended,
    /// An admin reactivated the user.
    UserReactivated,
    /// The user was deleted and their personal data erased.
    UserDeleted,
    /// An address was added (at sign-up, verified and primary).
    EmailAdded,
    /// An address was verified with its code.
    EmailVerified,
    /// An address became the primary one.
    EmailPrimaryChanged,
    /// An address was removed (by its user, a take-over of an unverified claim, or an erasure).
    EmailRemoved,
}

/// A JSON type of a field of an event's `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// An RFC 3339 UTC time with milliseconds.
    Time,
    /// A UUID.
    Uuid,
    /// A user status: `active`, `suspended` or `deleted`.
    Status,
    /// The names of profile fields that changed.
    FieldNames,
    /// An email address (only with [`Personal::Addresses`]).
    Address,
}

/// One field of an event's `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Its name in `data`.
    pub name: &'static str,
    /// Its JSON type.
    pub kind: FieldType,
    /// Whether every event of the type has it.
    pub required: bool,
    /// What it is (Markdown, one line).
    pub about: &'static str,
}

const fn field(name: &'static str, kind: FieldType, about: &'static str) -> Field {
    Field {
        name,
        kind,
        required: true,
        about,
    }
}

const VERSION: Field = field(
    "version",
    FieldType::Integer,
    "the profile's version after the change: drop an event older than one you hold",
);
const EMAIL_ID: Field = field("emailId", FieldType::Uuid, "the address's record");
const ADDRESS: Field = Field {
    name: "address",
    kind: FieldType::Address,
    required: false,
    about: "the address, only where the stack sets `EventsIncludeAddresses=true`",
};

/// The profile fields a `user.updated` names (never their values).
pub const PROFILE_FIELDS: [&str; 3] = ["firstName", "lastName", "phone"];

impl EventType {
    /// Every type, in catalogue order.
    pub const ALL: [EventType; 9] = [
        EventType::UserCreated,
        EventType::UserUpdated,
        EventType::UserSuspended,
        EventType::UserReactivated,
        EventType::UserDeleted,
        EventType::EmailAdded,
        EventType::EmailVerified,
        EventType::EmailPrimaryChanged,
        EventType::EmailRemoved,
    ];

    /// The CloudEvents `type`, and the EventBridge `detail-type`.
    pub const fn name(self) -> &'static str {
        match self {
            EventType::UserCreated => "user.created",
            EventType::UserUpdated => "user.updated",
            EventType::UserSuspended => "user.suspended",
            EventType::UserReactivated => "user.reactivated",
            EventType::UserDeleted => "user.deleted",
            EventType::EmailAdded => "email.added",
            EventType::EmailVerified => "email.verified",
            EventType::EmailPrimaryChanged => "email.primary_changed",
            EventType::EmailRemoved => "email.removed",
        }
    }

    /// When it is published (Markdown, one line).
    pub const fn about(self) -> &'static str {
        match self {
            EventType::UserCreated => "a confirmed sign-up (or the repair at sign-in) created the profile",
            EventType::UserUpdated => "the user changed their names or phone (`changed` names which, never the values)",
            EventType::UserSuspended => "an admin suspended the user",
            EventType::UserReactivated => "an admin reactivated a suspended user",
            EventType::UserDeleted => {
                "the user was deleted (by themselves, an admin, or because Cognito no longer has them) and their personal data erased: erase yours"
            }
            EventType::EmailAdded => "an address was added: unverified, or verified and primary at sign-up",
            EventType::EmailVerified => "an address was verified with its code",
            EventType::EmailPrimaryChanged => "an address became the primary one (Cognito's address follows it)",
            EventType::EmailRemoved => {
                "an address was removed: by its user, by a take-over of its lapsed unverified claim, or by an erasure"
            }
        }
    }

    /// The fields of its `data`.
    pub const fn fields(self) -> &'static [Field] {
        match self {
            EventType::UserCreated => USER_CREATED,
            EventType::UserUpdated => USER_UPDATED,
            EventType::UserSuspended | EventType::UserReactivated => USER_STATUS,
            EventType::UserDeleted => USER_DELETED,
            EventType::EmailAdded => EMAIL_ADDED,
            EventType::EmailVerified => EMAIL_VERIFIED,
            EventType::EmailPrimaryChanged => EMAIL_PRIMARY_CHANGED,
            EventType::EmailRemoved => EMAIL_NAMED,
        }
    }
}

const USER_CREATED: &[Field] = &[
    VERSION,
    field("status", FieldType::Status, "the new user's status"),
    field("createdAt", FieldType::Time, "when the profile was created"),
];
const USER_UPDATED: &[Field] = &[
    VERSION,
    field(
        "changed",
        FieldType::FieldNames,
        "which of `firstName`, `lastName`, `phone` changed",
    ),
    field("updatedAt", FieldType::Time, "when"),
];
const USER_STATUS: &[Field] = &[VERSION, field("updatedAt", FieldType::Time, "when")];
const USER_DELETED: &[Field] = &[
    VERSION,
    field(
        "goneFromCognito",
        FieldType::Boolean,
        "erased because the user deleted themselves in Cognito",
    ),
    field("deletedAt", FieldType::Time, "when"),
];
const EMAIL_ADDED: &[Field] = &[
    EMAIL_ID,
    field("isPrimary", FieldType::Boolean, "whether it is the primary address"),
    field("isVerified", FieldType::Boolean, "whether it is verified"),
    field("createdAt", FieldType::Time, "when it was added"),
    ADDRESS,
];
const EMAIL_VERIFIED: &[Field] = &[
    EMAIL_ID,
    field("verifiedAt", FieldType::Time, "when it was verified"),
    ADDRESS,
];
const EMAIL_NAMED: &[Field] = &[EMAIL_ID, ADDRESS];
const EMAIL_PRIMARY_CHANGED: &[Field] = &[
    EMAIL_ID,
    Field {
        name: "version",
        kind: FieldType::Integer,
        required: false,
        about: "the profile's version the switch wrote: the primary is the address of the highest \
                (absent only for a switch made before the publisher was deployed)",
    },
    ADDRESS,
];

/// What personal data events carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Personal {
    /// Ids, statuses, flags and times only: the default.
    #[default]
    None,
    /// `email.*` events also carry the address (`EventsIncludeAddresses=true`).
    Addresses,
}

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

/// One domain event, before its envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its type.
    pub kind: EventType,
    /// The user it is about: the CloudEvents `subject`.
    pub subject: UserId,
    /// Its `data`, with exactly the fields its type lists.
    pub data: Map<String, Value>,
}

/// The events one change makes, from its images alone: `old` is `None` for
/// an item written new, `new` for an item removed. A change that is no event
/// (a resend's code, a claim moved between forms) makes none.
pub fn derive(old: Option<&Image>, new: Option<&Image>, personal: Personal) -> Vec<Event> {
    match (old, new) {
        (None, Some(Image::User(new))) => vec![user_created(&new.profile)],
        (Some(Image::User(old)), Some(Image::User(new))) => user_changed(&old.profile, new),
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

fn user_changed(old: &Profile, image: &UserImage) -> Vec<Event> {
    let new = &image.profile;
    let status_event = match (old.status, new.status) {
        (from, UserStatus::Deleted) if from != UserStatus::Deleted => Some(EventType::UserDeleted),
        (UserStatus::Active, UserStatus::Suspended) => Some(EventType::UserSuspended),
        (UserStatus::Suspended, UserStatus::Active) => Some(EventType::UserReactivated),
        _ => None,
    };
    let mut events = Vec::new();
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
        subject: user.clone(),
        data,
    }
}

fn event<const N: usize>(kind: EventType, user: &UserId, fields: [(&str, Value); N]) -> Event {
    Event {
        kind,
        subject: user.clone(),
        data: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
    }
}

/// The namespace of event ids (UUIDv5): any fixed UUID, this service's own.
const ID_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6f1e_2c0a_5b7d_4e3f_9a1b_2c3d_4e5f_6a7b);

/// The event's id: derived from the stream record's id and the event's type,
/// so a replayed record gives the same ids, and a consumer drops duplicates.
pub fn event_id(record_id: &str, kind: EventType) -> String {
    uuid::Uuid::new_v5(&ID_NAMESPACE, format!("{record_id}/{}", kind.name()).as_bytes()).to_string()
}

/// The CloudEvents 1.0 envelope of `event` (structured mode, JSON), as the
/// EventBridge `detail`: `source` is the stack's, `time` the change's.
pub fn envelope(event: &Event, source: &str, record_id: &str, time: Timestamp) -> Value {
    json!({
        "specversion": "1.0",
        "id": event_id(record_id, event.kind),
        "source": source,
        "type": event.kind.name(),
        "subject": event.subject.as_str(),
        "time": time.to_string(),
        "datacontenttype": "application/json",
        "data": event.data,
    })
}

/// The JSON Schema (2020-12) of an event of `kind`, envelope and `data`.
pub fn schema(kind: EventType) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in kind.fields() {
        let mut spec = match field.kind {
            FieldType::Integer => json!({ "type": "integer", "minimum": 1 }),
            FieldType::Boolean => json!({ "type": "boolean" }),
            FieldType::Time => json!({ "type": "string", "format": "date-time" }),
            FieldType::Uuid => json!({ "type": "string", "format": "uuid" }),
            FieldType::Status => json!({ "enum": ["active", "suspended", "deleted"] }),
            FieldType::FieldNames => json!({
                "type": "array",
                "items": { "enum": PROFILE_FIELDS },
                "minItems": 1,
                "uniqueItems": true
            }),
            FieldType::Address => json!({ "type": "string", "format": "email" }),
        };
        spec["description"] = json!(field.about.replace('`', ""));
        properties.insert(field.name.to_owned(), spec);
        if field.required {
            required.push(field.name);
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://user-service.example/schemas/events/{}.json", kind.name()),
        "title": kind.name(),
        "description": kind.about().replace('`', ""),
        "type": "object",
        "additionalProperties": false,
        "required": ["specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"],
        "properties": {
            "specversion": { "const": "1.0" },
            "id": { "type": "string", "format": "uuid" },
            "source": { "type": "string", "minLength": 1 },
            "type": { "const": kind.name() },
            "subject": {
                "type": "string",
                "description": "the user's Cognito sub",
                "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
            },
            "time": { "type": "string", "format": "date-time" },
            "datacontenttype": { "const": "application/json" },
            "data": {
                "type": "object",
                "additionalProperties": false,
                "required": required,
                "properties": properties
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailAddress, EmailId, PersonName};

    fn t(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    fn profile(version: u64, status: UserStatus) -> Profile {
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

    fn email(verified: bool, primary: bool) -> Image {
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

    fn kinds(events: &[Event]) -> Vec<&'static str> {
        events.iter().map(|e| e.kind.name()).collect()
    }

    fn user(profile: Profile) -> Image {
        Image::User(UserImage {
            profile,
            gone_from_cognito: false,
        })
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
    fn ids_follow_the_record_and_the_type_and_nothing_else() {
        let a = event_id("rec-1", EventType::EmailVerified);
        assert_eq!(
            a,
            event_id("rec-1", EventType::EmailVerified),
            "a replay gives the same id"
        );
        assert_ne!(a, event_id("rec-2", EventType::EmailVerified));
        assert_ne!(a, event_id("rec-1", EventType::EmailPrimaryChanged));
        assert!(uuid::Uuid::parse_str(&a).is_ok());
    }

    #[test]
    fn every_event_fits_its_schema_and_the_schema_lists_exactly_its_fields() {
        let active = profile(1, UserStatus::Active);
        let mut renamed = profile(2, UserStatus::Active);
        renamed.last_name = Some(PersonName::parse("Lovelace").unwrap());
        let mut erased = profile(3, UserStatus::Deleted);
        erased.first_name = None;
        let changes = [
            (None, Some(user(active.clone()))),
            (Some(user(active.clone())), Some(user(renamed))),
            (
                Some(user(active.clone())),
                Some(user(profile(2, UserStatus::Suspended))),
            ),
            (
                Some(user(profile(2, UserStatus::Suspended))),
                Some(user(active.clone())),
            ),
            (Some(user(active)), Some(user(erased))),
            (None, Some(email(false, false))),
            (Some(email(false, false)), Some(email(true, false))),
            (Some(email(true, false)), Some(email(true, true))),
            (Some(email(true, true)), None),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for personal in [Personal::None, Personal::Addresses] {
            for (old, new) in &changes {
                for event in derive(old.as_ref(), new.as_ref(), personal) {
                    seen.insert(event.kind);
                    let envelope = envelope(&event, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
                    let schema = schema(event.kind);
                    let validator = jsonschema::options()
                        .should_validate_formats(true)
                        .build(&schema)
                        .unwrap();
                    let errors: Vec<String> = validator.iter_errors(&envelope).map(|e| e.to_string()).collect();
                    assert!(errors.is_empty(), "{}: {errors:?}", event.kind.name());
                }
            }
        }
        assert_eq!(seen.len(), EventType::ALL.len(), "every type is made by some change");
        // The schemas refuse what the catalogue does not list: a name in an update, a bad id.
        let mut update = derive(
            Some(&user(profile(1, UserStatus::Active))),
            Some(&user(profile(2, UserStatus::Suspended))),
            Personal::None,
        )
        .remove(0);
        update.data.insert("firstName".to_owned(), json!("Ada"));
        let sent = envelope(&update, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
        assert!(!jsonschema::is_valid(&schema(update.kind), &sent));
        let mut bad_id = envelope(&update, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
        bad_id["subject"] = json!("admin");
        assert!(!jsonschema::is_valid(&schema(update.kind), &bad_id));
    }
}
