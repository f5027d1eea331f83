//! Instructions per warm invocation, counted by callgrind (valgrind).

use std::path::Path;

use serde_json::Value;

use crate::plan::Plan;
use crate::programs::check_answer;
use crate::runtime::{Environment, Launch};

/// Instructions per warm invocation, counted by callgrind: the difference
/// between a run of `few` and one of `many` invocations, over `many - few`.
pub(crate) async fn callgrind(plan: &Plan, launch: &Launch, event: &Value) -> u64 {
    let (few, many) = (10u64, 110u64);
    let mut totals = Vec::new();
    for n in [few, many] {
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
        totals.push(callgrind_total(&file));
    }
    totals[1].saturating_sub(totals[0]) / (many - few)
}

/// The instructions a callgrind output file counts in all.
pub(crate) fn callgrind_total(file: &Path) -> u64 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{}: no totals", file.display()))
}
