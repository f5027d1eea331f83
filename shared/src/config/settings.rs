//! Every setting of the service and of its stack, each declared once (see
//! [`super::setting`]), in files by concern; here, the list [`SETTINGS`], in
//! the order the docs and the template's `Parameters` show them.

mod addresses;
mod capacity;
mod events;
mod limits;
mod reconcile;
mod runtime;
mod stack;

pub use addresses::*;
pub use capacity::*;
pub use events::*;
pub use limits::*;
pub use reconcile::*;
pub use runtime::*;
pub use stack::*;

use super::setting::Setting;

/// Every setting, in the order the docs and the template list them.
pub const SETTINGS: &[Setting] = &[
    TABLE_NAME,
    AWS_ENDPOINT_URL_DYNAMODB,
    SENDER_ADDRESS,
    SES_CONFIGURATION_SET,
    SENDER_DOMAIN,
    VERIFICATION_SENDER,
    ALLOW_LOG_SENDER,
    COGNITO_EMAIL_SENDING,
    USER_POOL_FEATURE_PLAN,
    THREAT_PROTECTION,
    ACCESS_TOKEN_VALIDITY_MINUTES,
    ID_TOKEN_VALIDITY_MINUTES,
    REFRESH_TOKEN_VALIDITY_DAYS,
    AUTH_SESSION_VALIDITY_MINUTES,
    ARCHITECTURE,
    FUNCTION_MEMORY_SIZE,
    LOG_LEVEL,
    LOG_RETENTION_DAYS,
    CORS_ALLOWED_ORIGINS,
    DELETION_PROTECTION,
    ENABLE_ALARMS,
    ALARM_EMAIL,
    API5XX_ALARM_THRESHOLD_PERCENT,
    API5XX_ALARM_MIN_REQUESTS,
    CREATE_TRAIL,
    RECONCILE_INTERVAL_HOURS,
    RECONCILE_QUOTA_SHARE_PERCENT,
    COGNITO_USER_READ_RPS,
    COGNITO_USER_LIST_RPS,
    COGNITO_USER_UPDATE_RPS,
    RECONCILE_SCAN_SEGMENTS,
    RECONCILE_PARTITIONS_AT_ONCE,
    RECONCILE_ALARM_DAYS,
    MIGRATION_RESET_ALARM_THRESHOLD,
    TABLE_BILLING_MODE,
    TABLE_READ_CAPACITY_MIN,
    TABLE_READ_CAPACITY_MAX,
    TABLE_WRITE_CAPACITY_MIN,
    TABLE_WRITE_CAPACITY_MAX,
    GSI1_READ_CAPACITY_MIN,
    GSI1_READ_CAPACITY_MAX,
    GSI1_WRITE_CAPACITY_MIN,
    GSI1_WRITE_CAPACITY_MAX,
    GSI2_READ_CAPACITY_MIN,
    GSI2_READ_CAPACITY_MAX,
    GSI2_WRITE_CAPACITY_MIN,
    GSI2_WRITE_CAPACITY_MAX,
    TABLE_TARGET_UTILIZATION,
    GSI1_TARGET_UTILIZATION,
    GSI2_TARGET_UTILIZATION,
    MAX_EMAILS_PER_USER,
    MAX_ORGANIZATIONS_PER_USER,
    SCIM_CREATES_PER_SECOND,
    SCIM_CREATES_PER_ORGANIZATION_PER_SECOND,
    MAX_MEMBERS_PER_ORGANIZATION,
    SCIM_CREATES_PER_ORGANIZATION_PER_DAY,
    INVITATION_TTL_HOURS,
    MAX_INVITATIONS_PER_ADDRESS,
    MAX_INVITATIONS_PER_ORGANIZATION,
    VERIFICATION_TTL_SECONDS,
    ADDRESS_RECOVERY_DAYS,
    VERIFICATION_CODE_TTL_SECONDS,
    VERIFICATION_MAX_ATTEMPTS,
    VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS,
    VERIFICATION_MAX_WRONG_CODES_PER_USER,
    VERIFICATION_MAX_CODES_PER_ADDRESS,
    VERIFICATION_MAX_CODES_PER_USER_ADDRESS,
    VERIFICATION_MAX_CODES_PER_USER,
    VERIFICATION_RESEND_INTERVAL_SECONDS,
    VERIFICATION_KEY_SECRET_ID,
    VERIFICATION_KEY,
    VERIFICATION_ROUTE_BURST_LIMIT,
    VERIFICATION_ROUTE_RATE_LIMIT,
    AVAILABILITY_ROUTE_BURST_LIMIT,
    AVAILABILITY_ROUTE_RATE_LIMIT,
    EMAIL_CANONICALIZATION,
    EMAIL_CANONICALIZATION_FROM,
    BLOCK_SUBADDRESSES,
    BLOCK_DISPOSABLE_DOMAINS,
    DISPOSABLE_EMAIL_DOMAINS_EXTRA,
    ALLOWED_EMAIL_DOMAINS,
    EVENT_SOURCE,
    EVENTS_INCLUDE_ADDRESSES,
    EVENT_BUS_NAME,
    REGISTER_EVENT_SCHEMAS,
    EVENT_PUBLISHER_ARNS,
    WEBHOOK_URL,
    WEBHOOK_RATE_LIMIT_PER_SECOND,
    LEGACY_PASSWORD_MIGRATION,
    ADMIN_GROUP,
    ADDRESS_RECOVERY_URL,
    INVITATION_URL,
    REAUTHENTICATION_WINDOW_SECONDS,
    USER_POOL_ID,
    AVAILABILITY_CHECKS_PER_USER,
    EXPORTS_PER_USER,
    THROTTLING_BURST_LIMIT,
    THROTTLING_RATE_LIMIT,
    METRICS_NAMESPACE,
    DYNAMODB_CONNECT_TIMEOUT_MS,
    DYNAMODB_ATTEMPT_TIMEOUT_MS,
    DYNAMODB_OPERATION_TIMEOUT_MS,
    DYNAMODB_CONNECT_AT_INIT,
    AWS_LAMBDA_LOG_LEVEL,
    AWS_LAMBDA_LOG_FORMAT,
    AWS_LAMBDA_FUNCTION_NAME,
    RUST_LOG,
];

/// Invitations one organization sends to one address (first sends and
/// resends, whatever was revoked between) in a rolling 24 hours: one
/// organization takes at most this share of an address's
/// `MAX_INVITATIONS_PER_ADDRESS`. Not a setting: the arithmetic of the limits.
pub const INVITATION_SENDS_PER_DAY: u32 = 3;

/// How long a pending domain claim holds its domain against other
/// organizations, in days: after it, another organization may take it
/// over, so nobody squats a company's domain by claiming it first.
pub const DOMAIN_PENDING_DAYS: i64 = 7;

/// Most domains one organization claims: its deletion releases every claim
/// in its own transaction.
pub const MAX_DOMAINS_PER_ORGANIZATION: u32 = 10;

/// Most live SCIM tokens one organization holds: one per identity provider,
/// and room to make the next before revoking the last.
pub const MAX_SCIM_TOKENS_PER_ORGANIZATION: u32 = 10;

/// SCIM requests from one network source whose token proved nothing, in a
/// rolling 24 hours, before its next such request is answered 429. A token
/// has 256 bits of secret, so this bounds the cost and noise of a flood, not
/// the odds of a guess. A valid token is never refused by it: identity
/// providers send from egress addresses many tenants share.
pub const SCIM_GUESSES_PER_SOURCE: u32 = 100;

/// A user's codes for one address that the address's count never refuses, so a
/// stranger's codes cannot keep the owner from adding and verifying it: the code
/// an add sends and one resend. Not a setting: the arithmetic of the limits.
pub const CODES_NEVER_CROWDED_OUT: u32 = 2;
