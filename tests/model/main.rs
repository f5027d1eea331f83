//! model suite: random sequences of every store operation, over a few users and
//! shared addresses, checked step by step against a reference model, with the
//! real `Store` on DynamoDB Local. A failure shrinks to a minimal sequence.
//!
//! `PROPTEST_CASES` sets the number of cases (default 300, as `make test` runs
//! it; `make model-at-scale` runs 1,000; the long mode is 100,000), split over
//! `MODEL_WORKERS` threads (default 6).

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod figures;
mod organizations;
mod reference;
mod regressions;
mod system;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use proptest::test_runner::{Config, TestError, TestRunner};
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest};
use user_service::config::StoreConfig;

use reference::{Model, Transition};
use system::StoreMachine;

const DEFAULT_CASES: u32 = 300;
const DEFAULT_WORKERS: usize = 6;
/// Transitions per case: long enough to reach every limit under the tight configuration.
const MAX_STEPS: usize = 20;

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The minimal failing case of a run, as proptest shrank it.
struct Minimal {
    reason: String,
    config: StoreConfig,
    transitions: Vec<Transition>,
}

impl Minimal {
    fn report(&self) -> String {
        let mut out = format!(
            "model and store disagree: {}\nminimal sequence ({} steps) under {:?}:\n",
            self.reason,
            self.transitions.len(),
            self.config
        );
        for (i, t) in self.transitions.iter().enumerate() {
            let _ = writeln!(out, "  {:>2}. {t:?}", i + 1);
        }
        out
    }
}

/// Runs `cases` cases over `workers` threads; the first worker's minimal failure, if any.
/// `mutant` makes the store differ from the model (to prove failures shrink).
fn run(
    cases: u32,
    workers: usize,
    mutant: Option<fn(&mut StoreConfig)>,
    figures: &Arc<figures::Figures>,
) -> Option<Minimal> {
    let stop = Arc::new(AtomicBool::new(false));
    let per_worker = cases.div_ceil(u32::try_from(workers).unwrap()).max(1);
    let failures: Vec<Minimal> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let stop = Arc::clone(&stop);
                let figures = Arc::clone(figures);
                scope.spawn(move || {
                    figures::attach(figures);
                    system::set_mutant(mutant);
                    // No persistence file: cases use fresh tables and ids, and a
                    // failure prints its minimal sequence, which becomes a named
                    // regression test in regressions.rs rather than an opaque seed.
                    let config = Config {
                        cases: per_worker,
                        failure_persistence: None,
                        max_shrink_iters: 4_096,
                        ..Config::default()
                    };
                    let mut runner = TestRunner::new(config.clone());
                    let strategy = Model::sequential_strategy(1..=MAX_STEPS);
                    let result = runner.run(&strategy, |(model, transitions, seen)| {
                        // Another worker failed: finish quickly, its report is the one.
                        if stop.load(Ordering::Relaxed) && seen.is_some() {
                            return Ok(());
                        }
                        StoreMachine::test_sequential(config.clone(), model, transitions, seen);
                        Ok(())
                    });
                    match result {
                        Ok(()) => None,
                        Err(TestError::Fail(reason, (model, transitions, _))) => {
                            stop.store(true, Ordering::Relaxed);
                            Some(Minimal {
                                reason: reason.to_string(),
                                config: model.config,
                                transitions,
                            })
                        }
                        Err(TestError::Abort(reason)) => Some(Minimal {
                            reason: format!("aborted: {reason}"),
                            config: StoreConfig::new("-"),
                            transitions: Vec::new(),
                        }),
                    }
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().unwrap()).collect()
    });
    figures.failures(failures.len());
    // The shortest: a worker that failed after another stops shrinking early
    // (its candidates pass once `stop` is set), so its sequence is not minimal.
    failures.into_iter().min_by_key(|f| f.transitions.len())
}

#[test]
fn the_store_follows_the_model() {
    let cases = env_number("PROPTEST_CASES").unwrap_or(DEFAULT_CASES);
    let workers = env_number("MODEL_WORKERS").unwrap_or(DEFAULT_WORKERS).max(1);
    let figures = Arc::new(figures::Figures::default());
    let started = Instant::now();
    let failure = run(cases, workers, None, &figures);
    figures.write("model", cases, workers, MAX_STEPS, started.elapsed());
    if let Some(failure) = failure {
        panic!("{}", failure.report());
    }
}

/// A store that allows only the primary address, where the model allows more:
/// the run must fail, and shrink to the two steps that show it (a sign-up, then
/// an add).
#[test]
fn a_disagreement_shrinks_to_a_minimal_sequence() {
    fn primary_only(config: &mut StoreConfig) {
        config.max_emails_per_user = 1;
    }
    let figures = Arc::new(figures::Figures::default());
    let failure = run(400, 2, Some(primary_only), &figures).expect("the mutant store must be caught");
    let report = failure.report();
    assert!(report.contains("LimitReached"), "{report}");
    assert_eq!(failure.transitions.len(), 2, "not minimal:\n{report}");
    assert!(matches!(failure.transitions[0], Transition::SignUp { .. }), "{report}");
    assert!(
        matches!(failure.transitions[1], Transition::AddEmail { .. }),
        "{report}"
    );
}
