//! Whole passes, run after run as each driver chains them: the scheduled
//! function, the self-invoking one, the distributed map; and the largest pool
//! a driver passes within a time.

use super::outcome::{Driver, Limit, Outcome, Run};
use super::params::{MB, Params};
use super::phases::{Bucket, Partitions, Scan, Tally, list_run, partition_sizes, prefix_digits};

/// The lower bounds on phase two's time, and the largest: what binds.
fn binding(p: &Params, useful_list: u64, gets: u64, erased: u64, in_flight: usize) -> Limit {
    let list = useful_list as f64 / (p.user_list_rps * p.quota_share);
    let read = gets as f64 / (p.user_read_rps * p.quota_share);
    let flight =
        (useful_list as f64 * p.list_latency_s + gets as f64 * p.get_latency_s + erased as f64 * p.erase_latency_s)
            / in_flight.max(1) as f64;
    if list >= read && list >= flight {
        Limit::UserList
    } else if read >= flight {
        Limit::UserRead
    } else {
        Limit::InFlight
    }
}

/// A full pass of `p.users` driven by `driver`.
pub(crate) fn simulate(p: &Params, driver: Driver) -> Outcome {
    match driver {
        Driver::Scheduled | Driver::SelfInvoke => runs(p, driver),
        Driver::DistributedMap { concurrency } => fan_out(p, concurrency),
    }
}

/// The design, and the self-invoking variant: one run at a time.
fn runs(p: &Params, driver: Driver) -> Outcome {
    let digits = prefix_digits(p.users, p.partition_target, p.max_prefix_digits);
    let mut parts = Partitions::new(partition_sizes(p.users, digits));
    let mut tally = Tally::default();
    let mut scan = Scan::new(p);
    let mut runs = Vec::new();
    let mut scan_s = 0.0;
    let mut start = 0.0;
    let mut completes = true;
    loop {
        let deadline = start + p.lambda_limit_s - p.margin_s;
        let mut now = start + p.restart_s;
        let scanning = !scan.done();
        let before = parts.progress();
        if scanning {
            now = scan.run(now, deadline);
            if scan.done() {
                scan_s = now;
            }
        }
        if scan.done() && now < deadline {
            now = list_run(p, &mut parts, &mut tally, now, deadline).max(now);
        }
        // The run's checkpoint write.
        let end = now + p.write_s;
        runs.push(Run { start, end });
        if parts.next >= parts.sizes.len() {
            break;
        }
        if !scanning && parts.progress() == before {
            // Not one call fits in a run: no run moves the pass.
            completes = false;
            break;
        }
        start = match driver {
            Driver::SelfInvoke => end + p.invoke_gap_s,
            _ => start + p.run_every_s,
        };
    }
    let wall_s = runs.last().map_or(0.0, |r| r.end);
    let useful: u64 = parts.listed.iter().sum();
    Outcome {
        completes,
        wall_s,
        runs,
        list_calls: tally.list_calls,
        wasted_calls: tally.wasted,
        get_calls: tally.get_calls,
        erased: tally.erased,
        partitions: parts.sizes.len() as u64,
        scan_s,
        cognito_s: wall_s - scan_s,
        transitions: 0.0,
        binding: if completes {
            binding(
                p,
                useful,
                tally.get_calls,
                tally.erased,
                p.partitions_at_once.min(parts.sizes.len()),
            )
        } else {
            Limit::RunTooShort
        },
    }
}

/// One child of the distributed map: a Lambda invocation that loads, lists and
/// confirms one partition at its own share of the quotas. Answers its duration
/// and its calls.
fn child(p: &Params, users: u64, concurrency: usize, started: f64, partitions: usize) -> (f64, u64, u64, u64) {
    let share = p.quota_share / concurrency as f64;
    let mut list = Bucket::new(p.user_list_rps * share, 0.0);
    let mut read = Bucket::new(p.user_read_rps * share, 0.0);
    let calls = users.div_ceil(p.list_page).max(1);
    let mut t = p.restart_s + (users as f64 * p.sub_bytes / MB).ceil().max(1.0) * p.chunk_page_s;
    for _ in 0..calls {
        let start = list.slot(t);
        list.take(start);
        t = start + p.list_latency_s;
    }
    let gone = (users as f64 * p.deleted_share).round() as u64;
    let present = (p.created_per_s * (started + t) / partitions as f64).round() as u64;
    for i in 0..gone + present {
        let start = read.slot(t);
        read.take(start);
        t = start + p.get_latency_s + if i < gone { p.erase_latency_s } else { 0.0 };
    }
    (t + p.write_s, calls, gone + present, gone)
}

/// The state machine: the scan as Tasks back to back, then the distributed map.
fn fan_out(p: &Params, concurrency: usize) -> Outcome {
    let mut concurrency = concurrency.max(1);
    let mut scan = Scan::new(p);
    let mut runs = Vec::new();
    let mut start = 0.0;
    while !scan.done() {
        let end = scan.run(start + p.restart_s, start + p.lambda_limit_s - p.margin_s) + p.write_s;
        runs.push(Run { start, end });
        start = end + p.child_start_s;
    }
    let scan_s = start;
    let scan_tasks = runs.len();
    // Partitions small enough that a child, at its share of the quota, ends
    // well inside its own run: finer prefixes than the function's if need be.
    let room = (p.lambda_limit_s - p.margin_s) / 2.0;
    let pace = (concurrency as f64 / (p.user_list_rps * p.quota_share)).max(p.list_latency_s);
    let mut digits = prefix_digits(p.users, p.partition_target, p.max_prefix_digits);
    while digits < 4 && (p.users >> (4 * digits)) as f64 / p.list_page as f64 * pace > room {
        digits += 1;
    }
    let sizes = partition_sizes(p.users, digits);
    // Fewer partitions than children: the share goes to those there are.
    concurrency = concurrency.min(sizes.len());
    // Each child goes to the slot free first.
    let mut free = vec![scan_s; concurrency];
    let (mut list_calls, mut get_calls, mut erased) = (0, 0, 0);
    let mut completes = true;
    for &users in &sizes {
        let (slot, at) = free
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((0, scan_s));
        let begin = at + p.child_start_s;
        let (took, l, g, e) = child(p, users, concurrency, begin, sizes.len());
        completes &= took <= p.lambda_limit_s - p.margin_s;
        runs.push(Run {
            start: begin,
            end: begin + took,
        });
        free[slot] = begin + took;
        list_calls += l;
        get_calls += g;
        erased += e;
    }
    let wall_s = free.iter().copied().fold(scan_s, f64::max);
    Outcome {
        completes,
        wall_s,
        runs,
        list_calls,
        wasted_calls: 0,
        get_calls,
        erased,
        partitions: sizes.len() as u64,
        scan_s,
        cognito_s: wall_s - scan_s,
        // The execution's own states, two per scan Task (Task, Choice), and
        // the children's.
        transitions: 4.0 + 2.0 * scan_tasks as f64 + p.transitions_per_child * sizes.len() as f64,
        binding: if completes {
            binding(p, list_calls, get_calls, erased, concurrency)
        } else {
            Limit::RunTooShort
        },
    }
}

/// The largest pool, to `step` users, whose pass completes within `within_s`.
pub(crate) fn largest_within(p: &Params, driver: Driver, within_s: f64, step: u64) -> u64 {
    let fits = |users: u64| {
        let o = simulate(&Params { users, ..p.clone() }, driver);
        o.completes && o.wall_s <= within_s
    };
    // No pass lists faster than its bucket, nor than its calls in flight allow:
    // an upper bound that keeps the search short.
    let per_s = (p.user_list_rps * p.quota_share).min(p.partitions_at_once as f64 / p.list_latency_s);
    let bound = (within_s * per_s * p.list_page as f64 / step as f64).ceil() as u64 + 1;
    let (mut lo, mut hi) = (0u64, bound.min(1 << 12));
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid * step) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo * step
}
