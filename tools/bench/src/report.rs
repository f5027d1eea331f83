//! The bench's Markdown report and charts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use crate::charts::{Bars, Series, write_svg};
use crate::emf::{METRIC_USD_PER_MONTH, MetricsRow};
use crate::hashes::HashRow;
use crate::requests::RequestRow;
use crate::scale::ScaleRow;
use crate::sizes::SizeRow;
use crate::stats::{Sample, millis, ms};
use crate::{FLOOR_HELLO, FLOOR_SDK, PYTHON, Plan};

struct Cold {
    transport: &'static str,
    program: String,
    init: Sample,
    first: Sample,
    total: Sample,
}

struct Warm {
    operation: &'static str,
    who: String,
    times: Sample,
}

struct Memory {
    program: String,
    peak_kib: Option<u64>,
    rss_at_100_kib: Option<u64>,
    rss_end_kib: Option<u64>,
}

pub(crate) struct Report {
    out: PathBuf,
    smoke: bool,
    spawns: usize,
    warm_rounds: usize,
    cold: Vec<Cold>,
    warm: Vec<Warm>,
    memory: Vec<Memory>,
    instructions: Vec<(String, u64)>,
    requests: Vec<RequestRow>,
    /// The migration's paths beside the success paths.
    requests_beside: Vec<RequestRow>,
    scale: Vec<ScaleRow>,
    /// The legacy password checks and migrate-user invocations.
    hashes: Vec<HashRow>,
    sizes: Vec<SizeRow>,
    metrics: Vec<MetricsRow>,
    /// (metric × function pairs that can occur, all pairs).
    metric_pairs: (usize, usize),
    /// The simulated reconcile pass, as Markdown (empty when not run).
    reconcile: String,
    events: String,
    /// The cost model's section, as Markdown (empty when not run).
    cost: String,
}

fn mb(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1_000_000.0)
}

fn kib_mb(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".to_owned(), |k| format!("{:.1}", k as f64 * 1024.0 / 1_000_000.0))
}

fn counts(c: &crate::proxy::Counts) -> String {
    if c.is_empty() {
        return "none".to_owned();
    }
    c.iter()
        .map(|(op, n)| format!("{op} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout })
                .trim()
                .to_owned()
        })
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "not found".to_owned())
}

/// Versions of the locked crates that decide the figures.
fn locked_versions() -> String {
    let lock =
        std::fs::read_to_string(integration_tests::lambda::workspace_root().join("Cargo.lock")).unwrap_or_default();
    let mut found = Vec::new();
    for name in [
        "aws-config",
        "aws-sdk-dynamodb",
        "aws-smithy-runtime",
        "lambda_runtime",
        "lambda_http",
        "tokio",
        "rustls",
    ] {
        let needle = format!("name = \"{name}\"\nversion = \"");
        if let Some(at) = lock.find(&needle) {
            let rest = &lock[at + needle.len()..];
            found.push(format!("{name} {}", rest.split('"').next().unwrap_or("?")));
        }
    }
    found.join(", ")
}

/// The DynamoDB Local package scripts/ddb-local pins.
fn ddb_local_version() -> String {
    std::fs::read_to_string(integration_tests::lambda::workspace_root().join("scripts/ddb-local"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PACKAGE=").map(|p| p.trim_matches('"').to_owned()))
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// The CPU's model name.
pub(crate) fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

fn machine() -> String {
    let cpu = cpu();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or_else(|| "?".to_owned(), |k| format!("{:.0} GiB", k as f64 / 1_048_576.0));
    format!("{cpu}, {cores} cores, {mem}, {}", command_line("uname", &["-sr"]))
}

impl Report {
    pub(crate) fn new(plan: &Plan) -> Self {
        Self {
            out: plan.out.clone(),
            smoke: plan.smoke,
            spawns: plan.spawns,
            warm_rounds: plan.warm,
            cold: Vec::new(),
            warm: Vec::new(),
            memory: Vec::new(),
            instructions: Vec::new(),
            requests: Vec::new(),
            requests_beside: Vec::new(),
            scale: Vec::new(),
            hashes: Vec::new(),
            sizes: Vec::new(),
            metrics: Vec::new(),
            metric_pairs: (0, 0),
            reconcile: String::new(),
            events: String::new(),
            cost: String::new(),
        }
    }

    pub(crate) fn cold(&mut self, transport: &'static str, program: &str, init: Sample, first: Sample, total: Sample) {
        self.cold.push(Cold {
            transport,
            program: program.to_owned(),
            init,
            first,
            total,
        });
    }

    pub(crate) fn warm(&mut self, operation: &'static str, who: &str, times: Sample) {
        self.warm.push(Warm {
            operation,
            who: who.to_owned(),
            times,
        });
    }

    pub(crate) fn memory(
        &mut self,
        program: &str,
        peak_kib: Option<u64>,
        rss_at_100_kib: Option<u64>,
        rss_end_kib: Option<u64>,
    ) {
        self.memory.push(Memory {
            program: program.to_owned(),
            peak_kib,
            rss_at_100_kib,
            rss_end_kib,
        });
    }

    pub(crate) fn instructions(&mut self, program: &str, per_invocation: u64) {
        self.instructions.push((program.to_owned(), per_invocation));
    }

    pub(crate) fn requests(&mut self, rows: Vec<RequestRow>, beside: Vec<RequestRow>) {
        self.requests = rows;
        self.requests_beside = beside;
    }

    pub(crate) fn scale(&mut self, rows: Vec<ScaleRow>) {
        self.scale = rows;
    }

    pub(crate) fn hashes(&mut self, rows: Vec<HashRow>) {
        self.hashes = rows;
    }

    pub(crate) fn metrics(&mut self, rows: Vec<MetricsRow>, pairs: (usize, usize)) {
        self.metrics = rows;
        self.metric_pairs = pairs;
    }

    pub(crate) fn events(&mut self, section: String) {
        self.events = section;
    }

    pub(crate) fn reconcile(&mut self, section: String) {
        self.reconcile = section;
    }

    pub(crate) fn cost(&mut self, section: String) {
        self.cost = section;
    }

    /// What the cost model takes from this run: the requests section's rows
    /// (and the migration's beside them), the warm p50s of one GetItem and of
    /// the add + remove cycle, and the legacy password checks' p50s.
    pub(crate) fn cost_inputs(&self) -> crate::cost::Inputs<'_> {
        let hash_ms = crate::hashes::p50s(&self.hashes, self.smoke);
        if self.requests.is_empty() && self.warm.is_empty() && hash_ms.is_empty() {
            return crate::cost::Inputs::Committed;
        }
        // A smoke's debug binaries are no measure of time: units only.
        let p50 = |operation: &str, who: &str| {
            (!self.smoke)
                .then(|| self.warm_of(operation, who).map(|s| millis(s.p50())))
                .flatten()
        };
        crate::cost::Inputs::Run {
            rows: &self.requests,
            beside: &self.requests_beside,
            get_profile_ms: p50("get-profile", "get-profile"),
            add_remove_ms: p50("add+remove email", "add-email + remove-email"),
            hash_ms,
        }
    }

    pub(crate) fn sizes(&mut self, rows: Vec<SizeRow>) {
        self.sizes = rows;
    }

    fn cold_of(&self, transport: &str, program: &str) -> Option<&Cold> {
        self.cold
            .iter()
            .find(|c| c.transport == transport && c.program == program)
    }

    fn warm_of(&self, operation: &str, who: &str) -> Option<&Sample> {
        self.warm
            .iter()
            .find(|w| w.operation == operation && w.who == who)
            .map(|w| &w.times)
    }

    fn peak_of(&self, program: &str) -> Option<u64> {
        self.memory
            .iter()
            .find(|m| m.program == program)
            .and_then(|m| m.peak_kib)
    }

    /// The goals, each met or missed, with its figures.
    fn goals(&self) -> Vec<(String, bool, String)> {
        let mut goals = Vec::new();
        for transport in ["http", "https"] {
            if let (Some(hello), Some(sdk_warm), Some(fp)) = (
                self.cold_of(transport, FLOOR_HELLO),
                self.warm_of("get-profile", FLOOR_SDK),
                self.cold_of(transport, "get-profile"),
            ) {
                let limit = millis(hello.total.p50()) + millis(sdk_warm.p50());
                let got = millis(fp.total.p50());
                goals.push((
                    format!("cold start ({transport}) ≤ 1.5 × (hello-world cold + one warm GetItem)"),
                    got <= 1.5 * limit,
                    format!("{got:.1} ms against a limit of {limit:.1} ms: {:.2}×", got / limit),
                ));
                if let Some(py) = self.cold_of(transport, PYTHON) {
                    let py = millis(py.total.p50());
                    goals.push((
                        format!("cold start ({transport}) ≥ 15× faster than Python + boto3"),
                        py >= 15.0 * got,
                        format!("{got:.1} ms against {py:.0} ms: {:.1}× faster", py / got),
                    ));
                }
            }
        }
        if let (Some(fp), Some(sdk)) = (
            self.warm_of("get-profile", "get-profile"),
            self.warm_of("get-profile", FLOOR_SDK),
        ) {
            let (f, s) = (millis(fp.p50()), millis(sdk.p50()));
            goals.push((
                "warm get-profile ≤ 1.1 × the SDK program".to_owned(),
                f <= 1.1 * s,
                format!("p50 {f:.2} ms against {s:.2} ms: {:.2}×", f / s),
            ));
            if let Some(py) = self.warm_of("get-profile", PYTHON) {
                let p = millis(py.p50());
                goals.push((
                    "warm get-profile faster than Python + boto3".to_owned(),
                    f < p,
                    format!("p50 {f:.2} ms against {p:.2} ms"),
                ));
            }
        }
        let zips: Vec<(&str, u64)> = self
            .sizes
            .iter()
            .filter(|s| !s.name.starts_with("floor-"))
            .filter_map(|s| s.arm64.map(|(_, z)| (s.name.as_str(), z)))
            .collect();
        if let Some((name, largest)) = zips.iter().max_by_key(|(_, z)| *z) {
            goals.push((
                "zip ≤ 3.5 MB per function (arm64)".to_owned(),
                *largest <= 3_500_000,
                format!("largest: {name} at {} MB", mb(*largest)),
            ));
        }
        if let (Some(fp), Some(sdk)) = (self.peak_of("get-profile"), self.peak_of(FLOOR_SDK)) {
            goals.push((
                "peak RSS ≤ 1.2 × the SDK program".to_owned(),
                fp as f64 <= 1.2 * sdk as f64,
                format!(
                    "{} MB against {} MB: {:.2}×",
                    kib_mb(Some(fp)),
                    kib_mb(Some(sdk)),
                    fp as f64 / sdk as f64
                ),
            ));
        }
        if let Some(m) = self.memory.iter().find(|m| m.program == "get-profile")
            && let (Some(a), Some(b)) = (m.rss_at_100_kib, m.rss_end_kib)
        {
            // A few pages either way is the allocator, not a leak.
            goals.push((
                format!(
                    "no memory growth between invocation 100 and {} (within 16 KiB)",
                    self.warm_rounds
                ),
                b <= a + 16,
                format!(
                    "RSS {} MB → {} MB ({:+} KiB)",
                    kib_mb(Some(a)),
                    kib_mb(Some(b)),
                    b as i64 - a as i64
                ),
            ));
        }
        for function in ["get-profile", "get-account"] {
            let rows: Vec<&ScaleRow> = self.scale.iter().filter(|r| r.function == function).collect();
            if let [small, large] = rows.as_slice() {
                let ratio = millis(large.p50.p50()) / millis(small.p50.p50());
                goals.push((
                    format!("{function}: p50 at {} users ≤ 1.2 × at {}", large.users, small.users),
                    ratio <= 1.2,
                    format!(
                        "{} ms against {} ms: {ratio:.2}×",
                        large.p50.p50_ms(),
                        small.p50.p50_ms()
                    ),
                ));
            }
        }
        goals
    }

    /// Writes report.md and the charts into the output folder.
    pub(crate) fn write(&self) -> std::io::Result<PathBuf> {
        let mut md = String::new();
        let date = command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
        let _ = writeln!(
            md,
            "# user-service bench{}\n",
            if self.smoke {
                " (smoke: debug binaries, no thresholds)"
            } else {
                ""
            }
        );
        let _ = writeln!(md, "- Date: {date}");
        let _ = writeln!(md, "- Machine: {}", machine());
        let _ = writeln!(md, "- Rust: {}", command_line("rustc", &["--version"]));
        let _ = writeln!(md, "- Crates: {}", locked_versions());
        let python = integration_tests::lambda::workspace_root().join(".venv/bin/python");
        let python = python.display().to_string();
        if !self.smoke {
            let _ = writeln!(
                md,
                "- Python: {}; {}",
                command_line(&python, &["--version"]),
                command_line(
                    &python,
                    &[
                        "-c",
                        "import boto3, importlib.metadata as m; print('boto3', boto3.__version__, '· awslambdaric', m.version('awslambdaric'))"
                    ]
                )
            );
        }
        let _ = writeln!(
            md,
            "- DynamoDB Local {} behind a loopback proxy (plain HTTP, or TLS with the bench's own CA)",
            ddb_local_version()
        );
        let _ = writeln!(
            md,
            "- Binaries: {}\n",
            if self.smoke {
                "debug (target/debug)"
            } else {
                "release profile: LTO, one codegen unit, stripped (target/release)"
            }
        );

        if !self.smoke {
            let goals = self.goals();
            if !goals.is_empty() {
                let _ = writeln!(md, "## Goals\n\n| goal | met | figures |\n|---|---|---|");
                for (goal, met, figures) in goals {
                    let _ = writeln!(md, "| {goal} | {} | {figures} |", if met { "yes" } else { "**no**" });
                }
                md.push('\n');
            }
        }

        if !self.cold.is_empty() {
            let _ = writeln!(
                md,
                "## Cold start\n\n{} spawns each. Init: spawn to the first `GET /runtime/invocation/next`. First: the first event to its response.\n",
                self.spawns
            );
            let _ = writeln!(
                md,
                "| transport | program | init p50 | p90 | max | first p50 | p90 | max | init + first p50 | p90 | max |"
            );
            let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|");
            for c in &self.cold {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | **{}** | {} | {} |",
                    c.transport,
                    c.program,
                    ms(c.init.p50()),
                    ms(c.init.pct(0.9)),
                    ms(c.init.max()),
                    ms(c.first.p50()),
                    ms(c.first.pct(0.9)),
                    ms(c.first.max()),
                    ms(c.total.p50()),
                    ms(c.total.pct(0.9)),
                    ms(c.total.max()),
                );
            }
            let _ = writeln!(md, "\n![cold start](cold-start.svg)\n\nTimes in ms.\n");
        }

        if !self.warm.is_empty() {
            let _ = writeln!(md, "## Warm\n\n{} invocations each, after one.\n", self.warm_rounds);
            let _ = writeln!(
                md,
                "| operation | made by | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|"
            );
            for w in &self.warm {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} |",
                    w.operation,
                    w.who,
                    ms(w.times.p50()),
                    ms(w.times.pct(0.99)),
                    ms(w.times.max())
                );
            }
            let _ = writeln!(md, "\n![warm latency](warm.svg)\n");
        }

        if !self.instructions.is_empty() {
            let _ = writeln!(
                md,
                "## Instructions per warm invocation (callgrind)\n\n| program | instructions |\n|---|---|"
            );
            for (program, n) in &self.instructions {
                let _ = writeln!(md, "| {program} | {n} |");
            }
            md.push('\n');
        }

        if !self.memory.is_empty() {
            let _ = writeln!(
                md,
                "## Memory\n\n| program | peak RSS MB | RSS at invocation 100 MB | RSS at {} MB |\n|---|---|---|---|",
                self.warm_rounds
            );
            for m in &self.memory {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} |",
                    m.program,
                    kib_mb(m.peak_kib),
                    kib_mb(m.rss_at_100_kib),
                    kib_mb(m.rss_end_kib)
                );
            }
            md.push('\n');
        }

        if !self.requests.is_empty() {
            let _ = writeln!(
                md,
                "## DynamoDB requests per invocation\n\nOne invocation each, on its success path. Capacity units by the \
                 documented formula, from the items as stored (DynamoDB Local misreports transactions): 1 RCU per 4 KB \
                 strongly consistent, halved otherwise; 1 WCU per 1 KB of the larger of the item before and after; \
                 2 WCU per 1 KB for every item of a transaction, a ConditionCheck counted as a write.\n\n\
                 | function | answer | made | design | as designed | RCU | WCU | why |\n|---|---|---|---|---|---|---|---|"
            );
            let row = |md: &mut String, r: &RequestRow| {
                let _ = writeln!(
                    md,
                    "| {}{} | {} | {} | {} | {} | {} | {} | {} |",
                    r.function,
                    r.path.map(|p| format!(", {p}")).unwrap_or_default(),
                    r.status,
                    counts(&r.made),
                    counts(&r.expected),
                    if r.made == r.expected { "yes" } else { "**no**" },
                    r.units.read,
                    r.units.write,
                    r.why
                );
            };
            for r in &self.requests {
                row(&mut md, r);
            }
            if !self.requests_beside.is_empty() {
                let _ = writeln!(
                    md,
                    "\nThe migration's other paths (the cost section prices them as a one-off):\n\n\
                     | function, path | answer | made | design | as designed | RCU | WCU | why |\n|---|---|---|---|---|---|---|---|"
                );
                for r in &self.requests_beside {
                    row(&mut md, r);
                }
            }
            md.push('\n');
        }

        md.push_str(&crate::hashes::render(&self.hashes, self.smoke));

        if !self.metrics.is_empty() {
            let _ = writeln!(
                md,
                "## Business metrics (EMF)\n\nWhat they add to one invocation: counting its metrics and writing their \
                 document to stdout (`metrics-probe`, built as the functions are; stdout on /dev/null), for a stack named \
                 `user-service` and the longest function name. Logs ingestion at ${:.2} per GB (us-east-1).\n\n\
                 | invocation | metrics | EMF line, bytes | time, ns | instructions | Logs ingestion per million invocations |\n\
                 |---|---|---|---|---|---|",
                crate::emf::INGESTION_USD_PER_GB
            );
            for r in &self.metrics {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {:.0} | {} | ${:.4} |",
                    r.invocation,
                    r.counted.len(),
                    r.bytes,
                    r.ns,
                    r.instructions.map_or_else(|| "–".to_owned(), |i| i.to_string()),
                    r.usd_per_million()
                );
            }
            let (possible, all) = self.metric_pairs;
            let _ = writeln!(
                md,
                "\nCustom metrics (metric × function, dimension `FunctionName`): {possible} pairs can occur, ${:.2} a month \
                 at ${METRIC_USD_PER_MONTH:.2} each if every one received data every hour; all {all} pairs would be ${:.2}.\n",
                possible as f64 * METRIC_USD_PER_MONTH,
                all as f64 * METRIC_USD_PER_MONTH
            );
        }

        if !self.scale.is_empty() {
            let _ = writeln!(md, "## Scale\n\n| function | users | p50 ms |\n|---|---|---|");
            for r in &self.scale {
                let _ = writeln!(md, "| {} | {} | {} |", r.function, r.users, r.p50.p50_ms());
            }
            md.push('\n');
        }

        md.push_str(&self.reconcile);
        md.push_str(&self.events);
        md.push_str(&self.cost);

        if !self.sizes.is_empty() {
            let _ = writeln!(
                md,
                "## Size\n\n| binary | arm64 stripped MB | arm64 zip MB | x86_64 stripped MB | x86_64 zip MB |\n|---|---|---|---|---|"
            );
            let pair = |p: Option<(u64, u64)>| {
                p.map_or_else(
                    || ("–".to_owned(), "–".to_owned()),
                    |(b, z)| (mb(b), if z > 0 { mb(z) } else { "–".to_owned() }),
                )
            };
            for s in &self.sizes {
                let (ab, az) = pair(s.arm64);
                let (xb, xz) = pair(s.x86_64);
                let _ = writeln!(md, "| {} | {ab} | {az} | {xb} | {xz} |", s.name);
            }
            let _ = writeln!(md, "\n![size](size.svg)\n");
        }

        self.charts()?;
        let path = self.out.join("report.md");
        std::fs::write(&path, md)?;
        Ok(path)
    }

    fn charts(&self) -> std::io::Result<()> {
        let fail = |e: Box<dyn std::error::Error>| std::io::Error::other(e.to_string());
        if !self.cold.is_empty() {
            let mut programs: Vec<String> = Vec::new();
            for c in &self.cold {
                if !programs.contains(&c.program) {
                    programs.push(c.program.clone());
                }
            }
            let mut series = Vec::new();
            for transport in ["http", "https"] {
                for (part, pick) in [("init", 0), ("first invocation", 1)] {
                    series.push(Series {
                        name: format!("{part} ({transport})"),
                        values: programs
                            .iter()
                            .map(|p| {
                                self.cold_of(transport, p)
                                    .map(|c| millis(if pick == 0 { c.init.p50() } else { c.first.p50() }))
                            })
                            .collect(),
                    });
                }
            }
            write_svg(
                &self.out.join("cold-start.svg"),
                &Bars {
                    title: "Cold start, p50".to_owned(),
                    y_label: "ms (log scale)".to_owned(),
                    categories: programs,
                    series,
                    log_scale: true,
                },
            )
            .map_err(fail)?;
        }
        if !self.warm.is_empty() {
            let categories: Vec<String> = {
                let mut c: Vec<String> = self.warm.iter().map(|w| w.operation.to_owned()).collect();
                c.dedup();
                c
            };
            let mut whos: Vec<String> = Vec::new();
            for w in &self.warm {
                let who = if w.who == w.operation || w.who.contains('+') {
                    "function".to_owned()
                } else {
                    w.who.clone()
                };
                if !whos.contains(&who) {
                    whos.push(who);
                }
            }
            let series = whos
                .iter()
                .map(|who| Series {
                    name: who.clone(),
                    values: categories
                        .iter()
                        .map(|op| {
                            self.warm
                                .iter()
                                .find(|w| {
                                    w.operation == op
                                        && (w.who == *who
                                            || (who == "function" && (w.who == w.operation || w.who.contains('+'))))
                                })
                                .map(|w| millis(w.times.p50()))
                        })
                        .collect(),
                })
                .collect();
            write_svg(
                &self.out.join("warm.svg"),
                &Bars {
                    title: format!("Warm latency, p50 of {}", self.warm_rounds),
                    y_label: "ms".to_owned(),
                    categories,
                    series,
                    log_scale: false,
                },
            )
            .map_err(fail)?;
        }
        if !self.sizes.is_empty() {
            let mb_of = |p: Option<(u64, u64)>, zip: bool| {
                p.map(|(b, z)| (if zip { z } else { b }) as f64 / 1_000_000.0)
                    .filter(|v| *v > 0.0)
            };
            let series = vec![
                Series {
                    name: "arm64 zip".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.arm64, true)).collect(),
                },
                Series {
                    name: "x86_64 zip".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.x86_64, true)).collect(),
                },
                Series {
                    name: "arm64 stripped".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.arm64, false)).collect(),
                },
            ];
            write_svg(
                &self.out.join("size.svg"),
                &Bars {
                    title: "Size per function".to_owned(),
                    y_label: "MB".to_owned(),
                    categories: self.sizes.iter().map(|s| s.name.clone()).collect(),
                    series,
                    log_scale: false,
                },
            )
            .map_err(fail)?;
        }
        Ok(())
    }
}
