//! The report's charts: cold start, warm latency and size, as SVG beside
//! report.md.

use super::results::Report;
use crate::charts::{Bars, Series, write_svg};
use crate::stats::millis;

impl Report {
    /// Writes the charts of the sections that ran into the output folder.
    pub(super) fn charts(&self) -> std::io::Result<()> {
        let fail = |e: Box<dyn std::error::Error>| std::io::Error::other(e.to_string());
        if !self.cold.is_empty() {
            let mut programs: Vec<String> = Vec::new();
            for c in &self.cold {
                if !programs.contains(&c.program) {
                    programs.push(c.program.clone());
                }
            }
            let mut series = Vec::new();
            for transport in ["http", "https"] {
                for (part, pick) in [("init", 0), ("first invocation", 1)] {
                    series.push(Series {
                        name: format!("{part} ({transport})"),
                        values: programs
                            .iter()
                            .map(|p| {
                                self.cold_of(transport, p)
                                    .map(|c| millis(if pick == 0 { c.init.p50() } else { c.first.p50() }))
                            })
                            .collect(),
                    });
                }
            }
            write_svg(
                &self.out.join("cold-start.svg"),
                &Bars {
                    title: "Cold start, p50".to_owned(),
                    y_label: "ms (log scale)".to_owned(),
                    categories: programs,
                    series,
                    log_scale: true,
                },
            )
            .map_err(fail)?;
        }
        if !self.warm.is_empty() {
            let categories: Vec<String> = {
                let mut c: Vec<String> = self.warm.iter().map(|w| w.operation.to_owned()).collect();
                c.dedup();
                c
            };
            let mut whos: Vec<String> = Vec::new();
            for w in &self.warm {
                let who = if w.who == w.operation || w.who.contains('+') {
                    "function".to_owned()
                } else {
                    w.who.clone()
                };
                if !whos.contains(&who) {
                    whos.push(who);
                }
            }
            let series = whos
                .iter()
                .map(|who| Series {
                    name: who.clone(),
                    values: categories
                        .iter()
                        .map(|op| {
                            self.warm
                                .iter()
                                .find(|w| {
                                    w.operation == op
                                        && (w.who == *who
                                            || (who == "function" && (w.who == w.operation || w.who.contains('+'))))
                                })
                                .map(|w| millis(w.times.p50()))
                        })
                        .collect(),
                })
                .collect();
            write_svg(
                &self.out.join("warm.svg"),
                &Bars {
                    title: format!("Warm latency, p50 of {}", self.warm_rounds),
                    y_label: "ms".to_owned(),
                    categories,
                    series,
                    log_scale: false,
                },
            )
            .map_err(fail)?;
        }
        if !self.sizes.is_empty() {
            let mb_of = |p: Option<(u64, u64)>, zip: bool| {
                p.map(|(b, z)| (if zip { z } else { b }) as f64 / 1_000_000.0)
                    .filter(|v| *v > 0.0)
            };
            let series = vec![
                Series {
                    name: "arm64 zip".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.arm64, true)).collect(),
                },
                Series {
                    name: "x86_64 zip".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.x86_64, true)).collect(),
                },
                Series {
                    name: "arm64 stripped".to_owned(),
                    values: self.sizes.iter().map(|s| mb_of(s.arm64, false)).collect(),
                },
            ];
            write_svg(
                &self.out.join("size.svg"),
                &Bars {
                    title: "Size per function".to_owned(),
                    y_label: "MB".to_owned(),
                    categories: self.sizes.iter().map(|s| s.name.clone()).collect(),
                    series,
                    log_scale: false,
                },
            )
            .map_err(fail)?;
        }
        Ok(())
    }
}
