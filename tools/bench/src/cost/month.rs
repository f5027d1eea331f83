//! The bill of one month at one size, item by item, on-demand against
//! provisioned capacity with auto scaling; and the size from which
//! provisioned capacity costs less.

use super::measured::Measured;
use super::prices::Prices;
use super::stack::{Stack, Tier, gb_second};
use super::sweep::{Sweep, sweep};
use super::usage::{
    DAYS_PER_MONTH, GB, HOURS_PER_MONTH, Profile, SECONDS_PER_MONTH, billed_ms, domain_events, invocations,
    sync_external_calls, traces,
};

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
        let cold = n * s.cold_start_share;
        let mut seconds = match f.billed {
            // Measured at its size: a cold start's init and first invocation
            // stand for the warm invocation they replace.
            Some(b) => ((n - cold) * b.warm_ms + cold * b.cold_ms) / 1000.0,
            None => n * billed_ms(f, m, s) / 1000.0 + cold * m.init_ms.ceil() / 1000.0,
        };
        if f.name == "sync-cognito-email" {
            seconds += sync_external_calls(p, users) * s.external_call_ms / 1000.0;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::measured::FunctionInput;
    use crate::cost::prices::book;

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
            memory_mb: Some(256.0),
            billed: None,
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
        // reconcile-users' GB × $0.0000133334; 2,920 requests × $0.20 / 1M =
        // $0.000584. Units: 1,973,790.1 × $0.125 / 1M + 54,434.9 × $0.625 / 1M.
        let gb = stack.memory_mb / 1024.0;
        let lambda = (30.416_666_666_666_67 * 112.0 + 2_920.0 * 0.02) * gb * 0.000_013_333_4 + 2_920.0 * 0.2 / 1e6;
        assert!((sw.lambda_usd - lambda).abs() < 1e-9);
        close(SWEEP, lambda + sw.rcu * 0.125 / 1e6 + sw.wcu * 0.625 / 1e6, lambda);

        // Totals are the sum of the lines.
        let sum: f64 = m.lines.iter().map(|l| l.on_demand).sum();
        assert!((m.on_demand() - sum).abs() < 1e-12);
        assert_eq!(m.dominant().0, COGNITO);
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
}
