//! What a simulated pass answers: how its runs followed each other (the
//! driver), what bound it, its runs, its calls, and what it cost.

use super::params::{LAMBDA_USD_PER_GB_S, Params, SFN_USD_PER_TRANSITION};

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
