//! The reconcile pass at 100k, 1M and 10M users, simulated: how long a full
//! pass takes, in how many runs, at what cost, and which limit binds.
//!
//! The algorithm is reconcile-users' (docs/scale.md states the model). Phase
//! one scans the table in segments and writes snapshot chunks; phase two lists
//! Cognito's users partition by partition (sub prefix) under a token bucket at
//! a share of the UserList quota, and confirms the candidates with AdminGetUser
//! under a bucket at the same share of UserRead. Time advances call by call:
//! pure arithmetic, deterministic, nothing random, no network.
//!
//! Three ways to drive it are compared: the scheduled function that continues
//! from its checkpoint (the design), the same function invoking itself at once
//! when its time is up, and a Step Functions distributed map that fans the
//! partitions out to child executions.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use user_service::{catalog, config, identity, reconcile};

/// Everything the simulation assumes. The defaults are reconcile-users'
/// configuration (the design's constants and the quotas' defaults); the
/// latencies and sizes are estimates, stated in docs/scale.md.
#[derive(Debug, Clone)]
pub(crate) struct Params {
    /// Live profiles in the table (and users in Cognito).
    pub(crate) users: u64,
    /// Users gone from Cognito whose profile is still in the table.
    pub(crate) deleted_share: f64,
    /// Users created per second while the pass runs: the design counts them as
    /// candidates too (an upper bound: most are skipped by their createdAt).
    pub(crate) created_per_s: f64,
    /// Table bytes a Scan reads per user: profile, address and claim items.
    pub(crate) bytes_per_user: f64,
    /// Table items per user (a Scan page stops at `scan_page_items`).
    pub(crate) items_per_user: f64,
    /// Parallel Scan segments (SCAN_SEGMENTS).
    pub(crate) scan_segments: u64,
    /// Items a Scan page evaluates at most (SCAN_PAGE_ITEMS).
    pub(crate) scan_page_items: f64,
    /// DynamoDB's own page limit, 1 MB.
    pub(crate) scan_page_bytes: f64,
    /// A Scan request's fixed cost, before its bytes.
    pub(crate) scan_request_s: f64,
    /// Bytes a segment reads per second (about 100 ms per 1 MB page).
    pub(crate) scan_segment_bytes_per_s: f64,
    /// On-demand read request units per second the table may use (the
    /// table-level quota, 40,000) and one partition serves (3,000).
    pub(crate) table_rru_per_s: f64,
    pub(crate) partition_rru_per_s: f64,
    /// Subs per snapshot chunk (CHUNK_SUBS), 16 bytes each.
    pub(crate) chunk_subs: f64,
    pub(crate) sub_bytes: f64,
    /// One write of a 320 KB chunk item.
    pub(crate) chunk_write_s: f64,
    /// One small write: a checkpoint, a partial chunk flushed at a run's end.
    pub(crate) write_s: f64,
    /// One Query page (1 MB) of a partition's chunks.
    pub(crate) chunk_page_s: f64,
    /// Users per ListUsers call (`identity::LIST_USERS_PAGE`).
    pub(crate) list_page: u64,
    /// A partition holds at most this many users (PARTITION_TARGET) ...
    pub(crate) partition_target: u64,
    /// ... with a prefix of at most this many hex digits (MAX_PREFIX_DIGITS).
    pub(crate) max_prefix_digits: u32,
    /// Latencies of a ListUsers call, an AdminGetUser call, an erasure.
    pub(crate) list_latency_s: f64,
    pub(crate) get_latency_s: f64,
    pub(crate) erase_latency_s: f64,
    /// Cognito's quotas, requests per second, per account and Region:
    /// UserList (ListUsers) and UserRead (AdminGetUser).
    pub(crate) user_list_rps: f64,
    pub(crate) user_read_rps: f64,
    /// The share of each quota the pass takes; the rest is everyone else's.
    pub(crate) quota_share: f64,
    /// Partitions listed at once in one run (PARTITIONS_AT_ONCE).
    pub(crate) partitions_at_once: usize,
    /// Lambda's timeout, and what a run leaves of it to stop cleanly.
    pub(crate) lambda_limit_s: f64,
    pub(crate) margin_s: f64,
    /// The schedule's period (RUN_EVERY).
    pub(crate) run_every_s: f64,
    /// What a run spends before work: cold start, lease, checkpoint read.
    pub(crate) restart_s: f64,
    /// A self-invocation's asynchronous Invoke until the next run starts.
    pub(crate) invoke_gap_s: f64,
    /// Step Functions starting one child execution and its Task.
    pub(crate) child_start_s: f64,
    /// Standard-workflow state transitions per child: the map charges one for
    /// starting it, its Task state one more.
    pub(crate) transitions_per_child: f64,
    /// Memory of the function (the template's FunctionMemorySize), for GB-s.
    pub(crate) memory_gb: f64,
}

/// Lambda arm64 duration, us-east-1, per GB-second.
const LAMBDA_USD_PER_GB_S: f64 = 0.000_013_333_4;
/// Step Functions standard workflows, per state transition ($0.025 per 1,000).
const SFN_USD_PER_TRANSITION: f64 = 0.025 / 1000.0;
const MB: f64 = 1_048_576.0;
/// An eventually consistent read unit covers 8 KB (half a unit per 4 KB).
const BYTES_PER_RRU: f64 = 8_192.0;

impl Default for Params {
    fn default() -> Self {
        Self {
            users: 1_000_000,
            deleted_share: 0.01,
            created_per_s: 0.01,
            bytes_per_user: 1_200.0,
            items_per_user: 3.0,
            scan_segments: u64::from(config::RECONCILE_SCAN_SEGMENTS.default_number()),
            scan_page_items: f64::from(reconcile::SCAN_PAGE_ITEMS),
            scan_page_bytes: MB,
            scan_request_s: 0.02,
            scan_segment_bytes_per_s: 10.0 * MB,
            table_rru_per_s: 40_000.0,
            partition_rru_per_s: 3_000.0,
            chunk_subs: reconcile::CHUNK_SUBS as f64,
            sub_bytes: 16.0,
            chunk_write_s: 0.05,
            write_s: 0.01,
            chunk_page_s: 0.05,
            list_page: u64::try_from(identity::LIST_USERS_PAGE).unwrap_or(60),
            partition_target: reconcile::PARTITION_TARGET,
            max_prefix_digits: reconcile::MAX_PREFIX_DIGITS as u32,
            list_latency_s: 0.15,
            get_latency_s: 0.05,
            erase_latency_s: 0.03,
            user_list_rps: f64::from(config::COGNITO_USER_LIST_RPS.default_number()),
            user_read_rps: f64::from(config::COGNITO_USER_READ_RPS.default_number()),
            quota_share: f64::from(config::RECONCILE_QUOTA_SHARE_PERCENT.default_number()) / 100.0,
            partitions_at_once: config::RECONCILE_PARTITIONS_AT_ONCE.default_number() as usize,
            lambda_limit_s: f64::from(catalog::RECONCILE_USERS.timeout_seconds),
            margin_s: f64::from(reconcile::RUN_RESERVE_SECONDS),
            run_every_s: 900.0,
            restart_s: 0.5,
            invoke_gap_s: 1.0,
            child_start_s: 0.5,
            transitions_per_child: 2.0,
            memory_gb: 0.25,
        }
    }
}

/// How runs follow each other.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Driver {
    /// The design: a run every `run_every_s`, one at a time (the lease), each
    /// continuing from the checkpoint.
    Scheduled,
    /// A run whose time is up invokes the function again at once.
    SelfInvoke,
    /// A state machine: the scan as a loop of Tasks, then a distributed map of
    /// one child per partition, `concurrency` at once, each child with its
    /// share of the quotas.
    DistributedMap { concurrency: usize },
}

impl Driver {
    pub(crate) fn label(self) -> String {
        match self {
            Self::Scheduled => "scheduled".to_owned(),
            Self::SelfInvoke => "self-invoking".to_owned(),
            Self::DistributedMap { concurrency } => format!("distributed map ×{concurrency}"),
        }
    }
}

/// What bounds phase two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    UserList,
    UserRead,
    /// Calls in flight: partitions at once (or children) × latency.
    InFlight,
    /// Not one call fits in a run (or a child needs longer than a run): the pass never ends.
    RunTooShort,
}

impl Limit {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::UserList => "UserList quota",
            Self::UserRead => "UserRead quota",
            Self::InFlight => "calls in flight",
            Self::RunTooShort => "no run makes progress",
        }
    }
}

/// One Lambda invocation: when it started and ended, seconds from the pass's start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) start: f64,
    pub(crate) end: f64,
}

/// A pass, simulated.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub(crate) completes: bool,
    /// From the first run's start to the last run's end.
    pub(crate) wall_s: f64,
    pub(crate) runs: Vec<Run>,
    pub(crate) list_calls: u64,
    /// Calls made again: AdminGetUser calls of candidates confirmed again
    /// after a run stopped among them (ListUsers calls are never made again:
    /// a partition keeps its place between runs).
    pub(crate) wasted_calls: u64,
    pub(crate) get_calls: u64,
    pub(crate) erased: u64,
    pub(crate) partitions: u64,
    /// Phase one's wall time (start to snapshot written), then phase two's.
    pub(crate) scan_s: f64,
    pub(crate) cognito_s: f64,
    pub(crate) transitions: f64,
    pub(crate) binding: Limit,
}

impl Outcome {
    pub(crate) fn lambda_s(&self) -> f64 {
        self.runs.iter().map(|r| r.end - r.start).sum()
    }

    pub(crate) fn usd(&self, p: &Params) -> f64 {
        self.lambda_s() * p.memory_gb * LAMBDA_USD_PER_GB_S + self.transitions * SFN_USD_PER_TRANSITION
    }

    /// The average share of the UserList and UserRead quotas phase two used.
    pub(crate) fn quota_used(&self, p: &Params) -> (f64, f64) {
        if self.cognito_s <= 0.0 {
            return (0.0, 0.0);
        }
        (
            self.list_calls as f64 / self.cognito_s / p.user_list_rps,
            self.get_calls as f64 / self.cognito_s / p.user_read_rps,
        )
    }
}

/// The prefix length of phase two: the fewest hex digits that bring a partition
/// to `target` users, at most `max` (as the function cuts it).
fn prefix_digits(users: u64, target: u64, max: u32) -> u32 {
    let (mut digits, mut per) = (0, users);
    while digits < max && per > target {
        per /= 16;
        digits += 1;
    }
    digits
}

/// Users of each partition, the remainder spread over the first ones.
fn partition_sizes(users: u64, digits: u32) -> Vec<u64> {
    let count = 16u64.pow(digits);
    (0..count)
        .map(|i| users / count + u64::from(i < users % count))
        .collect()
}

/// A pace of calls with no burst: one every 1/rate seconds, as the function's.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    interval: f64,
    next: f64,
}

impl Bucket {
    fn new(rate: f64, at: f64) -> Self {
        Self {
            interval: 1.0 / rate.max(1e-9),
            next: at,
        }
    }

    /// When a call ready at `ready` may start.
    fn slot(&self, ready: f64) -> f64 {
        self.next.max(ready)
    }

    fn take(&mut self, start: f64) {
        self.next = start + self.interval;
    }
}

/// Phase one's progress, carried from run to run.
struct Scan {
    pages_left: Vec<u64>,
    page_s: f64,
    /// Flushing the buffered partial chunks, at the end or at a deadline.
    flush_s: f64,
}

impl Scan {
    fn new(p: &Params) -> Self {
        let segments = p.scan_segments.max(1);
        let table_bytes = p.users as f64 * p.bytes_per_user;
        let page_bytes = p
            .scan_page_bytes
            .min(p.scan_page_items * p.bytes_per_user / p.items_per_user);
        let pages = (table_bytes / page_bytes).ceil() as u64;
        let segment_rate = p
            .scan_segment_bytes_per_s
            .min(p.partition_rru_per_s * BYTES_PER_RRU)
            .min(p.table_rru_per_s * BYTES_PER_RRU / segments as f64);
        // A page's subs fill this much of a chunk; the chunk's write is shared out.
        let chunk_share = page_bytes / p.bytes_per_user / p.chunk_subs;
        Self {
            pages_left: (0..segments)
                .map(|i| pages / segments + u64::from(i < pages % segments))
                .collect(),
            page_s: p.scan_request_s + page_bytes / segment_rate + chunk_share * p.chunk_write_s,
            flush_s: 256.0 / segments as f64 * p.write_s,
        }
    }

    fn done(&self) -> bool {
        self.pages_left.iter().all(|&n| n == 0)
    }

    /// Scans from `now` until done or `deadline`; answers when the run's scan
    /// work (flush included) ends.
    fn run(&mut self, now: f64, deadline: f64) -> f64 {
        let mut end = now;
        for left in &mut self.pages_left {
            let room = ((deadline - self.flush_s - now) / self.page_s).floor().max(0.0) as u64;
            let n = (*left).min(room);
            *left -= n;
            end = end.max(now + n as f64 * self.page_s);
        }
        end + self.flush_s
    }
}

/// Where one partition slot stands within a run.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Idle,
    /// Listing partition `part`, `left` calls to go.
    Listing {
        part: usize,
        left: u64,
    },
    /// Confirming `part`'s candidates: `gone` deleted users, `present` created ones.
    Confirming {
        part: usize,
        gone: u64,
        present: u64,
    },
    Stopped,
}

/// Totals of phase two across runs.
#[derive(Default)]
struct Tally {
    list_calls: u64,
    get_calls: u64,
    erased: u64,
    /// AdminGetUser calls of candidates confirmed again: a run that stops
    /// while confirming a partition's candidates confirms them all next time.
    wasted: u64,
}

struct Partitions {
    sizes: Vec<u64>,
    /// The checkpoint: the lowest partition not yet complete.
    next: usize,
    /// ListUsers calls each partition has made so far: its progress, kept
    /// between runs, so a partition cut short goes on where it stopped.
    listed: Vec<u64>,
    /// Partitions finished (above the checkpoint too, finished by a run that
    /// stopped inside a lower one).
    done: Vec<bool>,
}

impl Partitions {
    fn new(sizes: Vec<u64>) -> Self {
        let n = sizes.len();
        Self {
            sizes,
            next: 0,
            listed: vec![0; n],
            done: vec![false; n],
        }
    }

    fn calls(&self, p: &Params, part: usize) -> u64 {
        self.sizes[part].div_ceil(p.list_page).max(1)
    }

    /// Loading a partition: its snapshot chunks, and its progress (one small read).
    fn load_s(&self, p: &Params, part: usize) -> f64 {
        (self.sizes[part] as f64 * p.sub_bytes / MB).ceil().max(1.0) * p.chunk_page_s + p.write_s
    }

    /// How far the pass is: calls made and partitions done.
    fn progress(&self) -> (u64, usize) {
        (self.listed.iter().sum(), self.done.iter().filter(|d| **d).count())
    }
}

/// One run of phase two from `now` to at most `deadline`, P partitions at once
/// from the checkpoint; answers when its last call ended. A partition cut
/// short keeps its progress (its ListUsers calls), and one finished above a
/// lower one cut short stays finished: nothing listed is listed again. Only
/// the candidates of a partition cut while they were being confirmed are
/// confirmed again.
fn list_run(p: &Params, parts: &mut Partitions, tally: &mut Tally, now: f64, deadline: f64) -> f64 {
    let slots = p.partitions_at_once.max(1);
    let mut ready = vec![now; slots];
    let mut stage = vec![Stage::Idle; slots];
    // Slots by when they are ready, ties to the lowest slot. Times are never
    // negative, so their bits order as they do.
    let mut queue: BinaryHeap<Reverse<(u64, usize)>> = (0..slots).map(|s| Reverse((now.to_bits(), s))).collect();
    let mut list = Bucket::new(p.user_list_rps * p.quota_share, now);
    let mut read = Bucket::new(p.user_read_rps * p.quota_share, now);
    let mut issued = parts.next;
    let mut end = now;
    let mut confirmed = vec![0u64; parts.sizes.len()];
    // Erasures of a partition cut while confirming are done again next run,
    // finding the users erased already: counted once, when it finishes.
    let mut erased = vec![0u64; parts.sizes.len()];
    while let Some(Reverse((_, s))) = queue.pop() {
        let at = ready[s];
        match stage[s] {
            Stage::Idle => {
                while issued < parts.sizes.len() && parts.done[issued] {
                    issued += 1;
                }
                if issued >= parts.sizes.len() {
                    stage[s] = Stage::Stopped;
                    continue;
                }
                let part = issued;
                let loaded = at + parts.load_s(p, part);
                if loaded > deadline {
                    stage[s] = Stage::Stopped;
                    continue;
                }
                issued += 1;
                ready[s] = loaded;
                end = end.max(loaded);
                stage[s] = Stage::Listing {
                    part,
                    left: parts.calls(p, part).saturating_sub(parts.listed[part]),
                };
            }
            Stage::Listing { part, left: 0 } => {
                let gone = (parts.sizes[part] as f64 * p.deleted_share).round() as u64;
                let present = (p.created_per_s * at / parts.sizes.len() as f64).round() as u64;
                stage[s] = Stage::Confirming { part, gone, present };
            }
            Stage::Listing { part, left } => {
                let start = list.slot(at);
                if start + p.list_latency_s > deadline {
                    stage[s] = Stage::Stopped;
                    continue;
                }
                list.take(start);
                tally.list_calls += 1;
                parts.listed[part] += 1;
                ready[s] = start + p.list_latency_s;
                end = end.max(ready[s]);
                stage[s] = Stage::Listing { part, left: left - 1 };
            }
            Stage::Confirming {
                part,
                gone: 0,
                present: 0,
            } => {
                // The partition's progress, written finished.
                if at + p.write_s > deadline {
                    tally.wasted += confirmed[part];
                    stage[s] = Stage::Stopped;
                    continue;
                }
                ready[s] = at + p.write_s;
                end = end.max(ready[s]);
                parts.done[part] = true;
                tally.erased += erased[part];
                stage[s] = Stage::Idle;
            }
            Stage::Confirming { part, gone, present } => {
                let took = p.get_latency_s + if gone > 0 { p.erase_latency_s } else { 0.0 };
                let start = read.slot(at);
                if start + took > deadline {
                    tally.wasted += confirmed[part];
                    stage[s] = Stage::Stopped;
                    continue;
                }
                read.take(start);
                tally.get_calls += 1;
                confirmed[part] += 1;
                ready[s] = start + took;
                end = end.max(ready[s]);
                stage[s] = if gone > 0 {
                    erased[part] += 1;
                    Stage::Confirming {
                        part,
                        gone: gone - 1,
                        present,
                    }
                } else {
                    Stage::Confirming {
                        part,
                        gone,
                        present: present - 1,
                    }
                };
            }
            Stage::Stopped => {}
        }
        if !matches!(stage[s], Stage::Stopped) {
            queue.push(Reverse((ready[s].to_bits(), s)));
        }
    }
    parts.next = (parts.next..parts.sizes.len())
        .find(|&i| !parts.done[i])
        .unwrap_or(parts.sizes.len());
    end
}

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
         (`tools/bench/src/reconcile_sim.rs`; the model in docs/scale.md): wall time from the first \
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
