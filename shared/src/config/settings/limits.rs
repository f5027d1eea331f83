//! Addresses, verification codes and the routes' limits.

use super::super::setting::{From, Need, Range, Reaches, Setting, Value};

/// Most email addresses one user may hold (48 at most, so deleting or recovering a user fits one 100-item transaction).
pub const MAX_EMAILS_PER_USER: Setting = Setting {
    variable: Some("MAX_EMAILS_PER_USER"),
    parameter: Some("MaxEmailsPerUser"),
    value: Value::Number(Range {
        default: 10,
        min: 1,
        max: Some(48),
    }),
    about: "Most email addresses one user may hold (48 at most, so deleting or recovering a user fits one 100-item transaction).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Most organizations one user may belong to. A user's memberships are read with their account (one Query, 1 MB a page) and each is removed in its own transaction when the account is erased, so the bound keeps both small.
pub const MAX_ORGANIZATIONS_PER_USER: Setting = Setting {
    variable: Some("MAX_ORGANIZATIONS_PER_USER"),
    parameter: Some("MaxOrganizationsPerUser"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: Some(1000),
    }),
    about: "Most organizations one user may belong to (created or joined).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Most accounts the SCIM directories of every organization make a second.
/// Each is one Cognito AdminCreateUser, in the UserCreation quota (50 a
/// second per account and Region by default) that sign-ups share: a first
/// sync of a whole company must leave room for them.
pub const SCIM_CREATES_PER_SECOND: Setting = Setting {
    variable: Some("SCIM_CREATES_PER_SECOND"),
    parameter: Some("ScimCreatesPerSecond"),
    value: Value::Number(Range {
        default: 25,
        min: 1,
        max: Some(1000),
    }),
    about: "Most accounts the SCIM directories of all organizations make a second (each is a Cognito AdminCreateUser, in the UserCreation quota sign-ups share); beyond it, 429 with Retry-After.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Most members one organization may have: counted in the organization's
/// counts item, inside each join's write.
pub const MAX_MEMBERS_PER_ORGANIZATION: Setting = Setting {
    variable: Some("MAX_MEMBERS_PER_ORGANIZATION"),
    parameter: Some("MaxMembersPerOrganization"),
    value: Value::Number(Range {
        default: 100_000,
        min: 1,
        max: Some(10_000_000),
    }),
    about: "Most members one organization may have (invited, enrolled, provisioned or linked); a join beyond it is 409 ORGANIZATION_FULL.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Most accounts one organization's directory makes a second: its share of
/// [`SCIM_CREATES_PER_SECOND`], so that no organization's sync keeps every
/// other directory at 429 (issue 56). Above the deployment's pace it is the
/// deployment's.
pub const SCIM_CREATES_PER_ORGANIZATION_PER_SECOND: Setting = Setting {
    variable: Some("SCIM_CREATES_PER_ORGANIZATION_PER_SECOND"),
    parameter: Some("ScimCreatesPerOrganizationPerSecond"),
    value: Value::Number(Range {
        default: 12,
        min: 1,
        max: Some(1000),
    }),
    about: "Most accounts one organization's SCIM directory makes a second: its share of SCIM_CREATES_PER_SECOND (default about half), so one organization's sync never takes the whole pace; beyond it, 429 with Retry-After.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Most accounts one organization's directory makes in a UTC day: a bound on
/// the Cognito users (billed as monthly active users) a looping directory
/// can make, and on its share of the day's quota.
pub const SCIM_CREATES_PER_ORGANIZATION_PER_DAY: Setting = Setting {
    variable: Some("SCIM_CREATES_PER_ORGANIZATION_PER_DAY"),
    parameter: Some("ScimCreatesPerOrganizationPerDay"),
    value: Value::Number(Range {
        default: 50_000,
        min: 1,
        max: Some(10_000_000),
    }),
    about: "Most accounts one organization's SCIM directory makes in a UTC day (a first sync of 50,000 fits); beyond it, 429 with Retry-After until the next day.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// How long an invitation's token works, from its last send.
pub const INVITATION_TTL_HOURS: Setting = Setting {
    variable: Some("INVITATION_TTL_HOURS"),
    parameter: Some("InvitationTtlHours"),
    value: Value::Number(Range {
        default: 168,
        min: 1,
        max: Some(720),
    }),
    about: "How long an invitation's link works, from its last send (hours).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Invitations one address may receive in a rolling 24 hours, from every organization together.
pub const MAX_INVITATIONS_PER_ADDRESS: Setting = Setting {
    variable: Some("MAX_INVITATIONS_PER_ADDRESS"),
    parameter: Some("MaxInvitationsPerAddress"),
    value: Value::Number(Range {
        default: 10,
        min: 1,
        max: Some(100),
    }),
    about: "Invitation mails one address may receive in a rolling 24 hours, from all organizations together.",
    why: &[
        "No organization, and no stranger who makes organizations, floods an inbox: one organization sends one address at most 3 a day, and an address gets at most this many from everyone.",
    ],
    reaches: Reaches::Every(From::Parameter),
};

/// Invitations one organization may send in a rolling 24 hours.
pub const MAX_INVITATIONS_PER_ORGANIZATION: Setting = Setting {
    variable: Some("MAX_INVITATIONS_PER_ORGANIZATION"),
    parameter: Some("MaxInvitationsPerOrganization"),
    value: Value::Number(Range {
        default: 500,
        min: 1,
        max: Some(100_000),
    }),
    about: "Invitation mails one organization may send in a rolling 24 hours.",
    why: &[
        "Bounds what one organization costs in SES sends and reputation; a larger company raises it, or enrolls by its verified domain.",
    ],
    reaches: Reaches::Every(From::Parameter),
};

/// How long an unverified address holds its claim, from the user's first add of it in the last 24 hours; resends never extend it.
pub const VERIFICATION_TTL_SECONDS: Setting = Setting {
    variable: Some("VERIFICATION_TTL_SECONDS"),
    parameter: Some("VerificationTtlSeconds"),
    value: Value::Number(Range {
        default: 3600,
        min: 60,
        max: Some(86_400),
    }),
    about: "How long an unverified address holds its claim, from the user's first add of it in the last 24 hours; resends never extend it.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// How long, in days, the address a switch of the primary moved away from can take the account back.
pub const ADDRESS_RECOVERY_DAYS: Setting = Setting {
    variable: Some("ADDRESS_RECOVERY_DAYS"),
    parameter: Some("AddressRecoveryDays"),
    value: Value::Number(Range {
        default: 7,
        min: 1,
        max: Some(30),
    }),
    about: "How long, in days, the address a switch of the primary moved away from can take the account back: the notice to it carries a one-time recovery link, and the address stays reserved to the account, even if removed.",
    why: &[
        "Firebase Auth's recoverEmail link, as OWASP ASVS asks: whoever takes an account over through a stolen session cannot also take the owner's way back.",
    ],
    reaches: Reaches::Every(From::Parameter),
};

/// Lifetime of one verification code, in seconds.
pub const VERIFICATION_CODE_TTL_SECONDS: Setting = Setting {
    variable: Some("VERIFICATION_CODE_TTL_SECONDS"),
    parameter: Some("VerificationCodeTtlSeconds"),
    value: Value::Number(Range {
        default: 900,
        min: 60,
        max: Some(86_400),
    }),
    about: "Lifetime of one verification code, in seconds.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Wrong codes allowed per code before a new code must be requested.
pub const VERIFICATION_MAX_ATTEMPTS: Setting = Setting {
    variable: Some("VERIFICATION_MAX_ATTEMPTS"),
    parameter: Some("VerificationMaxAttempts"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: Some(100),
    }),
    about: "Wrong codes allowed per code before a new code must be requested.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Wrong codes allowed per user and address in a rolling 24 hours.
pub const VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS: Setting = Setting {
    variable: Some("VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS"),
    parameter: Some("VerificationMaxWrongCodesPerAddress"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: Some(1000),
    }),
    about: "Wrong codes allowed per user and address in a rolling 24 hours.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Wrong codes allowed per user, for all addresses, in a rolling 24 hours.
pub const VERIFICATION_MAX_WRONG_CODES_PER_USER: Setting = Setting {
    variable: Some("VERIFICATION_MAX_WRONG_CODES_PER_USER"),
    parameter: Some("VerificationMaxWrongCodesPerUser"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: Some(1000),
    }),
    about: "Wrong codes allowed per user, for all addresses, in a rolling 24 hours.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Codes issued per address (adds and resends, by anyone) in a rolling 24 hours; never refuses a user's first two codes for the address.
pub const VERIFICATION_MAX_CODES_PER_ADDRESS: Setting = Setting {
    variable: Some("VERIFICATION_MAX_CODES_PER_ADDRESS"),
    parameter: Some("VerificationMaxCodesPerAddress"),
    value: Value::Number(Range {
        default: 10,
        min: 1,
        max: Some(1000),
    }),
    about: "Codes issued per address (adds and resends, by anyone) in a rolling 24 hours; never refuses a user's first two codes for the address.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Codes one user may have sent to one address in a rolling 24 hours.
pub const VERIFICATION_MAX_CODES_PER_USER_ADDRESS: Setting = Setting {
    variable: Some("VERIFICATION_MAX_CODES_PER_USER_ADDRESS"),
    parameter: Some("VerificationMaxCodesPerUserAddress"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: Some(1000),
    }),
    about: "Codes one user may have sent to one address in a rolling 24 hours.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Codes one user may have sent, to any addresses, in a rolling 24 hours.
pub const VERIFICATION_MAX_CODES_PER_USER: Setting = Setting {
    variable: Some("VERIFICATION_MAX_CODES_PER_USER"),
    parameter: Some("VerificationMaxCodesPerUser"),
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(10_000),
    }),
    about: "Codes one user may have sent, to any addresses, in a rolling 24 hours.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Burst limit of the /verification and /verify routes (for the whole API, not per user).
pub const VERIFICATION_ROUTE_BURST_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("VerificationRouteBurstLimit"),
    value: Value::Number(Range {
        default: 20,
        min: 0,
        max: None,
    }),
    about: "Burst limit of the /verification and /verify routes (for the whole API, not per user).",
    why: &[],
    reaches: Reaches::Stack,
};

/// Steady-state requests per second of the /verification and /verify routes, each.
pub const VERIFICATION_ROUTE_RATE_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("VerificationRouteRateLimit"),
    value: Value::Number(Range {
        default: 10,
        min: 0,
        max: None,
    }),
    about: "Steady-state requests per second of the /verification and /verify routes, each.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Burst limit of GET /emails/availability.
pub const AVAILABILITY_ROUTE_BURST_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("AvailabilityRouteBurstLimit"),
    value: Value::Number(Range {
        default: 20,
        min: 0,
        max: None,
    }),
    about: "Burst limit of GET /emails/availability.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Steady-state requests per second of GET /emails/availability.
pub const AVAILABILITY_ROUTE_RATE_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("AvailabilityRouteRateLimit"),
    value: Value::Number(Range {
        default: 10,
        min: 0,
        max: None,
    }),
    about: "Steady-state requests per second of GET /emails/availability.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Availability checks (GET /emails/availability) per user in a rolling 24 hours; past it 429 with Retry-After, so no user can enumerate which addresses have accounts.
pub const AVAILABILITY_CHECKS_PER_USER: Setting = Setting {
    variable: Some("AVAILABILITY_CHECKS_PER_USER"),
    parameter: Some("AvailabilityChecksPerUser"),
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(10_000),
    }),
    about: "Availability checks (GET /emails/availability) per user in a rolling 24 hours; past it 429 with Retry-After, so no user can enumerate which addresses have accounts.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Exports of their own account (GET /me/export) per user in a rolling 24 hours; past it 429 with Retry-After.
pub const EXPORTS_PER_USER: Setting = Setting {
    variable: Some("EXPORTS_PER_USER"),
    parameter: Some("ExportsPerUser"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: Some(1000),
    }),
    about: "Exports of their own account (GET /me/export) per user in a rolling 24 hours; past it 429 with Retry-After. Each export reads the user's whole partition.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Default burst limit of every API route.
pub const THROTTLING_BURST_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("ThrottlingBurstLimit"),
    value: Value::Number(Range {
        default: 100,
        min: 0,
        max: None,
    }),
    about: "Default burst limit of every API route.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Default steady-state requests per second of every API route.
pub const THROTTLING_RATE_LIMIT: Setting = Setting {
    variable: None,
    parameter: Some("ThrottlingRateLimit"),
    value: Value::Number(Range {
        default: 50,
        min: 0,
        max: None,
    }),
    about: "Default steady-state requests per second of every API route.",
    why: &[],
    reaches: Reaches::Stack,
};

/// A new code for the same address at most this often.
pub const VERIFICATION_RESEND_INTERVAL_SECONDS: Setting = Setting {
    variable: Some("VERIFICATION_RESEND_INTERVAL_SECONDS"),
    parameter: None,
    value: Value::Number(Range {
        default: 60,
        min: 1,
        max: Some(86_400),
    }),
    about: "A new code for the same address at most this often, in seconds.",
    why: &[],
    reaches: Reaches::Every(From::Default),
};

/// The Secrets Manager secret of the key of code and address hashes.
pub const VERIFICATION_KEY_SECRET_ID: Setting = Setting {
    variable: Some("VERIFICATION_KEY_SECRET_ID"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The Secrets Manager secret holding the key of code and address hashes; read at init only by the functions the catalog gives the key.",
    why: &[],
    reaches: Reaches::Functions(Need::VerificationKey, From::Template("!Ref VerificationKeySecret")),
};

/// A development key, when no secret is named.
pub const VERIFICATION_KEY: Setting = Setting {
    variable: Some("VERIFICATION_KEY"),
    parameter: None,
    value: Value::Text {
        default: Some(""),
        pattern: None,
        constraint: None,
    },
    about: "A development key (32+ bytes) when no secret is named; `make dev` makes one in `.local/dev-verification.key`.",
    why: &[],
    reaches: Reaches::Local,
};
