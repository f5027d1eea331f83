//! Percentiles of timings.

use std::time::Duration;

/// Timings, sorted.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    sorted: Vec<Duration>,
}

impl Sample {
    pub(crate) fn new(mut times: Vec<Duration>) -> Self {
        times.sort();
        Self { sorted: times }
    }

    /// The nearest-rank percentile `p` (0..=1).
    pub(crate) fn pct(&self, p: f64) -> Duration {
        if self.sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p * self.sorted.len() as f64).ceil() as usize).clamp(1, self.sorted.len());
        self.sorted[rank - 1]
    }

    pub(crate) fn p50(&self) -> Duration {
        self.pct(0.5)
    }

    pub(crate) fn len(&self) -> usize {
        self.sorted.len()
    }

    pub(crate) fn max(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }

    pub(crate) fn p50_ms(&self) -> String {
        ms(self.p50())
    }
}

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(crate) fn ms(d: Duration) -> String {
    let v = millis(d);
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let s = Sample::new((1..=100).rev().map(Duration::from_millis).collect());
        assert_eq!(s.p50(), Duration::from_millis(50));
        assert_eq!(s.pct(0.99), Duration::from_millis(99));
        assert_eq!(s.max(), Duration::from_millis(100));
        assert_eq!(Sample::new(vec![]).p50(), Duration::ZERO);
    }
}
