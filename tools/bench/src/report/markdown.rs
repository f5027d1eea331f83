//! report.md: the header (date, machine, versions), the goals, then a section
//! per part of the run: cold start, warm, instructions, memory, DynamoDB
//! requests, legacy password checks, business metrics, scale, the reconcile
//! pass, events, cost and size.

use std::fmt::Write as _;

use super::results::{Report, kib_mb, mb};
use crate::emf::METRIC_USD_PER_MONTH;
use crate::machine::{command_line, ddb_local_version, locked_versions, machine};
use crate::requests::RequestRow;
use crate::stats::ms;

fn counts(c: &crate::proxy::Counts) -> String {
    if c.is_empty() {
        return "none".to_owned();
    }
    c.iter()
        .map(|(op, n)| format!("{op} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Report {
    /// The report's Markdown.
    pub(super) fn markdown(&self) -> String {
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
        let python = integration_tests::workspace_root().join(".venv/bin/python");
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
                "## Instructions and CPU (callgrind, schedstat)\n\nA warm invocation over HTTP; a cold start (init and the first invocation) over TLS, its handshake included. Instructions are counts, not time: two builds compare in one run each. Valgrind's CPU lacks ADX, so AWS-LC's P-256 runs its C code there and its assembly natively: the CPU time of a cold start (all threads, median of 31, at a whole core) is measured natively.\n\n| program | instructions per warm invocation | instructions per cold start | CPU per cold start, ms |\n|---|---|---|---|"
            );
            for (program, warm, cold, cpu) in &self.instructions {
                let _ = writeln!(md, "| {program} | {warm} | {cold} | {cpu:.2} |");
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

        md.push_str(&self.tuning);
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
        md
    }
}
