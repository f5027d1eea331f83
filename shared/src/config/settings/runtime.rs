//! What every function reads at run time: the table, the clients, their timeouts, logging, the admin group.

use super::super::setting::{From, Need, Range, Reaches, Setting, Value};

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

/// How recent a sign-in must be, in seconds, for a change that can hand the
/// account to someone else: switching the primary address, removing an
/// address, deleting the account.
pub const REAUTHENTICATION_WINDOW_SECONDS: Setting = Setting {
    variable: Some("REAUTHENTICATION_WINDOW_SECONDS"),
    parameter: Some("ReauthenticationWindowSeconds"),
    value: Value::Number(Range {
        default: 600,
        min: 60,
        max: Some(86_400),
    }),
    about: "How recent a sign-in must be, in seconds, for a change that can hand the account to someone else: switching the primary address, removing an address, deleting the account.",
    why: &[
        "Read from the access token's auth_time, which a refresh keeps: whoever holds a stolen access or refresh token cannot make the sign-in recent.",
        "Past it the API answers 401 REAUTHENTICATION_REQUIRED with RFC 9470's challenge; the client signs in again and retries.",
    ],
    reaches: Reaches::Functions(Need::RecentSignIn, From::Parameter),
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

/// The page a recovery link opens, with the token in its fragment.
pub const ADDRESS_RECOVERY_URL: Setting = Setting {
    variable: Some("ADDRESS_RECOVERY_URL"),
    parameter: Some("AddressRecoveryUrl"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(https://[^ #]+)?$"),
        constraint: None,
    },
    about: "The page the recovery link in a former primary's notice opens, the token after `#token=`; empty means the stack's own page, GET /recovery on the HTTP API.",
    why: &[
        "The token rides in the fragment, which browsers never send: it stays out of access logs and Referer headers.",
        "The page asks before it recovers (a POST): mail scanners that open links change nothing.",
    ],
    reaches: Reaches::Functions(
        Need::Mail,
        From::Template(
            "!If [HasAddressRecoveryUrl, !Ref AddressRecoveryUrl, !Sub \"https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/recovery\"]",
        ),
    ),
};

/// The page an invitation's link opens, with the token in its fragment.
pub const INVITATION_URL: Setting = Setting {
    variable: Some("INVITATION_URL"),
    parameter: Some("InvitationUrl"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(https://[^ #]+)?$"),
        constraint: None,
    },
    about: "The page of your product that accepts an invitation: the mail links to it with the token after `#token=`, and the page posts it to POST /invitations/accept for the signed-in user. Empty: the mail gives the token to paste.",
    why: &[
        "Accepting needs the invitee signed in (their token's sub, and an address of theirs verified), which only your product's pages have.",
        "The token rides in the fragment, which browsers never send: it stays out of access logs and Referer headers.",
    ],
    reaches: Reaches::Functions(Need::Mail, From::Parameter),
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
