//! The work inside one run: phase one scanning the table into snapshot
//! chunks, phase two listing Cognito's users partition by partition under the
//! quotas' buckets and confirming the candidates; and the state both carry
//! from run to run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::params::{BYTES_PER_RRU, MB, Params};

/// The prefix length of phase two: the fewest hex digits that bring a partition
/// to `target` users, at most `max` (as the function cuts it).
pub(super) fn prefix_digits(users: u64, target: u64, max: u32) -> u32 {
    let (mut digits, mut per) = (0, users);
    while digits < max && per > target {
        per /= 16;
        digits += 1;
    }
    digits
}

/// Users of each partition, the remainder spread over the first ones.
pub(super) fn partition_sizes(users: u64, digits: u32) -> Vec<u64> {
    let count = 16u64.pow(digits);
    (0..count)
        .map(|i| users / count + u64::from(i < users % count))
        .collect()
}

/// A pace of calls with no burst: one every 1/rate seconds, as the function's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bucket {
    interval: f64,
    next: f64,
}

impl Bucket {
    pub(super) fn new(rate: f64, at: f64) -> Self {
        Self {
            interval: 1.0 / rate.max(1e-9),
            next: at,
        }
    }

    /// When a call ready at `ready` may start.
    pub(super) fn slot(&self, ready: f64) -> f64 {
        self.next.max(ready)
    }

    pub(super) fn take(&mut self, start: f64) {
        self.next = start + self.interval;
    }
}

/// Phase one's progress, carried from run to run.
pub(super) struct Scan {
    pages_left: Vec<u64>,
    page_s: f64,
    /// Flushing the buffered partial chunks, at the end or at a deadline.
    flush_s: f64,
}

impl Scan {
    pub(super) fn new(p: &Params) -> Self {
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

    pub(super) fn done(&self) -> bool {
        self.pages_left.iter().all(|&n| n == 0)
    }

    /// Scans from `now` until done or `deadline`; answers when the run's scan
    /// work (flush included) ends.
    pub(super) fn run(&mut self, now: f64, deadline: f64) -> f64 {
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
pub(super) struct Tally {
    pub(super) list_calls: u64,
    pub(super) get_calls: u64,
    pub(super) erased: u64,
    /// AdminGetUser calls of candidates confirmed again: a run that stops
    /// while confirming a partition's candidates confirms them all next time.
    pub(super) wasted: u64,
}

pub(super) struct Partitions {
    pub(super) sizes: Vec<u64>,
    /// The checkpoint: the lowest partition not yet complete.
    pub(super) next: usize,
    /// ListUsers calls each partition has made so far: its progress, kept
    /// between runs, so a partition cut short goes on where it stopped.
    pub(super) listed: Vec<u64>,
    /// Partitions finished (above the checkpoint too, finished by a run that
    /// stopped inside a lower one).
    pub(super) done: Vec<bool>,
}

impl Partitions {
    pub(super) fn new(sizes: Vec<u64>) -> Self {
        let n = sizes.len();
        Self {
            sizes,
            next: 0,
            listed: vec![0; n],
            done: vec![false; n],
        }
    }

    pub(super) fn calls(&self, p: &Params, part: usize) -> u64 {
        self.sizes[part].div_ceil(p.list_page).max(1)
    }

    /// Loading a partition: its snapshot chunks, and its progress (one small read).
    pub(super) fn load_s(&self, p: &Params, part: usize) -> f64 {
        (self.sizes[part] as f64 * p.sub_bytes / MB).ceil().max(1.0) * p.chunk_page_s + p.write_s
    }

    /// How far the pass is: calls made and partitions done.
    pub(super) fn progress(&self) -> (u64, usize) {
        (self.listed.iter().sum(), self.done.iter().filter(|d| **d).count())
    }
}

/// One run of phase two from `now` to at most `deadline`, P partitions at once
/// from the checkpoint; answers when its last call ended. A partition cut
/// short keeps its progress (its ListUsers calls), and one finished above a
/// lower one cut short stays finished: nothing listed is listed again. Only
/// the candidates of a partition cut while they were being confirmed are
/// confirmed again.
pub(super) fn list_run(p: &Params, parts: &mut Partitions, tally: &mut Tally, now: f64, deadline: f64) -> f64 {
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
