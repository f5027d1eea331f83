//! The simulator against passes worked by hand, and its figures against what
//! must hold whatever the inputs: more users never take less time, a higher
//! quota never more, every run within Lambda's limit.

use super::drivers::simulate;
use super::outcome::{Driver, Limit};
use super::params::{MB, Params};
use super::scenarios::{DRIVERS, SIZES, quota_sets};

/// No DynamoDB or restart costs, so the time is the calls' alone.
fn bare(users: u64) -> Params {
    Params {
        users,
        deleted_share: 0.0,
        created_per_s: 0.0,
        scan_request_s: 0.0,
        chunk_write_s: 0.0,
        write_s: 0.0,
        chunk_page_s: 0.0,
        restart_s: 0.0,
        ..Params::default()
    }
}

#[test]
fn six_thousand_users_by_hand() {
    // 6,000 users: one partition, 100 ListUsers calls. 7.2 MB of table in
    // 1,000-item pages of 400 KB: 18 pages, 5 for the busiest of 4
    // segments, each 400 KB / 10 MB/s = 0.039 s.
    let p = Params {
        list_latency_s: 0.05,
        ..bare(6_000)
    };
    let page = 400_000.0 / (10.0 * MB);
    let o = simulate(&p, Driver::Scheduled);
    assert!(o.completes);
    assert_eq!((o.partitions, o.list_calls, o.get_calls, o.runs.len()), (1, 100, 0, 1));
    assert!((o.scan_s - 5.0 * page).abs() < 1e-9, "{}", o.scan_s);
    // A call every 1/15 s (half of 30 RPS), the last one 99/15 s after the
    // first, then its 50 ms.
    let expected = 5.0 * page + 99.0 / 15.0 + 0.05;
    assert!((o.wall_s - expected).abs() < 1e-9, "{} against {expected}", o.wall_s);
    assert_eq!(o.binding, Limit::UserList);

    // At 150 ms a call, one partition's pages (one after the other) are
    // slower than the pace: 100 × 0.15 s.
    let slow = simulate(&bare(6_000), Driver::Scheduled);
    assert!((slow.wall_s - (5.0 * page + 15.0)).abs() < 1e-9, "{}", slow.wall_s);
    assert_eq!(slow.binding, Limit::InFlight);
}

#[test]
fn deleted_users_cost_one_admin_get_user_each() {
    let p = Params {
        deleted_share: 0.01,
        ..bare(6_000)
    };
    let o = simulate(&p, Driver::Scheduled);
    assert_eq!((o.get_calls, o.erased), (60, 60));
}

#[test]
fn more_users_never_take_less_time() {
    for driver in DRIVERS {
        let mut last = 0.0;
        for users in [1_000, 8_000, 50_000, 200_000, 1_000_000, 3_000_000, 10_000_000] {
            let o = simulate(
                &Params {
                    users,
                    ..Params::default()
                },
                driver,
            );
            assert!(o.completes, "{users}");
            assert!(
                o.wall_s >= last,
                "{driver:?}: {users} users in {} s, fewer in {last} s",
                o.wall_s
            );
            last = o.wall_s;
        }
    }
}

#[test]
fn a_higher_quota_never_takes_more_time() {
    for driver in DRIVERS {
        let mut last = f64::INFINITY;
        for rps in [10.0, 20.0, 30.0, 60.0, 120.0, 300.0] {
            let p = Params {
                users: 2_000_000,
                user_list_rps: rps,
                user_read_rps: 4.0 * rps,
                ..Params::default()
            };
            let o = simulate(&p, driver);
            assert!(
                o.wall_s <= last,
                "{driver:?}: {rps} RPS in {} s, less in {last} s",
                o.wall_s
            );
            last = o.wall_s;
        }
    }
}

#[test]
fn every_run_stays_within_lambdas_limit() {
    for scenario in quota_sets() {
        for users in SIZES {
            for driver in DRIVERS {
                let p = Params {
                    users,
                    ..scenario.params.clone()
                };
                let o = simulate(&p, driver);
                assert!(o.completes);
                for r in &o.runs {
                    assert!(r.end - r.start <= p.lambda_limit_s, "{driver:?} {users}: {r:?}");
                }
                // And one at a time, for the function.
                if !matches!(driver, Driver::DistributedMap { .. }) {
                    for pair in o.runs.windows(2) {
                        assert!(pair[1].start >= pair[0].end);
                    }
                }
            }
        }
    }
}

#[test]
fn the_schedule_waits_for_its_tick_self_invocation_does_not() {
    let p = Params::default();
    let scheduled = simulate(&p, Driver::Scheduled);
    let chained = simulate(&p, Driver::SelfInvoke);
    assert!(scheduled.runs.len() > 1);
    assert!((scheduled.runs[1].start - p.run_every_s).abs() < 1e-9);
    assert!(chained.runs[1].start < p.run_every_s);
    assert!(chained.wall_s <= scheduled.wall_s);
}

#[test]
fn a_partition_longer_than_a_run_still_ends_and_nothing_is_listed_twice() {
    // 100M users in 256 partitions: 6,511 calls each at 15/4 RPS is 29
    // minutes, longer than a run; each partition goes on where it stopped.
    let p = Params {
        users: 100_000_000,
        ..Params::default()
    };
    let o = simulate(&p, Driver::Scheduled);
    assert!(o.completes);
    assert_eq!(o.list_calls, 256 * (p.users / 256).div_ceil(p.list_page));
    assert!(o.runs.iter().all(|r| r.end - r.start <= p.lambda_limit_s));
}

#[test]
fn fanning_out_buys_nothing_while_user_list_binds() {
    let p = Params {
        users: 10_000_000,
        ..Params::default()
    };
    let one = simulate(&p, Driver::SelfInvoke);
    let many = simulate(&p, Driver::DistributedMap { concurrency: 40 });
    assert_eq!(one.binding, Limit::UserList);
    assert_eq!(many.binding, Limit::UserList);
    // Within the share of calls the single function redoes.
    let floor = many.list_calls as f64 / 15.0;
    assert!(many.wall_s >= floor && one.wall_s < 1.15 * many.wall_s);
}
