//! The monthly bill at 10k, 100k, 1M and 10M users: every function's measured
//! DynamoDB units and billed duration, times a usage profile, plus what runs
//! whatever the traffic (the sweep, alarms, custom metrics, the dashboard, the
//! secret) and what follows the users (Cognito, SES, logs, traces, CloudTrail).
//! On-demand against provisioned capacity with auto scaling. Beside the month,
//! the one-off cost of migrating a pool at sign-in (migrate-user checking each
//! imported user's legacy password once, post-authentication moving the
//! account): it is no monthly traffic. Pure arithmetic: no database, no
//! network. The prices, with their date and source, and the fallback
//! measurements are in `tools/bench/prices.json`; docs/cost.md says how to
//! read the result.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;
use user_service::{identity, reconcile};

/// The price book and the committed measurements, compiled in: one file to
/// update when AWS changes a price.
pub(crate) const DATA: &str = include_str!("../prices.json");

/// The sizes the report prices.
pub(crate) const SIZES: [f64; 4] = [10_000.0, 100_000.0, 1_000_000.0, 10_000_000.0];

/// AWS bills a month as 730 hours.
const HOURS_PER_MONTH: f64 = 730.0;
const SECONDS_PER_MONTH: f64 = HOURS_PER_MONTH * 3600.0;
const DAYS_PER_MONTH: f64 = HOURS_PER_MONTH / 24.0;
/// AWS's GB in storage and ingestion prices.
const GB: f64 = 1_073_741_824.0;

/// The sweep's constants, as the function has them.
const LIST_PAGE: f64 = identity::LIST_USERS_PAGE as f64;
const SUB_BYTES: f64 = reconcile::SUB_BYTES as f64;

/// One price as the data file gives it.
#[derive(Debug, Clone)]
pub(crate) struct Price {
    pub(crate) value: f64,
    pub(crate) unit: String,
    pub(crate) date: String,
    pub(crate) source: String,
    pub(crate) checked: String,
}

/// Every price the model reads, by name, checked once at parse time.
#[derive(Debug, Clone)]
pub(crate) struct Prices {
    pub(crate) entries: BTreeMap<String, Price>,
}

impl Prices {
    fn get(&self, name: &str) -> f64 {
        // parse() refused a book without every name in NAMES.
        self.entries.get(name).map_or(f64::NAN, |p| p.value)
    }
}

/// The names the model reads: a data file without one of them is refused.
const NAMES: &[&str] = &[
    "lambda_requests",
    "lambda_gb_second_arm64",
    "lambda_gb_second_x86_64",
    "apigw_http_requests",
    "apigw_http_requests_over_tier",
    "apigw_http_first_tier",
    "dynamodb_read_request_units",
    "dynamodb_write_request_units",
    "dynamodb_rcu_hour",
    "dynamodb_wcu_hour",
    "dynamodb_storage_gb_month",
    "dynamodb_pitr_gb_month",
    "cognito_free_mau",
    "cognito_lite_mau_to_100k",
    "cognito_lite_mau_to_1m",
    "cognito_lite_mau_to_10m",
    "cognito_lite_mau_over_10m",
    "cognito_essentials_mau",
    "cognito_plus_mau",
    "ses_emails",
    "cloudwatch_custom_metric_month",
    "cloudwatch_alarm_metric_month",
    "cloudwatch_dashboard_month",
    "cloudwatch_logs_ingestion_gb",
    "cloudwatch_logs_storage_gb_month",
    "xray_traces_recorded",
    "secrets_manager_secret_month",
    "secrets_manager_api_calls",
    "eventbridge_aws_service_events",
    "cloudtrail_management_events_first_copy",
    "s3_storage_gb_month",
    "s3_put_requests",
];

/// What one invocation of a function costs in DynamoDB and time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FunctionInput {
    pub(crate) name: String,
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    /// Index writes the bench's units leave out: an item with GSI1 keys (an
    /// address record or claim) written costs GSI1 its own WCU.
    pub(crate) gsi1_wcu: f64,
    /// DynamoDB requests other than transactions.
    pub(crate) requests: f64,
    pub(crate) transactions: f64,
    /// Calls to SES or Cognito (not measured: the bench has neither).
    pub(crate) external_calls: f64,
    /// Whether the invocation writes an EMF document (it counts a metric).
    pub(crate) emf: bool,
    /// Behind the HTTP API (billed by API Gateway, logged in its access log).
    pub(crate) http: bool,
    /// Reads the verification key's secret at init.
    pub(crate) reads_key: bool,
    /// Its memory when the catalog gives it its own (migrate-user's 1,769 MB),
    /// else the stack's.
    pub(crate) memory_mb: Option<f64>,
}

/// DynamoDB requests and units of one invocation on a path of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PathInput {
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    pub(crate) gsi1_wcu: f64,
    /// DynamoDB requests other than transactions.
    pub(crate) requests: f64,
    pub(crate) transactions: f64,
}

/// The migration's inputs beside the functions' success paths.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MigrationInput {
    /// migrate-user refusing a wrong password: the reads, and the count written.
    pub(crate) wrong_password: PathInput,
    /// post-authentication at a migrated user's first sign-in: the pending
    /// account (one address) moved to the new sub.
    pub(crate) adoption: PathInput,
    /// The check's p50 in ms per format and parameters (the hash section's labels).
    pub(crate) hash_ms: Vec<(String, f64)>,
}

/// The measured inputs: per function, and the latencies that turn requests
/// into billed milliseconds.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    pub(crate) functions: Vec<FunctionInput>,
    pub(crate) migration: MigrationInput,
    pub(crate) ms_per_request: f64,
    pub(crate) ms_per_transaction: f64,
    pub(crate) init_ms: f64,
    /// Where the figures come from, for the report.
    pub(crate) source: String,
}

/// The price book and the committed measurements.
pub(crate) fn parse(text: &str) -> Result<(Prices, Measured), String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("prices.json: {e}"))?;
    let mut entries = BTreeMap::new();
    for (name, p) in root["prices"].as_object().ok_or("prices.json: no prices")? {
        let text = |field: &str| {
            p[field]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
                .ok_or_else(|| format!("prices.json: {name} has no {field}"))
        };
        let price = Price {
            value: p["value"]
                .as_f64()
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("prices.json: {name} has no value"))?,
            unit: text("unit")?,
            date: text("date")?,
            source: text("source")?,
            checked: text("checked")?,
        };
        entries.insert(name.clone(), price);
    }
    if let Some(missing) = NAMES.iter().find(|n| !entries.contains_key(**n)) {
        return Err(format!("prices.json: no price {missing}"));
    }
    let m = &root["measured"];
    let number = |v: &Value, field: &str| {
        v[field]
            .as_f64()
            .ok_or_else(|| format!("prices.json: measured {field}"))
    };
    let mut functions = Vec::new();
    for f in m["functions"].as_array().ok_or("prices.json: no measured functions")? {
        let name = f["name"].as_str().ok_or("prices.json: a function without a name")?;
        let catalog = user_service::catalog::by_name(name);
        functions.push(FunctionInput {
            name: name.to_owned(),
            rcu: number(f, "rcu")?,
            wcu: number(f, "wcu")?,
            gsi1_wcu: number(f, "gsi1_wcu")?,
            requests: number(f, "requests")?,
            transactions: number(f, "transactions")?,
            external_calls: number(f, "external_calls")?,
            emf: f["emf"].as_bool().unwrap_or(false),
            http: catalog.is_some_and(|c| matches!(c.trigger, user_service::catalog::Trigger::Http { .. })),
            reads_key: catalog.is_some_and(|c| c.reads_verification_key),
            memory_mb: catalog.and_then(|c| c.memory_mb).map(f64::from),
        });
    }
    let g = &m["migration"];
    let path = |name: &str| -> Result<PathInput, String> {
        let v = &g[name];
        let n = |field: &str| number(v, field).map_err(|e| format!("{e} of migration.{name}"));
        Ok(PathInput {
            rcu: n("rcu")?,
            wcu: n("wcu")?,
            gsi1_wcu: n("gsi1_wcu")?,
            requests: n("requests")?,
            transactions: n("transactions")?,
        })
    };
    let hash_ms = g["hash_ms"]
        .as_object()
        .ok_or("prices.json: no measured migration.hash_ms")?
        .iter()
        .map(|(label, ms)| {
            ms.as_f64()
                .filter(|v| *v > 0.0)
                .map(|ms| (label.clone(), ms))
                .ok_or_else(|| format!("prices.json: migration.hash_ms {label}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let migration = MigrationInput {
        wrong_password: path("wrong_password")?,
        adoption: path("adoption")?,
        hash_ms,
    };
    let measured = Measured {
        functions,
        migration,
        ms_per_request: number(m, "ms_per_request")?,
        ms_per_transaction: number(m, "ms_per_transaction")?,
        init_ms: number(m, "init_ms")?,
        source: m["source"].as_str().unwrap_or("prices.json").to_owned(),
    };
    Ok((Prices { entries }, measured))
}

/// Cognito's feature plan (the template's `UserPoolFeaturePlan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    Lite,
    Essentials,
    Plus,
}

impl Tier {
    pub(crate) const ALL: [Tier; 3] = [Tier::Lite, Tier::Essentials, Tier::Plus];

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Tier::Lite => "Lite",
            Tier::Essentials => "Essentials",
            Tier::Plus => "Plus",
        }
    }
}

/// What users do. Rates per monthly active user (MAU) a month, unless the
/// name says per user (every registered user, active or not).
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    /// Registered users active in a month: Cognito bills these.
    pub(crate) mau_share: f64,
    pub(crate) sign_ins: f64,
    /// Token refreshes: no function runs, but CloudTrail logs them.
    pub(crate) token_refreshes: f64,
    pub(crate) profile_reads: f64,
    pub(crate) account_reads: f64,
    pub(crate) email_lists: f64,
    pub(crate) email_reads: f64,
    pub(crate) profile_edits: f64,
    pub(crate) address_checks: f64,
    /// Exports of one's own account (GET /me/export).
    pub(crate) exports: f64,
    pub(crate) address_adds: f64,
    pub(crate) resends: f64,
    /// Code entries, wrong ones included.
    pub(crate) verifications: f64,
    pub(crate) primary_switches: f64,
    pub(crate) removals: f64,
    /// Cognito's own mail (forgotten passwords), sent through SES.
    pub(crate) password_resets: f64,
    pub(crate) sign_ups_per_user: f64,
    pub(crate) deletions_per_user: f64,
    /// Users who delete themselves in Cognito: the sweep erases their profile.
    pub(crate) cognito_deletions_per_user: f64,
    pub(crate) admin_lookups_per_user: f64,
    pub(crate) admin_status_changes_per_user: f64,
    pub(crate) addresses_per_user: f64,
    /// Wrong legacy passwords per migrated user at their first sign-in: each
    /// one a check, the reads and the count written.
    pub(crate) migration_wrong_passwords_per_user: f64,
    /// Table bytes a user holds (profile, address records, claims, counters),
    /// DynamoDB's 100 bytes of overhead per item included.
    pub(crate) table_bytes_per_user: f64,
    pub(crate) gsi1_bytes_per_user: f64,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            mau_share: 0.4,
            sign_ins: 6.0,
            token_refreshes: 30.0,
            profile_reads: 20.0,
            account_reads: 4.0,
            email_lists: 1.0,
            email_reads: 0.5,
            profile_edits: 0.5,
            address_checks: 0.2,
            exports: 0.01,
            address_adds: 0.1,
            resends: 0.03,
            verifications: 0.12,
            primary_switches: 0.03,
            removals: 0.03,
            password_resets: 0.02,
            sign_ups_per_user: 0.02,
            deletions_per_user: 0.005,
            cognito_deletions_per_user: 0.001,
            admin_lookups_per_user: 0.001,
            admin_status_changes_per_user: 0.0002,
            addresses_per_user: 1.3,
            migration_wrong_passwords_per_user: 0.1,
            table_bytes_per_user: 1_200.0,
            gsi1_bytes_per_user: 150.0,
        }
    }
}

/// How the stack is deployed and watched (template.yaml's defaults).
#[derive(Debug, Clone)]
pub(crate) struct Stack {
    pub(crate) memory_mb: f64,
    pub(crate) arm64: bool,
    pub(crate) tier: Tier,
    /// Invocations that start an execution environment (init billed).
    pub(crate) cold_start_share: f64,
    /// One SES or Cognito call, from Lambda (not measured here).
    pub(crate) external_call_ms: f64,
    /// Bytes per invocation: the "request handled" INFO line, 26 bytes of
    /// CloudWatch's per-event overhead included.
    pub(crate) log_line_bytes: f64,
    /// The EMF document of an invocation that counts a metric (the bench's
    /// metrics section: 247 bytes), with the overhead.
    pub(crate) emf_bytes: f64,
    /// One HTTP API access log line (template's AccessLogSettings format).
    pub(crate) access_log_bytes: f64,
    /// Stored logs against ingested bytes (CloudWatch bills storage compressed).
    pub(crate) log_compression: f64,
    pub(crate) log_retention_days: f64,
    /// Daily peak hour against the day's average hour.
    pub(crate) peak_to_average: f64,
    pub(crate) target_utilization: f64,
    pub(crate) table_min_rcu: f64,
    pub(crate) table_min_wcu: f64,
    pub(crate) gsi1_min_rcu: f64,
    pub(crate) gsi1_min_wcu: f64,
    /// A full pass every this many hours (`RECONCILE_INTERVAL_HOURS`).
    pub(crate) sweep_interval_hours: f64,
    /// Scheduled runs a day (rate(15 minutes)).
    pub(crate) sweep_runs_per_day: f64,
    /// A run with no pass due: the lease write and the checkpoint read.
    pub(crate) sweep_idle_ms: f64,
    pub(crate) list_users_rps: f64,
    pub(crate) admin_get_user_rps: f64,
    /// X-Ray's default rule: one request a second, then 5 %.
    pub(crate) xray_reservoir_per_second: f64,
    pub(crate) xray_rate: f64,
    /// A CloudTrail trail (the sweep's DeleteUser records reach EventBridge through one).
    pub(crate) cloudtrail_trail: bool,
    pub(crate) trail_event_bytes: f64,
    pub(crate) trail_compression: f64,
    pub(crate) trail_retention_months: f64,
    /// CloudTrail delivers a file about every 5 minutes.
    pub(crate) trail_puts_per_month: f64,
    /// Alarm metrics billed: counted from template.yaml.
    pub(crate) alarm_metrics: f64,
    /// Metric × dimension pairs that receive data: from shared/src/metrics.rs.
    pub(crate) custom_metrics: f64,
    pub(crate) dashboards: f64,
    pub(crate) secrets: f64,
    /// Passes simulated by `reconcile_sim` (users, Lambda seconds, ListUsers
    /// calls): used at those sizes instead of the design's arithmetic.
    pub(crate) simulated_passes: Vec<(f64, f64, f64)>,
}

impl Default for Stack {
    fn default() -> Self {
        Self {
            memory_mb: 256.0,
            arm64: true,
            tier: Tier::Plus,
            cold_start_share: 0.01,
            external_call_ms: 40.0,
            log_line_bytes: 230.0,
            emf_bytes: 273.0,
            access_log_bytes: 480.0,
            log_compression: 0.15,
            log_retention_days: 30.0,
            peak_to_average: 2.0,
            target_utilization: 0.7,
            table_min_rcu: 5.0,
            table_min_wcu: 5.0,
            gsi1_min_rcu: 1.0,
            gsi1_min_wcu: 1.0,
            sweep_interval_hours: 24.0,
            sweep_runs_per_day: 96.0,
            sweep_idle_ms: 20.0,
            list_users_rps: 15.0,
            admin_get_user_rps: 60.0,
            xray_reservoir_per_second: 1.0,
            xray_rate: 0.05,
            cloudtrail_trail: true,
            trail_event_bytes: 1_500.0,
            trail_compression: 0.1,
            trail_retention_months: 3.0,
            trail_puts_per_month: 8_928.0,
            alarm_metrics: 0.0,
            custom_metrics: 0.0,
            dashboards: 1.0,
            secrets: 1.0,
            simulated_passes: Vec::new(),
        }
    }
}

/// One item of the bill.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub(crate) item: &'static str,
    pub(crate) on_demand: f64,
    pub(crate) provisioned: f64,
}

/// One month at one size.
#[derive(Debug, Clone)]
pub(crate) struct Month {
    pub(crate) users: f64,
    pub(crate) lines: Vec<Line>,
    pub(crate) sweep: Sweep,
}

impl Month {
    pub(crate) fn on_demand(&self) -> f64 {
        self.lines.iter().map(|l| l.on_demand).sum()
    }

    pub(crate) fn provisioned(&self) -> f64 {
        self.lines.iter().map(|l| l.provisioned).sum()
    }

    /// The largest item (on-demand, the stack's default mode) and its share.
    pub(crate) fn dominant(&self) -> (&'static str, f64) {
        let total = self.on_demand();
        self.lines
            .iter()
            .max_by(|a, b| a.on_demand.total_cmp(&b.on_demand))
            .map_or(("none", 0.0), |l| {
                (l.item, if total > 0.0 { l.on_demand / total } else { 0.0 })
            })
    }

    pub(crate) fn line(&self, item: &str) -> Option<&Line> {
        self.lines.iter().find(|l| l.item == item)
    }
}

/// One pass of reconcile-users and its month.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sweep {
    pub(crate) partitions: f64,
    pub(crate) list_users_calls: f64,
    pub(crate) admin_get_user_calls: f64,
    pub(crate) pass_seconds: f64,
    pub(crate) passes: f64,
    /// DynamoDB units a month: scans, chunks, checkpoints, erasures, leases.
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    pub(crate) lambda_usd: f64,
}

/// Invocations of a function a month.
fn invocations(name: &str, p: &Profile, users: f64) -> f64 {
    let mau = users * p.mau_share;
    match name {
        "get-profile" => mau * p.profile_reads,
        "get-account" => mau * p.account_reads,
        "list-emails" => mau * p.email_lists,
        "get-email" => mau * p.email_reads,
        "update-profile" => mau * p.profile_edits,
        "check-email" => mau * p.address_checks,
        "export-account" => mau * p.exports,
        "add-email" => mau * p.address_adds,
        "send-verification" => mau * p.resends,
        "verify-email" => mau * p.verifications,
        "set-primary-email" => mau * p.primary_switches,
        "remove-email" => mau * p.removals,
        "post-authentication" => mau * p.sign_ins,
        "delete-account" => users * p.deletions_per_user,
        "find-user-by-email" => users * p.admin_lookups_per_user,
        "set-user-status" => users * p.admin_status_changes_per_user,
        "pre-sign-up" | "post-confirmation" => users * p.sign_ups_per_user,
        // Pending users' first sign-ins only: a one-off, priced by `migration`.
        "migrate-user" => 0.0,
        // Every profile MODIFY passes the stream filter; the consumer compares.
        "sync-cognito-email" => {
            mau * (p.profile_edits + p.address_adds + p.removals + p.primary_switches)
                + users * (p.deletions_per_user + p.admin_status_changes_per_user)
        }
        // Every change of a profile or an email record, one invocation each
        // at worst (batches of up to 10 make fewer).
        "publish-events" => {
            mau * (p.profile_edits + p.address_adds + p.verifications + p.primary_switches + p.removals)
                + users * (2.0 * p.sign_ups_per_user + p.deletions_per_user + p.admin_status_changes_per_user)
        }
        // Priced in the sweep's own line.
        _ => 0.0,
    }
}

/// Domain events put on the bus a month: one per change, two per sign-up
/// (the user and the address) and per deletion (the user and, at least, an address).
fn domain_events(p: &Profile, users: f64) -> f64 {
    users * p.mau_share * (p.profile_edits + p.address_adds + p.verifications + p.primary_switches + p.removals)
        + users * 2.0 * (p.sign_ups_per_user + p.deletions_per_user)
        + users * p.admin_status_changes_per_user
}

/// Cognito calls of the stream consumer a month: the primary moves (the
/// attribute and the old primary's notice), deletions and status changes.
fn sync_external_calls(p: &Profile, users: f64) -> f64 {
    users * p.mau_share * p.primary_switches * 2.0 + users * (p.deletions_per_user + p.admin_status_changes_per_user)
}

/// Milliseconds Lambda bills for one invocation (rounded up to 1 ms).
fn billed_ms(f: &FunctionInput, m: &Measured, s: &Stack) -> f64 {
    let ms =
        f.requests * m.ms_per_request + f.transactions * m.ms_per_transaction + f.external_calls * s.external_call_ms;
    ms.ceil().max(1.0)
}

/// The average capacity auto scaling keeps provisioned over a day whose hourly
/// load is a sine around `average` peaking at `peak_to_average` × it (at most
/// 2). Scaling in lags: an hour is provisioned for the larger of its load and
/// the previous hour's, at the target utilization, never below the minimum.
pub(crate) fn provisioned_average(average: f64, peak_to_average: f64, target: f64, minimum: f64) -> f64 {
    let swing = (peak_to_average - 1.0).clamp(0.0, 1.0);
    let load = |h: f64| average * (1.0 + swing * (std::f64::consts::TAU * h / 24.0).sin());
    (0..24)
        .map(|h| {
            let h = f64::from(h);
            (load(h).max(load(h - 1.0)) / target).max(minimum)
        })
        .sum::<f64>()
        / 24.0
}

/// Cognito's bill for `mau` monthly active users.
pub(crate) fn cognito(mau: f64, tier: Tier, prices: &Prices) -> f64 {
    let free = prices.get("cognito_free_mau");
    match tier {
        Tier::Plus => mau * prices.get("cognito_plus_mau"),
        Tier::Essentials => (mau - free).max(0.0) * prices.get("cognito_essentials_mau"),
        Tier::Lite => {
            let band = |from: f64, to: f64| (mau.min(to) - from).max(0.0);
            band(free, 100_000.0) * prices.get("cognito_lite_mau_to_100k")
                + band(100_000.0, 1_000_000.0) * prices.get("cognito_lite_mau_to_1m")
                + band(1_000_000.0, 10_000_000.0) * prices.get("cognito_lite_mau_to_10m")
                + band(10_000_000.0, f64::INFINITY) * prices.get("cognito_lite_mau_over_10m")
        }
    }
}

/// The sweep at `users`: one pass by the design's arithmetic, times the
/// passes a month, and the scheduled runs with nothing to do.
pub(crate) fn sweep(users: f64, p: &Profile, s: &Stack, prices: &Prices) -> Sweep {
    // As the function cuts the sub space.
    let partitions = f64::from(reconcile::partition_count(reconcile::prefix_digits(users as u64)));
    let per_partition = users / partitions;
    let list_users_calls = partitions * (per_partition / LIST_PAGE).ceil().max(1.0);
    let passes = DAYS_PER_MONTH * 24.0 / s.sweep_interval_hours;
    let deleted = users * p.cognito_deletions_per_user / passes;
    let list_seconds = list_users_calls / s.list_users_rps;
    // Users signed up while the pass lists Cognito are confirmed, not erased.
    let created = users * p.sign_ups_per_user / SECONDS_PER_MONTH * list_seconds;
    let admin_get_user_calls = deleted + created;
    let mut pass_seconds = list_seconds + admin_get_user_calls / s.admin_get_user_rps;
    let mut list_users_calls = list_users_calls;
    if let Some((_, seconds, calls)) = s.simulated_passes.iter().find(|(u, _, _)| *u == users) {
        pass_seconds = *seconds;
        list_users_calls = *calls;
    }

    let table_bytes = users * p.table_bytes_per_user;
    let scan_rcu = table_bytes / 4096.0 * 0.5;
    let chunk_wcu = users * SUB_BYTES / 1024.0;
    let chunk_rcu = users * SUB_BYTES / 4096.0 * 0.5;
    // One checkpoint per partition and per Scan page (1 MB).
    let checkpoint_wcu = partitions + (table_bytes / 1_048_576.0).ceil();
    let erase_wcu = deleted * 2.0 * (1.0 + 2.0 * p.addresses_per_user);
    // Every listed user's profile, read back (BatchGetItem, eventually
    // consistent) to compare the address Cognito lists with the primary.
    let compare_rcu = users * 0.5;
    let runs = s.sweep_runs_per_day * DAYS_PER_MONTH;
    // Every run takes the lease (a conditional write) and reads the checkpoint.
    let rcu = passes * (scan_rcu + chunk_rcu + compare_rcu) + runs * 0.5;
    let wcu = passes * (chunk_wcu + checkpoint_wcu + erase_wcu) + runs;

    let gb = s.memory_mb / 1024.0;
    let seconds = passes * pass_seconds + runs * s.sweep_idle_ms / 1000.0;
    let lambda_usd = seconds * gb * gb_second(s, prices) + runs * prices.get("lambda_requests") / 1e6;
    Sweep {
        partitions,
        list_users_calls,
        admin_get_user_calls,
        pass_seconds,
        passes,
        rcu,
        wcu,
        lambda_usd,
    }
}

fn gb_second(s: &Stack, prices: &Prices) -> f64 {
    prices.get(if s.arm64 {
        "lambda_gb_second_arm64"
    } else {
        "lambda_gb_second_x86_64"
    })
}

/// Traces X-Ray records for `n` requests of one function a month.
fn traces(n: f64, s: &Stack) -> f64 {
    let reservoir = s.xray_reservoir_per_second * SECONDS_PER_MONTH;
    let kept = n.min(reservoir);
    kept + (n - kept) * s.xray_rate
}

pub(crate) const LAMBDA: &str = "Lambda (functions)";
pub(crate) const API: &str = "API Gateway (HTTP API)";
pub(crate) const DYNAMODB: &str = "DynamoDB requests / capacity";
pub(crate) const STORAGE: &str = "DynamoDB storage + PITR";
pub(crate) const COGNITO: &str = "Cognito user pool";
pub(crate) const SES: &str = "SES";
pub(crate) const METRICS: &str = "CloudWatch custom metrics";
pub(crate) const ALARMS: &str = "CloudWatch alarms";
pub(crate) const LOGS: &str = "CloudWatch Logs";
pub(crate) const DASHBOARD: &str = "CloudWatch dashboard";
pub(crate) const XRAY: &str = "X-Ray traces";
pub(crate) const SECRETS: &str = "Secrets Manager";
pub(crate) const EVENTBRIDGE: &str = "EventBridge";
pub(crate) const SWEEP: &str = "reconcile sweep (Lambda + on-demand units)";
pub(crate) const CLOUDTRAIL: &str = "CloudTrail trail (S3)";

/// The month at `users`.
pub(crate) fn month(users: f64, p: &Profile, s: &Stack, m: &Measured, prices: &Prices) -> Month {
    let mau = users * p.mau_share;
    let per_gb_s = gb_second(s, prices);
    let (mut lambda, mut http, mut rcu, mut wcu, mut gsi1_wcu) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut log_bytes, mut trace_count, mut secret_calls) = (0.0, 0.0, 0.0);
    for f in &m.functions {
        let n = invocations(&f.name, p, users);
        let gb = f.memory_mb.unwrap_or(s.memory_mb) / 1024.0;
        let mut seconds = n * billed_ms(f, m, s) / 1000.0;
        if f.name == "sync-cognito-email" {
            seconds += sync_external_calls(p, users) * s.external_call_ms / 1000.0;
        }
        let cold = n * s.cold_start_share;
        seconds += cold * m.init_ms.ceil() / 1000.0;
        lambda += n * prices.get("lambda_requests") / 1e6 + seconds * gb * per_gb_s;
        if f.http {
            http += n;
            log_bytes += n * s.access_log_bytes;
        }
        rcu += n * f.rcu;
        wcu += n * f.wcu;
        gsi1_wcu += n * f.gsi1_wcu;
        log_bytes += n * (s.log_line_bytes + if f.emf { s.emf_bytes } else { 0.0 });
        trace_count += traces(n, s);
        if f.reads_key {
            secret_calls += cold;
        }
    }

    let tier_millions = prices.get("apigw_http_first_tier");
    let millions = http / 1e6;
    let api = millions.min(tier_millions) * prices.get("apigw_http_requests")
        + (millions - tier_millions).max(0.0) * prices.get("apigw_http_requests_over_tier");

    let sw = sweep(users, p, s, prices);
    let rru = prices.get("dynamodb_read_request_units") / 1e6;
    let wru = prices.get("dynamodb_write_request_units") / 1e6;
    let on_demand_units = rcu * rru + (wcu + gsi1_wcu) * wru;
    // Provisioned capacity carries the sweep's units too (its Scan must be
    // paced to the headroom, or it throttles the users' requests).
    let per_second = |units: f64| units / SECONDS_PER_MONTH;
    let capacity = |units: f64, minimum: f64| {
        provisioned_average(per_second(units), s.peak_to_average, s.target_utilization, minimum)
    };
    let provisioned_units = HOURS_PER_MONTH
        * ((capacity(rcu + sw.rcu, s.table_min_rcu) + capacity(0.0, s.gsi1_min_rcu)) * prices.get("dynamodb_rcu_hour")
            + (capacity(wcu + sw.wcu, s.table_min_wcu) + capacity(gsi1_wcu, s.gsi1_min_wcu))
                * prices.get("dynamodb_wcu_hour"));

    let storage = users * (p.table_bytes_per_user + p.gsi1_bytes_per_user) / GB
        * prices.get("dynamodb_storage_gb_month")
        + users * p.table_bytes_per_user / GB * prices.get("dynamodb_pitr_gb_month");

    let emails =
        mau * (p.address_adds + p.resends + p.primary_switches + p.password_resets) + users * p.sign_ups_per_user;
    let ses = emails * prices.get("ses_emails") / 1000.0;

    let log_gb = log_bytes / GB;
    let logs = log_gb * prices.get("cloudwatch_logs_ingestion_gb")
        + log_gb
            * s.log_compression
            * (s.log_retention_days / DAYS_PER_MONTH)
            * prices.get("cloudwatch_logs_storage_gb_month");

    let secrets = s.secrets * prices.get("secrets_manager_secret_month")
        + secret_calls * prices.get("secrets_manager_api_calls") / 10_000.0;

    let trail = if s.cloudtrail_trail {
        // Management events the service causes: Cognito's sign-ins (two calls)
        // and refreshes, its admin calls, and the secret's reads.
        let events = mau * (2.0 * p.sign_ins + p.token_refreshes)
            + sw.passes * (sw.list_users_calls + sw.admin_get_user_calls)
            + sync_external_calls(p, users)
            + secret_calls;
        let stored_gb = events * s.trail_event_bytes * s.trail_compression / GB * s.trail_retention_months;
        stored_gb * prices.get("s3_storage_gb_month") + s.trail_puts_per_month * prices.get("s3_put_requests") / 1000.0
    } else {
        0.0
    };
    let sweep_usd = sw.lambda_usd + sw.rcu * rru + sw.wcu * wru;

    let same = |item, usd: f64| Line {
        item,
        on_demand: usd,
        provisioned: usd,
    };
    let lines = vec![
        same(COGNITO, cognito(mau, s.tier, prices)),
        same(LAMBDA, lambda),
        same(API, api),
        Line {
            item: DYNAMODB,
            on_demand: on_demand_units,
            provisioned: provisioned_units,
        },
        same(STORAGE, storage),
        same(SES, ses),
        same(METRICS, s.custom_metrics * prices.get("cloudwatch_custom_metric_month")),
        same(ALARMS, s.alarm_metrics * prices.get("cloudwatch_alarm_metric_month")),
        same(LOGS, logs),
        same(DASHBOARD, s.dashboards * prices.get("cloudwatch_dashboard_month")),
        same(XRAY, trace_count * prices.get("xray_traces_recorded") / 1e6),
        same(SECRETS, secrets),
        // Schedules and CloudTrail records reach the default bus as AWS events,
        // free; the domain events are custom events.
        same(
            EVENTBRIDGE,
            domain_events(p, users) * prices.get("eventbridge_custom_events") / 1e6,
        ),
        Line {
            item: SWEEP,
            on_demand: sweep_usd,
            // Its units are in the provisioned capacity above.
            provisioned: sw.lambda_usd,
        },
        same(CLOUDTRAIL, trail),
    ];
    Month {
        users,
        lines,
        sweep: sw,
    }
}

/// What migrating a pool at sign-in costs once, for one hash format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MigrationCost {
    /// migrate-user: its requests and GB-seconds at its own memory.
    pub(crate) trigger_lambda: f64,
    /// post-authentication moving each account to its new sub.
    pub(crate) adoption_lambda: f64,
    /// On-demand units: the trigger's reads, the wrong passwords' counts, the moves.
    pub(crate) dynamodb: f64,
    pub(crate) logs: f64,
    pub(crate) xray: f64,
}

impl MigrationCost {
    pub(crate) fn total(&self) -> f64 {
        self.trigger_lambda + self.adoption_lambda + self.dynamodb + self.logs + self.xray
    }
}

/// The one-off migration of `users` pending users whose legacy check takes
/// `hash_ms`: each signs in once with their password (after
/// `migration_wrong_passwords_per_user` wrong ones), and post-authentication
/// moves their account. An upper bound: users who never come back cost
/// nothing, and a forgot-password skips the check. Cognito is not here: a
/// migrated user is an active user of the month they sign in, as any other.
pub(crate) fn migration(
    users: f64,
    hash_ms: f64,
    p: &Profile,
    s: &Stack,
    m: &Measured,
    prices: &Prices,
) -> MigrationCost {
    let per_gb_s = gb_second(s, prices);
    let fee = prices.get("lambda_requests") / 1e6;
    let function = |name: &str| m.functions.iter().find(|f| f.name == name);
    let gb_of = |name: &str| function(name).and_then(|f| f.memory_mb).unwrap_or(s.memory_mb) / 1024.0;
    let (trigger_rcu, trigger_requests) = function("migrate-user").map_or((0.0, 0.0), |f| (f.rcu, f.requests));
    let wrong = &m.migration.wrong_password;
    let adoption = &m.migration.adoption;
    let wrongs = users * p.migration_wrong_passwords_per_user;
    // Init billed on the share of invocations that start cold, as in the month.
    let init_ms = m.init_ms.ceil() * s.cold_start_share;
    let right_ms = (trigger_requests * m.ms_per_request + hash_ms).ceil() + init_ms;
    let wrong_ms =
        (wrong.requests * m.ms_per_request + wrong.transactions * m.ms_per_transaction + hash_ms).ceil() + init_ms;
    let trigger_lambda =
        (users + wrongs) * fee + (users * right_ms + wrongs * wrong_ms) / 1000.0 * gb_of("migrate-user") * per_gb_s;
    let adopt_ms =
        (adoption.requests * m.ms_per_request + adoption.transactions * m.ms_per_transaction).ceil() + init_ms;
    let adoption_lambda = users * (fee + adopt_ms / 1000.0 * gb_of("post-authentication") * per_gb_s);
    let rru = prices.get("dynamodb_read_request_units") / 1e6;
    let wru = prices.get("dynamodb_write_request_units") / 1e6;
    let dynamodb = (users * (trigger_rcu + adoption.rcu) + wrongs * wrong.rcu) * rru
        + (users * (adoption.wcu + adoption.gsi1_wcu) + wrongs * (wrong.wcu + wrong.gsi1_wcu)) * wru;
    // Every invocation logs its line and counts a metric (MigrationsStarted,
    // WrongLegacyPasswords, UsersMigrated).
    let invocations = 2.0 * users + wrongs;
    let log_gb = invocations * (s.log_line_bytes + s.emf_bytes) / GB;
    let logs = log_gb * prices.get("cloudwatch_logs_ingestion_gb")
        + log_gb
            * s.log_compression
            * (s.log_retention_days / DAYS_PER_MONTH)
            * prices.get("cloudwatch_logs_storage_gb_month");
    // Past X-Ray's reservoir (a request a second), its rate.
    let xray = invocations * s.xray_rate * prices.get("xray_traces_recorded") / 1e6;
    MigrationCost {
        trigger_lambda,
        adoption_lambda,
        dynamodb,
        logs,
        xray,
    }
}

/// The one-off migration's part of the section, in Markdown.
fn render_migration(prices: &Prices, p: &Profile, s: &Stack, m: &Measured) -> String {
    let mut md = String::new();
    // In the hash section's order; the costliest check headlines (an upper bound).
    let mut hashes = m.migration.hash_ms.clone();
    let order = |label: &str| {
        crate::hashes::CONFIGS
            .iter()
            .position(|c| c.label() == label)
            .unwrap_or(usize::MAX)
    };
    hashes.sort_by_key(|(label, _)| order(label));
    let Some((costliest, costliest_ms)) = hashes.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return md;
    };
    let trigger_mb = m
        .functions
        .iter()
        .find(|f| f.name == "migrate-user")
        .and_then(|f| f.memory_mb)
        .unwrap_or(s.memory_mb);
    let adoption = &m.migration.adoption;
    let _ = writeln!(
        md,
        "### Migrating a pool at sign-in (one-off)\n\nNot monthly traffic, so not in the tables above: migrate-user \
         runs only at the first sign-in of a user an import left pending, then post-authentication moves their \
         account. Assumed: every registered user is pending and signs in once with their password, after {} wrong \
         ones on average (an upper bound: users who never return cost nothing, a forgot-password skips the check; the \
         import's own writes are not here). migrate-user at {trigger_mb} MB: the check at its p50 per format (the \
         hash section's; this machine's one core standing for Lambda's one vCPU at 1,769 MB), its reads, and a wrong \
         password's counted write; post-authentication at {} MB: {} requests and {} transactions moving an account \
         of one address ({} RCU, {} WCU and {} on GSI1). Cognito bills a migrated user as an active user of the \
         month they sign in, as the monthly table does.\n",
        p.migration_wrong_passwords_per_user,
        s.memory_mb,
        adoption.requests,
        adoption.transactions,
        adoption.rcu,
        adoption.wcu,
        adoption.gsi1_wcu,
    );
    let _ = writeln!(
        md,
        "| users | {} |\n|---|{}",
        hashes
            .iter()
            .map(|(label, ms)| format!("{label} ({ms:.0} ms)"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(hashes.len())
    );
    for users in SIZES {
        let totals: Vec<String> = hashes
            .iter()
            .map(|(_, ms)| usd(migration(users, *ms, p, s, m, prices).total()))
            .collect();
        let _ = writeln!(md, "| {} | {} |", users_label(users), totals.join(" | "));
    }
    let one_m = migration(1_000_000.0, *costliest_ms, p, s, m, prices);
    let _ = writeln!(
        md,
        "\nAt 1M users with the costliest check ({costliest}): migrate-user's Lambda {}, post-authentication's \
         moves {}, DynamoDB {}, logs {}, X-Ray {}.\n",
        usd(one_m.trigger_lambda),
        usd(one_m.adoption_lambda),
        usd(one_m.dynamodb),
        usd(one_m.logs),
        usd(one_m.xray)
    );
    md
}

/// Alarm metrics billed by a template: a metric alarm is 1, a metric-math
/// alarm 1 per metric it reads, an anomaly detection alarm 3.
pub(crate) fn alarm_metrics(template: &str) -> (usize, usize, f64) {
    let mut blocks: Vec<String> = Vec::new();
    for line in template.lines() {
        let top = line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with(':');
        if top || blocks.is_empty() {
            blocks.push(String::new());
        }
        if let Some(b) = blocks.last_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    let (mut alarms, mut anomaly, mut metrics) = (0, 0, 0.0);
    for b in blocks.iter().filter(|b| b.contains("Type: AWS::CloudWatch::Alarm")) {
        alarms += 1;
        if b.contains("ANOMALY_DETECTION_BAND") {
            anomaly += 1;
            metrics += 3.0;
        } else {
            metrics += b.matches("MetricStat:").count().max(1) as f64;
        }
    }
    (alarms, anomaly, metrics)
}

/// Where the measured inputs come from.
pub(crate) enum Inputs<'a> {
    /// The committed defaults (the sections did not run).
    Committed,
    /// This run's requests section, and its warm p50s when it ran: get-profile
    /// (one GetItem) and the add-email + remove-email cycle.
    Run {
        rows: &'a [crate::requests::RequestRow],
        /// The migration's paths beside them.
        beside: &'a [crate::requests::RequestRow],
        get_profile_ms: Option<f64>,
        add_remove_ms: Option<f64>,
        /// The hash section's p50s (empty in the smoke).
        hash_ms: Vec<(String, f64)>,
    },
}

/// The committed table, overlaid with this run's measurements where there are some.
fn measured(defaults: Measured, inputs: &Inputs<'_>) -> Measured {
    let Inputs::Run {
        rows,
        beside,
        get_profile_ms,
        add_remove_ms,
        hash_ms,
    } = inputs
    else {
        return defaults;
    };
    let mut m = defaults;
    let mut from = Vec::new();
    if !rows.is_empty() {
        for row in *rows {
            if let Some(f) = m.functions.iter_mut().find(|f| f.name == row.function) {
                let transactions = row.made.get("TransactWriteItems").copied().unwrap_or(0);
                let all: u64 = row.made.values().sum();
                f.rcu = row.units.read;
                f.wcu = row.units.write;
                f.transactions = transactions as f64;
                f.requests = all.saturating_sub(transactions) as f64;
            }
        }
        from.push("units and requests from this run's requests section");
    }
    let path_of = |row: &crate::requests::RequestRow, gsi1_wcu: f64| {
        let transactions = row.made.get("TransactWriteItems").copied().unwrap_or(0);
        let all: u64 = row.made.values().sum();
        PathInput {
            rcu: row.units.read,
            wcu: row.units.write,
            gsi1_wcu,
            requests: all.saturating_sub(transactions) as f64,
            transactions: transactions as f64,
        }
    };
    for row in *beside {
        match row.path {
            Some(crate::requests::WRONG_LEGACY_PASSWORD) => {
                m.migration.wrong_password = path_of(row, m.migration.wrong_password.gsi1_wcu);
            }
            Some(crate::requests::FIRST_SIGN_IN_OF_A_MIGRATED_USER) => {
                m.migration.adoption = path_of(row, m.migration.adoption.gsi1_wcu);
            }
            _ => {}
        }
    }
    if !hash_ms.is_empty() {
        m.migration.hash_ms = hash_ms.clone();
        from.push("legacy password checks from this run's hashes section");
    }
    if let Some(ms) = get_profile_ms {
        m.ms_per_request = *ms;
        if let Some(cycle) = add_remove_ms {
            m.ms_per_transaction = ((cycle - ms) / 2.0).max(*ms);
        }
        from.push("latencies from this run's warm section");
    }
    if !from.is_empty() {
        m.source = format!("{}; the rest from {}", from.join(", "), m.source);
    }
    m
}

/// A whole number with thousands separators.
fn thousands(v: f64) -> String {
    let s = (v.round() as u64).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn usd(v: f64) -> String {
    if v >= 100.0 {
        format!("${}", thousands(v))
    } else {
        format!("${v:.2}")
    }
}

fn users_label(users: f64) -> String {
    match users {
        u if u >= 1e6 => format!("{}M", u / 1e6),
        u => format!("{}k", u / 1e3),
    }
}

/// The users at which provisioned DynamoDB capacity starts costing less than
/// on-demand requests, between 1,000 and 100M (None: never in that range).
pub(crate) fn break_even(p: &Profile, s: &Stack, m: &Measured, prices: &Prices) -> Option<f64> {
    let cheaper = |users: f64| {
        let month = month(users, p, s, m, prices);
        month.line(DYNAMODB).is_some_and(|l| l.provisioned < l.on_demand)
    };
    let (mut lo, mut hi) = (1_000.0_f64, 100_000_000.0_f64);
    if cheaper(lo) {
        return Some(lo);
    }
    if !cheaper(hi) {
        return None;
    }
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if cheaper(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The report's cost section, in Markdown.
pub(crate) fn render(prices: &Prices, p: &Profile, s: &Stack, m: &Measured) -> String {
    let months: Vec<Month> = SIZES.iter().map(|u| month(*u, p, s, m, prices)).collect();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Cost per month\n\nThe model of `tools/bench/src/cost.rs` (docs/cost.md): us-east-1, Cognito {}, {} MB {}, \
         {} % of users active a month, alarms and custom metrics as the stack defines them ({} alarm metrics, {} custom \
         metrics), prices from `tools/bench/prices.json`. Measured inputs: {}.\n",
        s.tier.name(),
        s.memory_mb,
        if s.arm64 { "arm64" } else { "x86_64" },
        p.mau_share * 100.0,
        s.alarm_metrics,
        s.custom_metrics,
        m.source
    );
    let _ = writeln!(
        md,
        "| users | on-demand total | provisioned total | largest item | its share |\n|---|---|---|---|---|"
    );
    for month in &months {
        let (item, share) = month.dominant();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {item} | {:.0} % |",
            users_label(month.users),
            usd(month.on_demand()),
            usd(month.provisioned()),
            share * 100.0
        );
    }
    if let Some(one_m) = months.iter().find(|x| x.users == 1_000_000.0) {
        let _ = writeln!(
            md,
            "\nAt 1M users, by item:\n\n| item | on-demand | provisioned |\n|---|---|---|"
        );
        let mut lines = one_m.lines.clone();
        lines.sort_by(|a, b| b.on_demand.total_cmp(&a.on_demand));
        for l in &lines {
            let _ = writeln!(md, "| {} | {} | {} |", l.item, usd(l.on_demand), usd(l.provisioned));
        }
    }
    let _ = writeln!(
        md,
        "\nDynamoDB alone, on-demand requests against provisioned capacity (auto scaling at {:.0} %, daily peak {}× the \
         average):\n\n| users | on-demand | provisioned |\n|---|---|---|",
        s.target_utilization * 100.0,
        s.peak_to_average
    );
    for month in &months {
        if let Some(l) = month.line(DYNAMODB) {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                users_label(month.users),
                usd(l.on_demand),
                usd(l.provisioned)
            );
        }
    }
    match break_even(p, s, m, prices) {
        Some(users) => {
            // Two significant digits: the profile is not known better.
            let step = 10f64.powf(users.log10().floor() - 1.0);
            let _ = writeln!(
                md,
                "\nProvisioned capacity costs less from about {} users.",
                thousands((users / step).round() * step)
            );
        }
        None => {
            let _ = writeln!(md, "\nProvisioned capacity never costs less below 100M users.");
        }
    }
    let _ = writeln!(
        md,
        "\nOn-demand total by Cognito plan:\n\n| users | {} |\n|---|---|---|---|",
        Tier::ALL.map(Tier::name).join(" | ")
    );
    for users in SIZES {
        let totals: Vec<String> = Tier::ALL
            .iter()
            .map(|t| {
                let stack = Stack { tier: *t, ..s.clone() };
                usd(month(users, p, &stack, m, prices).on_demand())
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", users_label(users), totals.join(" | "));
    }
    let _ = writeln!(
        md,
        "\nThe sweep: one pass at 10M users makes {} ListUsers calls and runs Lambda {:.1} h ({}).\n",
        thousands(months.last().map_or(0.0, |x| x.sweep.list_users_calls)),
        months.last().map_or(0.0, |x| x.sweep.pass_seconds / 3600.0),
        if s.simulated_passes.is_empty() {
            "the design's arithmetic: the calls at 15 a second"
        } else {
            "simulated by the reconcile section's model"
        }
    );
    md.push_str(&render_migration(prices, p, s, m));
    let _ = writeln!(
        md,
        "<details><summary>Prices ({} of {} read again by search on their date; the rest as published, to check at \
         the source)</summary>\n\n| price | value | unit | date | source |\n|---|---|---|---|---|",
        prices.entries.values().filter(|p| p.checked == "search").count(),
        prices.entries.len()
    );
    for (name, price) in &prices.entries {
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {} |",
            price.value, price.unit, price.date, price.source
        );
    }
    md.push_str("\n</details>\n\n");
    md
}

/// The scheduled pass at every size, simulated call by call with this
/// profile's deletions and sign-ups.
fn simulated(p: &Profile, s: &Stack) -> Vec<(f64, f64, f64)> {
    use crate::reconcile_sim::{Driver, Params, simulate};
    let passes = DAYS_PER_MONTH * 24.0 / s.sweep_interval_hours;
    SIZES
        .iter()
        .map(|users| {
            let params = Params {
                users: *users as u64,
                deleted_share: p.cognito_deletions_per_user / passes,
                created_per_s: users * p.sign_ups_per_user / SECONDS_PER_MONTH,
                bytes_per_user: p.table_bytes_per_user,
                memory_gb: s.memory_mb / 1024.0,
                ..Params::default()
            };
            let pass = simulate(&params, Driver::Scheduled);
            (*users, pass.lambda_s(), pass.list_calls as f64)
        })
        .collect()
}

/// The section: the committed inputs, or this run's, priced at every size.
pub(crate) fn section(inputs: &Inputs<'_>) -> Result<String, String> {
    let (prices, defaults) = parse(DATA)?;
    let template = std::fs::read_to_string(integration_tests::lambda::workspace_root().join("template.yaml"))
        .map_err(|e| format!("template.yaml: {e}"))?;
    let (_, _, alarm_metrics) = alarm_metrics(&template);
    let profile = Profile::default();
    let mut stack = Stack {
        alarm_metrics,
        custom_metrics: crate::emf::pairs().0 as f64,
        ..Stack::default()
    };
    stack.simulated_passes = simulated(&profile, &stack);
    let m = measured(defaults, inputs);
    if let Some(one_m) = SIZES.get(2).map(|u| month(*u, &profile, &stack, &m, &prices)) {
        let (item, share) = one_m.dominant();
        println!(
            "bench: cost at 1M users: {} on-demand, {} provisioned; largest: {item} ({:.0} %)",
            usd(one_m.on_demand()),
            usd(one_m.provisioned()),
            share * 100.0
        );
    }
    Ok(render(&prices, &profile, &stack, &m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> (Prices, Measured) {
        parse(DATA).unwrap()
    }

    #[test]
    fn the_data_file_parses_and_every_price_has_a_date_and_a_source() {
        let (prices, measured) = book();
        for name in NAMES {
            let p = &prices.entries[*name];
            assert!(p.value.is_finite() && p.value >= 0.0, "{name}");
            assert!(!p.unit.is_empty(), "{name}: unit");
            assert!(
                p.date.len() == 10 && p.date.as_bytes()[4] == b'-' && p.date.as_bytes()[7] == b'-',
                "{name}: date {}",
                p.date
            );
            assert!(p.source.contains("https://"), "{name}: source {}", p.source);
            assert!(matches!(p.checked.as_str(), "search" | "knowledge"), "{name}: checked");
        }
        for p in prices.entries.values() {
            assert!(!p.date.is_empty() && !p.source.is_empty());
        }
        // Every function of the catalog has its committed row, and no other.
        let names: Vec<&str> = measured.functions.iter().map(|f| f.name.as_str()).collect();
        for f in user_service::catalog::FUNCTIONS {
            assert!(names.contains(&f.name), "{} has no row in prices.json", f.name);
        }
        assert_eq!(names.len(), user_service::catalog::FUNCTIONS.len());
        assert!(measured.functions.iter().any(|f| f.http) && measured.functions.iter().any(|f| f.reads_key));
    }

    #[test]
    fn a_price_without_a_source_is_refused() {
        let broken = DATA.replacen(
            "\"source\": \"https://aws.amazon.com/lambda/pricing/\"",
            "\"source\": \"\"",
            1,
        );
        assert!(parse(&broken).unwrap_err().contains("source"));
        let missing = DATA.replacen("\"ses_emails\"", "\"ses_mail\"", 1);
        assert!(parse(&missing).unwrap_err().contains("ses_emails"));
    }

    /// A stack and a profile where only get-profile runs, priced by hand.
    #[test]
    fn a_hand_computed_month() {
        let (prices, _) = book();
        let profile = Profile {
            mau_share: 0.5,
            sign_ins: 0.0,
            token_refreshes: 0.0,
            profile_reads: 10.0,
            account_reads: 0.0,
            email_lists: 0.0,
            email_reads: 0.0,
            profile_edits: 0.0,
            address_checks: 0.0,
            exports: 0.0,
            address_adds: 0.0,
            resends: 0.0,
            verifications: 0.0,
            primary_switches: 0.0,
            removals: 0.0,
            password_resets: 0.0,
            sign_ups_per_user: 0.0,
            deletions_per_user: 0.0,
            cognito_deletions_per_user: 0.0,
            admin_lookups_per_user: 0.0,
            admin_status_changes_per_user: 0.0,
            addresses_per_user: 1.0,
            migration_wrong_passwords_per_user: 0.0,
            table_bytes_per_user: 1_200.0,
            gsi1_bytes_per_user: 0.0,
        };
        let stack = Stack {
            tier: Tier::Essentials,
            cold_start_share: 0.0,
            log_line_bytes: 0.0,
            access_log_bytes: 0.0,
            xray_rate: 0.0,
            xray_reservoir_per_second: 0.0,
            cloudtrail_trail: false,
            peak_to_average: 1.0,
            alarm_metrics: 10.0,
            custom_metrics: 20.0,
            ..Stack::default()
        };
        let get_profile = FunctionInput {
            name: "get-profile".to_owned(),
            rcu: 1.0,
            wcu: 0.0,
            gsi1_wcu: 0.0,
            requests: 1.0,
            transactions: 0.0,
            external_calls: 0.0,
            emf: false,
            http: true,
            reads_key: false,
            memory_mb: None,
        };
        let measured = Measured {
            functions: vec![get_profile],
            migration: book().1.migration,
            ms_per_request: 1.8,
            ms_per_transaction: 7.55,
            init_ms: 3.0,
            source: "by hand".to_owned(),
        };
        let m = month(100_000.0, &profile, &stack, &measured, &prices);
        let close = |item: &str, od: f64, pr: f64| {
            let l = m.line(item).unwrap();
            assert!(
                (l.on_demand - od).abs() < 1e-6,
                "{item}: on-demand {} against {od}",
                l.on_demand
            );
            assert!(
                (l.provisioned - pr).abs() < 1e-6,
                "{item}: provisioned {} against {pr}",
                l.provisioned
            );
        };
        // 100,000 users × 0.5 active = 50,000 MAU × 10 reads = 500,000 invocations.
        // Lambda: 500,000 × $0.20 / 1M = $0.10; 1.8 ms bills 2 ms: 500,000 ×
        // 0.002 s × 0.25 GB = 250 GB-s × $0.0000133334 = $0.00333335.
        close(LAMBDA, 0.103_333_35, 0.103_333_35);
        // API Gateway: 0.5M requests × $1.00 = $0.50.
        close(API, 0.5, 0.5);
        // On-demand: 500,000 RRU × $0.125 / 1M = $0.0625.
        // Provisioned: the load (500,000 RCU, plus the sweep's 1,973,790 a month:
        // 0.94 RCU/s, 1.34 at 70 %) and the sweep's writes (54,435 WCU, 0.02/s)
        // sit under the minimums: 5 RCU + 1 (GSI1) = 6 × 730 h × $0.00013 = $0.5694;
        // 5 WCU + 1 = 6 × 730 × $0.00065 = $2.847. Total $3.4164.
        close(DYNAMODB, 0.0625, 3.4164);
        // Essentials: (50,000 − 10,000 free) × $0.015 = $600.
        close(COGNITO, 600.0, 600.0);
        // 100,000 × 1,200 B = 120,000,000 B = 0.111758709 GB: storage × $0.25
        // = $0.027939677, PITR × $0.20 = $0.022351742; $0.050291419.
        close(STORAGE, 0.050_291_419, 0.050_291_419);
        // 20 metrics × $0.30 = $6; 10 alarm metrics × $0.10 = $1; 1 dashboard $3;
        // 1 secret $0.40 (no cold start, so no call); no email, no trace, no log.
        close(METRICS, 6.0, 6.0);
        close(ALARMS, 1.0, 1.0);
        close(DASHBOARD, 3.0, 3.0);
        close(SECRETS, 0.4, 0.4);
        close(SES, 0.0, 0.0);
        close(LOGS, 0.0, 0.0);
        close(XRAY, 0.0, 0.0);
        close(CLOUDTRAIL, 0.0, 0.0);

        // The sweep: 100,000 users < 128,000: 16 partitions of 6,250 users,
        // ceil(6,250 / 60) = 105 ListUsers calls each = 1,680 calls; at 15 a
        // second, 112 s a pass. No deletions, no sign-ups: no AdminGetUser.
        let sw = &m.sweep;
        assert_eq!(sw.partitions, 16.0);
        assert_eq!(sw.list_users_calls, 1_680.0);
        assert!((sw.pass_seconds - 112.0).abs() < 1e-9);
        // 730 h / 24 = 30.416667 daily passes. A pass reads the table
        // (120,000,000 B / 4,096 × 0.5 = 14,648.4375 RCU), its chunks
        // (1,600,000 B / 4,096 × 0.5 = 195.3125 RCU) and every listed user's
        // profile to compare addresses (100,000 × 0.5 = 50,000 RCU); 96 runs a
        // day each read 0.5 RCU: 30.416667 × (64,843.75 + 48) = 1,973,790.1 RCU.
        assert!((sw.rcu - 30.416_666_666_666_67 * (64_843.75 + 48.0)).abs() < 1e-6);
        // Writes: chunks 1,600,000 / 1,024 = 1,562.5 WCU, checkpoints 16 +
        // ceil(120,000,000 / 1,048,576 = 114.44) = 131, one lease per run (96).
        assert!((sw.wcu - 30.416_666_666_666_67 * (1_562.5 + 131.0 + 96.0)).abs() < 1e-6);
        // Lambda: 30.416667 × 112 s + 2,920 runs × 0.02 s = 3,465.0667 s ×
        // 0.25 GB × $0.0000133334 = $0.011550; 2,920 requests × $0.20 / 1M =
        // $0.000584. Units: 1,973,790.1 × $0.125 / 1M + 54,434.9 × $0.625 / 1M.
        let lambda = (30.416_666_666_666_67 * 112.0 + 2_920.0 * 0.02) * 0.25 * 0.000_013_333_4 + 2_920.0 * 0.2 / 1e6;
        assert!((sw.lambda_usd - lambda).abs() < 1e-9);
        close(SWEEP, lambda + sw.rcu * 0.125 / 1e6 + sw.wcu * 0.625 / 1e6, lambda);

        // Totals are the sum of the lines.
        let sum: f64 = m.lines.iter().map(|l| l.on_demand).sum();
        assert!((m.on_demand() - sum).abs() < 1e-12);
        assert_eq!(m.dominant().0, COGNITO);
    }

    /// One million pending users migrated, priced by hand.
    #[test]
    fn a_hand_computed_migration() {
        let (prices, mut measured) = book();
        let function = |name: &str, rcu: f64, requests: f64, memory_mb: Option<f64>| FunctionInput {
            name: name.to_owned(),
            rcu,
            wcu: 0.0,
            gsi1_wcu: 0.0,
            requests,
            transactions: 0.0,
            external_calls: 0.0,
            emf: true,
            http: false,
            reads_key: false,
            memory_mb,
        };
        measured.functions = vec![
            function("migrate-user", 3.0, 3.0, Some(1769.0)),
            function("post-authentication", 1.0, 1.0, None),
        ];
        measured.migration = MigrationInput {
            wrong_password: PathInput {
                rcu: 3.0,
                wcu: 2.0,
                gsi1_wcu: 0.0,
                requests: 3.0,
                transactions: 1.0,
            },
            adoption: PathInput {
                rcu: 4.0,
                wcu: 12.0,
                gsi1_wcu: 2.0,
                requests: 4.0,
                transactions: 2.0,
            },
            hash_ms: vec![("bcrypt cost 12".to_owned(), 250.0)],
        };
        measured.ms_per_request = 2.0;
        measured.ms_per_transaction = 8.0;
        let profile = Profile {
            migration_wrong_passwords_per_user: 0.1,
            ..Profile::default()
        };
        let stack = Stack {
            cold_start_share: 0.0,
            log_line_bytes: 0.0,
            emf_bytes: 0.0,
            xray_rate: 0.0,
            ..Stack::default()
        };
        let c = migration(1_000_000.0, 250.0, &profile, &stack, &measured, &prices);
        // migrate-user: 1.1M invocations × $0.20 / 1M = $0.22. The right
        // password bills ceil(3 × 2 + 250) = 256 ms, a wrong one ceil(3 × 2 + 8
        // + 250) = 264 ms: 1M × 0.256 s + 100,000 × 0.264 s = 282,400 s at
        // 1,769 MB (1.7275390625 GB) × $0.0000133334 = $6.50479294.
        assert!((c.trigger_lambda - 6.724_792_940_468_75).abs() < 1e-9, "{c:?}");
        // post-authentication: ceil(4 × 2 + 2 × 8) = 24 ms at 256 MB: 24,000 s ×
        // 0.25 GB × $0.0000133334 = $0.0800004, and 1M requests $0.20.
        assert!((c.adoption_lambda - 0.280_000_4).abs() < 1e-9, "{c:?}");
        // Reads: 1M × (3 + 4) + 100,000 × 3 = 7.3M RRU × $0.125 / 1M = $0.9125;
        // writes: 1M × (12 + 2) + 100,000 × 2 = 14.2M WRU × $0.625 / 1M = $8.875.
        assert!((c.dynamodb - (0.9125 + 8.875)).abs() < 1e-9, "{c:?}");
        assert_eq!((c.logs, c.xray), (0.0, 0.0));
        assert!((c.total() - (6.724_792_940_468_75 + 0.280_000_4 + 9.7875)).abs() < 1e-9);
        // The monthly bill has no migration in it.
        assert_eq!(invocations("migrate-user", &profile, 1_000_000.0), 0.0);
    }

    #[test]
    fn cognito_plans_bill_as_published() {
        let (prices, _) = book();
        // Plus: no free MAU. 400,000 × $0.02 = $8,000.
        assert!((cognito(400_000.0, Tier::Plus, &prices) - 8_000.0).abs() < 1e-9);
        // Lite: 90,000 × 0.0055 + 900,000 × 0.0046 + 500,000 × 0.00325
        // = 495 + 4,140 + 1,625 = $6,260 at 1.5M MAU.
        assert!((cognito(1_500_000.0, Tier::Lite, &prices) - 6_260.0).abs() < 1e-9);
        assert_eq!(cognito(10_000.0, Tier::Essentials, &prices), 0.0);
    }

    #[test]
    fn auto_scaling_follows_the_load_above_its_minimum() {
        // A flat day: load over target.
        assert!((provisioned_average(7.0, 1.0, 0.7, 1.0) - 10.0).abs() < 1e-9);
        // The minimum holds a quiet table.
        assert_eq!(provisioned_average(0.1, 2.0, 0.7, 5.0), 5.0);
        // A swinging day costs more than a flat one, less than the peak all day.
        let swinging = provisioned_average(7.0, 2.0, 0.7, 1.0);
        assert!(swinging > 10.0 && swinging < 20.0, "{swinging}");
    }

    #[test]
    fn alarms_are_counted_by_their_billed_metrics() {
        let template = "Resources:\n  A:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      MetricName: Errors\n\
                        \x20 B:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      Metrics:\n        - Id: a\n          MetricStat:\n        - Id: b\n          MetricStat:\n\
                        \x20 C:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      Metrics:\n        - Expression: ANOMALY_DETECTION_BAND(m, 3)\n\
                        \x20 D:\n    Type: AWS::SNS::Topic\n";
        assert_eq!(alarm_metrics(template), (3, 1, 1.0 + 2.0 + 3.0));
        let real = std::fs::read_to_string(integration_tests::lambda::workspace_root().join("template.yaml")).unwrap();
        let (alarms, anomaly, metrics) = alarm_metrics(&real);
        assert!(
            alarms > 50 && anomaly > 0 && metrics > alarms as f64,
            "{alarms} {anomaly} {metrics}"
        );
    }

    #[test]
    fn the_committed_inputs_price_every_size() {
        let (prices, measured) = book();
        let stack = Stack {
            alarm_metrics: 100.0,
            custom_metrics: 100.0,
            ..Stack::default()
        };
        let mut last = 0.0;
        for users in SIZES {
            let m = month(users, &Profile::default(), &stack, &measured, &prices);
            assert!(m.on_demand() > last && m.provisioned() > 0.0);
            assert!(m.lines.iter().all(|l| l.on_demand.is_finite() && l.on_demand >= 0.0));
            last = m.on_demand();
        }
        let md = render(&prices, &Profile::default(), &stack, &measured);
        assert!(md.contains("| 1M |") && md.contains("| 10M |"), "{md}");
    }
}
