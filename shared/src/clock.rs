//! Where handlers get the time. Deployed functions read the system clock; tests
//! hold a manual clock and move it, so nothing depends on how fast the machine is
//! and no stored item is rewritten to fake the passing of time.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::domain::Timestamp;

/// Where a handler reads the time: the system's, or a manual time tests move.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The machine's clock, which deployed functions read.
    #[default]
    System,
    /// A time that moves only when told to; clones share it.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A manual clock standing at `start`, for tests.
    pub fn manual(start: Timestamp) -> Self {
        Self::Manual(Arc::new(AtomicI64::new(start.unix_millis())))
    }

    /// The time to decide by: the system's, or where the manual clock stands.
    pub fn now(&self) -> Timestamp {
        match self {
            Self::System => Timestamp::now(),
            Self::Manual(millis) => Timestamp::from_unix_millis(millis.load(Ordering::SeqCst)),
        }
    }

    /// Moves a manual clock forward (or back, with a negative value). The system clock ignores it.
    pub fn advance(&self, seconds: i64) {
        if let Self::Manual(millis) = self {
            millis.fetch_add(seconds.saturating_mul(1000), Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_clones_share_it() {
        let start = Timestamp::parse("2026-11-21T10:00:00.250Z").unwrap();
        let clock = Clock::manual(start);
        let shared = clock.clone();
        assert_eq!(clock.now(), start);
        shared.advance(61);
        assert_eq!(clock.now().to_string(), "2026-11-21T10:01:01.250Z");
        clock.advance(-1);
        assert_eq!(shared.now().to_string(), "2026-11-21T10:01:00.250Z");
    }

    #[test]
    fn the_system_clock_reads_the_time() {
        let before = Timestamp::now();
        let clock = Clock::System;
        clock.advance(3600);
        let now = clock.now();
        assert!(now >= before && now <= Timestamp::now());
    }
}
