//! What the business metrics add to one invocation, built as the functions are:
//! count the named metrics once each, then write their EMF document to stdout
//! (`App::metered`'s flush), `rounds` times. `bench` runs it with stdout on
//! /dev/null, and under callgrind. The recorder is set up as a function's init
//! sets it up, from `METRICS_NAMESPACE` and `AWS_LAMBDA_FUNCTION_NAME`.
//!
//! `metrics-probe <rounds> [Metric ...]` prints on stderr one JSON line: the
//! document's bytes and the time per round.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use user_service::metrics::{self, Emf, Metric};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u64 = args
        .next()
        .and_then(|r| r.parse().ok())
        .expect("usage: metrics-probe <rounds> [Metric ...]");
    let counted: Vec<Metric> = args
        .map(|name| {
            *Metric::ALL
                .iter()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("{name} is not a metric"))
        })
        .collect();
    let emf = Emf::from_lookup(|name| std::env::var(name).ok(), "metrics-probe").expect("the recorder installs");

    // The document, once, for its size.
    for metric in &counted {
        metrics::count(*metric);
    }
    let mut line = Vec::new();
    emf.write(&mut line).unwrap();

    let start = Instant::now();
    for _ in 0..rounds {
        for metric in &counted {
            metrics::count(*metric);
        }
        emf.flush();
    }
    let elapsed = start.elapsed();
    let per_round_ns = elapsed.as_nanos() as f64 / rounds.max(1) as f64;
    eprintln!(
        "{}",
        serde_json::json!({ "bytes": line.len(), "ns_per_round": per_round_ns, "document": String::from_utf8_lossy(&line).trim_end() })
    );
}
