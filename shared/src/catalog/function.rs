//! What one entry of the catalog is: a function, what triggers it, who may
//! call it, the alarms that watch it, and what its entry implies (the
//! settings it reads, whether Cognito calls it).

/// Who may call an HTTP route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any signed-in user, acting as the token's `sub`.
    User,
    /// Members of the admin group only.
    Admin,
    /// Anyone, without a token: what the request carries is its own proof (a
    /// recovery link's token). The HTTP API runs no authorizer on the route.
    Anyone,
    /// An organization's directory (its identity provider), by a SCIM token
    /// in `Authorization`, proven by the function before anything else. The
    /// HTTP API runs no authorizer on the route. A SCIM route speaks RFC 7644
    /// (`application/scim+json`, its own errors), not this API's problems:
    /// its handler is in `api::scim`, not `api::routes`.
    Directory,
}

/// What invokes a function; the template writes its event or trigger wiring from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A route of the stack's HTTP API.
    Http {
        /// The HTTP method the route answers (`GET`, `PATCH`, ...).
        method: &'static str,
        /// The route's path as the HTTP API matches it; `{name}` marks a path parameter.
        path: &'static str,
        /// Who may call the route: the handler admits only admins to an `Admin` route.
        access: Access,
    },
    /// Cognito's PreSignUp trigger: runs before Cognito creates the account.
    CognitoPreSignUp,
    /// Cognito's PostConfirmation trigger: runs once a sign-up is confirmed.
    CognitoPostConfirmation,
    /// Every sign-in: the repair path for confirmed users without a profile.
    CognitoPostAuthentication,
    /// Cognito's UserMigration trigger: a sign-in or forgot-password with an
    /// address Cognito does not know. Wired to the pool only while the stack's
    /// `LegacyPasswordMigration` is `on`.
    CognitoUserMigration,
    /// An EventBridge schedule (`rate(...)`). `event` names the SAM event, and
    /// so the deployed rule: renaming it replaces the rule.
    Schedule {
        /// The SAM event name; renaming it replaces the deployed rule.
        event: &'static str,
        /// The schedule expression, such as `rate(1 day)`.
        rate: &'static str,
        /// CloudTrail records of API calls that invoke it too, as they happen.
        api_calls: Option<ApiCalls>,
    },
    /// The table's stream (NEW_AND_OLD_IMAGES), through an event source mapping
    /// that passes only the records matching one of `filters` (Lambda filter
    /// patterns). `event` names the SAM event, and so the deployed event source
    /// mapping: renaming it starts a new mapping that replays the stream's last
    /// 24 hours. A table's stream serves at most two readers at once: this
    /// service's two (sync-cognito-email, publish-events) are both; any other
    /// reader subscribes to the event bus.
    TableStream {
        /// The SAM event name; renaming it starts a new mapping that replays the last 24 hours.
        event: &'static str,
        /// The Lambda filter patterns (JSON); a record matching any is delivered.
        filters: &'static [&'static str],
    },
}

/// An EventBridge rule on CloudTrail's records of API calls ("AWS API Call via
/// CloudTrail"), on the default bus. Such records reach EventBridge only where
/// a trail with logging on exists (the template's `CreateTrail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiCalls {
    /// The SAM event name; renaming it replaces the deployed rule.
    pub event: &'static str,
    /// The rule's event pattern (JSON).
    pub pattern: &'static str,
}

/// A CloudWatch alarm on one function. Each notifies the stack's alarm topic
/// (`EnableAlarms`, on by default). `cargo xtask template` writes them, beside
/// the stack's own alarms (API, table, GSI1, SES), and the dashboard lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alarm {
    /// Any unhandled error, panic or timeout in five minutes.
    Errors,
    /// Any invocation refused for want of concurrency in five minutes.
    Throttles,
    /// The p99 duration reached 80 % of the function's timeout, three 5-minute
    /// periods in a row (a scheduled function: one run). Timeouts are near; the
    /// Errors alarm fires only once they happen.
    Duration,
    /// The function's `ConditionalCheckFailures` (a business metric) rose above
    /// its anomaly band: writes refused by their conditions far more often than
    /// usual (a client retrying a stale version, a race, a bug). Only on functions
    /// that write (PutItem, UpdateItem or DeleteItem in `dynamodb_actions`, which
    /// lists a TransactWriteItems by its items): a read has no condition to fail.
    ConditionalCheckFailures,
    /// The stream consumer is more than five minutes behind, for fifteen.
    /// Exists in every stack: a stalled sync fails quietly otherwise.
    IteratorAge,
    /// Records that exhausted their retries wait in the on-failure queue.
    /// Exists in every stack, as `IteratorAge`.
    FailedRecords,
    /// No reconcile pass completed (`ReconcilePassesCompleted`) for
    /// `ReconcileAlarmDays` days (7 by default): users who deleted themselves
    /// in Cognito may be keeping their data. On the reconcile, whose runs use
    /// their whole time by design, `Duration` watches for a run that went
    /// past the point where it stops itself instead.
    PassOverdue,
    /// More than `MigrationResetAlarmThreshold` pending users migrated by a
    /// forgot-password (`MigrationsByPasswordReset`) in five minutes: anyone
    /// who knows an address can start one, and it ends that user's legacy
    /// password, so a burst is someone walking a list of addresses.
    PasswordResetMigrations,
}

/// Every function is watched for these.
pub const STANDARD_ALARMS: &[Alarm] = &[
    Alarm::Errors,
    Alarm::Throttles,
    Alarm::Duration,
    Alarm::ConditionalCheckFailures,
];

/// Lambda's default for this service: every call it makes is cut to the
/// invocation's deadline, and DynamoDB's retries fit in 3 s.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 10;

/// Cognito waits at most 5 s for a trigger.
pub const TRIGGER_TIMEOUT_SECONDS: u32 = 4;

/// One Lambda function: its template block, IAM policy and init-time clients all follow from this entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// Package, binary and directory name under `functions/`.
    pub name: &'static str,
    /// What invokes it, which decides its event wiring and description.
    pub trigger: Trigger,
    /// One sentence: what it does, for the function's description.
    pub summary: &'static str,
    /// The Lambda timeout; the Duration alarm fires at 80 % of it.
    pub timeout_seconds: u32,
    /// The CloudWatch alarms the template writes for it.
    pub alarms: &'static [Alarm],
    /// DynamoDB IAM actions the code performs, including the item actions
    /// inside its TransactWriteItems.
    pub dynamodb_actions: &'static [&'static str],
    /// Whether it queries GSI1 (and so needs the index ARN).
    pub queries_gsi1: bool,
    /// Whether it queries GSI2, the list of users by status (and so needs that index's ARN).
    pub queries_gsi2: bool,
    /// Whether it hashes codes or addresses, and so reads the verification key's
    /// secret at init (`secretsmanager:GetSecretValue` on that secret alone).
    pub reads_verification_key: bool,
    /// Cognito admin actions it calls, on the stack's user pool alone.
    pub cognito_actions: &'static [&'static str],
    /// Whether it sends mail (`ses:SendEmail` on the sender identity and the
    /// configuration set). No other function builds an SES client.
    pub sends_email: bool,
    /// Whether it puts domain events on the stack's event bus
    /// (`events:PutEvents` on that bus alone).
    pub publishes_events: bool,
    /// Whether its change can hand the account to someone else (switching the
    /// primary address, removing one, deleting the account), and so needs a
    /// sign-in within `REAUTHENTICATION_WINDOW_SECONDS`: a stolen access token
    /// alone is not enough. Checked before the handler runs.
    pub needs_recent_sign_in: bool,
    /// Its memory, and so its share of CPU (one vCPU at 1,769 MB): the
    /// cheapest size whose measured cold start and warm p99 meet its target,
    /// chosen by `make bench` (docs/performance.md, "Memory per function");
    /// a test holds it to the committed figures (tools/bench/tuning.json).
    /// The stack's `FunctionMemorySize` can raise it, never lower it.
    pub memory_mb: u32,
    /// The least memory its own budget needs, whatever the measurements
    /// (migrate-user's legacy hashes); the choice never goes below it.
    pub memory_floor_mb: u32,
}

/// The least memory Lambda gives a function.
pub const MIN_MEMORY_MB: u32 = 128;

/// A function's memory until `make tuning` has measured it: a size that
/// meets every target the measured functions meet (docs/performance.md).
pub const UNMEASURED_MEMORY_MB: u32 = 512;

/// A function with the defaults: no secret, no Cognito, no mail, the default
/// timeout and the standard alarms.
pub(super) const fn function(
    name: &'static str,
    trigger: Trigger,
    summary: &'static str,
    dynamodb_actions: &'static [&'static str],
) -> Function {
    Function {
        name,
        trigger,
        summary,
        timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        alarms: STANDARD_ALARMS,
        dynamodb_actions,
        queries_gsi1: false,
        queries_gsi2: false,
        reads_verification_key: false,
        cognito_actions: &[],
        sends_email: false,
        publishes_events: false,
        needs_recent_sign_in: false,
        memory_mb: UNMEASURED_MEMORY_MB,
        memory_floor_mb: MIN_MEMORY_MB,
    }
}

pub(super) const fn http(
    name: &'static str,
    method: &'static str,
    path: &'static str,
    access: Access,
    summary: &'static str,
    dynamodb_actions: &'static [&'static str],
) -> Function {
    function(name, Trigger::Http { method, path, access }, summary, dynamodb_actions)
}

/// A SCIM route (RFC 7644) under `/scim/v2`, for an organization's directory.
pub(super) const fn scim(
    name: &'static str,
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    dynamodb_actions: &'static [&'static str],
) -> Function {
    Function {
        // The token is a keyed hash of the verification key.
        reads_verification_key: true,
        ..http(name, method, path, Access::Directory, summary, dynamodb_actions)
    }
}

impl Function {
    /// Whether Cognito invokes it. Such a function learns the pool from each
    /// event: naming the pool in its environment or its role would make the
    /// pool and the function depend on each other.
    pub const fn is_cognito_trigger(&self) -> bool {
        matches!(
            self.trigger,
            Trigger::CognitoPreSignUp
                | Trigger::CognitoPostConfirmation
                | Trigger::CognitoPostAuthentication
                | Trigger::CognitoUserMigration
        )
    }

    /// Whether it runs the reconcile's pass (it lists the pool's users), and so
    /// reads the pass's settings; its init is the only one they can fail.
    pub fn runs_the_reconcile(&self) -> bool {
        self.cognito_actions.contains(&"ListUsers")
    }

    /// Whether its entry shows the need, so it reads the settings that serve it.
    pub fn needs(&self, need: crate::config::setting::Need) -> bool {
        use crate::config::setting::Need;
        match need {
            Need::VerificationKey => self.reads_verification_key,
            // A trigger reads its pool from each event (see `is_cognito_trigger`).
            Need::Pool => !self.cognito_actions.is_empty() && !self.is_cognito_trigger(),
            Need::Mail => self.sends_email,
            Need::Bus => self.publishes_events,
            Need::Reconcile => self.runs_the_reconcile(),
            Need::RecentSignIn => self.needs_recent_sign_in,
        }
    }

    /// Whether it is a SCIM route, for an organization's directory.
    pub const fn is_scim(&self) -> bool {
        matches!(
            self.trigger,
            Trigger::Http {
                access: Access::Directory,
                ..
            }
        )
    }

    /// Who may call it; Cognito triggers are called by Cognito alone.
    pub const fn access(&self) -> Access {
        match self.trigger {
            Trigger::Http { access, .. } => access,
            Trigger::CognitoPreSignUp
            | Trigger::CognitoPostConfirmation
            | Trigger::CognitoPostAuthentication
            | Trigger::CognitoUserMigration
            | Trigger::Schedule { .. }
            | Trigger::TableStream { .. } => Access::User,
        }
    }
}
