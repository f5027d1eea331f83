//! What a run did, for `target/reliability/model.json` and the summary line.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
pub(crate) struct Figures {
    /// Cases run, the re-runs of shrinking included.
    cases: AtomicU64,
    transitions: AtomicU64,
    kinds: Mutex<BTreeMap<&'static str, u64>>,
    /// How often each outcome (ok, or each domain error) was predicted and met.
    outcomes: Mutex<BTreeMap<String, u64>>,
    failures: AtomicU64,
    /// Microseconds spent per phase, summed over workers: where the time goes.
    phases: Mutex<BTreeMap<&'static str, u64>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Figures>>> = const { RefCell::new(None) };
}

/// Counts this thread's cases into `figures`.
pub(crate) fn attach(figures: Arc<Figures>) {
    CURRENT.with(|c| *c.borrow_mut() = Some(figures));
}

fn with(f: impl FnOnce(&Figures)) {
    CURRENT.with(|c| {
        if let Some(figures) = c.borrow().as_ref() {
            f(figures);
        }
    });
}

pub(crate) fn case_started() {
    with(|f| {
        f.cases.fetch_add(1, Ordering::Relaxed);
    });
}

pub(crate) fn transition(kind: &'static str) {
    with(|f| {
        f.transitions.fetch_add(1, Ordering::Relaxed);
        *f.kinds.lock().unwrap().entry(kind).or_default() += 1;
    });
}

/// Adds the time `work` takes to `phase`.
pub(crate) fn timed<T>(phase: &'static str, work: impl FnOnce() -> T) -> T {
    let started = std::time::Instant::now();
    let out = work();
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    with(|f| *f.phases.lock().unwrap().entry(phase).or_default() += micros);
    out
}

pub(crate) fn outcome(name: String) {
    with(|f| *f.outcomes.lock().unwrap().entry(name).or_default() += 1);
}

impl Figures {
    pub(crate) fn failures(&self, n: usize) {
        self.failures.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Writes the figures to `target/reliability/<suite>.json` and prints one line.
    pub(crate) fn write(&self, suite: &str, cases: u32, workers: usize, max_steps: usize, wall: Duration) {
        let kinds = self.kinds.lock().unwrap().clone();
        let outcomes = self.outcomes.lock().unwrap().clone();
        let phases: BTreeMap<&str, f64> = self
            .phases
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (*k, (*v as f64 / 1e5).round() / 10.0))
            .collect();
        let cases_run = self.cases.load(Ordering::Relaxed);
        let transitions = self.transitions.load(Ordering::Relaxed);
        let failures = self.failures.load(Ordering::Relaxed);
        let wall_s = wall.as_secs_f64();
        let json = serde_json::json!({
            "suite": suite,
            "cases_requested": cases,
            "cases_run": cases_run,
            "transitions": transitions,
            "distinct_operation_kinds": kinds.len(),
            "operation_kinds": kinds,
            "outcomes": outcomes,
            "failures": failures,
            "worker_seconds_by_phase": phases,
            "workers": workers,
            "max_steps_per_case": max_steps,
            "wall_seconds": (wall_s * 10.0).round() / 10.0,
            "cases_per_second": (cases_run as f64 / wall_s * 10.0).round() / 10.0,
            "transitions_per_second": (transitions as f64 / wall_s).round(),
        });
        let dir = integration_tests::workspace_root().join("target/reliability");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{suite}.json")),
            serde_json::to_string_pretty(&json).unwrap(),
        )
        .unwrap();
        eprintln!(
            "{suite}: {cases_run} cases, {transitions} transitions over {} operation kinds, {failures} failures, {wall_s:.1} s wall ({workers} workers)",
            kinds.len()
        );
    }
}
