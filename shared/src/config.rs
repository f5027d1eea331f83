//! Configuration from the environment. Read once at cold start.

use std::time::Duration;

/// Why a function cannot start with its environment: it stops at init with
/// this message, which names the variable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A required variable is unset or blank.
    #[error("{name} is not set; set it to {what} (see docs/configuration.md)")]
    Missing {
        /// The variable.
        name: &'static str,
        /// What it should hold.
        what: &'static str,
    },
    /// A variable holds a value outside what it allows.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What it allows, and the value given.
        reason: String,
    },
    /// What the variable names could not be read (a secret, say).
    #[error("{name} could not be read: {reason}")]
    Unavailable {
        /// The variable.
        name: &'static str,
        /// Why, without the value.
        reason: String,
    },
}

/// A variable that must be set to something other than blanks; trimmed.
pub fn required(
    lookup: impl Fn(&str) -> Option<String>,
    name: &'static str,
    what: &'static str,
) -> Result<String, ConfigError> {
    optional(lookup, name).ok_or(ConfigError::Missing { name, what })
}

/// A variable's value, trimmed; `None` when it is unset or blank.
pub fn optional(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// A whole-number variable: its name, default and allowed range. The parser
/// and docs/configuration.md (`cargo xtask docs`) both read these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberVar {
    /// The environment variable.
    pub name: &'static str,
    /// The value when it is unset.
    pub default: u32,
    /// The smallest value allowed.
    pub min: u32,
    /// The largest value allowed.
    pub max: u32,
}

/// Addresses per user. Deleting a user writes the profile and each address's
/// record and claim in one transaction of at most 100 items: 1 + 2 × 49, and
/// an admin's delete one more, the check of the admin's own profile.
pub const MAX_EMAILS_PER_USER: NumberVar = NumberVar {
    name: "MAX_EMAILS_PER_USER",
    default: 10,
    min: 1,
    max: 49,
};
/// How long an unverified address holds its claim, from the user's first add of
/// it in the last 24 hours (at most a day: the first add is remembered that long).
pub const VERIFICATION_TTL_SECONDS: NumberVar = NumberVar {
    name: "VERIFICATION_TTL_SECONDS",
    default: 3_600,
    min: 60,
    max: 86_400,
};
/// How long one code is valid.
pub const VERIFICATION_CODE_TTL_SECONDS: NumberVar = NumberVar {
    name: "VERIFICATION_CODE_TTL_SECONDS",
    default: 900,
    min: 60,
    max: 86_400,
};
/// Wrong codes allowed per code.
pub const VERIFICATION_MAX_ATTEMPTS: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_ATTEMPTS",
    default: 5,
    min: 1,
    max: 100,
};
/// Wrong codes allowed per user and address in a rolling 24 hours.
pub const VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS",
    default: 20,
    min: 1,
    max: 1_000,
};
/// Wrong codes allowed per user in a rolling 24 hours.
pub const VERIFICATION_MAX_WRONG_CODES_PER_USER: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_WRONG_CODES_PER_USER",
    default: 100,
    min: 1,
    max: 1_000,
};
/// Codes issued per address (adds and resends, by anyone) in a rolling 24 hours,
/// past each requester's first two, which this count never refuses.
pub const VERIFICATION_MAX_CODES_PER_ADDRESS: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_CODES_PER_ADDRESS",
    default: 10,
    min: 1,
    max: 1_000,
};
/// A user's codes for one address that the address's count never refuses, so a
/// stranger's codes cannot keep the owner from adding and verifying it: the code
/// an add sends and one resend.
pub const CODES_NEVER_CROWDED_OUT: u32 = 2;
/// Codes one user may have sent to one address in a rolling 24 hours.
pub const VERIFICATION_MAX_CODES_PER_USER_ADDRESS: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_CODES_PER_USER_ADDRESS",
    default: 5,
    min: 1,
    max: 1_000,
};
/// Codes one user may have sent, to any addresses, in a rolling 24 hours.
pub const VERIFICATION_MAX_CODES_PER_USER: NumberVar = NumberVar {
    name: "VERIFICATION_MAX_CODES_PER_USER",
    default: 30,
    min: 1,
    max: 10_000,
};
/// A new code for the same address at most this often.
pub const VERIFICATION_RESEND_INTERVAL_SECONDS: NumberVar = NumberVar {
    name: "VERIFICATION_RESEND_INTERVAL_SECONDS",
    default: 60,
    min: 1,
    max: 86_400,
};
/// Availability checks (`GET /emails/availability`) per user in a rolling 24 hours.
pub const AVAILABILITY_CHECKS_PER_USER: NumberVar = NumberVar {
    name: "AVAILABILITY_CHECKS_PER_USER",
    default: 30,
    min: 1,
    max: 10_000,
};
/// Exports of their own account (`GET /me/export`) per user in a rolling 24 hours.
pub const EXPORTS_PER_USER: NumberVar = NumberVar {
    name: "EXPORTS_PER_USER",
    default: 5,
    min: 1,
    max: 1_000,
};
/// The DynamoDB client's connect timeout.
pub const DYNAMODB_CONNECT_TIMEOUT_MS: NumberVar = NumberVar {
    name: "DYNAMODB_CONNECT_TIMEOUT_MS",
    default: 1_000,
    min: 50,
    max: 60_000,
};
/// One attempt of a DynamoDB call (the SDK retries inside the operation timeout).
pub const DYNAMODB_ATTEMPT_TIMEOUT_MS: NumberVar = NumberVar {
    name: "DYNAMODB_ATTEMPT_TIMEOUT_MS",
    default: 1_000,
    min: 50,
    max: 60_000,
};
/// A whole DynamoDB call, retries included: inside Cognito's 5 s trigger limit.
pub const DYNAMODB_OPERATION_TIMEOUT_MS: NumberVar = NumberVar {
    name: "DYNAMODB_OPERATION_TIMEOUT_MS",
    default: 3_000,
    min: 50,
    max: 60_000,
};

/// A reconcile pass starts this long after the last one started.
pub const RECONCILE_INTERVAL_HOURS: NumberVar = NumberVar {
    name: "RECONCILE_INTERVAL_HOURS",
    default: 24,
    min: 1,
    max: 168,
};
/// The share of each Cognito quota category the pass may use, in percent.
pub const RECONCILE_QUOTA_SHARE_PERCENT: NumberVar = NumberVar {
    name: "RECONCILE_QUOTA_SHARE_PERCENT",
    default: 50,
    min: 1,
    max: 100,
};
/// The account's UserList quota (ListUsers), requests a second.
pub const COGNITO_USER_LIST_RPS: NumberVar = NumberVar {
    name: "COGNITO_USER_LIST_RPS",
    default: 30,
    min: 1,
    max: 100_000,
};
/// The account's UserRead quota (AdminGetUser, GetUser), requests a second.
pub const COGNITO_USER_READ_RPS: NumberVar = NumberVar {
    name: "COGNITO_USER_READ_RPS",
    default: 120,
    min: 1,
    max: 100_000,
};
/// The account's UserUpdate quota (AdminDeleteUser and the other admin
/// writes), requests a second: fixed by Cognito.
pub const COGNITO_USER_UPDATE_RPS: NumberVar = NumberVar {
    name: "COGNITO_USER_UPDATE_RPS",
    default: 25,
    min: 1,
    max: 100_000,
};
/// Segments of the pass's parallel scan of the table.
pub const RECONCILE_SCAN_SEGMENTS: NumberVar = NumberVar {
    name: "RECONCILE_SCAN_SEGMENTS",
    default: 4,
    min: 1,
    max: 64,
};
/// Partitions the pass lists from Cognito at once.
pub const RECONCILE_PARTITIONS_AT_ONCE: NumberVar = NumberVar {
    name: "RECONCILE_PARTITIONS_AT_ONCE",
    default: 4,
    min: 1,
    max: 64,
};

/// How a variable is given a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// A whole number with a default and a range.
    Number(NumberVar),
    /// Any other value; the text says its default, or who sets it.
    Text(&'static str),
}

/// One environment variable a function reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable {
    /// The environment variable.
    pub name: &'static str,
    /// Its default and range, or who sets it.
    pub setting: Setting,
    /// What it is for (Markdown, one line).
    pub about: &'static str,
}

const fn number_var(var: NumberVar, about: &'static str) -> Variable {
    Variable {
        name: var.name,
        setting: Setting::Number(var),
        about,
    }
}

const fn text_var(name: &'static str, default: &'static str, about: &'static str) -> Variable {
    Variable {
        name,
        setting: Setting::Text(default),
        about,
    }
}

/// The address policy's variables (`address_policy::AddressPolicy::from_lookup` reads them).
pub const EMAIL_CANONICALIZATION_VAR: &str = "EMAIL_CANONICALIZATION";
/// The policy the table is moving from, while `cargo xtask canonicalize` runs.
pub const EMAIL_CANONICALIZATION_FROM_VAR: &str = "EMAIL_CANONICALIZATION_FROM";
/// `true` refuses addresses with a `+tag`.
pub const BLOCK_SUBADDRESSES_VAR: &str = "BLOCK_SUBADDRESSES";
/// `true` refuses addresses at disposable domains.
pub const BLOCK_DISPOSABLE_DOMAINS_VAR: &str = "BLOCK_DISPOSABLE_DOMAINS";
/// The operator's disposable domains, beside the shipped list.
pub const DISPOSABLE_EMAIL_DOMAINS_EXTRA_VAR: &str = "DISPOSABLE_EMAIL_DOMAINS_EXTRA";
/// The only domains new addresses may be at.
pub const ALLOWED_EMAIL_DOMAINS_VAR: &str = "ALLOWED_EMAIL_DOMAINS";

/// Every environment variable the functions read, in the order docs/configuration.md
/// lists them. A test proves the code reads no other (`tests/integration/docs.rs`).
pub const VARIABLES: &[Variable] = &[
    text_var("TABLE_NAME", "(required)", "the table; the template sets it"),
    text_var(
        "AWS_ENDPOINT_URL_DYNAMODB",
        "",
        "another DynamoDB endpoint, such as DynamoDB Local (`make dev`, the tests)",
    ),
    number_var(
        MAX_EMAILS_PER_USER,
        "addresses per user: deleting a user releases every address in one 100-item transaction",
    ),
    number_var(
        VERIFICATION_TTL_SECONDS,
        "how long an unverified address holds its claim, from the user's first add of it in the last 24 h; resends never extend it",
    ),
    number_var(VERIFICATION_CODE_TTL_SECONDS, "how long one code is valid"),
    number_var(VERIFICATION_MAX_ATTEMPTS, "wrong codes per code"),
    number_var(
        VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS,
        "wrong codes per user and address, rolling 24 h",
    ),
    number_var(
        VERIFICATION_MAX_WRONG_CODES_PER_USER,
        "wrong codes per user, rolling 24 h",
    ),
    number_var(
        VERIFICATION_MAX_CODES_PER_ADDRESS,
        "codes issued per address (adds and resends, by anyone), rolling 24 h; never refuses a user's first two codes for the address",
    ),
    number_var(
        VERIFICATION_MAX_CODES_PER_USER_ADDRESS,
        "codes one user may have sent to one address, rolling 24 h",
    ),
    number_var(
        VERIFICATION_MAX_CODES_PER_USER,
        "codes one user may have sent to any addresses, rolling 24 h",
    ),
    number_var(
        VERIFICATION_RESEND_INTERVAL_SECONDS,
        "a new code for the same address at most this often",
    ),
    number_var(
        AVAILABILITY_CHECKS_PER_USER,
        "availability checks per user, rolling 24 h: past it 429 with Retry-After, so no user can enumerate which addresses have accounts",
    ),
    number_var(
        EXPORTS_PER_USER,
        "exports of their own account (`GET /me/export`) per user, rolling 24 h: past it 429 with Retry-After; each reads the user's whole partition",
    ),
    text_var(
        "VERIFICATION_KEY_SECRET_ID",
        "(deployed)",
        "the Secrets Manager secret holding the key of code and address hashes; read at init only by the functions the catalog gives the key",
    ),
    text_var(
        "VERIFICATION_KEY",
        "(local)",
        "a development key (32+ bytes) when no secret is named; `make dev` makes one in `.local/dev-verification.key`",
    ),
    text_var(
        "VERIFICATION_SENDER",
        "`ses`",
        "`ses`: SES from `SENDER_ADDRESS`; `log`: one JSON log event per message, local runs and test stacks only. Read only by the functions the catalog lets send mail, as are the next three",
    ),
    text_var(
        "ALLOW_LOG_SENDER",
        "`false`",
        "`true` lets the `log` sender start; `make dev` and the tests set it, a deployed stack only with `LogSenderAllowed=true`",
    ),
    text_var(
        "SENDER_ADDRESS",
        "(required with `ses`)",
        "the From address; it, or its domain, is a verified SES identity",
    ),
    text_var(
        "SES_CONFIGURATION_SET",
        "(required with `ses`)",
        "the SES configuration set every message goes through (the template's `SesConfigurationSet`)",
    ),
    text_var(
        "USER_POOL_ID",
        "(deployed)",
        "the stack's user pool, for the functions the catalog lets call Cognito",
    ),
    text_var(
        "ADMIN_GROUP",
        "`admin`",
        "the Cognito group whose members may use the admin routes",
    ),
    text_var(
        EMAIL_CANONICALIZATION_VAR,
        "`none`",
        "which spellings of an address are the same one for uniqueness and look-up: `none` (as typed, normalised), `gmail` (dots and `+tags` ignored on gmail.com and googlemail.com), `subaddress` (`+tags` ignored everywhere), or `gmail,subaddress`. Changing it on a live table is a migration with `cargo xtask canonicalize` (docs/address-policy.md)",
    ),
    text_var(
        EMAIL_CANONICALIZATION_FROM_VAR,
        "",
        "only while `cargo xtask canonicalize` moves the table: the previous `EMAIL_CANONICALIZATION`. Look-ups also read each address's form under it, and a new address must be free under it too (docs/address-policy.md)",
    ),
    text_var(
        BLOCK_SUBADDRESSES_VAR,
        "`false`",
        "`true` refuses new addresses with a `+tag` (422 `ADDRESS_NOT_ALLOWED`, reason `subaddress`) when an address is added, and at sign-up",
    ),
    text_var(
        BLOCK_DISPOSABLE_DOMAINS_VAR,
        "`false`",
        "`true` refuses new addresses at disposable domains (and their subdomains): the shipped list (`shared/data/disposable_email_domains.txt`) and the next variable's",
    ),
    text_var(
        DISPOSABLE_EMAIL_DOMAINS_EXTRA_VAR,
        "",
        "more disposable domains, comma-separated, on top of the shipped list",
    ),
    text_var(
        ALLOWED_EMAIL_DOMAINS_VAR,
        "(any)",
        "comma-separated domains new addresses must be at, so sign-up is closed to others; `*.example.com` allows example.com's subdomains (at any depth), not example.com itself",
    ),
    number_var(
        RECONCILE_INTERVAL_HOURS,
        "the reconcile: a pass starts this long after the last one started",
    ),
    number_var(
        RECONCILE_QUOTA_SHARE_PERCENT,
        "the reconcile: the share of each Cognito quota category the pass may use; the rest is the sign-in path's",
    ),
    number_var(
        COGNITO_USER_LIST_RPS,
        "the account's UserList quota (ListUsers), requests a second: fixed at 30 by Cognito",
    ),
    number_var(
        COGNITO_USER_READ_RPS,
        "the account's UserRead quota (AdminGetUser), requests a second: 120 unless raised",
    ),
    number_var(
        COGNITO_USER_UPDATE_RPS,
        "the account's UserUpdate quota (AdminDeleteUser), requests a second: fixed at 25 by Cognito",
    ),
    number_var(
        RECONCILE_SCAN_SEGMENTS,
        "the reconcile: segments of the parallel scan of the table",
    ),
    number_var(
        RECONCILE_PARTITIONS_AT_ONCE,
        "the reconcile: partitions listed from Cognito at once",
    ),
    text_var(
        "METRICS_NAMESPACE",
        "`UserService/local`",
        "the business metrics' CloudWatch namespace; the template sets `UserService/<stack>`",
    ),
    number_var(DYNAMODB_CONNECT_TIMEOUT_MS, "the DynamoDB client's connect timeout"),
    number_var(
        DYNAMODB_ATTEMPT_TIMEOUT_MS,
        "one attempt of a DynamoDB call; Cognito admin calls use it too",
    ),
    number_var(
        DYNAMODB_OPERATION_TIMEOUT_MS,
        "a whole DynamoDB call, retries included, inside Cognito's 5 s trigger limit; under an invocation every call's timeout is cut to what is left. An SES send is one attempt of at most 5 s (a retried send could deliver twice)",
    ),
    text_var(
        "DYNAMODB_CONNECT_AT_INIT",
        "`false`",
        "`true`: init opens the connection to DynamoDB with one read the function is granted; it pays where init is off the request path (provisioned concurrency), on demand it costs a request",
    ),
    text_var(
        "AWS_LAMBDA_LOG_LEVEL",
        "`INFO`",
        "set by Lambda from the template's `LogLevel` (LoggingConfig); DEBUG and TRACE reach the service's own code only, the SDK and runtime stay at INFO",
    ),
    text_var(
        "AWS_LAMBDA_LOG_FORMAT",
        "`JSON`",
        "set by Lambda from the template; JSON lines with `request_id` and `sub`, never addresses, phones, codes or tokens",
    ),
    text_var(
        "RUST_LOG",
        "",
        "local runs only: a full filter (`level` and `target=level` directives) that wins over the level above, and over its limits",
    ),
];

/// What the store needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// The table every access pattern uses.
    pub table_name: String,
    /// Addresses per user, primary included.
    pub max_emails_per_user: u32,
    /// How long an unverified address holds its claim, from when the user first
    /// added it (in the last 24 hours). Resends never extend it.
    pub verification_ttl_seconds: i64,
    /// How long one code is valid.
    pub code_ttl_seconds: i64,
    /// Wrong codes allowed per code.
    pub verification_max_attempts: u32,
    /// Wrong codes allowed per user and address in a rolling 24 hours.
    pub max_wrong_codes_per_address: u32,
    /// Wrong codes allowed per user in a rolling 24 hours.
    pub max_wrong_codes_per_user: u32,
    /// Codes issued per address (adds and resends, by anyone) in a rolling 24
    /// hours, past each requester's first [`CODES_NEVER_CROWDED_OUT`].
    pub max_codes_per_address: u32,
    /// Codes one user may have sent to one address in a rolling 24 hours.
    pub max_codes_per_user_address: u32,
    /// Codes one user may have sent, to any addresses, in a rolling 24 hours.
    pub max_codes_per_user: u32,
    /// A new code for the same address at most this often.
    pub resend_interval_seconds: i64,
    /// Availability checks per user in a rolling 24 hours.
    pub max_availability_checks: u32,
    /// Exports of their own account per user in a rolling 24 hours.
    pub max_exports: u32,
}

impl StoreConfig {
    /// Addresses per user unless configured.
    pub const DEFAULT_MAX_EMAILS: u32 = MAX_EMAILS_PER_USER.default;
    /// The most addresses whose deletion fits one 100-item transaction.
    pub const MAX_EMAILS_CAP: u32 = MAX_EMAILS_PER_USER.max;
    /// How long an unverified address holds its claim unless configured.
    pub const DEFAULT_TTL_SECONDS: i64 = VERIFICATION_TTL_SECONDS.default as i64;
    /// How long a code is valid unless configured.
    pub const DEFAULT_CODE_TTL_SECONDS: i64 = VERIFICATION_CODE_TTL_SECONDS.default as i64;
    /// Wrong codes per code unless configured.
    pub const DEFAULT_MAX_ATTEMPTS: u32 = VERIFICATION_MAX_ATTEMPTS.default;
    /// Wrong codes per user and address a day unless configured.
    pub const DEFAULT_MAX_WRONG_CODES_PER_ADDRESS: u32 = VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS.default;
    /// Wrong codes per user a day unless configured.
    pub const DEFAULT_MAX_WRONG_CODES_PER_USER: u32 = VERIFICATION_MAX_WRONG_CODES_PER_USER.default;
    /// Codes per address a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_ADDRESS: u32 = VERIFICATION_MAX_CODES_PER_ADDRESS.default;
    /// Codes one user may send to one address a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_USER_ADDRESS: u32 = VERIFICATION_MAX_CODES_PER_USER_ADDRESS.default;
    /// Codes one user may send a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_USER: u32 = VERIFICATION_MAX_CODES_PER_USER.default;
    /// The pause between two codes for one address unless configured.
    pub const RESEND_INTERVAL_SECONDS: i64 = VERIFICATION_RESEND_INTERVAL_SECONDS.default as i64;

    /// The defaults, on `table_name`: what tests and tools start from.
    pub fn new(table_name: impl Into<String>) -> Self {
        Self {
            table_name: table_name.into(),
            max_emails_per_user: Self::DEFAULT_MAX_EMAILS,
            verification_ttl_seconds: Self::DEFAULT_TTL_SECONDS,
            code_ttl_seconds: Self::DEFAULT_CODE_TTL_SECONDS,
            verification_max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            max_wrong_codes_per_address: Self::DEFAULT_MAX_WRONG_CODES_PER_ADDRESS,
            max_wrong_codes_per_user: Self::DEFAULT_MAX_WRONG_CODES_PER_USER,
            max_codes_per_address: Self::DEFAULT_MAX_CODES_PER_ADDRESS,
            max_codes_per_user_address: Self::DEFAULT_MAX_CODES_PER_USER_ADDRESS,
            max_codes_per_user: Self::DEFAULT_MAX_CODES_PER_USER,
            resend_interval_seconds: Self::RESEND_INTERVAL_SECONDS,
            max_availability_checks: AVAILABILITY_CHECKS_PER_USER.default,
            max_exports: EXPORTS_PER_USER.default,
        }
    }

    /// The configuration a function's environment gives.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration `lookup` gives, for tests that set variables without
    /// touching the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let table_name = required(&lookup, "TABLE_NAME", "the DynamoDB table name")?;
        let mut c = Self::new(table_name);
        let set = |target: &mut u32, var| override_number(&lookup, target, var);
        set(&mut c.max_emails_per_user, MAX_EMAILS_PER_USER)?;
        set(&mut c.verification_max_attempts, VERIFICATION_MAX_ATTEMPTS)?;
        set(
            &mut c.max_wrong_codes_per_address,
            VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS,
        )?;
        set(&mut c.max_wrong_codes_per_user, VERIFICATION_MAX_WRONG_CODES_PER_USER)?;
        set(&mut c.max_codes_per_address, VERIFICATION_MAX_CODES_PER_ADDRESS)?;
        set(
            &mut c.max_codes_per_user_address,
            VERIFICATION_MAX_CODES_PER_USER_ADDRESS,
        )?;
        set(&mut c.max_codes_per_user, VERIFICATION_MAX_CODES_PER_USER)?;
        set(&mut c.max_availability_checks, AVAILABILITY_CHECKS_PER_USER)?;
        set(&mut c.max_exports, EXPORTS_PER_USER)?;
        let set_seconds = |target: &mut i64, var| override_number(&lookup, target, var);
        set_seconds(&mut c.verification_ttl_seconds, VERIFICATION_TTL_SECONDS)?;
        set_seconds(&mut c.code_ttl_seconds, VERIFICATION_CODE_TTL_SECONDS)?;
        set_seconds(&mut c.resend_interval_seconds, VERIFICATION_RESEND_INTERVAL_SECONDS)?;
        Ok(c)
    }
}

/// How the reconcile pass runs, and the quotas it shares with the sign-in path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconcileConfig {
    /// A pass starts this long after the last one started.
    pub interval_hours: u32,
    /// The share of each Cognito quota category the pass may use, in percent.
    pub quota_share_percent: u32,
    /// The account's UserList quota, requests a second.
    pub user_list_rps: u32,
    /// The account's UserRead quota, requests a second.
    pub user_read_rps: u32,
    /// The account's UserUpdate quota, requests a second.
    pub user_update_rps: u32,
    /// Segments of the parallel scan.
    pub scan_segments: u32,
    /// Partitions listed at once.
    pub partitions_at_once: u32,
    /// ListUsers calls one run may make, if bounded: a run that has made
    /// them stops as if its time were up. No variable sets it: tests do, to
    /// cut runs at a place of their choosing rather than at a machine's speed.
    pub list_calls_per_run: Option<u32>,
}

impl Default for ReconcileConfig {
    fn default() -> Self {
        Self {
            interval_hours: RECONCILE_INTERVAL_HOURS.default,
            quota_share_percent: RECONCILE_QUOTA_SHARE_PERCENT.default,
            user_list_rps: COGNITO_USER_LIST_RPS.default,
            user_read_rps: COGNITO_USER_READ_RPS.default,
            user_update_rps: COGNITO_USER_UPDATE_RPS.default,
            scan_segments: RECONCILE_SCAN_SEGMENTS.default,
            partitions_at_once: RECONCILE_PARTITIONS_AT_ONCE.default,
            list_calls_per_run: None,
        }
    }
}

impl ReconcileConfig {
    /// The settings `lookup` gives, each within its range.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut c = Self::default();
        let set = |target: &mut u32, var| override_number(&lookup, target, var);
        set(&mut c.interval_hours, RECONCILE_INTERVAL_HOURS)?;
        set(&mut c.quota_share_percent, RECONCILE_QUOTA_SHARE_PERCENT)?;
        set(&mut c.user_list_rps, COGNITO_USER_LIST_RPS)?;
        set(&mut c.user_read_rps, COGNITO_USER_READ_RPS)?;
        set(&mut c.user_update_rps, COGNITO_USER_UPDATE_RPS)?;
        set(&mut c.scan_segments, RECONCILE_SCAN_SEGMENTS)?;
        set(&mut c.partitions_at_once, RECONCILE_PARTITIONS_AT_ONCE)?;
        Ok(c)
    }
}

/// Timeouts of the DynamoDB client. Attempts are retried by the SDK inside the
/// operation timeout; both stay well inside Cognito's 5 s trigger limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientTimeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// One attempt of a call.
    pub attempt: Duration,
    /// A whole call, retries included.
    pub operation: Duration,
}

impl ClientTimeouts {
    /// The timeouts `lookup` gives, each within its range.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let ms = |var: NumberVar| -> Result<Duration, ConfigError> {
            Ok(Duration::from_millis(u64::from(
                number(&lookup, var)?.unwrap_or(var.default),
            )))
        };
        Ok(Self {
            connect: ms(DYNAMODB_CONNECT_TIMEOUT_MS)?,
            attempt: ms(DYNAMODB_ATTEMPT_TIMEOUT_MS)?,
            operation: ms(DYNAMODB_OPERATION_TIMEOUT_MS)?,
        })
    }
}

/// Sets `target` from the variable `var` when it is set.
fn override_number<T: From<u32>>(
    lookup: &impl Fn(&str) -> Option<String>,
    target: &mut T,
    var: NumberVar,
) -> Result<(), ConfigError> {
    if let Some(value) = number(lookup, var)? {
        *target = T::from(value);
    }
    Ok(())
}

/// A whole number in `var`'s range, or `None` when unset. The error names the
/// variable, the allowed range and the value given.
fn number(lookup: &impl Fn(&str) -> Option<String>, var: NumberVar) -> Result<Option<u32>, ConfigError> {
    let Some(raw) = lookup(var.name) else {
        return Ok(None);
    };
    let invalid = || ConfigError::Invalid {
        name: var.name,
        reason: format!("must be a whole number from {} to {}; got {raw:?}", var.min, var.max),
    };
    let value: u32 = raw.trim().parse().map_err(|_| invalid())?;
    if value < var.min || value > var.max {
        return Err(invalid());
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn table_name_is_required() {
        assert_eq!(
            StoreConfig::from_lookup(lookup(&[])),
            Err(ConfigError::Missing {
                name: "TABLE_NAME",
                what: "the DynamoDB table name"
            })
        );
        assert!(
            StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "  ")]))
                .unwrap_err()
                .to_string()
                .contains("TABLE_NAME is not set")
        );
    }

    #[test]
    fn defaults_and_overrides() {
        let c = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "users")])).unwrap();
        assert_eq!(c, StoreConfig::new("users"));
        assert_eq!(
            (
                c.max_emails_per_user,
                c.verification_ttl_seconds,
                c.verification_max_attempts
            ),
            (10, 3_600, 5)
        );
        let c = StoreConfig::from_lookup(lookup(&[
            ("TABLE_NAME", "users"),
            ("MAX_EMAILS_PER_USER", "3"),
            ("VERIFICATION_TTL_SECONDS", "600"),
            ("VERIFICATION_MAX_ATTEMPTS", "2"),
        ]))
        .unwrap();
        assert_eq!(
            (
                c.max_emails_per_user,
                c.verification_ttl_seconds,
                c.verification_max_attempts
            ),
            (3, 600, 2)
        );
    }

    #[test]
    fn bad_numbers_are_refused_by_name() {
        let err = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "ten")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 49; got \"ten\""
        );
        let err =
            StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("VERIFICATION_MAX_ATTEMPTS", "0")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "VERIFICATION_MAX_ATTEMPTS is invalid: must be a whole number from 1 to 100; got \"0\""
        );
    }

    #[test]
    fn a_delete_of_the_most_addresses_fits_one_transaction() {
        // The profile, a record and a claim per address, and an admin's delete
        // the acting admin's own profile: at most 100 items.
        const ITEMS: u32 = 1 + StoreConfig::MAX_EMAILS_CAP * 2 + 1;
        const { assert!(ITEMS <= 100) };
        let err = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "50")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 49; got \"50\""
        );
        let c = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "49")])).unwrap();
        assert_eq!(c.max_emails_per_user, 49);
    }

    #[test]
    fn every_number_variable_keeps_its_documented_default_and_range() {
        let store_numbers = [
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
            AVAILABILITY_CHECKS_PER_USER,
            EXPORTS_PER_USER,
        ];
        let timeouts = [
            DYNAMODB_CONNECT_TIMEOUT_MS,
            DYNAMODB_ATTEMPT_TIMEOUT_MS,
            DYNAMODB_OPERATION_TIMEOUT_MS,
        ];
        let parses = |var: NumberVar, value: u32| {
            let value = value.to_string();
            let pairs = [("TABLE_NAME", "t"), (var.name, value.as_str())];
            if timeouts.contains(&var) {
                ClientTimeouts::from_lookup(lookup(&pairs)).is_ok()
            } else {
                StoreConfig::from_lookup(lookup(&pairs)).is_ok()
            }
        };
        for var in store_numbers.into_iter().chain(timeouts) {
            assert!(var.min <= var.default && var.default <= var.max, "{}", var.name);
            assert!(parses(var, var.min) && parses(var, var.max), "{}", var.name);
            assert!(!parses(var, var.min - 1) && !parses(var, var.max + 1), "{}", var.name);
            assert!(
                VARIABLES.iter().any(|v| v.setting == Setting::Number(var)),
                "{} is documented",
                var.name
            );
        }
        let t = ClientTimeouts::from_lookup(lookup(&[])).unwrap();
        assert_eq!(
            t.operation,
            Duration::from_millis(u64::from(DYNAMODB_OPERATION_TIMEOUT_MS.default))
        );
    }

    #[test]
    fn timeouts_default_inside_cognitos_limit() {
        let t = ClientTimeouts::from_lookup(lookup(&[])).unwrap();
        assert!(t.operation < Duration::from_secs(5));
        assert!(t.attempt <= t.operation);
    }
}
