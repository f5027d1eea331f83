//! The choice of each function's memory: AWS Lambda Power Tuning's method,
//! made before deploying. Each size's cost of a million invocations comes from
//! the durations measured at its CPU share; the function gets the cheapest
//! size whose cold start and warm p99 meet its target, in the worse of the
//! two periods and the two inits. Pure: figures in, sizes out.

use serde::{Deserialize, Serialize};
use user_service::catalog::{Function, Trigger};

/// What a million invocations are priced at: Lambda's arm64 prices from the
/// price book (tools/bench/prices.json), and the cost model's share of cold
/// starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rates {
    pub(crate) per_request_usd: f64,
    pub(crate) per_gb_second_usd: f64,
    pub(crate) cold_share: f64,
}

/// A first invocation, measured: init, the invocation, and both together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cold {
    pub(crate) init_p50: f64,
    pub(crate) first_p50: f64,
    pub(crate) total_p50: f64,
    /// The worst of the spawns (nearest rank 99 % of a few is the maximum).
    pub(crate) total_p99: f64,
    /// Billed: init and the first invocation, each spawn rounded up to the
    /// millisecond, averaged.
    pub(crate) billed_mean: f64,
}

/// Warm invocations, measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Warm {
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    /// Billed: each invocation rounded up to the millisecond, averaged.
    pub(crate) billed_mean: f64,
}

/// One program at one memory size and one period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Point {
    pub(crate) program: String,
    pub(crate) mb: u32,
    /// The period the quota was applied in (stretched where the kernel's
    /// minimum quota asks for it).
    pub(crate) period_ms: f64,
    pub(crate) quota_ms: f64,
    /// Init under the quota.
    pub(crate) cold_throttled: Cold,
    /// Init at a whole core, the invocation under the quota.
    pub(crate) cold_whole_core: Cold,
    pub(crate) warm: Warm,
    /// Periods the kernel throttled the warm environment in, of those counted.
    pub(crate) throttled_periods: u64,
    pub(crate) periods: u64,
}

impl Point {
    /// The worse of the two inits.
    pub(crate) fn cold(&self) -> Cold {
        if self.cold_throttled.total_p99 >= self.cold_whole_core.total_p99 {
            self.cold_throttled
        } else {
            self.cold_whole_core
        }
    }
}

/// What a function's answer must meet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Target {
    pub(crate) warm_p99_ms: f64,
    pub(crate) cold_ms: f64,
    pub(crate) why: &'static str,
}

/// The target of a function, by who waits for it.
pub(crate) fn target(f: &Function) -> Target {
    match f.trigger {
        Trigger::Http { .. } => Target {
            warm_p99_ms: 100.0,
            cold_ms: 1_000.0,
            why: "a person waits: a warm p99 under 100 ms and a cold start under a second, before API Gateway's own time",
        },
        Trigger::CognitoPreSignUp
        | Trigger::CognitoPostConfirmation
        | Trigger::CognitoPostAuthentication
        | Trigger::CognitoUserMigration => Target {
            warm_p99_ms: 1_000.0,
            cold_ms: 2_500.0,
            why: "Cognito gives a trigger 5 s: the worst cold start within half of it, a warm p99 within a second",
        },
        Trigger::Schedule { .. } | Trigger::TableStream { .. } => Target {
            warm_p99_ms: f64::from(f.timeout_seconds) * 1_000.0 / 4.0,
            cold_ms: f64::from(f.timeout_seconds) * 1_000.0 / 4.0,
            why: "no one waits: a run well inside its timeout (a quarter of it, cold or warm)",
        },
    }
}

/// A size's figures across the periods: the worse of each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AtSize {
    pub(crate) mb: u32,
    pub(crate) cold: Cold,
    pub(crate) warm: Warm,
    /// A cold start's billed milliseconds: the worse period's mean.
    pub(crate) cold_billed_ms: f64,
    pub(crate) usd_per_million: f64,
}

/// The worse of every period's figures at each size, priced.
pub(crate) fn at_sizes(points: &[&Point], rates: &Rates) -> Vec<AtSize> {
    let mut sizes: Vec<u32> = points.iter().map(|p| p.mb).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|mb| {
            let here: Vec<&&Point> = points.iter().filter(|p| p.mb == mb).collect();
            let cold = here
                .iter()
                .map(|p| p.cold())
                .max_by(|a, b| a.total_p99.total_cmp(&b.total_p99))
                .unwrap_or_default();
            let worst = |f: fn(&Warm) -> f64| here.iter().map(|p| f(&p.warm)).fold(0.0, f64::max);
            let warm = Warm {
                p50: worst(|w| w.p50),
                p99: worst(|w| w.p99),
                billed_mean: worst(|w| w.billed_mean),
            };
            let cold_billed = here.iter().map(|p| p.cold().billed_mean).fold(0.0, f64::max);
            AtSize {
                mb,
                cold,
                warm,
                cold_billed_ms: cold_billed,
                usd_per_million: usd_per_million(mb, cold_billed, warm.billed_mean, rates),
            }
        })
        .collect()
}

/// A million invocations at `mb`: the requests, and the GB-seconds of the
/// billed durations, cold starts in the rates' share of them.
pub(crate) fn usd_per_million(mb: u32, cold_billed_ms: f64, warm_billed_ms: f64, rates: &Rates) -> f64 {
    let ms = rates.cold_share * cold_billed_ms + (1.0 - rates.cold_share) * warm_billed_ms;
    1e6 * (rates.per_request_usd + f64::from(mb) / 1024.0 * ms / 1000.0 * rates.per_gb_second_usd)
}

/// A function's size and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) mb: u32,
    /// Whether that size meets the target (else no measured size did, and
    /// the largest is taken).
    pub(crate) meets: bool,
    pub(crate) why: String,
}

/// Whether a size's worse figures meet a target.
pub(crate) fn meets(at: &AtSize, target: &Target) -> bool {
    at.warm.p99 <= target.warm_p99_ms && at.cold.total_p99 <= target.cold_ms
}

/// The cheapest size that meets the target, never below `floor_mb` (a
/// budget of the function's own, such as migrate-user's hashes).
pub(crate) fn choose(sizes: &[AtSize], target: &Target, floor_mb: u32) -> Option<Choice> {
    let allowed: Vec<&AtSize> = sizes.iter().filter(|s| s.mb >= floor_mb).collect();
    if let Some(best) = allowed
        .iter()
        .filter(|s| meets(s, target))
        .min_by(|a, b| a.usd_per_million.total_cmp(&b.usd_per_million).then(a.mb.cmp(&b.mb)))
    {
        let cheaper_missing: Vec<String> = sizes
            .iter()
            .filter(|s| s.usd_per_million < best.usd_per_million && !meets(s, target))
            .map(|s| format!("{} MB", s.mb))
            .collect();
        let mut why = format!(
            "the cheapest that meets its target (${:.2} per million)",
            best.usd_per_million
        );
        if !cheaper_missing.is_empty() {
            why.push_str(&format!("; {} cost less but miss it", cheaper_missing.join(", ")));
        }
        if floor_mb > sizes.first().map_or(0, |s| s.mb) {
            why.push_str(&format!("; never below {floor_mb} MB"));
        }
        return Some(Choice {
            mb: best.mb,
            meets: true,
            why,
        });
    }
    let largest = allowed.iter().max_by_key(|s| s.mb)?;
    Some(Choice {
        mb: largest.mb,
        meets: false,
        why: "no size meets its target: the largest measured".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATES: Rates = Rates {
        per_request_usd: 0.20 / 1e6,
        per_gb_second_usd: 0.000_013_333_4,
        cold_share: 0.01,
    };

    fn at(mb: u32, cold: f64, warm_p99: f64, warm_billed: f64) -> AtSize {
        AtSize {
            mb,
            cold: Cold {
                total_p99: cold,
                ..Cold::default()
            },
            warm: Warm {
                p50: warm_p99 / 2.0,
                p99: warm_p99,
                billed_mean: warm_billed,
            },
            cold_billed_ms: cold,
            usd_per_million: usd_per_million(mb, cold, warm_billed, &RATES),
        }
    }

    const HTTP: Target = Target {
        warm_p99_ms: 100.0,
        cold_ms: 1_000.0,
        why: "",
    };

    #[test]
    fn a_million_invocations_cost_their_requests_and_gb_seconds() {
        // 1,024 MB for 1,000 ms, a million times: a million GB-s.
        let usd = usd_per_million(1_024, 1_000.0, 1_000.0, &RATES);
        assert!((usd - (0.20 + 13.3334)).abs() < 1e-6, "{usd}");
        // Cold starts weigh their share.
        let mixed = usd_per_million(1_024, 101_000.0, 0.0, &RATES);
        assert!((mixed - (0.20 + 13.3334 * 1.01)).abs() < 1e-6, "{mixed}");
    }

    #[test]
    fn the_cheapest_size_that_meets_the_target_wins() {
        let sizes = [
            at(128, 1_400.0, 90.0, 30.0), // cheaper, but its cold start is too slow
            at(256, 700.0, 60.0, 20.0),
            at(512, 400.0, 30.0, 11.0),
        ];
        let choice = choose(&sizes, &HTTP, 128).unwrap();
        assert_eq!(choice.mb, 256);
        assert!(choice.meets);
        assert!(choice.why.contains("128 MB cost less but miss it"), "{}", choice.why);
    }

    #[test]
    fn a_floor_holds_even_when_a_smaller_size_is_cheaper() {
        let sizes = [at(128, 500.0, 50.0, 10.0), at(1_769, 200.0, 20.0, 5.0)];
        let choice = choose(&sizes, &HTTP, 1_769).unwrap();
        assert_eq!(choice.mb, 1_769);
        assert!(choice.why.contains("never below 1769 MB"), "{}", choice.why);
    }

    #[test]
    fn when_no_size_meets_the_target_the_largest_is_taken_and_said() {
        let sizes = [at(128, 5_000.0, 500.0, 100.0), at(512, 3_000.0, 300.0, 50.0)];
        let choice = choose(&sizes, &HTTP, 128).unwrap();
        assert_eq!((choice.mb, choice.meets), (512, false));
    }

    #[test]
    fn the_worse_period_and_the_worse_init_decide() {
        let point = |period_ms: f64, throttled: f64, whole: f64, warm_p99: f64| Point {
            program: "f".into(),
            mb: 128,
            period_ms,
            quota_ms: 1.0,
            cold_throttled: Cold {
                total_p99: throttled,
                billed_mean: throttled,
                ..Cold::default()
            },
            cold_whole_core: Cold {
                total_p99: whole,
                billed_mean: whole,
                ..Cold::default()
            },
            warm: Warm {
                p50: 1.0,
                p99: warm_p99,
                billed_mean: 2.0,
            },
            throttled_periods: 0,
            periods: 0,
        };
        let (a, b) = (point(100.0, 300.0, 100.0, 20.0), point(13.8, 200.0, 250.0, 60.0));
        let sizes = at_sizes(&[&a, &b], &RATES);
        assert_eq!(sizes.len(), 1);
        assert_eq!(sizes[0].cold.total_p99, 300.0);
        assert_eq!(sizes[0].warm.p99, 60.0);
    }
}
