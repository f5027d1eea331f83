//! What the business metrics cost: per invocation, the time and (callgrind)
//! the instructions of counting a typical invocation's metrics and writing
//! their EMF document, and the document's bytes; from those, CloudWatch's
//! price: Logs ingestion per million invocations, and the custom metrics a
//! month. `metrics-probe` (tools/bench/floors) does the counting, built as the
//! functions are.

use std::process::{Command, Stdio};

use serde_json::Value;
use user_service::catalog::{self, Function};
use user_service::metrics::Metric;

use crate::plan::Plan;

pub(crate) const PROBE: &str = "metrics-probe";

/// CloudWatch Logs ingestion, us-east-1, per GB (2^30 bytes): EMF documents
/// are log events.
pub(crate) const INGESTION_USD_PER_GB: f64 = 0.50;
/// A custom metric a month, us-east-1, the first 10,000 (prorated by the hour,
/// billed only for hours it receives data).
pub(crate) const METRIC_USD_PER_MONTH: f64 = 0.30;

/// The namespace and function name of a deployed stack named `user-service`,
/// the longest function name: the document is as long as it gets.
const NAMESPACE: &str = "UserService/user-service";
const FUNCTION: &str = "user-service-sync-cognito-email";

pub(crate) struct MetricsRow {
    pub(crate) invocation: &'static str,
    pub(crate) counted: Vec<Metric>,
    /// The EMF line, newline included; 0 when nothing is written.
    pub(crate) bytes: u64,
    pub(crate) ns: f64,
    /// Callgrind's count, outside the smoke.
    pub(crate) instructions: Option<u64>,
}

impl MetricsRow {
    /// Logs ingestion for a million invocations like this one.
    pub(crate) fn usd_per_million(&self) -> f64 {
        self.bytes as f64 * 1_000_000.0 / f64::from(1u32 << 30) * INGESTION_USD_PER_GB
    }
}

/// The invocations measured and what each counts.
fn cases() -> Vec<(&'static str, Vec<Metric>)> {
    vec![
        ("a read: nothing counted, nothing written", vec![]),
        ("add-email: a code issued", vec![Metric::CodesIssued]),
        (
            "send-verification refused: a limit, by a condition",
            vec![Metric::CodesRefusedByLimit, Metric::ConditionalCheckFailures],
        ),
        ("every metric at once: the largest document", Metric::ALL.to_vec()),
    ]
}

/// One run of the probe: (bytes, ns per round).
fn probe(plan: &Plan, rounds: u64, counted: &[Metric], wrapper: Option<(&str, Vec<String>)>) -> (u64, f64) {
    let binary = plan.binary(PROBE);
    let mut command = match &wrapper {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&binary);
            c
        }
        None => Command::new(&binary),
    };
    let out = command
        .arg(rounds.to_string())
        .args(counted.iter().map(|m| m.name()))
        .env("METRICS_NAMESPACE", NAMESPACE)
        .env("AWS_LAMBDA_FUNCTION_NAME", FUNCTION)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", binary.display());
    let line = stderr.lines().rev().find(|l| l.starts_with('{')).unwrap_or_default();
    let report: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{PROBE} said {stderr}: {e}"));
    (
        report["bytes"].as_u64().unwrap(),
        report["ns_per_round"].as_f64().unwrap(),
    )
}

/// Instructions per round: callgrind's totals for `many` rounds less `few`.
fn instructions(plan: &Plan, counted: &[Metric]) -> u64 {
    let (few, many) = (100u64, 1_100u64);
    let mut totals = Vec::new();
    for rounds in [few, many] {
        let file = plan
            .out
            .join(format!("callgrind.{PROBE}.{}.{rounds}.out", counted.len()));
        let _ = std::fs::remove_file(&file);
        let args = vec![
            "--tool=callgrind".to_owned(),
            format!("--callgrind-out-file={}", file.display()),
        ];
        probe(plan, rounds, counted, Some(("valgrind", args)));
        totals.push(crate::callgrind::callgrind_total(&file));
    }
    totals[1].saturating_sub(totals[0]) / (many - few)
}

/// Every case: the bytes, the time (and the instructions, outside the smoke).
pub(crate) fn measure(plan: &Plan) -> Vec<MetricsRow> {
    let rounds = if plan.smoke { 200 } else { 100_000 };
    cases()
        .into_iter()
        .map(|(invocation, counted)| {
            let (bytes, ns) = probe(plan, rounds, &counted, None);
            let instructions = (!plan.smoke).then(|| instructions(plan, &counted));
            MetricsRow {
                invocation,
                counted,
                bytes,
                ns,
                instructions,
            }
        })
        .collect()
}

/// The functions where the code counts each business metric (one source: the
/// counting calls; metrics.rs names none). The table's metrics are the store's
/// and DynamoDB's, derived from the catalog below.
fn counted_by(metric: Metric) -> &'static [&'static str] {
    match metric {
        Metric::SignUps => &["post-confirmation", "post-authentication"],
        Metric::TakeOvers => &[
            "add-email",
            "post-confirmation",
            "post-authentication",
            "scim-create-user",
        ],
        Metric::AddressesNotAllowed => &["add-email", "pre-sign-up"],
        Metric::CodesIssued | Metric::CodesRefusedByLimit => &["add-email", "send-verification"],
        Metric::VerificationsSucceeded | Metric::VerificationsFailed | Metric::VerificationsRefusedByLimit => {
            &["verify-email"]
        }
        Metric::PrimarySwitches => &["set-primary-email"],
        // A directory's leave removes the organization's other addresses.
        Metric::EmailsRemoved => &["remove-email", "scim-delete-user"],
        Metric::AccountsRecovered | Metric::RecoveryLinksRefused => &["recover-account"],
        Metric::UsersDeleted => &[
            "delete-account",
            "set-user-status",
            "reconcile-users",
            "scim-delete-user",
        ],
        Metric::ReconcilePassesCompleted => &["reconcile-users"],
        Metric::AdminLookups => &["find-user-by-email", "list-users"],
        Metric::AdminStatusChanges => &["set-user-status"],
        Metric::AdminActionsRefused => &["find-user-by-email", "list-users", "set-user-status"],
        Metric::MigrationsStarted | Metric::MigrationsByPasswordReset | Metric::WrongLegacyPasswords => {
            &["migrate-user"]
        }
        // The pending account moves at the migrated user's first appearance (`cognito::create`).
        Metric::UsersMigrated => &["post-authentication", "post-confirmation"],
        _ => &[],
    }
}

fn writes(function: &Function) -> bool {
    function
        .dynamodb_actions
        .iter()
        .any(|a| matches!(*a, "PutItem" | "UpdateItem" | "DeleteItem"))
}

/// Whether `function` can emit `metric`: the business metrics where the code
/// counts them; contention and condition failures in every function that
/// writes; DynamoDB's errors in every function that calls it.
fn can_emit(metric: Metric, function: &Function) -> bool {
    match metric {
        Metric::ContentionRetries | Metric::ConditionalCheckFailures | Metric::DynamoDbTransactionConflicts => {
            writes(function)
        }
        Metric::DynamoDbThrottled
        | Metric::DynamoDbTimeouts
        | Metric::DynamoDbServerErrors
        | Metric::DynamoDbOtherErrors => !function.dynamodb_actions.is_empty(),
        business => counted_by(business).contains(&function.name),
    }
}

/// (metric × function pairs that can occur, every pair there is).
pub(crate) fn pairs() -> (usize, usize) {
    let possible = Metric::ALL
        .iter()
        .map(|m| catalog::FUNCTIONS.iter().filter(|f| can_emit(*m, f)).count())
        .sum();
    (possible, Metric::ALL.len() * catalog::FUNCTIONS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_business_metric_has_a_source_among_the_catalogs_functions() {
        for metric in Metric::ALL {
            assert!(
                catalog::FUNCTIONS.iter().any(|f| can_emit(*metric, f)),
                "{metric:?} comes from no function"
            );
            for name in counted_by(*metric) {
                assert!(catalog::by_name(name).is_some(), "{name}");
            }
        }
        let (possible, all) = pairs();
        assert!(possible < all);
    }

    #[test]
    fn ingestion_is_priced_by_the_gigabyte() {
        let row = MetricsRow {
            invocation: "x",
            counted: vec![],
            bytes: 1 << 10,
            ns: 0.0,
            instructions: None,
        };
        // 1 KiB a million times is 1,000,000 / 2^20 GB.
        assert!((row.usd_per_million() - 0.5 * 1_000_000.0 / f64::from(1u32 << 20)).abs() < 1e-9);
    }
}
