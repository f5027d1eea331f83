//! The catalogue of event types: each one's name, when it is published and
//! the fields of its `data`; and what personal data events may carry.

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
    /// A former primary address took the account back.
    UserRecovered,
    /// An address was added (at sign-up, verified and primary).
    EmailAdded,
    /// An address was verified with its code.
    EmailVerified,
    /// An address became the primary one.
    EmailPrimaryChanged,
    /// An address was removed (by its user, a take-over of an unverified claim, or an erasure).
    EmailRemoved,
    /// A user created an organization.
    OrganizationCreated,
    /// An owner or admin renamed the organization.
    OrganizationUpdated,
    /// An owner deleted the organization.
    OrganizationDeleted,
    /// A user joined an organization (its creator included).
    MembershipCreated,
    /// A member's role changed.
    MembershipRoleChanged,
    /// A member left, was removed, or went with their account or the organization.
    MembershipRemoved,
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
    /// A member's role: `owner`, `admin` or `member`.
    Role,
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
    pub const ALL: [EventType; 16] = [
        EventType::UserCreated,
        EventType::UserUpdated,
        EventType::UserSuspended,
        EventType::UserReactivated,
        EventType::UserDeleted,
        EventType::UserRecovered,
        EventType::EmailAdded,
        EventType::EmailVerified,
        EventType::EmailPrimaryChanged,
        EventType::EmailRemoved,
        EventType::OrganizationCreated,
        EventType::OrganizationUpdated,
        EventType::OrganizationDeleted,
        EventType::MembershipCreated,
        EventType::MembershipRoleChanged,
        EventType::MembershipRemoved,
    ];

    /// The CloudEvents `type`, and the EventBridge `detail-type`.
    pub const fn name(self) -> &'static str {
        match self {
            EventType::UserCreated => "user.created",
            EventType::UserUpdated => "user.updated",
            EventType::UserSuspended => "user.suspended",
            EventType::UserReactivated => "user.reactivated",
            EventType::UserDeleted => "user.deleted",
            EventType::UserRecovered => "user.recovered",
            EventType::EmailAdded => "email.added",
            EventType::EmailVerified => "email.verified",
            EventType::EmailPrimaryChanged => "email.primary_changed",
            EventType::EmailRemoved => "email.removed",
            EventType::OrganizationCreated => "organization.created",
            EventType::OrganizationUpdated => "organization.updated",
            EventType::OrganizationDeleted => "organization.deleted",
            EventType::MembershipCreated => "membership.created",
            EventType::MembershipRoleChanged => "membership.role_changed",
            EventType::MembershipRemoved => "membership.removed",
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
            EventType::UserRecovered => {
                "a former primary address followed its notice's link: the switch away from it, and every later one, undone; every session ended"
            }
            EventType::EmailAdded => "an address was added: unverified, or verified and primary at sign-up",
            EventType::EmailVerified => "an address was verified with its code",
            EventType::EmailPrimaryChanged => "an address became the primary one (Cognito's address follows it)",
            EventType::EmailRemoved => {
                "an address was removed: by its user, by a take-over of its lapsed unverified claim, or by an erasure"
            }
            EventType::OrganizationCreated => {
                "a user created an organization (its `membership.created`, as owner, comes with it)"
            }
            EventType::OrganizationUpdated => {
                "an owner or admin renamed the organization, or changed its address rules"
            }
            EventType::OrganizationDeleted => {
                "an owner deleted the organization: gone to readers at once; each member's `membership.removed` follows as the purge removes them"
            }
            EventType::MembershipCreated => "a user joined an organization, or created it",
            EventType::MembershipRoleChanged => "a member's role changed",
            EventType::MembershipRemoved => {
                "a member left or was removed, their account was erased, or the organization was deleted"
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
            EventType::UserRecovered => USER_RECOVERED,
            EventType::EmailAdded => EMAIL_ADDED,
            EventType::EmailVerified => EMAIL_VERIFIED,
            EventType::EmailPrimaryChanged => EMAIL_PRIMARY_CHANGED,
            EventType::EmailRemoved => EMAIL_NAMED,
            EventType::OrganizationCreated => ORGANIZATION_CREATED,
            EventType::OrganizationUpdated => ORGANIZATION_UPDATED,
            EventType::OrganizationDeleted => ORGANIZATION_DELETED,
            EventType::MembershipCreated => MEMBERSHIP_CREATED,
            EventType::MembershipRoleChanged => MEMBERSHIP_ROLE_CHANGED,
            EventType::MembershipRemoved => MEMBERSHIP_REMOVED,
        }
    }

    /// What the CloudEvents `subject` names: the user, or the organization.
    pub const fn subject(self) -> &'static str {
        match self {
            EventType::OrganizationCreated
            | EventType::OrganizationUpdated
            | EventType::OrganizationDeleted
            | EventType::MembershipCreated
            | EventType::MembershipRoleChanged
            | EventType::MembershipRemoved => "the organization's id",
            _ => "the user's Cognito sub",
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
const USER_RECOVERED: &[Field] = &[
    VERSION,
    field(
        "undoneVersion",
        FieldType::Integer,
        "the version of the switch of the primary it undid (later switches were undone with it)",
    ),
    field("recoveredAt", FieldType::Time, "when"),
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

const ORG_VERSION: Field = field(
    "version",
    FieldType::Integer,
    "the organization's version after the change: drop an event older than one you hold",
);
const MEMBER: Field = field("userId", FieldType::Uuid, "the member's Cognito sub");
const ORGANIZATION_CREATED: &[Field] = &[
    ORG_VERSION,
    field(
        "createdBy",
        FieldType::Uuid,
        "the creator's Cognito sub (its first owner)",
    ),
    field("createdAt", FieldType::Time, "when"),
];
const ORGANIZATION_UPDATED: &[Field] = &[ORG_VERSION, field("updatedAt", FieldType::Time, "when")];
const ORGANIZATION_DELETED: &[Field] = &[ORG_VERSION, field("deletedAt", FieldType::Time, "when")];
const MEMBERSHIP_CREATED: &[Field] = &[
    MEMBER,
    field("role", FieldType::Role, "their role"),
    field("joinedAt", FieldType::Time, "when they joined"),
];
const MEMBERSHIP_ROLE_CHANGED: &[Field] = &[
    MEMBER,
    field("role", FieldType::Role, "their role now"),
    field("previousRole", FieldType::Role, "their role before"),
];
const MEMBERSHIP_REMOVED: &[Field] = &[MEMBER, field("role", FieldType::Role, "the role they had")];

/// What personal data events carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Personal {
    /// Ids, statuses, flags and times only: the default.
    #[default]
    None,
    /// `email.*` events also carry the address (`EventsIncludeAddresses=true`).
    Addresses,
}
