//! Every setting of the service and of its stack, each declared once (see
//! [`super::setting`]): the list [`SETTINGS`], in the order the docs and the
//! template's `Parameters` show them. A table: long, one concern.

use super::setting::{From, Need, Range, Reaches, Setting, Value};

/// The From address of every message the service and Cognito send.
pub const SENDER_ADDRESS: Setting = Setting {
    variable: Some("SENDER_ADDRESS"),
    parameter: Some("SenderAddress"),
    value: Value::Text {
        default: None,
        pattern: Some("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$"),
        constraint: Some("must be an email address."),
    },
    about: "The From address of every message the service and Cognito send. The address, or its domain (SenderDomain), must be a verified SES identity in this region before the first deploy.",
    why: &[],
    reaches: Reaches::Functions(Need::Mail, From::Parameter),
};

/// Optional verified SES domain identity (with DKIM) that SenderAddress belongs to.
pub const SENDER_DOMAIN: Setting = Setting {
    variable: None,
    parameter: Some("SenderDomain"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^$|^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$"),
        constraint: Some("must be empty or a domain name."),
    },
    about: "Optional verified SES domain identity (with DKIM) that SenderAddress belongs to. Empty: SenderAddress itself is the verified identity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Where the verification codes go.
pub const VERIFICATION_SENDER: Setting = Setting {
    variable: Some("VERIFICATION_SENDER"),
    parameter: Some("VerificationSender"),
    value: Value::Choice {
        default: "ses",
        allowed: &["ses", "log"],
    },
    about: "Where the verification codes go. log writes them to the function log; only for a test stack (needs LogSenderAllowed=true).",
    why: &[],
    reaches: Reaches::Functions(Need::Mail, From::Parameter),
};

/// Sets ALLOW_LOG_SENDER; the log sender refuses to start without it.
pub const ALLOW_LOG_SENDER: Setting = Setting {
    variable: Some("ALLOW_LOG_SENDER"),
    parameter: Some("LogSenderAllowed"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "Sets ALLOW_LOG_SENDER; the log sender refuses to start without it. Only for a test stack.",
    why: &[],
    reaches: Reaches::Functions(Need::Mail, From::Parameter),
};

/// How Cognito sends its own mail (sign-up codes, password resets).
pub const COGNITO_EMAIL_SENDING: Setting = Setting {
    variable: None,
    parameter: Some("CognitoEmailSending"),
    value: Value::Choice {
        default: "DEVELOPER",
        allowed: &["DEVELOPER", "COGNITO_DEFAULT"],
    },
    about: "How Cognito sends its own mail (sign-up codes, password resets). DEVELOPER: through SES, from SenderAddress. COGNITO_DEFAULT: Cognito's built-in sender (50 messages a day), a fallback for a test stack or while SES is not ready.",
    why: &[],
    reaches: Reaches::Stack,
};

/// The user pool's feature plan (UserPoolTier).
pub const USER_POOL_FEATURE_PLAN: Setting = Setting {
    variable: None,
    parameter: Some("UserPoolFeaturePlan"),
    value: Value::Choice {
        default: "PLUS",
        allowed: &["LITE", "ESSENTIALS", "PLUS"],
    },
    about: "The user pool's feature plan (UserPoolTier). ThreatProtection AUDIT or ENFORCED needs PLUS; ESSENTIALS and PLUS also keep a password history.",
    why: &[
        "Production gets the strongest pool by default: threat protection acts on leaked",
        "passwords and risky sign-ins, the main defence against credential stuffing, and",
        "it needs the Plus plan (billed per monthly active user, no free tier).",
        "A dev stack turns both down (samconfig.toml's [dev]).",
    ],
    reaches: Reaches::Stack,
};

/// Cognito threat protection (UserPoolAddOns.AdvancedSecurityMode).
pub const THREAT_PROTECTION: Setting = Setting {
    variable: None,
    parameter: Some("ThreatProtection"),
    value: Value::Choice {
        default: "ENFORCED",
        allowed: &["OFF", "AUDIT", "ENFORCED"],
    },
    about: "Cognito threat protection (UserPoolAddOns.AdvancedSecurityMode). ENFORCED applies Cognito's responses to leaked credentials and risky sign-ins; AUDIT only records and measures them; both need UserPoolFeaturePlan=PLUS.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Lifetime of access tokens, in minutes.
pub const ACCESS_TOKEN_VALIDITY_MINUTES: Setting = Setting {
    variable: None,
    parameter: Some("AccessTokenValidityMinutes"),
    value: Value::Number(Range {
        default: 60,
        min: 5,
        max: Some(1440),
    }),
    about: "Lifetime of access tokens, in minutes. The API accepts one until it expires, even after a sign-out.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Lifetime of ID tokens, in minutes (the API refuses ID tokens; clients may read them).
pub const ID_TOKEN_VALIDITY_MINUTES: Setting = Setting {
    variable: None,
    parameter: Some("IdTokenValidityMinutes"),
    value: Value::Number(Range {
        default: 60,
        min: 5,
        max: Some(1440),
    }),
    about: "Lifetime of ID tokens, in minutes (the API refuses ID tokens; clients may read them).",
    why: &[],
    reaches: Reaches::Stack,
};

/// Lifetime of refresh tokens, in days; a user signs in with a password again after it.
pub const REFRESH_TOKEN_VALIDITY_DAYS: Setting = Setting {
    variable: None,
    parameter: Some("RefreshTokenValidityDays"),
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(3650),
    }),
    about: "Lifetime of refresh tokens, in days; a user signs in with a password again after it.",
    why: &[],
    reaches: Reaches::Stack,
};

/// How long a sign-in may wait on a challenge (a TOTP code), in minutes.
pub const AUTH_SESSION_VALIDITY_MINUTES: Setting = Setting {
    variable: None,
    parameter: Some("AuthSessionValidityMinutes"),
    value: Value::Number(Range {
        default: 3,
        min: 3,
        max: Some(15),
    }),
    about: "How long a sign-in may wait on a challenge (a TOTP code), in minutes.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Instruction set of the Lambda functions (cargo-lambda cross-compiles for it).
pub const ARCHITECTURE: Setting = Setting {
    variable: None,
    parameter: Some("Architecture"),
    value: Value::Choice {
        default: "arm64",
        allowed: &["arm64", "x86_64"],
    },
    about: "Instruction set of the Lambda functions (cargo-lambda cross-compiles for it).",
    why: &[],
    reaches: Reaches::Stack,
};

/// A floor on every function's memory, in MB: 0 keeps each function at the
/// size the catalog chose for it by measured cost.
pub const FUNCTION_MEMORY_SIZE: Setting = Setting {
    variable: None,
    parameter: Some("FunctionMemorySize"),
    value: Value::NumberIn {
        default: 0,
        allowed: &[0, 128, 256, 512, 1_024, 1_769, 2_048, 3_008, 4_096, 10_240],
    },
    about: "A floor on every function's memory, in MB. 0 keeps each function at the size chosen for it by measured cost (docs/performance.md); another value raises every function below it to it, and lowers none.",
    why: &["Lambda gives CPU in proportion to memory, one vCPU at 1,769 MB: a function's size is its speed too."],
    reaches: Reaches::Stack,
};

/// The functions' log level (LoggingConfig.ApplicationLogLevel); INFO at most, as the metrics and audit events are INFO lines.
pub const LOG_LEVEL: Setting = Setting {
    variable: None,
    parameter: Some("LogLevel"),
    value: Value::Choice {
        default: "INFO",
        allowed: &["TRACE", "DEBUG", "INFO"],
    },
    about: "The functions' log level (LoggingConfig.ApplicationLogLevel); INFO at most, as the metrics and audit events are INFO lines. DEBUG and TRACE reach the service's own code only; the SDK and runtime stay at INFO. Logs never carry addresses, phones, names, codes or tokens at any level.",
    why: &[
        "Not WARN or above: Lambda gives a JSON line without a level (every EMF",
        "metrics document) the level INFO, so a higher level would drop the",
        "business metrics and the audit events with it.",
    ],
    reaches: Reaches::Stack,
};

/// Retention of the function and API access log groups.
pub const LOG_RETENTION_DAYS: Setting = Setting {
    variable: None,
    parameter: Some("LogRetentionDays"),
    value: Value::NumberIn {
        default: 30,
        allowed: &[
            1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
        ],
    },
    about: "Retention of the function and API access log groups.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Origins browsers may call the API from, comma separated (https://app.example.com).
pub const CORS_ALLOWED_ORIGINS: Setting = Setting {
    variable: None,
    parameter: Some("CorsAllowedOrigins"),
    value: Value::List,
    about: "Origins browsers may call the API from, comma separated (https://app.example.com). Empty: no CORS, so no browser origin may call the API.",
    why: &[
        "Empty by default: no browser origin may call the API until a deploy names",
        "one (apps and servers need no CORS). A default origin would reach production",
        "unnoticed; samconfig.toml's dev sets http://localhost:3000, prod its https site.",
    ],
    reaches: Reaches::Stack,
};

/// Deletion protection of the table and the user pool.
pub const DELETION_PROTECTION: Setting = Setting {
    variable: None,
    parameter: Some("DeletionProtection"),
    value: Value::Choice {
        default: "true",
        allowed: &["true", "false"],
    },
    about: "Deletion protection of the table and the user pool.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Create the CloudWatch alarms and their SNS topic.
pub const ENABLE_ALARMS: Setting = Setting {
    variable: None,
    parameter: Some("EnableAlarms"),
    value: Value::Choice {
        default: "true",
        allowed: &["true", "false"],
    },
    about: "Create the CloudWatch alarms and their SNS topic. On by default; a dev stack may turn them off (the Cognito sync's two alarms stay, notifying no one).",
    why: &[],
    reaches: Reaches::Stack,
};

/// Optional address subscribed to the alarm topic (only with EnableAlarms=true; the address must confirm the subscription).
pub const ALARM_EMAIL: Setting = Setting {
    variable: None,
    parameter: Some("AlarmEmail"),
    value: Value::Text {
        default: Some(""),
        pattern: None,
        constraint: None,
    },
    about: "Optional address subscribed to the alarm topic (only with EnableAlarms=true; the address must confirm the subscription).",
    why: &[],
    reaches: Reaches::Stack,
};

/// The API's 5xx alarm fires when more than this percentage of its requests answer 5xx, three 5-minute periods in a row.
pub const API5XX_ALARM_THRESHOLD_PERCENT: Setting = Setting {
    variable: None,
    parameter: Some("Api5xxAlarmThresholdPercent"),
    value: Value::Number(Range {
        default: 1,
        min: 0,
        max: Some(100),
    }),
    about: "The API's 5xx alarm fires when more than this percentage of its requests answer 5xx, three 5-minute periods in a row.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Fewer requests than this in 5 minutes count as a 0 % 5xx share (too few to judge a share by).
pub const API5XX_ALARM_MIN_REQUESTS: Setting = Setting {
    variable: None,
    parameter: Some("Api5xxAlarmMinRequests"),
    value: Value::Number(Range {
        default: 50,
        min: 1,
        max: None,
    }),
    about: "Fewer requests than this in 5 minutes count as a 0 % 5xx share (too few to judge a share by).",
    why: &[],
    reaches: Reaches::Stack,
};

/// Create a CloudTrail trail of management events (and its S3 bucket).
pub const CREATE_TRAIL: Setting = Setting {
    variable: None,
    parameter: Some("CreateTrail"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "Create a CloudTrail trail of management events (and its S3 bucket). EventBridge sees Cognito's DeleteUser calls only where a trail with logging on exists; set true only if the account has none (an account's first trail of management events is free; a second copy costs $2.00 per 100,000 events).",
    why: &[
        "Erasure that reaches everyone (docs/scale.md): the reconcile's pass, and",
        "the CloudTrail records that bring a user's own DeleteUser here at once.",
    ],
    reaches: Reaches::Stack,
};

/// A reconcile pass (the table's live profiles against Cognito's users) starts this long after the last one started.
pub const RECONCILE_INTERVAL_HOURS: Setting = Setting {
    variable: Some("RECONCILE_INTERVAL_HOURS"),
    parameter: Some("ReconcileIntervalHours"),
    value: Value::Number(Range {
        default: 24,
        min: 1,
        max: Some(168),
    }),
    about: "A reconcile pass (the table's live profiles against Cognito's users) starts this long after the last one started.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The share of Cognito's UserList (ListUsers) and UserRead (AdminGetUser) quotas the pass may use; the rest is the sign-in path's.
pub const RECONCILE_QUOTA_SHARE_PERCENT: Setting = Setting {
    variable: Some("RECONCILE_QUOTA_SHARE_PERCENT"),
    parameter: Some("ReconcileQuotaSharePercent"),
    value: Value::Number(Range {
        default: 50,
        min: 1,
        max: Some(100),
    }),
    about: "The share of Cognito's UserList (ListUsers) and UserRead (AdminGetUser) quotas the pass may use; the rest is the sign-in path's.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The account's UserRead quota in this region, requests a second (120 unless raised in Service Quotas).
pub const COGNITO_USER_READ_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_READ_RPS"),
    parameter: Some("CognitoUserReadRps"),
    value: Value::Number(Range {
        default: 120,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserRead quota in this region, requests a second (120 unless raised in Service Quotas).",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The pass-overdue alarm fires when no reconcile pass completed for this many days.
pub const RECONCILE_ALARM_DAYS: Setting = Setting {
    variable: None,
    parameter: Some("ReconcileAlarmDays"),
    value: Value::Number(Range {
        default: 7,
        min: 1,
        max: Some(7),
    }),
    about: "The pass-overdue alarm fires when no reconcile pass completed for this many days.",
    why: &[],
    reaches: Reaches::Stack,
};

/// LegacyPasswordMigration only.
pub const MIGRATION_RESET_ALARM_THRESHOLD: Setting = Setting {
    variable: None,
    parameter: Some("MigrationResetAlarmThreshold"),
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(1_000_000),
    }),
    about: "LegacyPasswordMigration only. The alarm fires when more pending users than this are migrated by a forgot-password in five minutes (anyone who knows an address can start one).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PAY_PER_REQUEST (on demand), or PROVISIONED with auto scaling of the table's, GSI1's and GSI2's reads and writes between the minimums and maximums below.
pub const TABLE_BILLING_MODE: Setting = Setting {
    variable: None,
    parameter: Some("TableBillingMode"),
    value: Value::Choice {
        default: "PAY_PER_REQUEST",
        allowed: &["PAY_PER_REQUEST", "PROVISIONED"],
    },
    about: "PAY_PER_REQUEST (on demand), or PROVISIONED with auto scaling of the table's, GSI1's and GSI2's reads and writes between the minimums and maximums below.",
    why: &[
        "Capacity, as the seed plans it: on demand until 2-4 weeks of production",
        "traffic show whether provisioned capacity with auto scaling costs less (the",
        "README's Operations section). GSI1 has its own capacity, sized on its own.",
    ],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("TableReadCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's read capacity units, at least (and at deploy).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("TableReadCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's read capacity units, at most; not below TableReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("TableWriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's write capacity units, at least (and at deploy).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("TableWriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's write capacity units, at most; not below TableWriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1ReadCapacityMin"),
    value: Value::Number(Range {
        default: 1,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's read capacity units, at least (and at deploy). Only admin look-ups read it.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1ReadCapacityMax"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's read capacity units, at most; not below Gsi1ReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1WriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's write capacity units, at least (and at deploy). Every write of an email record writes GSI1.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1WriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's write capacity units, at most; not below Gsi1WriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2ReadCapacityMin"),
    value: Value::Number(Range {
        default: 1,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's read capacity units, at least (and at deploy). Only the admin list reads it.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2ReadCapacityMax"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's read capacity units, at most; not below Gsi2ReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2WriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's write capacity units, at least (and at deploy). Every sign-up and status change writes GSI2 (a change, twice).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2WriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's write capacity units, at most; not below Gsi2WriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("TableTargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps the table's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1TargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps GSI1's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2TargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps GSI2's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Most email addresses one user may hold (49 at most, so deleting a user fits one 100-item transaction).
pub const MAX_EMAILS_PER_USER: Setting = Setting {
    variable: Some("MAX_EMAILS_PER_USER"),
    parameter: Some("MaxEmailsPerUser"),
    value: Value::Number(Range {
        default: 10,
        min: 1,
        max: Some(49),
    }),
    about: "Most email addresses one user may hold (49 at most, so deleting a user fits one 100-item transaction).",
    why: &[],
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

/// Which spellings of an address are one address for uniqueness and look-up: none (as typed), gmail (dots and +tags ignored on gmail.com and googlemail.com), subaddress (+tags ignored everywhere), or both.
pub const EMAIL_CANONICALIZATION: Setting = Setting {
    variable: Some("EMAIL_CANONICALIZATION"),
    parameter: Some("EmailCanonicalization"),
    value: Value::Choice {
        default: "none",
        allowed: &["none", "gmail", "subaddress", "gmail,subaddress"],
    },
    about: "Which spellings of an address are one address for uniqueness and look-up: none (as typed), gmail (dots and +tags ignored on gmail.com and googlemail.com), subaddress (+tags ignored everywhere), or both. Changing it on a live table is a migration (docs/address-policy.md).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Only while cargo xtask canonicalize moves a live table: the previous EmailCanonicalization, so claims not yet moved still count.
pub const EMAIL_CANONICALIZATION_FROM: Setting = Setting {
    variable: Some("EMAIL_CANONICALIZATION_FROM"),
    parameter: Some("EmailCanonicalizationFrom"),
    value: Value::Choice {
        default: "",
        allowed: &["", "none", "gmail", "subaddress", "gmail,subaddress"],
    },
    about: "Only while cargo xtask canonicalize moves a live table: the previous EmailCanonicalization, so claims not yet moved still count. Empty otherwise.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// true refuses new addresses with a +tag (422 ADDRESS_NOT_ALLOWED) when an address is added, and at sign-up.
pub const BLOCK_SUBADDRESSES: Setting = Setting {
    variable: Some("BLOCK_SUBADDRESSES"),
    parameter: Some("BlockSubaddresses"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true refuses new addresses with a +tag (422 ADDRESS_NOT_ALLOWED) when an address is added, and at sign-up.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// true refuses new addresses at disposable domains (the shipped list, and DisposableEmailDomainsExtra).
pub const BLOCK_DISPOSABLE_DOMAINS: Setting = Setting {
    variable: Some("BLOCK_DISPOSABLE_DOMAINS"),
    parameter: Some("BlockDisposableDomains"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true refuses new addresses at disposable domains (the shipped list, and DisposableEmailDomainsExtra).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// More disposable domains, comma-separated, refused with BlockDisposableDomains=true.
pub const DISPOSABLE_EMAIL_DOMAINS_EXTRA: Setting = Setting {
    variable: Some("DISPOSABLE_EMAIL_DOMAINS_EXTRA"),
    parameter: Some("DisposableEmailDomainsExtra"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^[A-Za-z0-9.,* -]*$"),
        constraint: None,
    },
    about: "More disposable domains, comma-separated, refused with BlockDisposableDomains=true.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Comma-separated domains new addresses must be at (*.example.com for its subdomains); empty admits any.
pub const ALLOWED_EMAIL_DOMAINS: Setting = Setting {
    variable: Some("ALLOWED_EMAIL_DOMAINS"),
    parameter: Some("AllowedEmailDomains"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^[A-Za-z0-9.,* -]*$"),
        constraint: None,
    },
    about: "Comma-separated domains new addresses must be at (*.example.com for its subdomains); empty admits any. Closes sign-up to other domains.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// The domain events' source (CloudEvents `source`, EventBridge `source`); empty means urn:user-service:<stack name>.
pub const EVENT_SOURCE: Setting = Setting {
    variable: Some("EVENT_SOURCE"),
    parameter: Some("EventSource"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(?!aws\\.)[A-Za-z0-9:/._-]{0,256}$"),
        constraint: None,
    },
    about: "The domain events' source (CloudEvents `source`, EventBridge `source`); empty means urn:user-service:<stack name>.",
    why: &["EventBridge refuses a source starting with aws. (AWS's own)."],
    reaches: Reaches::Functions(
        Need::Bus,
        From::Template("!If [HasEventSource, !Ref EventSource, !Sub \"urn:user-service:${AWS::StackName}\"]"),
    ),
};

/// true adds the address to email.* events.
pub const EVENTS_INCLUDE_ADDRESSES: Setting = Setting {
    variable: Some("EVENTS_INCLUDE_ADDRESSES"),
    parameter: Some("EventsIncludeAddresses"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true adds the address to email.* events. Archived events cannot be erased later: every copy is then yours to erase (docs/events.md).",
    why: &[],
    reaches: Reaches::Functions(Need::Bus, From::Parameter),
};

/// true registers the events' JSON Schemas in an EventBridge schema registry.
pub const REGISTER_EVENT_SCHEMAS: Setting = Setting {
    variable: None,
    parameter: Some("RegisterEventSchemas"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true registers the events' JSON Schemas in an EventBridge schema registry.",
    why: &[],
    reaches: Reaches::Stack,
};

/// IAM roles that may put events on the bus besides the publisher (an operator's, for cargo xtask replay-events), comma-separated ARNs; the bus refuses everyone else.
pub const EVENT_PUBLISHER_ARNS: Setting = Setting {
    variable: None,
    parameter: Some("EventPublisherArns"),
    value: Value::List,
    about: "IAM roles that may put events on the bus besides the publisher (an operator's, for cargo xtask replay-events), comma-separated ARNs; the bus refuses everyone else.",
    why: &[],
    reaches: Reaches::Stack,
};

/// An HTTPS URL that receives every domain event (POST, the CloudEvent as the body); empty creates no webhook.
pub const WEBHOOK_URL: Setting = Setting {
    variable: None,
    parameter: Some("WebhookUrl"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(https://[^ ]+)?$"),
        constraint: None,
    },
    about: "An HTTPS URL that receives every domain event (POST, the CloudEvent as the body); empty creates no webhook.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Webhook deliveries a second at most; more wait and are retried (for up to 24 hours).
pub const WEBHOOK_RATE_LIMIT_PER_SECOND: Setting = Setting {
    variable: None,
    parameter: Some("WebhookRateLimitPerSecond"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: Some(300),
    }),
    about: "Webhook deliveries a second at most; more wait and are retried (for up to 24 hours).",
    why: &[],
    reaches: Reaches::Stack,
};

/// "on" wires the migration function as the pool's UserMigration trigger and creates a second app client (MigrationClientId) that allows USER_PASSWORD_AUTH, so users imported pending (user-admin import --pending) keep their passwords at their first sign-in.
pub const LEGACY_PASSWORD_MIGRATION: Setting = Setting {
    variable: None,
    parameter: Some("LegacyPasswordMigration"),
    value: Value::Choice {
        default: "off",
        allowed: &["off", "on", "reset-only"],
    },
    about: "\"on\" wires the migration function as the pool's UserMigration trigger and creates a second app client (MigrationClientId) that allows USER_PASSWORD_AUTH, so users imported pending (user-admin import --pending) keep their passwords at their first sign-in. \"reset-only\" keeps the trigger for forgot-password and deletes that client; \"off\" once no user is pending (docs/migration.md).",
    why: &[],
    reaches: Reaches::Stack,
};

/// Cognito group whose members may call the /admin routes.
pub const ADMIN_GROUP: Setting = Setting {
    variable: Some("ADMIN_GROUP"),
    parameter: Some("AdminGroupName"),
    value: Value::Text {
        default: Some("admin"),
        pattern: Some("^[A-Za-z0-9_.@+=-]{1,128}$"),
        constraint: None,
    },
    about: "Cognito group whose members may call the /admin routes.",
    why: &["No spaces: the HTTP API passes cognito:groups as one space-separated string (\"[a b]\")."],
    reaches: Reaches::Every(From::Parameter),
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

/// The table every function reads and writes.
pub const TABLE_NAME: Setting = Setting {
    variable: Some("TABLE_NAME"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The table; the template sets it.",
    why: &[],
    reaches: Reaches::Every(From::Template("!Ref Table")),
};

/// Another DynamoDB endpoint: DynamoDB Local, in local runs and the tests.
pub const AWS_ENDPOINT_URL_DYNAMODB: Setting = Setting {
    variable: Some("AWS_ENDPOINT_URL_DYNAMODB"),
    parameter: None,
    value: Value::Text {
        default: Some(""),
        pattern: None,
        constraint: None,
    },
    about: "Another DynamoDB endpoint, such as DynamoDB Local (`make dev`, the tests).",
    why: &[],
    reaches: Reaches::Local,
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

/// The SES configuration set every message goes through.
pub const SES_CONFIGURATION_SET: Setting = Setting {
    variable: Some("SES_CONFIGURATION_SET"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The SES configuration set every message goes through (the template's `SesConfigurationSet`); required with the `ses` sender.",
    why: &[],
    reaches: Reaches::Functions(Need::Mail, From::Template("!Ref SesConfigurationSet")),
};

/// The stack's user pool.
pub const USER_POOL_ID: Setting = Setting {
    variable: Some("USER_POOL_ID"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The stack's user pool, for the functions the catalog lets call Cognito (a trigger reads its pool from each event).",
    why: &[],
    reaches: Reaches::Functions(Need::Pool, From::Template("!Ref UserPool")),
};

/// The stack's event bus.
pub const EVENT_BUS_NAME: Setting = Setting {
    variable: Some("EVENT_BUS_NAME"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The stack's event bus, where the domain events go (`<stack>-events`).",
    why: &[],
    reaches: Reaches::Functions(Need::Bus, From::Template("!Ref EventBus")),
};

/// The account's UserList quota.
pub const COGNITO_USER_LIST_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_LIST_RPS"),
    parameter: None,
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserList quota (ListUsers), requests a second: fixed at 30 by Cognito.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// The account's UserUpdate quota.
pub const COGNITO_USER_UPDATE_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_UPDATE_RPS"),
    parameter: None,
    value: Value::Number(Range {
        default: 25,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserUpdate quota (AdminDeleteUser), requests a second: fixed at 25 by Cognito.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// Segments of the reconcile's parallel scan.
pub const RECONCILE_SCAN_SEGMENTS: Setting = Setting {
    variable: Some("RECONCILE_SCAN_SEGMENTS"),
    parameter: None,
    value: Value::Number(Range {
        default: 4,
        min: 1,
        max: Some(64),
    }),
    about: "The reconcile: segments of the parallel scan of the table.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// Partitions the reconcile lists from Cognito at once.
pub const RECONCILE_PARTITIONS_AT_ONCE: Setting = Setting {
    variable: Some("RECONCILE_PARTITIONS_AT_ONCE"),
    parameter: None,
    value: Value::Number(Range {
        default: 4,
        min: 1,
        max: Some(64),
    }),
    about: "The reconcile: partitions listed from Cognito at once.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// The business metrics' CloudWatch namespace.
pub const METRICS_NAMESPACE: Setting = Setting {
    variable: Some("METRICS_NAMESPACE"),
    parameter: None,
    value: Value::Text {
        default: Some("UserService/local"),
        pattern: None,
        constraint: None,
    },
    about: "The business metrics' CloudWatch namespace; the alarms and the dashboard read the same one.",
    why: &[],
    reaches: Reaches::Every(From::Template("!Sub UserService/${AWS::StackName}")),
};

/// The DynamoDB client's connect timeout.
pub const DYNAMODB_CONNECT_TIMEOUT_MS: Setting = Setting {
    variable: Some("DYNAMODB_CONNECT_TIMEOUT_MS"),
    parameter: None,
    value: Value::Number(Range {
        default: 1_000,
        min: 50,
        max: Some(60_000),
    }),
    about: "The DynamoDB client's connect timeout, in ms.",
    why: &[],
    reaches: Reaches::Every(From::Default),
};

/// One attempt of a DynamoDB call (the SDK retries inside the operation timeout).
pub const DYNAMODB_ATTEMPT_TIMEOUT_MS: Setting = Setting {
    variable: Some("DYNAMODB_ATTEMPT_TIMEOUT_MS"),
    parameter: None,
    value: Value::Number(Range {
        default: 1_000,
        min: 50,
        max: Some(60_000),
    }),
    about: "One attempt of a DynamoDB call, in ms; Cognito admin calls use it too.",
    why: &[],
    reaches: Reaches::Every(From::Default),
};

/// A whole DynamoDB call, retries included: inside Cognito's 5 s trigger limit.
pub const DYNAMODB_OPERATION_TIMEOUT_MS: Setting = Setting {
    variable: Some("DYNAMODB_OPERATION_TIMEOUT_MS"),
    parameter: None,
    value: Value::Number(Range {
        default: 3_000,
        min: 50,
        max: Some(60_000),
    }),
    about: "A whole DynamoDB call, retries included, in ms: inside Cognito's 5 s trigger limit; under an invocation every call's timeout is cut to what is left. An SES send is one attempt of at most 5 s (a retried send could deliver twice).",
    why: &[],
    reaches: Reaches::Every(From::Default),
};

/// Whether init opens the connection to DynamoDB.
pub const DYNAMODB_CONNECT_AT_INIT: Setting = Setting {
    variable: Some("DYNAMODB_CONNECT_AT_INIT"),
    parameter: None,
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "`true`: init opens the connection to DynamoDB with one read the function is granted. The stack sets it for every function: at the CPU share of 128 and 256 MB a cold start with the connection opened at init was faster and billed less, whatever init's CPU (docs/performance.md); local runs and the tests keep the default.",
    why: &[
        "Measured under the CPU quota of each memory size: a profile read's cold start at 128 MB, 10 ms period, init throttled, took 69 ms (p50) against 109 ms, and billed 71 against 112 ms.",
    ],
    reaches: Reaches::Every(From::Template("\"true\"")),
};

/// The functions' log level, as Lambda sets it.
pub const AWS_LAMBDA_LOG_LEVEL: Setting = Setting {
    variable: Some("AWS_LAMBDA_LOG_LEVEL"),
    parameter: None,
    value: Value::Text {
        default: Some("INFO"),
        pattern: None,
        constraint: None,
    },
    about: "Set by Lambda from the template's `LogLevel` (LoggingConfig); DEBUG and TRACE reach the service's own code only, the SDK and runtime stay at INFO.",
    why: &[],
    reaches: Reaches::Platform,
};

/// The functions' log format, as Lambda sets it.
pub const AWS_LAMBDA_LOG_FORMAT: Setting = Setting {
    variable: Some("AWS_LAMBDA_LOG_FORMAT"),
    parameter: None,
    value: Value::Text {
        default: Some("JSON"),
        pattern: None,
        constraint: None,
    },
    about: "Set by Lambda from the template; JSON lines with `request_id` and `sub`, never addresses, phones, codes or tokens.",
    why: &[],
    reaches: Reaches::Platform,
};

/// The function's name, as Lambda sets it.
pub const AWS_LAMBDA_FUNCTION_NAME: Setting = Setting {
    variable: Some("AWS_LAMBDA_FUNCTION_NAME"),
    parameter: None,
    value: Value::Text {
        default: Some(""),
        pattern: None,
        constraint: None,
    },
    about: "Set by Lambda: the function's name, the business metrics' `Function` dimension (a local run uses its binary's name).",
    why: &[],
    reaches: Reaches::Platform,
};

/// A full log filter, for local runs.
pub const RUST_LOG: Setting = Setting {
    variable: Some("RUST_LOG"),
    parameter: None,
    value: Value::Text {
        default: Some(""),
        pattern: None,
        constraint: None,
    },
    about: "Local runs only: a full filter (`level` and `target=level` directives) that wins over the level above, and over its limits.",
    why: &[],
    reaches: Reaches::Local,
};

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
    VERIFICATION_TTL_SECONDS,
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

/// A user's codes for one address that the address's count never refuses, so a
/// stranger's codes cannot keep the owner from adding and verifying it: the code
/// an add sends and one resend. Not a setting: the arithmetic of the limits.
pub const CODES_NEVER_CROWDED_OUT: u32 = 2;
