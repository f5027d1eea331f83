//! How the stack is deployed and watched: Cognito's plan, memory and
//! architecture, logs and traces, capacity settings, the sweep's schedule, and
//! the alarms counted from template.yaml.

use super::prices::Prices;

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

/// How the stack is deployed and watched (template.yaml's defaults).
#[derive(Debug, Clone)]
pub(crate) struct Stack {
    /// The reconcile sweep's memory (reconcile-users' in the catalog), and any
    /// function's the measurements name without a catalog entry.
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
            memory_mb: f64::from(user_service::catalog::RECONCILE_USERS.memory_mb),
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

/// Lambda's GB-second price for the stack's architecture.
pub(super) fn gb_second(s: &Stack, prices: &Prices) -> f64 {
    prices.get(if s.arm64 {
        "lambda_gb_second_arm64"
    } else {
        "lambda_gb_second_x86_64"
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alarms_are_counted_by_their_billed_metrics() {
        let template = "Resources:\n  A:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      MetricName: Errors\n\
                        \x20 B:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      Metrics:\n        - Id: a\n          MetricStat:\n        - Id: b\n          MetricStat:\n\
                        \x20 C:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      Metrics:\n        - Expression: ANOMALY_DETECTION_BAND(m, 3)\n\
                        \x20 D:\n    Type: AWS::SNS::Topic\n";
        assert_eq!(alarm_metrics(template), (3, 1, 1.0 + 2.0 + 3.0));
        let real = std::fs::read_to_string(integration_tests::workspace_root().join("template.yaml")).unwrap();
        let (alarms, anomaly, metrics) = alarm_metrics(&real);
        assert!(
            alarms > 50 && anomaly > 0 && metrics > alarms as f64,
            "{alarms} {anomaly} {metrics}"
        );
    }
}
