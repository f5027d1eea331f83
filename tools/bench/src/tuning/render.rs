//! The tuning's section of the report: per function, cost and latency at
//! each memory size (a table and charts), the size chosen and why, cold start
//! at that size beside the floors under the same quota, and Lambda's month at
//! 1M users before and after.

use std::fmt::Write as _;
use std::path::Path;

use user_service::catalog::{FUNCTIONS, Function};

use super::Tuning;
use super::choice::{AtSize, Choice, Rates, at_sizes, choose, meets, target};
use crate::charts::{Bars, Series, write_svg};
use crate::cpu::SIZES;
use crate::programs::{FLOOR_HELLO, FLOOR_SDK, GET_PROFILE_AT_INIT, PYTHON};

/// The memory every function had before this choice (the stack's old default).
pub(crate) const BEFORE_MB: u32 = 256;

/// Each function's figures per size and its choice, where it was measured.
pub(crate) fn choices(tuning: &Tuning, rates: &Rates) -> Vec<(&'static Function, Vec<AtSize>, Choice)> {
    FUNCTIONS
        .iter()
        .filter_map(|f| {
            let sizes = at_sizes(&tuning.of(f.name), rates);
            let choice = choose(&sizes, &target(f), f.memory_floor_mb)?;
            Some((f, sizes, choice))
        })
        .collect()
}

/// The Markdown, and the charts written into `out`.
pub(crate) fn render(tuning: &Tuning, rates: &Rates, out: &Path) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "These figures come from a CPU quota on this machine ({}), not from Lambda: each execution \
         environment ran in a cgroup whose quota is the period × MB / 1,769 (one vCPU at 1,769 MB), at \
         the kernel's default period (100 ms) and a short one (10 ms; 13.8 ms at 128 MB, where the \
         kernel's 1 ms minimum quota stretches it). Over TLS to DynamoDB Local through the loopback \
         proxy; {} cold starts per init and {} warm invocations per size and period; {}. What it cannot \
         show: Lambda's network and placement, its own period, and a CPU burst at init if Lambda gives \
         one (init is measured both under the quota and at a whole core, and the worse decides).\n",
        tuning.machine, tuning.spawns, tuning.warm, tuning.date
    );
    if let Some(why) = &tuning.unmeasured {
        let _ = writeln!(md, "**Not measured:** {why}.\n");
    }
    let rows = choices(tuning, rates);
    let _ = writeln!(
        md,
        "| function | target | chosen | why | cold p99 there | warm p50 / p99 there | $ per million there | at {BEFORE_MB} MB |\n|---|---|---|---|---|---|---|---|"
    );
    for (f, sizes, choice) in &rows {
        let t = target(f);
        let at = |mb: u32| sizes.iter().find(|s| s.mb == mb);
        let chosen = at(choice.mb);
        let _ = writeln!(
            md,
            "| {} | cold ≤ {:.0} ms, warm p99 ≤ {:.0} ms | **{} MB**{} | {} | {} | {} | {} | {} |",
            f.name,
            t.cold_ms,
            t.warm_p99_ms,
            choice.mb,
            if choice.meets { "" } else { " (misses)" },
            choice.why,
            chosen.map_or("–".into(), |s| format!("{:.0} ms", s.cold.total_p99)),
            chosen.map_or("–".into(), |s| format!("{:.1} / {:.1} ms", s.warm.p50, s.warm.p99)),
            chosen.map_or("–".into(), |s| format!("{:.2}", s.usd_per_million)),
            at(BEFORE_MB).map_or("–".into(), |s| format!(
                "${:.2}, cold {:.0} ms",
                s.usd_per_million, s.cold.total_p99
            )),
        );
    }

    let _ = writeln!(
        md,
        "\nEvery size, the worse of the two periods and the two inits (cold: init + first invocation, p99 \
         of the spawns; ✓: meets the function's target):\n"
    );
    let _ = write!(md, "| function |");
    for mb in SIZES {
        let _ = write!(md, " {mb} MB |");
    }
    let _ = writeln!(md, "\n|---|{}", "---|".repeat(SIZES.len()));
    for (f, sizes, _) in &rows {
        let _ = write!(md, "| {} |", f.name);
        for mb in SIZES {
            match sizes.iter().find(|s| s.mb == mb) {
                Some(s) => {
                    let _ = write!(
                        md,
                        " ${:.2}; cold {:.0}, warm {:.1}/{:.1} ms{} |",
                        s.usd_per_million,
                        s.cold.total_p99,
                        s.warm.p50,
                        s.warm.p99,
                        if meets(s, &target(f)) { " ✓" } else { "" }
                    );
                }
                None => md.push_str(" – |"),
            }
        }
        md.push('\n');
    }

    let _ = writeln!(
        md,
        "\nCold start (init + first invocation, p50 and p99, the worse init) beside the floors under the \
         same quota, 100 ms period:\n\n| program | {} |\n|---|{}",
        SIZES.map(|mb| format!("{mb} MB")).join(" | "),
        "---|".repeat(SIZES.len())
    );
    let mut beside: Vec<&str> = vec![FLOOR_HELLO, FLOOR_SDK, PYTHON];
    beside.extend(["get-profile", GET_PROFILE_AT_INIT, "add-email", "post-confirmation"]);
    for program in beside {
        let points = tuning.of(program);
        if points.is_empty() {
            continue;
        }
        let _ = write!(md, "| {program} |");
        for mb in SIZES {
            match points.iter().find(|p| p.mb == mb && p.period_ms >= 100.0) {
                Some(p) => {
                    let c = p.cold();
                    let _ = write!(md, " {:.0} / {:.0} ms |", c.total_p50, c.total_p99);
                }
                None => md.push_str(" – |"),
            }
        }
        md.push('\n');
    }

    let (before, after) = month(&rows);
    let _ = writeln!(
        md,
        "\nLambda's month at 1M users (the cost model's traffic, the measured durations): **${before:.2}** \
         with every function at {BEFORE_MB} MB (migrate-user at its floor), **${after:.2}** at the chosen \
         sizes.\n\n![cost by size](tuning-cost.svg)\n\n![cold start by size](tuning-cold.svg)\n"
    );
    if let Err(e) = charts(&rows, out) {
        let _ = writeln!(md, "(the charts could not be drawn: {e})");
    }
    md
}

/// Lambda's month at 1M users: before (every function at `BEFORE_MB`, or its
/// floor) and after (the choices).
pub(crate) fn month(rows: &[(&'static Function, Vec<AtSize>, Choice)]) -> (f64, f64) {
    let mut before = 0.0;
    let mut after = 0.0;
    for (f, sizes, choice) in rows {
        let n = crate::cost::monthly_invocations(f.name, 1e6);
        let price = |mb: u32| sizes.iter().find(|s| s.mb == mb).map(|s| s.usd_per_million);
        if let (Some(b), Some(a)) = (price(BEFORE_MB.max(f.memory_floor_mb)), price(choice.mb)) {
            before += n / 1e6 * b;
            after += n / 1e6 * a;
        }
    }
    (before, after)
}

fn charts(rows: &[(&'static Function, Vec<AtSize>, Choice)], out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let categories: Vec<String> = rows.iter().map(|(f, _, _)| f.name.to_owned()).collect();
    let series = |value: fn(&AtSize) -> f64| -> Vec<Series> {
        SIZES
            .iter()
            .map(|&mb| Series {
                name: format!("{mb} MB"),
                values: rows
                    .iter()
                    .map(|(_, sizes, _)| sizes.iter().find(|s| s.mb == mb).map(value))
                    .collect(),
            })
            .collect()
    };
    write_svg(
        &out.join("tuning-cost.svg"),
        &Bars {
            title: "Cost of a million invocations, by memory size".to_owned(),
            y_label: "USD (log scale)".to_owned(),
            categories: categories.clone(),
            series: series(|s| s.usd_per_million),
            log_scale: true,
        },
    )?;
    write_svg(
        &out.join("tuning-cold.svg"),
        &Bars {
            title: "Cold start p99 (the worse period and init), by memory size".to_owned(),
            y_label: "ms (log scale)".to_owned(),
            categories,
            series: series(|s| s.cold.total_p99),
            log_scale: true,
        },
    )
}
