//! The goals, each met or missed, with its figures: cold start
//! against the floors and Python, warm latency, zip size, memory, and latency
//! at scale.

use super::results::{Report, kib_mb, mb};
use crate::programs::{FLOOR_HELLO, FLOOR_SDK, PYTHON};
use crate::scale::ScaleRow;
use crate::stats::millis;

impl Report {
    /// The goals, each met or missed, with its figures.
    pub(super) fn goals(&self) -> Vec<(String, bool, String)> {
        let mut goals = Vec::new();
        for transport in ["http", "https"] {
            if let (Some(hello), Some(sdk_warm), Some(fp)) = (
                self.cold_of(transport, FLOOR_HELLO),
                self.warm_of("get-profile", FLOOR_SDK),
                self.cold_of(transport, "get-profile"),
            ) {
                let limit = millis(hello.total.p50()) + millis(sdk_warm.p50());
                let got = millis(fp.total.p50());
                goals.push((
                    format!("cold start ({transport}) ≤ 1.5 × (hello-world cold + one warm GetItem)"),
                    got <= 1.5 * limit,
                    format!("{got:.1} ms against a limit of {limit:.1} ms: {:.2}×", got / limit),
                ));
                if let Some(py) = self.cold_of(transport, PYTHON) {
                    let py = millis(py.total.p50());
                    goals.push((
                        format!("cold start ({transport}) ≥ 15× faster than Python + boto3"),
                        py >= 15.0 * got,
                        format!("{got:.1} ms against {py:.0} ms: {:.1}× faster", py / got),
                    ));
                }
            }
        }
        if let (Some(fp), Some(sdk)) = (
            self.warm_of("get-profile", "get-profile"),
            self.warm_of("get-profile", FLOOR_SDK),
        ) {
            let (f, s) = (millis(fp.p50()), millis(sdk.p50()));
            goals.push((
                "warm get-profile ≤ 1.1 × the SDK program".to_owned(),
                f <= 1.1 * s,
                format!("p50 {f:.2} ms against {s:.2} ms: {:.2}×", f / s),
            ));
            if let Some(py) = self.warm_of("get-profile", PYTHON) {
                let p = millis(py.p50());
                goals.push((
                    "warm get-profile faster than Python + boto3".to_owned(),
                    f < p,
                    format!("p50 {f:.2} ms against {p:.2} ms"),
                ));
            }
        }
        let zips: Vec<(&str, u64)> = self
            .sizes
            .iter()
            .filter(|s| !s.name.starts_with("floor-"))
            .filter_map(|s| s.arm64.map(|(_, z)| (s.name.as_str(), z)))
            .collect();
        if let Some((name, largest)) = zips.iter().max_by_key(|(_, z)| *z) {
            goals.push((
                "zip ≤ 3.5 MB per function (arm64)".to_owned(),
                *largest <= 3_500_000,
                format!("largest: {name} at {} MB", mb(*largest)),
            ));
        }
        if let (Some(fp), Some(sdk)) = (self.peak_of("get-profile"), self.peak_of(FLOOR_SDK)) {
            goals.push((
                "peak RSS ≤ 1.2 × the SDK program".to_owned(),
                fp as f64 <= 1.2 * sdk as f64,
                format!(
                    "{} MB against {} MB: {:.2}×",
                    kib_mb(Some(fp)),
                    kib_mb(Some(sdk)),
                    fp as f64 / sdk as f64
                ),
            ));
        }
        if let Some(m) = self.memory.iter().find(|m| m.program == "get-profile")
            && let (Some(a), Some(b)) = (m.rss_at_100_kib, m.rss_end_kib)
        {
            // A few pages either way is the allocator, not a leak.
            goals.push((
                format!(
                    "no memory growth between invocation 100 and {} (within 16 KiB)",
                    self.warm_rounds
                ),
                b <= a + 16,
                format!(
                    "RSS {} MB → {} MB ({:+} KiB)",
                    kib_mb(Some(a)),
                    kib_mb(Some(b)),
                    b as i64 - a as i64
                ),
            ));
        }
        for function in ["get-profile", "get-account"] {
            let rows: Vec<&ScaleRow> = self.scale.iter().filter(|r| r.function == function).collect();
            if let [small, large] = rows.as_slice() {
                let ratio = millis(large.p50.p50()) / millis(small.p50.p50());
                goals.push((
                    format!("{function}: p50 at {} users ≤ 1.2 × at {}", large.users, small.users),
                    ratio <= 1.2,
                    format!(
                        "{} ms against {} ms: {ratio:.2}×",
                        large.p50.p50_ms(),
                        small.p50.p50_ms()
                    ),
                ));
            }
        }
        goals
    }
}
