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
//!
//! By concern: `prices` (the price book), `measured` (the functions' measured
//! inputs), `stack` (how the stack is deployed), `usage` (what the service
//! consumes at a size), `sweep` (the reconcile sweep's month), `month` (the
//! bill), `migration` (the one-off), `render` (the Markdown).

mod measured;
mod migration;
mod month;
mod prices;
mod render;
mod stack;
mod sweep;
mod usage;

pub(crate) use measured::Inputs;

use measured::measured;
use month::month;
use prices::{DATA, parse};
use render::{render, usd};
use stack::{Stack, alarm_metrics};
use sweep::simulated;
use usage::{Profile, SIZES};

/// Lambda's arm64 prices and the traffic's share of cold starts, for pricing
/// a million invocations at a memory size (the tuning's choice).
pub(crate) fn lambda_rates() -> Result<crate::tuning::choice::Rates, String> {
    Ok(rates_of(&parse(DATA)?.0))
}

fn rates_of(prices: &prices::Prices) -> crate::tuning::choice::Rates {
    crate::tuning::choice::Rates {
        per_request_usd: prices.get("lambda_requests") / 1e6,
        per_gb_second_usd: prices.get("lambda_gb_second_arm64"),
        cold_share: Stack::default().cold_start_share,
    }
}

/// A function's invocations in a month at `users`, by the cost model's
/// traffic profile.
pub(crate) fn monthly_invocations(function: &str, users: f64) -> f64 {
    usage::invocations(function, &Profile::default(), users)
}

/// The section: the committed inputs, or this run's, priced at every size.
pub(crate) fn section(inputs: &Inputs<'_>) -> Result<String, String> {
    let (prices, defaults) = parse(DATA)?;
    let template = std::fs::read_to_string(integration_tests::workspace_root().join("template.yaml"))
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
