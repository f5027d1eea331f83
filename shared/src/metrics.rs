//! The one list of business metrics. The functions emit them in CloudWatch
//! Embedded Metric Format, one document per invocation, in the namespace
//! `METRICS_NAMESPACE` (the template sets `UserService/<stack>`) with one
//! dimension, `FunctionName`. `cargo xtask template` draws the dashboard's
//! business widgets and the metric alarms from this list.
//!
//! No user data ever goes into a metric: no dimension but the function's name,
//! no properties.
//!
//! Code counts through [`count`] (the `metrics` facade: without a recorder, as
//! in tests and tools, it does nothing); [`Emf`] is the recorder a function
//! installs at init and flushes after every invocation (`App::metered`).

/// Namespace when `METRICS_NAMESPACE` is unset (local runs and tests).
pub const DEFAULT_NAMESPACE: &str = crate::config::METRICS_NAMESPACE.default_str();

/// The one dimension of every metric: the function's name as Lambda gives it
/// (`AWS_LAMBDA_FUNCTION_NAME`, `<stack>-<binary>` when deployed).
pub const DIMENSION: &str = "FunctionName";

/// Every metric is a count (unit `Count`), summed per period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// A confirmed Cognito user got their profile and primary address.
    SignUps,
    /// An address another user had claimed but not verified was taken over: by
    /// an add once their claim had lapsed, or by a confirmed sign-up at any time.
    TakeOvers,
    /// A new address the deployment's address policy refuses (a `+tag`, a
    /// disposable domain, a domain off the allow-list), at add-email or sign-up.
    AddressesNotAllowed,
    /// A verification code was issued and handed to the sender (add or resend).
    CodesIssued,
    /// A send was refused by a limit (codes per address a day, resend spacing).
    CodesRefusedByLimit,
    /// A code verified its address.
    VerificationsSucceeded,
    /// A wrong code.
    VerificationsFailed,
    /// A verification refused by a limit before the code was compared (attempts
    /// per code, wrong codes per address or per user a day), or on an expired code.
    VerificationsRefusedByLimit,
    /// The primary address moved to another verified address.
    PrimarySwitches,
    /// An address was removed from an account.
    EmailsRemoved,
    /// A former primary address followed its recovery link and took the account back.
    AccountsRecovered,
    /// A recovery link that undid nothing (unknown, used, lapsed): guesses show here.
    RecoveryLinksRefused,
    /// An account was deleted and its personal data erased (by its user, an
    /// admin, or reconcile-users after a deletion in Cognito).
    UsersDeleted,
    /// A write retried after losing a race (a TransactionConflict, or a
    /// condition that failed because another request moved first): one per
    /// extra attempt. A second attempt planned from what the first one's
    /// cancellation showed (a claim to take over, a counter first seen) is not one.
    ContentionRetries,
    /// A write refused by its conditions (an invariant held, a version was
    /// stale, a limit was reached), answered as that refusal; a condition that
    /// only moved under the write is a contention retry instead.
    ConditionalCheckFailures,
    /// DynamoDB refused a call for throughput (after the SDK's retries).
    DynamoDbThrottled,
    /// A write that kept losing races until the store's retries ran out
    /// (transaction conflicts, conditions that kept moving): answered 503.
    DynamoDbTransactionConflicts,
    /// A DynamoDB call timed out or could not be sent.
    DynamoDbTimeouts,
    /// DynamoDB answered 5xx (after the SDK's retries).
    DynamoDbServerErrors,
    /// Any other DynamoDB error (validation, access denied): a bug or a
    /// misconfiguration, never expected.
    DynamoDbOtherErrors,
    /// A reconcile pass compared every live profile with Cognito and erased
    /// the users Cognito no longer has; an alarm fires when none completes
    /// for `ReconcileAlarmDays` days.
    ReconcilePassesCompleted,
    /// An admin looked a user up by address (found or not), or read a page of the user list.
    AdminLookups,
    /// An admin suspended, re-activated or deleted a user.
    AdminStatusChanges,
    /// An admin action that did not happen: refused (unknown user, own account,
    /// a bad request) or failed (503); the audit event has its problem code.
    AdminActionsRefused,
    /// The migration trigger handed a pending user to Cognito at sign-in: a
    /// legacy password matched.
    MigrationsStarted,
    /// The migration trigger handed a pending user to Cognito on a
    /// forgot-password: Cognito creates the user at once, and their legacy
    /// password no longer works. Anyone who knows the address can ask, so a
    /// burst of them has its alarm.
    MigrationsByPasswordReset,
    /// A wrong password at a pending user's first sign-in, counted against
    /// the daily limit of the legacy hash.
    WrongLegacyPasswords,
    /// A pending user became the profile of their new Cognito `sub`.
    UsersMigrated,
}

impl Metric {
    /// Every metric, in the order each widget draws its lines; a metric left out is never described or drawn.
    pub const ALL: &'static [Metric] = &[
        Metric::SignUps,
        Metric::TakeOvers,
        Metric::AddressesNotAllowed,
        Metric::CodesIssued,
        Metric::CodesRefusedByLimit,
        Metric::VerificationsSucceeded,
        Metric::VerificationsFailed,
        Metric::VerificationsRefusedByLimit,
        Metric::PrimarySwitches,
        Metric::EmailsRemoved,
        Metric::AccountsRecovered,
        Metric::RecoveryLinksRefused,
        Metric::UsersDeleted,
        Metric::ReconcilePassesCompleted,
        Metric::ContentionRetries,
        Metric::ConditionalCheckFailures,
        Metric::DynamoDbThrottled,
        Metric::DynamoDbTransactionConflicts,
        Metric::DynamoDbTimeouts,
        Metric::DynamoDbServerErrors,
        Metric::DynamoDbOtherErrors,
        Metric::AdminLookups,
        Metric::AdminStatusChanges,
        Metric::AdminActionsRefused,
        Metric::MigrationsStarted,
        Metric::MigrationsByPasswordReset,
        Metric::WrongLegacyPasswords,
        Metric::UsersMigrated,
    ];

    /// The metric's name in CloudWatch.
    pub const fn name(self) -> &'static str {
        match self {
            Metric::SignUps => "SignUps",
            Metric::TakeOvers => "TakeOvers",
            Metric::AddressesNotAllowed => "AddressesNotAllowed",
            Metric::CodesIssued => "CodesIssued",
            Metric::CodesRefusedByLimit => "CodesRefusedByLimit",
            Metric::VerificationsSucceeded => "VerificationsSucceeded",
            Metric::VerificationsFailed => "VerificationsFailed",
            Metric::VerificationsRefusedByLimit => "VerificationsRefusedByLimit",
            Metric::PrimarySwitches => "PrimarySwitches",
            Metric::EmailsRemoved => "EmailsRemoved",
            Metric::AccountsRecovered => "AccountsRecovered",
            Metric::RecoveryLinksRefused => "RecoveryLinksRefused",
            Metric::UsersDeleted => "UsersDeleted",
            Metric::ReconcilePassesCompleted => "ReconcilePassesCompleted",
            Metric::ContentionRetries => "ContentionRetries",
            Metric::ConditionalCheckFailures => "ConditionalCheckFailures",
            Metric::DynamoDbThrottled => "DynamoDbThrottled",
            Metric::DynamoDbTransactionConflicts => "DynamoDbTransactionConflicts",
            Metric::DynamoDbTimeouts => "DynamoDbTimeouts",
            Metric::DynamoDbServerErrors => "DynamoDbServerErrors",
            Metric::DynamoDbOtherErrors => "DynamoDbOtherErrors",
            Metric::AdminLookups => "AdminLookups",
            Metric::AdminStatusChanges => "AdminStatusChanges",
            Metric::AdminActionsRefused => "AdminActionsRefused",
            Metric::MigrationsStarted => "MigrationsStarted",
            Metric::MigrationsByPasswordReset => "MigrationsByPasswordReset",
            Metric::WrongLegacyPasswords => "WrongLegacyPasswords",
            Metric::UsersMigrated => "UsersMigrated",
        }
    }

    /// The dashboard widget the metric is drawn in.
    pub const fn group(self) -> Group {
        match self {
            Metric::SignUps
            | Metric::TakeOvers
            | Metric::AddressesNotAllowed
            | Metric::PrimarySwitches
            | Metric::EmailsRemoved
            | Metric::AccountsRecovered
            | Metric::RecoveryLinksRefused
            | Metric::UsersDeleted
            | Metric::ReconcilePassesCompleted
            | Metric::MigrationsStarted
            | Metric::MigrationsByPasswordReset
            | Metric::WrongLegacyPasswords
            | Metric::UsersMigrated => Group::Accounts,
            Metric::CodesIssued
            | Metric::CodesRefusedByLimit
            | Metric::VerificationsSucceeded
            | Metric::VerificationsFailed
            | Metric::VerificationsRefusedByLimit => Group::Verification,
            Metric::ContentionRetries
            | Metric::ConditionalCheckFailures
            | Metric::DynamoDbThrottled
            | Metric::DynamoDbTransactionConflicts
            | Metric::DynamoDbTimeouts
            | Metric::DynamoDbServerErrors
            | Metric::DynamoDbOtherErrors => Group::Table,
            Metric::AdminLookups | Metric::AdminStatusChanges | Metric::AdminActionsRefused => Group::Admin,
        }
    }
}

/// The business widgets of the dashboard, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Sign-ups, take-overs, primary switches, removals and deletions.
    Accounts,
    /// Codes issued and verifications, with the refusals of their limits.
    Verification,
    /// How writes fare in DynamoDB: contention, refused conditions and errors by kind.
    Table,
    /// What admins looked up and changed, and what was refused them.
    Admin,
}

impl Group {
    /// Every widget, in the order the dashboard draws them.
    pub const ALL: &'static [Group] = &[Group::Accounts, Group::Verification, Group::Table, Group::Admin];

    /// The widget's heading on the dashboard.
    pub const fn title(self) -> &'static str {
        match self {
            Group::Accounts => "Accounts: sign-ups, take-overs, primary switches, removals, deletions",
            Group::Verification => "Verification: codes issued, verifications and limits",
            Group::Table => "Writes: contention, condition failures, DynamoDB errors by kind",
            Group::Admin => "Admin actions",
        }
    }
}

/// Counts one occurrence of `metric`, in the recorder of this process (or of
/// the current thread, in tests); a no-op where none is installed.
#[cfg(feature = "metrics")]
pub fn count(metric: Metric) {
    ::metrics::counter!(metric.name()).increment(1);
}

#[cfg(feature = "metrics")]
pub use emf::{Emf, MetricsError};

#[cfg(feature = "metrics")]
mod emf {
    use std::io::Write;
    use std::panic::AssertUnwindSafe;
    use std::sync::OnceLock;

    use metrics_cloudwatch_embedded::{Builder, Collector};

    use super::{DEFAULT_NAMESPACE, DIMENSION, Metric};
    use crate::config::optional;
    use crate::config::{AWS_LAMBDA_FUNCTION_NAME, METRICS_NAMESPACE};

    /// Why metrics were not installed or not written. Never an invocation's failure.
    #[derive(Debug, thiserror::Error)]
    pub enum MetricsError {
        /// Another recorder is installed already, or the collector could not start.
        #[error("the metrics recorder could not be installed: {0}")]
        Install(String),
        /// The document could not be written out; its counts are lost.
        #[error("the metrics document could not be written")]
        Write(#[source] std::io::Error),
        /// The collector panicked while flushing; its counts are lost.
        #[error("the metrics collector panicked while flushing")]
        Panicked,
    }

    /// The EMF recorder of this execution environment: every counter [`super::count`]
    /// moved, written as one EMF document by [`Emf::flush`]. Counters that
    /// stayed at zero are left out; with none moved nothing is written.
    #[derive(Clone, Copy)]
    pub struct Emf {
        collector: &'static Collector,
    }

    impl std::fmt::Debug for Emf {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Emf")
                .field("namespace", &&*self.collector.config.cloudwatch_namespace)
                .finish_non_exhaustive()
        }
    }

    impl Emf {
        /// The process's recorder, installed on the first call: the namespace
        /// from `METRICS_NAMESPACE` (else [`DEFAULT_NAMESPACE`]), the one
        /// dimension `FunctionName` from `AWS_LAMBDA_FUNCTION_NAME` (else
        /// `binary`). A failure is logged and the function runs without metrics.
        pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>, binary: &str) -> Option<Self> {
            static INSTALLED: OnceLock<Option<Emf>> = OnceLock::new();
            *INSTALLED.get_or_init(|| {
                let namespace = optional(&lookup, METRICS_NAMESPACE).unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
                let function = optional(&lookup, AWS_LAMBDA_FUNCTION_NAME).unwrap_or_else(|| binary.to_owned());
                Self::install(namespace, function)
                    .inspect_err(|err| tracing::warn!(cause = %crate::error::chain(err), "running without metrics"))
                    .ok()
            })
        }

        /// Installs the global recorder; fails if the process has one already.
        pub fn install(namespace: String, function: String) -> Result<Self, MetricsError> {
            let collector = Builder::new()
                .cloudwatch_namespace(namespace)
                .with_dimension(DIMENSION, function)
                .init()
                .map_err(|err| MetricsError::Install(err.to_string()))?;
            // Every metric is a count: the unit goes into each directive.
            for metric in Metric::ALL {
                ::metrics::describe_counter!(metric.name(), ::metrics::Unit::Count, metric.name());
            }
            Ok(Self { collector })
        }

        /// Appends the document of the counters that moved since the last
        /// flush to `out` (one line; nothing when none moved) and resets them.
        pub fn write(&self, out: &mut Vec<u8>) -> Result<(), MetricsError> {
            // The collector unwraps its lock and the clock: a panic there must
            // not become the invocation's (lambda_runtime reports panics as errors).
            std::panic::catch_unwind(AssertUnwindSafe(|| self.collector.flush(&mut *out)))
                .map_err(|_| MetricsError::Panicked)?
                .map_err(MetricsError::Write)
        }

        /// Writes the document to stdout, where Lambda sends it to CloudWatch
        /// Logs, which extracts the metrics. Never fails the invocation: a
        /// failure is logged and the counts it held are lost.
        pub fn flush(&self) {
            let mut line = Vec::with_capacity(512);
            let written = self.write(&mut line).and_then(|()| {
                if line.is_empty() {
                    return Ok(());
                }
                // One write of the whole line: log lines never interleave with it.
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(&line)
                    .and_then(|()| stdout.flush())
                    .map_err(MetricsError::Write)
            });
            if let Err(err) = written {
                tracing::warn!(cause = %crate::error::chain(&err), "metrics not written");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_cloudwatch_names_and_all_is_complete() {
        let mut names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        assert!(
            names
                .iter()
                .all(|n| !n.is_empty() && n.len() <= 255 && n.bytes().all(|b| b.is_ascii_alphanumeric()))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Metric::ALL.len());
        // Every group draws something.
        for group in Group::ALL {
            assert!(Metric::ALL.iter().any(|m| m.group() == *group), "{group:?}");
        }
    }
}
