//! Waiting for a condition, never for a fixed time: a test that must wait polls
//! what it waits for, with a generous bound that only a hang reaches.

use std::time::{Duration, Instant};

/// How long a condition may take on a busy machine before the test fails.
pub const GENEROUS: Duration = Duration::from_secs(120);

/// Polls `probe` until it yields a value, or returns `None` once `bound` has passed.
pub fn poll<T>(bound: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + bound;
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// As `poll`, failing the test with `what` (and the caller's context) at the bound.
#[track_caller]
pub fn until<T>(what: impl std::fmt::Display, bound: Duration, probe: impl FnMut() -> Option<T>) -> T {
    match poll(bound, probe) {
        Some(value) => value,
        None => panic!("waited {} s for {what}", bound.as_secs()),
    }
}
