//! Every CloudWatch alarm of the stack: its own (the API, the table, GSI1, SES)
//! and each function's, as the catalog lists them. One list, so the alarms block
//! of template.yaml and the dashboard's alarm widget cannot disagree.

use user_service::catalog::{Alarm, Function, Trigger};
use user_service::store::keys;
use user_service::{metrics, reconcile};

use crate::template::{Yaml, logical_name};

/// The business metrics' namespace, as a `!Sub` template: the functions read it
/// from `METRICS_NAMESPACE`, which template.yaml's Globals set to the same.
pub(crate) const METRICS_NAMESPACE: &str = "UserService/${AWS::StackName}";

/// The duration alarm fires at this share of the function's timeout.
pub(crate) const DURATION_ALARM_PERCENT: u32 = 80;

/// Standard deviations of the conditional-check-failure bands: failures are
/// sparse counts, whose narrow bands a width of 2 (CloudWatch's default) would
/// cross at every small burst.
const ANOMALY_BAND_WIDTH: u32 = 3;

/// Five minutes, the period of every alarm but SES's.
const PERIOD: u32 = 300;

/// One metric with its statistic.
#[derive(Debug, Clone)]
pub(crate) struct MetricStat {
    /// A YAML value: a literal or a tagged `!Sub`.
    pub namespace: String,
    pub name: &'static str,
    /// (name, YAML value).
    pub dimensions: Vec<(&'static str, String)>,
    /// `Sum`, `Maximum`, or a percentile such as `p99`.
    pub stat: &'static str,
    pub period: u32,
}

#[derive(Debug, Clone)]
pub(crate) enum Rule {
    /// One metric against a threshold.
    Threshold {
        metric: MetricStat,
        threshold: String,
        comparison: &'static str,
    },
    /// A metric-math expression over named metrics against a threshold.
    Math {
        /// A YAML value: the expression, tagged `!Sub` when it names a parameter.
        expression: String,
        label: &'static str,
        metrics: Vec<(&'static str, MetricStat)>,
        threshold: String,
        comparison: &'static str,
    },
    /// A metric above its anomaly-detection band, which CloudWatch learns from
    /// the metric's own history (about two weeks to settle).
    Anomaly { metric: MetricStat },
}

/// A CloudWatch alarm of the stack.
#[derive(Debug, Clone)]
pub(crate) struct AlarmDef {
    /// The logical id in template.yaml.
    pub id: String,
    /// The alarm's name after `<stack>-`.
    pub name: String,
    /// The text of a `!Sub`.
    pub description: String,
    /// Why it is set as it is, written above it.
    pub comment: &'static [&'static str],
    /// Exists in every stack, notifying only with EnableAlarms=true; else it
    /// exists only with EnableAlarms=true.
    pub always: bool,
    pub rule: Rule,
    pub evaluation_periods: u32,
    pub datapoints_to_alarm: u32,
    /// A template parameter that gives both the evaluation periods and the
    /// datapoints to alarm, instead of the figures above.
    pub periods_parameter: Option<&'static str>,
    pub treat_missing_data: &'static str,
}

fn single(
    namespace: &str,
    name: &'static str,
    dimensions: Vec<(&'static str, String)>,
    stat: &'static str,
) -> MetricStat {
    MetricStat {
        namespace: namespace.to_owned(),
        name,
        dimensions,
        stat,
        period: PERIOD,
    }
}

fn api(name: &'static str) -> MetricStat {
    single(
        "AWS/ApiGateway",
        name,
        vec![("ApiId", "!Ref HttpApi".to_owned()), ("Stage", "$default".to_owned())],
        "Sum",
    )
}

/// The base table's own metric (TableName alone), or one index's.
fn table(name: &'static str, index: Option<&str>) -> MetricStat {
    let mut dimensions = vec![("TableName", "!Ref Table".to_owned())];
    if let Some(index) = index {
        dimensions.push(("GlobalSecondaryIndexName", index.to_owned()));
    }
    single("AWS/DynamoDB", name, dimensions, "Sum")
}

/// Any one event in five minutes.
fn any_in_five_minutes(metric: MetricStat) -> Rule {
    Rule::Threshold {
        metric,
        threshold: "1".to_owned(),
        comparison: "GreaterThanOrEqualToThreshold",
    }
}

/// Whether the function writes with conditions: PutItem, UpdateItem or
/// DeleteItem, alone or inside a TransactWriteItems (listed by its items).
pub(crate) fn writes_with_conditions(function: &Function) -> bool {
    function
        .dynamodb_actions
        .iter()
        .any(|a| matches!(*a, "PutItem" | "UpdateItem" | "DeleteItem" | "TransactWriteItems"))
}

/// The alarms of one function, as the catalog lists them (a
/// ConditionalCheckFailures alarm only where the function writes).
pub(crate) fn applies(function: &Function, alarm: Alarm) -> bool {
    alarm != Alarm::ConditionalCheckFailures || writes_with_conditions(function)
}

/// p99 duration that fires the function's duration alarm, in ms.
pub(crate) fn duration_threshold_ms(function: &Function) -> u32 {
    function.timeout_seconds * 1000 * DURATION_ALARM_PERCENT / 100
}

/// Written above the first function's alarms.
const FUNCTION_ALARMS: &[&str] = &[
    "Each function's, as shared/src/catalog.rs lists them (`Alarm`): errors and",
    "throttles, any in 5 minutes; p99 duration at 80 % of the timeout; spikes of",
    "condition failures where it writes. No invocation is no failure: missing data",
    "is not breaching.",
];

/// The stack's own alarms, then every function's.
pub(crate) fn all(catalog: &[Function]) -> Vec<AlarmDef> {
    let mut out = stack_alarms();
    let first = out.len();
    for function in catalog {
        for alarm in function.alarms.iter().filter(|a| applies(function, **a)) {
            out.push(function_alarm(function, *alarm));
        }
    }
    if let Some(alarm) = out.get_mut(first) {
        alarm.comment = FUNCTION_ALARMS;
    }
    out
}

fn stack_alarms() -> Vec<AlarmDef> {
    let throttles = |id: &str, name: &str, metric: &'static str, index: Option<&str>, description: &str| AlarmDef {
        id: id.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        comment: &[],
        always: false,
        rule: any_in_five_minutes(table(metric, index)),
        evaluation_periods: 1,
        datapoints_to_alarm: 1,
        treat_missing_data: "notBreaching",
        periods_parameter: None,
    };
    let mut read = throttles(
        "TableReadThrottleEventsAlarm",
        "table-read-throttles",
        "ReadThrottleEvents",
        None,
        "Reads of ${Table} (the base table, not its index) were throttled.",
    );
    read.comment = &[
        "Throttling of the base table and of each index, each on its own: an index has its",
        "own capacity, and an index that cannot keep up with the table's writes",
        "throttles those writes too. Any event in 5 minutes: the SDK's retries absorb",
        "most, so one that reaches the metric deserves a look. Every throttled request",
        "shows in these events, so ThrottledRequests is not watched apart.",
    ];
    let write = throttles(
        "TableWriteThrottleEventsAlarm",
        "table-write-throttles",
        "WriteThrottleEvents",
        None,
        "Writes to ${Table} (the base table, not its index) were throttled.",
    );
    let gsi1_read = throttles(
        "Gsi1ReadThrottleEventsAlarm",
        "gsi1-read-throttles",
        "ReadThrottleEvents",
        Some(keys::GSI1),
        "Queries of GSI1 of ${Table} were throttled (admin look-ups by address).",
    );
    let gsi1_write = throttles(
        "Gsi1WriteThrottleEventsAlarm",
        "gsi1-write-throttles",
        "WriteThrottleEvents",
        Some(keys::GSI1),
        "Writes into GSI1 of ${Table} were throttled; the table's writes of email records are held back with them.",
    );
    let gsi2_read = throttles(
        "Gsi2ReadThrottleEventsAlarm",
        "gsi2-read-throttles",
        "ReadThrottleEvents",
        Some(keys::GSI2),
        "Queries of GSI2 of ${Table} were throttled (the admin list of users).",
    );
    let gsi2_write = throttles(
        "Gsi2WriteThrottleEventsAlarm",
        "gsi2-write-throttles",
        "WriteThrottleEvents",
        Some(keys::GSI2),
        "Writes into GSI2 of ${Table} were throttled; the table's writes of profiles (sign-ups, status changes) are held back with them.",
    );
    let ses = |id: &str, name: &str, metric: &'static str, threshold: &str, description: &str| AlarmDef {
        id: id.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        comment: &[],
        always: false,
        rule: Rule::Threshold {
            metric: MetricStat {
                namespace: "AWS/SES".to_owned(),
                name: metric,
                dimensions: Vec::new(),
                stat: "Maximum",
                period: 900,
            },
            threshold: threshold.to_owned(),
            comparison: "GreaterThanOrEqualToThreshold",
        },
        evaluation_periods: 1,
        datapoints_to_alarm: 1,
        treat_missing_data: "ignore",
        periods_parameter: None,
    };
    let mut bounces = ses(
        "SesBounceRateAlarm",
        "ses-bounce-rate",
        "Reputation.BounceRate",
        "0.05",
        "The SES bounce rate of this account in ${AWS::Region} reached 5 %, where AWS puts an account under review (at 10 % it may pause sending).",
    );
    bounces.comment = &[
        "SES reputation, of the account in this region (every sender in it, not only",
        "this stack): AWS reviews an account at a 5 % bounce or a 0.1 % complaint",
        "rate and may pause its sending at 10 % or 0.5 %. The rates run over a",
        "representative volume of mail and are published irregularly: the Maximum",
        "over 15 minutes, and a period without a figure keeps the state (ignore)",
        "rather than calling the account healthy.",
    ];
    let complaints = ses(
        "SesComplaintRateAlarm",
        "ses-complaint-rate",
        "Reputation.ComplaintRate",
        "0.001",
        "The SES complaint rate of this account in ${AWS::Region} reached 0.1 %, where AWS puts an account under review (at 0.5 % it may pause sending).",
    );
    vec![
        AlarmDef {
            id: "HttpApi5xxRatioAlarm".to_owned(),
            name: "api-5xx-ratio".to_owned(),
            description: "More than ${Api5xxAlarmThresholdPercent} % of the HTTP API's responses were 5xx, three 5-minute periods in a row.".to_owned(),
            comment: &[
                "The API's 5xx as a share of its requests, not a count: a count pages for",
                "one bad request at night and misses a rising share at the peak. A 500 is",
                "a handler's answer, not a Lambda error, so this is the alarm that sees",
                "bugs. Under Api5xxAlarmMinRequests requests in 5 minutes the share reads",
                "0 (one error in three requests is noise; the functions' Errors alarms",
                "still see crashes). Three periods in a row: a blip passes, a steady 1 %",
                "of failing requests pages within 15 minutes.",
            ],
            always: false,
            rule: Rule::Math {
                expression: "!Sub \"IF(requests >= ${Api5xxAlarmMinRequests}, 100 * FILL(errors, 0) / requests, 0)\"".to_owned(),
                label: "5xx, % of requests",
                metrics: vec![("requests", api("Count")), ("errors", api("5xx"))],
                threshold: "!Ref Api5xxAlarmThresholdPercent".to_owned(),
                comparison: "GreaterThanThreshold",
            },
            evaluation_periods: 3,
            datapoints_to_alarm: 3,
            treat_missing_data: "notBreaching",
            periods_parameter: None,
        },
        read,
        write,
        gsi1_read,
        gsi1_write,
        gsi2_read,
        gsi2_write,
        AlarmDef {
            id: "TableConditionalCheckFailuresAlarm".to_owned(),
            name: "table-conditional-check-failures".to_owned(),
            description: "Single-item writes to ${Table} failed their conditions far more often than usual.".to_owned(),
            comment: &[
                "Condition failures of single-item writes (a transaction's show in the",
                "functions' ConditionalCheckFailures instead), against the band CloudWatch",
                "learns from their history: the usual races and stale versions pass, a",
                "spike (a client retrying in a loop, a bug) fires. 2 of 3 periods.",
            ],
            always: false,
            rule: Rule::Anomaly {
                metric: table("ConditionalCheckFailedRequests", None),
            },
            evaluation_periods: 3,
            datapoints_to_alarm: 2,
            treat_missing_data: "notBreaching",
            periods_parameter: None,
        },
        bounces,
        complaints,
    ]
}

fn function_alarm(function: &Function, alarm: Alarm) -> AlarmDef {
    let id = logical_name(function);
    let name = function.name;
    let by_function = ("FunctionName", format!("!Ref {id}Function"));
    let lambda = |metric, stat| single("AWS/Lambda", metric, vec![by_function.clone()], stat);
    let def = |suffix: &str, kebab: &str, description: String, rule, periods, datapoints| AlarmDef {
        id: format!("{id}{suffix}Alarm"),
        name: format!("{name}-{kebab}"),
        description,
        comment: &[],
        always: false,
        rule,
        evaluation_periods: periods,
        datapoints_to_alarm: datapoints,
        treat_missing_data: "notBreaching",
        periods_parameter: None,
    };
    match alarm {
        Alarm::Errors => def(
            "Errors",
            "errors",
            format!("${{{id}Function}} failed (unhandled error, panic or timeout)."),
            any_in_five_minutes(lambda("Errors", "Sum")),
            1,
            1,
        ),
        Alarm::Throttles => def(
            "Throttles",
            "throttles",
            format!("${{{id}Function}} was throttled."),
            any_in_five_minutes(lambda("Throttles", "Sum")),
            1,
            1,
        ),
        // A function whose runs use their whole time by design (the
        // reconcile's) is watched for a run that went past the point where
        // it stops itself: a loop that does not look at its deadline.
        Alarm::Duration if function.alarms.contains(&Alarm::PassOverdue) => def(
            "Duration",
            "duration",
            format!(
                "A run of ${{{id}Function}} went on past the point where it stops itself ({} s of its {} s timeout).",
                function.timeout_seconds - reconcile::RUN_RESERVE_SECONDS,
                function.timeout_seconds
            ),
            Rule::Threshold {
                metric: lambda("Duration", "Maximum"),
                threshold: ((function.timeout_seconds - reconcile::RUN_RESERVE_SECONDS) * 1000).to_string(),
                comparison: "GreaterThanThreshold",
            },
            1,
            1,
        ),
        Alarm::Duration => {
            // A scheduled function runs seldom: its one run is the sample.
            let periods = if matches!(function.trigger, Trigger::Schedule { .. }) {
                1
            } else {
                3
            };
            def(
                "Duration",
                "duration",
                format!(
                    "The p99 duration of ${{{id}Function}} reached {DURATION_ALARM_PERCENT} % of its {} s timeout.",
                    function.timeout_seconds
                ),
                Rule::Threshold {
                    metric: lambda("Duration", "p99"),
                    threshold: duration_threshold_ms(function).to_string(),
                    comparison: "GreaterThanOrEqualToThreshold",
                },
                periods,
                periods,
            )
        }
        Alarm::ConditionalCheckFailures => def(
            "ConditionalCheckFailures",
            "conditional-check-failures",
            format!("Writes of ${{{id}Function}} failed their conditions far more often than usual."),
            Rule::Anomaly {
                metric: single(
                    &format!("!Sub {METRICS_NAMESPACE}"),
                    metrics::Metric::ConditionalCheckFailures.name(),
                    vec![(metrics::DIMENSION, format!("!Ref {id}Function"))],
                    "Sum",
                ),
            },
            3,
            2,
        ),
        Alarm::IteratorAge => AlarmDef {
            always: true,
            ..def(
                "IteratorAge",
                "iterator-age",
                format!("${{{id}Function}} is more than 5 minutes behind the table stream."),
                Rule::Threshold {
                    metric: lambda("IteratorAge", "Maximum"),
                    threshold: "300000".to_owned(),
                    comparison: "GreaterThanThreshold",
                },
                3,
                3,
            )
        },
        Alarm::PassOverdue => AlarmDef {
            comment: &[
                "The reconcile's pass is the safety net of erasure: when none completes",
                "for ReconcileAlarmDays days (a day per period), users who deleted",
                "themselves in Cognito may keep their data. No data is breaching: a",
                "function that stopped running completes no pass either.",
            ],
            treat_missing_data: "breaching",
            periods_parameter: Some("ReconcileAlarmDays"),
            ..def(
                "PassOverdue",
                "pass-overdue",
                format!(
                    "No reconcile pass of ${{{id}Function}} completed in ${{ReconcileAlarmDays}} days: users who deleted themselves in Cognito may keep their data."
                ),
                Rule::Threshold {
                    metric: MetricStat {
                        period: 86_400,
                        ..single(
                            &format!("!Sub {METRICS_NAMESPACE}"),
                            metrics::Metric::ReconcilePassesCompleted.name(),
                            vec![(metrics::DIMENSION, format!("!Ref {id}Function"))],
                            "Sum",
                        )
                    },
                    threshold: "1".to_owned(),
                    comparison: "LessThanThreshold",
                },
                7,
                7,
            )
        },
        Alarm::PasswordResetMigrations => AlarmDef {
            comment: &[
                "A forgot-password for a pending user's address migrates them at once:",
                "Cognito creates the user, RESET_REQUIRED, and the legacy password",
                "stops working. Anyone who knows an address can start one, so a burst",
                "is someone walking a list of addresses (docs/migration.md).",
            ],
            ..def(
                "PasswordResetMigrations",
                "password-reset-migrations",
                format!(
                    "More than ${{MigrationResetAlarmThreshold}} pending users of ${{{id}Function}} were migrated by a forgot-password in five minutes."
                ),
                Rule::Threshold {
                    metric: single(
                        &format!("!Sub {METRICS_NAMESPACE}"),
                        metrics::Metric::MigrationsByPasswordReset.name(),
                        vec![(metrics::DIMENSION, format!("!Ref {id}Function"))],
                        "Sum",
                    ),
                    threshold: "!Ref MigrationResetAlarmThreshold".to_owned(),
                    comparison: "GreaterThanThreshold",
                },
                1,
                1,
            )
        },
        Alarm::FailedRecords => AlarmDef {
            always: true,
            ..def(
                "Failures",
                "failed-records",
                format!(
                    "Records that ${{{id}Function}} gave up on after every retry are in ${{{id}Failures.QueueName}}."
                ),
                any_in_five_minutes(single(
                    "AWS/SQS",
                    "ApproximateNumberOfMessagesVisible",
                    vec![("QueueName", format!("!GetAtt {id}Failures.QueueName"))],
                    "Maximum",
                )),
                1,
                1,
            )
        },
    }
}

/// A YAML double-quoted string.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The alarms block of template.yaml.
pub(crate) fn render(alarms: &[AlarmDef]) -> String {
    let mut y = Yaml::default();
    for (i, alarm) in alarms.iter().enumerate() {
        if i > 0 {
            y.blank();
        }
        block(&mut y, alarm);
    }
    y.0
}

fn metric_lines(y: &mut Yaml, level: usize, metric: &MetricStat) {
    y.line(level, &format!("Namespace: {}", metric.namespace));
    y.line(level, &format!("MetricName: {}", metric.name));
    if !metric.dimensions.is_empty() {
        y.line(level, "Dimensions:");
        for (name, value) in &metric.dimensions {
            y.line(level + 1, &format!("- Name: {name}"));
            y.line(level + 2, &format!("Value: {value}"));
        }
    }
}

fn metric_stat(y: &mut Yaml, id: &str, metric: &MetricStat, return_data: bool) {
    y.line(4, &format!("- Id: {id}"));
    y.line(5, &format!("ReturnData: {return_data}"));
    y.line(5, "MetricStat:");
    y.line(6, "Metric:");
    metric_lines(y, 7, metric);
    y.line(6, &format!("Period: {}", metric.period));
    y.line(6, &format!("Stat: {}", metric.stat));
}

fn block(y: &mut Yaml, a: &AlarmDef) {
    for line in a.comment {
        y.line(1, &format!("# {line}"));
    }
    y.line(1, &format!("{}:", a.id));
    y.line(2, "Type: AWS::CloudWatch::Alarm");
    if !a.always {
        y.line(2, "Condition: AlarmsEnabled");
    }
    y.line(2, "Properties:");
    y.line(3, &format!("AlarmName: !Sub ${{AWS::StackName}}-{}", a.name));
    let description = quoted(&a.description);
    if a.description.contains("${") {
        y.line(3, &format!("AlarmDescription: !Sub {description}"));
    } else {
        y.line(3, &format!("AlarmDescription: {description}"));
    }
    match &a.rule {
        Rule::Threshold {
            metric,
            threshold,
            comparison,
        } => {
            metric_lines(y, 3, metric);
            if metric.stat.starts_with('p') {
                y.line(3, &format!("ExtendedStatistic: {}", metric.stat));
            } else {
                y.line(3, &format!("Statistic: {}", metric.stat));
            }
            y.line(3, &format!("Period: {}", metric.period));
            y.line(3, &format!("Threshold: {threshold}"));
            y.line(3, &format!("ComparisonOperator: {comparison}"));
        }
        Rule::Math {
            expression,
            label,
            metrics,
            threshold,
            comparison,
        } => {
            y.line(3, "Metrics:");
            y.line(4, "- Id: result");
            y.line(5, &format!("Label: {}", quoted(label)));
            y.line(5, &format!("Expression: {expression}"));
            y.line(5, "ReturnData: true");
            for (id, metric) in metrics {
                metric_stat(y, id, metric, false);
            }
            y.line(3, &format!("Threshold: {threshold}"));
            y.line(3, &format!("ComparisonOperator: {comparison}"));
        }
        Rule::Anomaly { metric } => {
            y.line(3, "Metrics:");
            metric_stat(y, "observed", metric, true);
            y.line(4, "- Id: band");
            y.line(5, "Label: expected range");
            y.line(
                5,
                &format!("Expression: ANOMALY_DETECTION_BAND(observed, {ANOMALY_BAND_WIDTH})"),
            );
            y.line(5, "ReturnData: true");
            y.line(3, "ThresholdMetricId: band");
            y.line(3, "ComparisonOperator: GreaterThanUpperThreshold");
        }
    }
    match a.periods_parameter {
        Some(parameter) => {
            y.line(3, &format!("EvaluationPeriods: !Ref {parameter}"));
            y.line(3, &format!("DatapointsToAlarm: !Ref {parameter}"));
        }
        None => {
            y.line(3, &format!("EvaluationPeriods: {}", a.evaluation_periods));
            y.line(3, &format!("DatapointsToAlarm: {}", a.datapoints_to_alarm));
        }
    }
    y.line(3, &format!("TreatMissingData: {}", a.treat_missing_data));
    for actions in ["AlarmActions", "OKActions"] {
        if a.always {
            y.line(3, &format!("{actions}: !If"));
            y.line(4, "- AlarmsEnabled");
            y.line(4, "- - !Ref AlarmTopic");
            y.line(4, "- !Ref AWS::NoValue");
        } else {
            y.line(3, &format!("{actions}:"));
            y.line(4, "- !Ref AlarmTopic");
        }
    }
}

#[cfg(test)]
mod tests {
    use user_service::catalog::{self, FUNCTIONS};

    use super::*;

    fn suffix(alarm: Alarm) -> &'static str {
        match alarm {
            Alarm::Errors => "Errors",
            Alarm::Throttles => "Throttles",
            Alarm::Duration => "Duration",
            Alarm::ConditionalCheckFailures => "ConditionalCheckFailures",
            Alarm::IteratorAge => "IteratorAge",
            Alarm::FailedRecords => "Failures",
            Alarm::PassOverdue => "PassOverdue",
            Alarm::PasswordResetMigrations => "PasswordResetMigrations",
        }
    }

    #[test]
    fn every_function_gets_its_alarms_and_every_alarm_notifies() {
        let alarms = all(FUNCTIONS);
        let text = render(&alarms);
        for f in FUNCTIONS {
            let id = logical_name(f);
            for alarm in f.alarms {
                let wanted = format!("  {id}{}Alarm:\n", suffix(*alarm));
                assert_eq!(text.contains(&wanted), applies(f, *alarm), "{wanted}");
            }
            for standard in catalog::STANDARD_ALARMS {
                if applies(f, *standard) {
                    assert!(f.alarms.contains(standard), "{} lacks {standard:?}", f.name);
                }
            }
        }
        assert_eq!(text.matches("Type: AWS::CloudWatch::Alarm").count(), alarms.len());
        assert_eq!(text.matches("AlarmActions").count(), alarms.len());
        assert_eq!(text.matches("OKActions").count(), alarms.len());
        assert_eq!(text.matches("TreatMissingData").count(), alarms.len());
        let mut ids: Vec<&str> = alarms.iter().map(|a| a.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), alarms.len(), "unique logical ids");
        let mut names: Vec<&str> = alarms.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), alarms.len(), "unique alarm names");
    }

    #[test]
    fn only_writers_watch_condition_failures() {
        assert!(writes_with_conditions(&catalog::ADD_EMAIL));
        assert!(writes_with_conditions(&catalog::UPDATE_PROFILE));
        assert!(!writes_with_conditions(&catalog::GET_PROFILE));
        assert!(!writes_with_conditions(&catalog::FIND_USER_BY_EMAIL));
        // It records the address Cognito holds, on condition the profile is there.
        assert!(writes_with_conditions(&catalog::SYNC_COGNITO_EMAIL));
    }

    #[test]
    fn the_duration_alarm_sits_at_80_percent_of_the_timeout() {
        assert_eq!(duration_threshold_ms(&catalog::GET_PROFILE), 8000);
        assert_eq!(duration_threshold_ms(&catalog::PRE_SIGN_UP), 3200);
        let text = render(&all(&[catalog::SYNC_COGNITO_EMAIL]));
        assert!(text.contains("ExtendedStatistic: p99\n"));
        assert!(text.contains("Threshold: 48000\n"));
        // The reconcile stops itself 5 s before its timeout: a run past that is the alarm.
        let text = render(&all(&[catalog::RECONCILE_USERS]));
        assert!(text.contains("MetricName: Duration\n"));
        assert!(text.contains("Threshold: 895000\n"));
    }
}
