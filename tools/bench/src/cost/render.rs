//! The report's cost section in Markdown: totals at every size, the items at
//! 1M users, DynamoDB's two modes and where they cross, Cognito's plans, the
//! sweep, the one-off migration, and the prices with their dates and sources.

use std::fmt::Write as _;

use super::measured::Measured;
use super::migration::migration;
use super::month::{DYNAMODB, Month, break_even, month};
use super::prices::Prices;
use super::stack::{Stack, Tier};
use super::usage::{Profile, SIZES};

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

pub(super) fn usd(v: f64) -> String {
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

/// The report's cost section, in Markdown.
pub(crate) fn render(prices: &Prices, p: &Profile, s: &Stack, m: &Measured) -> String {
    let months: Vec<Month> = SIZES.iter().map(|u| month(*u, p, s, m, prices)).collect();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Cost per month\n\nThe model of `tools/bench/src/cost/` (docs/cost.md): us-east-1, Cognito {}, {} (each function at its catalog \
         memory, its durations measured there: tools/bench/tuning.json), \
         {} % of users active a month, alarms and custom metrics as the stack defines them ({} alarm metrics, {} custom \
         metrics), prices from `tools/bench/prices.json`. Measured inputs: {}.\n",
        s.tier.name(),
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
        user_service::catalog::POST_AUTHENTICATION.memory_mb,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::prices::book;

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
