//! Instructions per warm invocation and per cold start, counted by callgrind
//! (valgrind): deterministic to a fraction of a percent, so two builds compare
//! in one run each where timing them needs many.

use std::path::Path;

use serde_json::Value;

use crate::plan::Plan;
use crate::programs::check_answer;
use crate::runtime::{Environment, Launch};

/// Instructions per warm invocation, counted by callgrind: the difference
/// between a run of `few` and one of `many` invocations, over `many - few`.
pub(crate) async fn callgrind(plan: &Plan, launch: &Launch, event: &Value) -> u64 {
    let (few, many) = (10u64, 110u64);
    let few_total = counted(plan, launch, event, few).await;
    let many_total = counted(plan, launch, event, many).await;
    many_total.saturating_sub(few_total) / (many - few)
}

/// Instructions of a cold start: init and the first invocation, its TLS
/// handshake included when the launch's endpoint is TLS. The CPU a cold start
/// needs is what a small memory size's quota stretches.
pub(crate) async fn callgrind_cold(plan: &Plan, launch: &Launch, event: &Value) -> u64 {
    counted(plan, launch, event, 1).await
}

/// The CPU time of a cold start, init and the first invocation, natively (no
/// valgrind, whose CPU model can take other code paths: AWS-LC picks its
/// P-256 code by the CPU's features), in ms: the median of `spawns`.
pub(crate) async fn cold_cpu_ms(launch: &Launch, event: &Value, spawns: usize) -> f64 {
    let mut used = Vec::new();
    for _ in 0..spawns {
        let env = Environment::start(launch).await.unwrap();
        let (_, answer) = env.invoke(event).await.unwrap();
        check_answer(&launch.label, &answer).unwrap();
        used.push(env.cpu_ns().expect("the process's schedstat"));
        env.terminate().await;
    }
    used.sort_unstable();
    used[used.len() / 2] as f64 / 1e6
}

/// Callgrind's total for an environment that serves `n` invocations.
async fn counted(plan: &Plan, launch: &Launch, event: &Value, n: u64) -> u64 {
    let file = plan.out.join(format!("callgrind.{}.{n}.out", launch.label));
    let _ = std::fs::remove_file(&file);
    let under = launch.wrapped(
        "valgrind",
        &[
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={}", file.display()),
        ],
    );
    let env = Environment::start(&under)
        .await
        .unwrap_or_else(|e| panic!("valgrind (apt-get install valgrind): {e}"));
    for _ in 0..n {
        let (_, answer) = env.invoke(event).await.unwrap();
        check_answer(&launch.label, &answer).unwrap();
    }
    env.terminate().await;
    callgrind_total(&file)
}

/// The instructions a callgrind output file counts in all.
pub(crate) fn callgrind_total(file: &Path) -> u64 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{}: no totals", file.display()))
}
