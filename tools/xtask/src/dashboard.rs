//! The stack's CloudWatch dashboard, written from the catalog, the business
//! metrics and the alarm list: the API, every function, the table and GSI1 each
//! on its own, the business metrics, the stream consumer, and the alarms.
//!
//! The body is JSON inside a `!Sub`: `${X}` are CloudFormation's substitutions
//! (resources, parameters, `AWS::Region`, `AWS::StackName`); nothing else may
//! contain `${`. `${AlarmStatus}` is the alarm widget, chosen by `!If`: with
//! alarms off only the stream consumer's two exist.

use serde_json::{Value, json};
use user_service::catalog::{Function, Trigger};
use user_service::metrics::{self, Group, Metric};
use user_service::store::keys;

use crate::alarms::{self, AlarmDef, METRICS_NAMESPACE};
use crate::template::{Yaml, logical_name};

/// The period of every graph, in seconds.
const PERIOD: u32 = 300;

/// Parameters that stand for numbers in the body: serde_json writes them as
/// strings, and the body lines unquote them.
const NUMBER_PARAMETERS: &[&str] = &["Api5xxAlarmThresholdPercent"];

/// The alarm widget's height, below the title.
const ALARM_STATUS_HEIGHT: u32 = 8;

/// The variable of the `!Sub` that holds the alarm widget.
pub(crate) const ALARM_STATUS: &str = "AlarmStatus";

/// A widget placed on CloudWatch's grid (24 columns).
#[derive(Debug, Clone)]
pub(crate) struct Widget {
    kind: &'static str,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    properties: Value,
}

impl Widget {
    /// Its JSON on one line, type and place first, the properties' keys sorted,
    /// numeric parameters unquoted.
    pub(crate) fn line(&self) -> String {
        let mut properties = self.properties.clone();
        sort_keys(&mut properties);
        let mut text = format!(
            "{{\"type\":\"{}\",\"x\":{},\"y\":{},\"width\":{},\"height\":{},\"properties\":{}}}",
            self.kind, self.x, self.y, self.width, self.height, properties
        );
        for parameter in NUMBER_PARAMETERS {
            text = text.replace(&format!("\"${{{parameter}}}\""), &format!("${{{parameter}}}"));
        }
        text
    }
}

/// Sorts every object's keys, so the body is the same whether or not another
/// crate in the build turns on serde_json's `preserve_order` (the test build
/// does; `cargo xtask` alone does not).
fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// Widgets placed row by row.
#[derive(Default)]
struct Grid {
    widgets: Vec<Widget>,
    y: u32,
}

impl Grid {
    /// A row of widgets of one height; each is (width, (type, properties)).
    fn row(&mut self, height: u32, widgets: Vec<(u32, (&'static str, Value))>) {
        let mut x = 0;
        for (width, (kind, properties)) in widgets {
            self.widgets.push(Widget {
                kind,
                x,
                y: self.y,
                width,
                height,
                properties,
            });
            x += width;
        }
        self.y += height;
    }

    fn heading(&mut self, markdown: &str) {
        self.row(1, vec![(24, ("text", json!({"markdown": markdown})))]);
    }
}

type Graph = (&'static str, Value);

/// A time-series graph of `metrics` (CloudWatch's metric arrays and expressions).
fn graph(title: &str, metrics: Vec<Value>) -> Graph {
    (
        "metric",
        json!({
            "title": title,
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "stacked": false,
            "period": PERIOD,
            "metrics": metrics,
        }),
    )
}

/// A metric array: namespace, name, dimension pairs, then its options.
fn metric(namespace: &str, name: &str, dimensions: &[(&str, &str)], options: Value) -> Value {
    let mut array = vec![json!(namespace), json!(name)];
    for (dimension, value) in dimensions {
        array.push(json!(dimension));
        array.push(json!(value));
    }
    array.push(options);
    Value::Array(array)
}

/// A metric-math line: its options alone in an array, as the body wants them.
fn expression(options: Value) -> Value {
    Value::Array(vec![options])
}

fn annotate(mut graph: Graph, lines: Value) -> Graph {
    graph.1["annotations"] = json!({ "horizontal": lines });
    graph
}

const API: [(&str, &str); 2] = [("ApiId", "${HttpApi}"), ("Stage", "$default")];

fn api_widgets(grid: &mut Grid) {
    grid.heading("## HTTP API");
    let api = |name: &str, options: Value| metric("AWS/ApiGateway", name, &API, options);
    let requests = annotate(
        graph(
            "API: requests, 4xx, 5xx (sums per 5 minutes); 5xx share of requests (right)",
            vec![
                api("Count", json!({"id": "requests", "stat": "Sum", "label": "requests"})),
                api("4xx", json!({"id": "client", "stat": "Sum", "label": "4xx"})),
                api("5xx", json!({"id": "errors", "stat": "Sum", "label": "5xx"})),
                expression(
                    json!({"expression": "100 * FILL(errors, 0) / requests", "id": "ratio", "label": "5xx, % of requests", "yAxis": "right"}),
                ),
            ],
        ),
        json!([{"label": "5xx alarm", "value": "${Api5xxAlarmThresholdPercent}", "yAxis": "right"}]),
    );
    let latency = graph(
        "API: latency p50 and p99 (ms)",
        vec![
            api("Latency", json!({"stat": "p50", "label": "p50"})),
            api("Latency", json!({"stat": "p99", "label": "p99"})),
        ],
    );
    grid.row(6, vec![(12, requests), (12, latency)]);
}

fn function_widgets(grid: &mut Grid, catalog: &[Function]) {
    grid.heading("## Functions: p99 duration against the timeout, errors and throttles, concurrency");
    for f in catalog {
        let id = logical_name(f);
        let by_function = [("FunctionName", format!("${{{id}Function}}"))];
        let dims: Vec<(&str, &str)> = by_function.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let lambda = |name: &str, options: Value| metric("AWS/Lambda", name, &dims, options);
        let timeout_ms = f.timeout_seconds * 1000;
        let duration = annotate(
            graph(
                &format!("{}: p99 duration (ms), timeout {} s", f.name, f.timeout_seconds),
                vec![lambda("Duration", json!({"stat": "p99", "label": "p99"}))],
            ),
            json!([
                {"label": "timeout", "value": timeout_ms, "color": "#d62728"},
                {"label": format!("alarm, {} %", alarms::DURATION_ALARM_PERCENT), "value": alarms::duration_threshold_ms(f), "color": "#ff7f0e"},
            ]),
        );
        let failures = graph(
            &format!("{}: errors and throttles", f.name),
            vec![
                lambda("Errors", json!({"stat": "Sum", "label": "errors"})),
                lambda("Throttles", json!({"stat": "Sum", "label": "throttles"})),
            ],
        );
        let concurrency = graph(
            &format!("{}: concurrent executions (max)", f.name),
            vec![lambda(
                "ConcurrentExecutions",
                json!({"stat": "Maximum", "label": "concurrency"}),
            )],
        );
        grid.row(5, vec![(8, duration), (8, failures), (8, concurrency)]);
    }
}

/// Consumed capacity per second (the per-period sum over the period) beside
/// the provisioned capacity, which exists only in PROVISIONED mode.
fn capacity(title: &str, dims: &[(&str, &str)], consumed: &str, provisioned: &str, unit: &str) -> Graph {
    graph(
        title,
        vec![
            metric(
                "AWS/DynamoDB",
                consumed,
                dims,
                json!({"id": "consumed", "stat": "Sum", "visible": false}),
            ),
            expression(
                json!({"expression": "consumed / PERIOD(consumed)", "id": "perSecond", "label": format!("consumed {unit}/s")}),
            ),
            metric(
                "AWS/DynamoDB",
                provisioned,
                dims,
                json!({"stat": "Average", "label": format!("provisioned {unit} (PROVISIONED mode)")}),
            ),
        ],
    )
}

fn throttles(title: &str, dims: &[(&str, &str)]) -> Graph {
    graph(
        title,
        vec![
            metric(
                "AWS/DynamoDB",
                "ReadThrottleEvents",
                dims,
                json!({"stat": "Sum", "label": "read throttle events"}),
            ),
            metric(
                "AWS/DynamoDB",
                "WriteThrottleEvents",
                dims,
                json!({"stat": "Sum", "label": "write throttle events"}),
            ),
        ],
    )
}

fn table_widgets(grid: &mut Grid) {
    grid.heading("## Table, GSI1 and GSI2, each on its own (each index has its own capacity)");
    let table = [("TableName", "${Table}")];
    let reads = "ConsumedReadCapacityUnits";
    let writes = "ConsumedWriteCapacityUnits";
    grid.row(
        6,
        vec![
            (
                6,
                capacity(
                    "Table: reads (RCU/s)",
                    &table,
                    reads,
                    "ProvisionedReadCapacityUnits",
                    "RCU",
                ),
            ),
            (
                6,
                capacity(
                    "Table: writes (WCU/s)",
                    &table,
                    writes,
                    "ProvisionedWriteCapacityUnits",
                    "WCU",
                ),
            ),
            (6, throttles("Table: throttle events", &table)),
            (
                6,
                graph(
                    "Table: condition failures of single-item writes",
                    vec![metric(
                        "AWS/DynamoDB",
                        "ConditionalCheckFailedRequests",
                        &table,
                        json!({"stat": "Sum", "label": "ConditionalCheckFailedRequests"}),
                    )],
                ),
            ),
        ],
    );
    for index in [keys::GSI1, keys::GSI2] {
        let dimensions = [("TableName", "${Table}"), ("GlobalSecondaryIndexName", index)];
        grid.row(
            6,
            vec![
                (
                    8,
                    capacity(
                        &format!("{index}: reads (RCU/s)"),
                        &dimensions,
                        reads,
                        "ProvisionedReadCapacityUnits",
                        "RCU",
                    ),
                ),
                (
                    8,
                    capacity(
                        &format!("{index}: writes (WCU/s)"),
                        &dimensions,
                        writes,
                        "ProvisionedWriteCapacityUnits",
                        "WCU",
                    ),
                ),
                (8, throttles(&format!("{index}: throttle events"), &dimensions)),
            ],
        );
    }
}

/// One line per metric, summed over the stack's functions. SEARCH finds every
/// function that emitted the metric: several emit the same one (UsersDeleted
/// comes from three), metrics.rs does not say which, and a new function shows
/// up without a change here.
pub(crate) fn search(metric: Metric) -> String {
    format!(
        "SUM(SEARCH('{{\"{METRICS_NAMESPACE}\",{}}} MetricName=\"{}\"', 'Sum', {PERIOD}))",
        metrics::DIMENSION,
        metric.name()
    )
}

fn business_widgets(grid: &mut Grid) {
    grid.heading("## Business metrics (sums per 5 minutes over every function)");
    let widgets: Vec<(u32, Graph)> = Group::ALL
        .iter()
        .map(|group| {
            let lines = Metric::ALL
                .iter()
                .filter(|m| m.group() == *group)
                .enumerate()
                .map(|(i, m)| expression(json!({"expression": search(*m), "id": format!("m{i}"), "label": m.name()})))
                .collect();
            (12, graph(group.title(), lines))
        })
        .collect();
    for pair in widgets.chunks(2) {
        grid.row(6, pair.to_vec());
    }
}

fn stream_widgets(grid: &mut Grid, catalog: &[Function]) {
    for f in catalog
        .iter()
        .filter(|f| matches!(f.trigger, Trigger::TableStream { .. }))
    {
        let id = logical_name(f);
        grid.heading(&format!("## {}: the table stream's consumer", f.name));
        let function = format!("${{{id}Function}}");
        let queue = format!("${{{id}Failures.QueueName}}");
        let age = annotate(
            graph(
                &format!("{}: iterator age (ms, max)", f.name),
                vec![metric(
                    "AWS/Lambda",
                    "IteratorAge",
                    &[("FunctionName", function.as_str())],
                    json!({"stat": "Maximum", "label": "iterator age"}),
                )],
            ),
            json!([{"label": "alarm, 5 minutes", "value": 300_000}]),
        );
        let failed = graph(
            &format!("{}: records in the on-failure queue", f.name),
            vec![metric(
                "AWS/SQS",
                "ApproximateNumberOfMessagesVisible",
                &[("QueueName", queue.as_str())],
                json!({"stat": "Maximum", "label": "messages"}),
            )],
        );
        grid.row(6, vec![(12, age), (12, failed)]);
    }
}

/// CloudWatch's alarm widget shows at most this many alarms.
const ALARMS_PER_WIDGET: usize = 100;

/// The alarm widgets' JSON, side by side: `alarms` by ARN, worst and latest
/// first, [`ALARMS_PER_WIDGET`] to a widget.
fn alarm_status(title: &str, alarms: &[&AlarmDef]) -> String {
    let chunks: Vec<&[&AlarmDef]> = alarms.chunks(ALARMS_PER_WIDGET).collect();
    let width = 24 / u32::try_from(chunks.len().max(1)).unwrap_or(1);
    let widgets: Vec<String> = chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let arns: Vec<String> = chunk.iter().map(|a| format!("${{{}.Arn}}", a.id)).collect();
            let title = if i == 0 {
                title.to_owned()
            } else {
                format!("{title} (continued)")
            };
            Widget {
                kind: "alarm",
                x: width * u32::try_from(i).unwrap_or(0),
                y: 1,
                width,
                height: ALARM_STATUS_HEIGHT,
                properties: json!({"title": title, "alarms": arns, "sortBy": "stateUpdatedTimestamp"}),
            }
            .line()
        })
        .collect();
    widgets.join(",")
}

/// The alarm widget with alarms on and with them off, in this order.
pub(crate) fn alarm_statuses(alarms: &[AlarmDef]) -> (String, String) {
    let every: Vec<&AlarmDef> = alarms.iter().collect();
    let always: Vec<&AlarmDef> = alarms.iter().filter(|a| a.always).collect();
    (
        alarm_status("Alarms, in alarm and most recently changed first", &every),
        alarm_status(
            "Alarms: EnableAlarms=false, so only these exist, and they notify no one",
            &always,
        ),
    )
}

/// Every widget but the alarm widget, which the `!If` places after the title.
pub(crate) fn widgets(catalog: &[Function]) -> Vec<Widget> {
    let mut grid = Grid::default();
    grid.heading(
        "# ${AWS::StackName}\nWhat each widget shows, what normal looks like, and what to do when an alarm fires: docs/operations.md in the repository.",
    );
    grid.y += ALARM_STATUS_HEIGHT;
    api_widgets(&mut grid);
    function_widgets(&mut grid, catalog);
    table_widgets(&mut grid);
    business_widgets(&mut grid);
    stream_widgets(&mut grid, catalog);
    grid.widgets
}

/// The dashboard block of template.yaml.
pub(crate) fn render(catalog: &[Function]) -> String {
    let (enabled, disabled) = alarm_statuses(&alarms::all(catalog));
    let widgets = widgets(catalog);
    let mut y = Yaml::default();
    y.line(1, "Dashboard:");
    y.line(2, "Type: AWS::CloudWatch::Dashboard");
    y.line(2, "Properties:");
    y.line(3, "DashboardName: !Ref AWS::StackName");
    y.line(3, "DashboardBody: !Sub");
    y.line(4, "- |");
    y.line(5, "{\"widgets\": [");
    y.line(5, &format!("${{{ALARM_STATUS}}},"));
    for (i, widget) in widgets.iter().enumerate() {
        let comma = if i + 1 < widgets.len() { "," } else { "" };
        y.line(5, &format!("{}{comma}", widget.line()));
    }
    y.line(5, "]}");
    y.line(4, &format!("- {ALARM_STATUS}: !If"));
    y.line(6, "- AlarmsEnabled");
    y.line(6, "- !Sub |");
    y.line(7, &enabled);
    y.line(6, "- !Sub |");
    y.line(7, &disabled);
    y.0
}

#[cfg(test)]
mod tests {
    use user_service::catalog::FUNCTIONS;

    use super::*;

    /// The body as CloudWatch receives it: `${AlarmStatus}` replaced by a branch,
    /// every other substitution by a placeholder (a number where it stands for
    /// one, as `${Api5xxAlarmThresholdPercent}` does in an annotation).
    fn substituted(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find('}').expect("a closed substitution") + at;
            let name = &rest[at + 2..end];
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '.'),
                "not a substitution: ${{{name}}}"
            );
            out.push('1');
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
    }

    fn body(alarm_widget: &str) -> Value {
        let widgets: Vec<String> = widgets(FUNCTIONS).iter().map(Widget::line).collect();
        let text = format!("{{\"widgets\": [{alarm_widget},{}]}}", widgets.join(","));
        serde_json::from_str(&substituted(&text)).expect("the body is JSON once substituted")
    }

    /// A graph as CloudWatch's body structure has it: every line an array, a
    /// metric `[namespace, name, (dimension, value)*, options]` or an
    /// expression `[options]`; ids unique; annotations at numbers.
    fn well_formed_graph(properties: &Value) {
        let title = properties["title"].as_str().expect("a title");
        assert!(properties["region"].is_string(), "{title}");
        let mut ids = Vec::new();
        for line in properties["metrics"].as_array().expect("metrics") {
            let parts = line
                .as_array()
                .unwrap_or_else(|| panic!("{title}: a line is an array: {line}"));
            let (options, names) = parts.split_last().expect("not empty");
            assert!(options.is_object(), "{title}: options last: {line}");
            if names.is_empty() {
                assert!(options["expression"].is_string(), "{title}: {line}");
            } else {
                assert!(names.len() >= 4 && names.len() % 2 == 0, "{title}: {line}");
                assert!(names.iter().all(Value::is_string), "{title}: {line}");
            }
            if let Some(id) = options["id"].as_str() {
                assert!(id.starts_with(|c: char| c.is_ascii_lowercase()), "{title}: {id}");
                ids.push(id.to_owned());
            }
        }
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count, "{title}: unique ids");
        for line in properties["annotations"]["horizontal"].as_array().into_iter().flatten() {
            assert!(line["value"].is_number(), "{title}: {line}");
        }
    }

    #[test]
    fn the_body_is_json_and_draws_every_function_and_metric() {
        let (enabled, disabled) = alarm_statuses(&alarms::all(FUNCTIONS));
        for alarm_widget in [&enabled, &disabled] {
            let body = body(alarm_widget);
            let widgets = body["widgets"].as_array().unwrap();
            assert!(widgets.len() > FUNCTIONS.len() * 3);
            for widget in widgets.iter().filter(|w| w["type"] == "metric") {
                well_formed_graph(&widget["properties"]);
            }
        }
        let text: String = widgets(FUNCTIONS).iter().map(Widget::line).collect();
        for f in FUNCTIONS {
            let id = logical_name(f);
            for metric in ["Duration", "Errors", "Throttles", "ConcurrentExecutions"] {
                assert!(
                    text.contains(&format!(
                        "[\"AWS/Lambda\",\"{metric}\",\"FunctionName\",\"${{{id}Function}}\""
                    )),
                    "{} {metric}",
                    f.name
                );
            }
            assert!(
                text.contains(&format!(
                    "\"label\":\"timeout\",\"value\":{}}}",
                    f.timeout_seconds * 1000
                )),
                "{}: the timeout annotation",
                f.name
            );
        }
        for m in Metric::ALL {
            assert!(text.contains(&search(*m).replace('"', "\\\"")), "{}", m.name());
        }
        for title in Group::ALL.iter().map(|g| g.title()) {
            assert!(text.contains(title), "{title}");
        }
        // The table and each index on their own.
        for scope in ["Table", "GSI1", "GSI2"] {
            for what in ["reads", "writes", "throttle events"] {
                assert!(text.contains(&format!("\"{scope}: {what}")), "{scope}: {what}");
            }
        }
    }

    #[test]
    fn the_alarm_widget_lists_every_alarm_within_its_limit() {
        let all = alarms::all(FUNCTIONS);
        let (enabled, disabled) = alarm_statuses(&all);
        // CloudWatch's alarm widget shows at most 100 alarms: more go to a second.
        for widget in enabled.split("},{\"type\"") {
            assert!(widget.matches(".Arn}").count() <= ALARMS_PER_WIDGET, "{widget}");
        }
        for alarm in &all {
            let arn = format!("${{{}.Arn}}", alarm.id);
            assert!(enabled.contains(&arn), "{arn}");
            assert_eq!(disabled.contains(&arn), alarm.always, "{arn}");
        }
    }

    #[test]
    fn a_search_names_the_stack_namespace_and_the_function_dimension() {
        assert_eq!(
            search(Metric::SignUps),
            r#"SUM(SEARCH('{"UserService/${AWS::StackName}",FunctionName} MetricName="SignUps"', 'Sum', 300))"#
        );
    }
}
