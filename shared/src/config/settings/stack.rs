//! The stack: mail, the user pool and its tokens, the functions, logs, CORS, protection and alarms.

use super::super::setting::{From, Need, Range, Reaches, Setting, Value};

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
