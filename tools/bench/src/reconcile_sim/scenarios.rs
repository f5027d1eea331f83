//! The scenarios the report compares (quotas, partitions at once, sizes and
//! drivers), and the report's section: their passes, in detail, and the limits.

use std::fmt::Write as _;

use super::drivers::{largest_within, simulate};
use super::outcome::Driver;
use super::params::Params;

/// A row of the report's scenarios.
pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    pub(crate) params: Params,
}

/// Default quotas at the default share; raised ones (UserList 300, UserRead
/// 600) with the function's 4 partitions at once, and with enough of them.
pub(crate) fn quota_sets() -> Vec<Scenario> {
    let default = Params::default();
    let raised = Params {
        user_list_rps: 300.0,
        user_read_rps: 600.0,
        ..Params::default()
    };
    let wide = Params {
        partitions_at_once: 24,
        ..raised.clone()
    };
    vec![
        Scenario {
            name: "default quotas, P = 4",
            params: default,
        },
        Scenario {
            name: "raised quotas, P = 4",
            params: raised,
        },
        Scenario {
            name: "raised quotas, P = 24",
            params: wide,
        },
    ]
}

/// The levers for a larger pool: the share of UserList (which AWS does not
/// raise), finer partitions, raised quotas with enough partitions at once.
pub(crate) fn ceilings() -> Vec<Scenario> {
    let sets = quota_sets();
    let mut out = Vec::new();
    for (i, scenario) in sets.into_iter().enumerate() {
        if i == 0 {
            out.push(Scenario {
                name: "default quotas, share 0.9",
                params: Params {
                    quota_share: 0.9,
                    ..scenario.params.clone()
                },
            });
            out.push(Scenario {
                name: "default quotas, 3-digit prefixes",
                params: Params {
                    max_prefix_digits: 3,
                    ..scenario.params.clone()
                },
            });
            out.insert(0, scenario);
        } else if i == 2 {
            out.push(scenario);
        }
    }
    out
}

pub(crate) const SIZES: [u64; 3] = [100_000, 1_000_000, 10_000_000];

pub(crate) const DRIVERS: [Driver; 4] = [
    Driver::Scheduled,
    Driver::SelfInvoke,
    Driver::DistributedMap { concurrency: 10 },
    Driver::DistributedMap { concurrency: 40 },
];

pub(crate) fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7_200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3_600.0)
    }
}

fn users_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else {
        format!("{}k", n / 1_000)
    }
}

/// The report's section: pass times, the details of each, and the limits.
pub(crate) fn section() -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Reconcile pass (simulated)\n\nA full pass of reconcile-users, simulated call by call \
         (`tools/bench/src/reconcile_sim/`; the model in docs/scale.md): wall time from the first \
         run's start to the last one's end. Quotas: UserList / UserRead requests per second, the pass \
         taking half of each; P: partitions listed at once.\n"
    );
    let _ = write!(md, "| users | quotas |");
    for d in DRIVERS {
        let _ = write!(md, " {} |", d.label());
    }
    let _ = writeln!(md, "\n|---|---|---|---|---|---|");
    let mut details = Vec::new();
    for scenario in quota_sets() {
        for users in SIZES {
            let p = Params {
                users,
                ..scenario.params.clone()
            };
            let _ = write!(md, "| {} | {} |", users_label(users), scenario.name);
            for d in DRIVERS {
                let o = simulate(&p, d);
                if o.completes {
                    let _ = write!(md, " {} |", duration(o.wall_s));
                } else {
                    let _ = write!(md, " never ends |");
                }
                details.push((users, scenario.name, d, p.clone(), o));
            }
            md.push('\n');
        }
    }
    let _ = writeln!(
        md,
        "\n| users | quotas | driven by | pass | runs | partitions | Lambda-s | ListUsers | AdminGetUser | confirmed again | \
         erased | UserList used | UserRead used | scan | Cognito phase | binds | $ per pass |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (users, name, d, p, o) in &details {
        let (list, read) = o.quota_used(p);
        let _ = writeln!(
            md,
            "| {} | {name} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {:.0} % | {:.1} % | {} | {} | {} | {:.3} |",
            users_label(*users),
            d.label(),
            if o.completes {
                duration(o.wall_s)
            } else {
                "never ends".to_owned()
            },
            o.runs.len(),
            o.partitions,
            o.lambda_s(),
            o.list_calls,
            o.get_calls,
            o.wasted_calls,
            o.erased,
            100.0 * list,
            100.0 * read,
            duration(o.scan_s),
            duration(o.cognito_s),
            o.binding.label(),
            o.usd(p),
        );
    }
    let _ = writeln!(
        md,
        "\nLargest pool whose pass ends within a time (scheduled; to 1M users):\n\n\
         | quotas | within 1 h | within 6 h | within 24 h |\n|---|---|---|---|"
    );
    for scenario in ceilings() {
        let _ = write!(md, "| {} |", scenario.name);
        for hours in [1.0, 6.0, 24.0] {
            let n = largest_within(&scenario.params, Driver::Scheduled, hours * 3_600.0, 1_000_000);
            let _ = write!(md, " {} |", if n == 0 { "< 1M".to_owned() } else { users_label(n) });
        }
        md.push('\n');
    }
    md.push('\n');
    md
}
