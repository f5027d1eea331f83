//! What the bench's sections gathered for the report, as each hands it over,
//! and the lookups the goals and the charts make in it.

use std::path::PathBuf;

use crate::emf::MetricsRow;
use crate::hashes::HashRow;
use crate::plan::Plan;
use crate::requests::RequestRow;
use crate::scale::ScaleRow;
use crate::sizes::SizeRow;
use crate::stats::{Sample, millis};

pub(super) struct Cold {
    pub(super) transport: &'static str,
    pub(super) program: String,
    pub(super) init: Sample,
    pub(super) first: Sample,
    pub(super) total: Sample,
}

pub(super) struct Warm {
    pub(super) operation: &'static str,
    pub(super) who: String,
    pub(super) times: Sample,
}

pub(super) struct Memory {
    pub(super) program: String,
    pub(super) peak_kib: Option<u64>,
    pub(super) rss_at_100_kib: Option<u64>,
    pub(super) rss_end_kib: Option<u64>,
}

pub(crate) struct Report {
    pub(super) out: PathBuf,
    pub(super) smoke: bool,
    pub(super) spawns: usize,
    pub(super) warm_rounds: usize,
    pub(super) cold: Vec<Cold>,
    pub(super) warm: Vec<Warm>,
    pub(super) memory: Vec<Memory>,
    /// Per program: instructions per warm invocation and per cold start over
    /// TLS, and the CPU time (ms) of a cold start.
    pub(super) instructions: Vec<(String, u64, u64, f64)>,
    pub(super) requests: Vec<RequestRow>,
    /// The migration's paths beside the success paths.
    pub(super) requests_beside: Vec<RequestRow>,
    pub(super) scale: Vec<ScaleRow>,
    /// The legacy password checks and migrate-user invocations.
    pub(super) hashes: Vec<HashRow>,
    pub(super) sizes: Vec<SizeRow>,
    pub(super) metrics: Vec<MetricsRow>,
    /// (metric × function pairs that can occur, all pairs).
    pub(super) metric_pairs: (usize, usize),
    /// The simulated reconcile pass, as Markdown (empty when not run).
    pub(super) reconcile: String,
    pub(super) events: String,
    /// Every function at each memory size's CPU share, and the sizes chosen,
    /// as Markdown (empty when not run).
    pub(super) tuning: String,
    /// The cost model's section, as Markdown (empty when not run).
    pub(super) cost: String,
}

/// Bytes in MB, as the tables and goals print them.
pub(super) fn mb(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1_000_000.0)
}

/// KiB (as /proc reports memory) in MB, "?" when not read.
pub(super) fn kib_mb(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".to_owned(), |k| format!("{:.1}", k as f64 * 1024.0 / 1_000_000.0))
}

impl Report {
    pub(crate) fn new(plan: &Plan) -> Self {
        Self {
            out: plan.out.clone(),
            smoke: plan.smoke,
            spawns: plan.spawns,
            warm_rounds: plan.warm,
            cold: Vec::new(),
            warm: Vec::new(),
            memory: Vec::new(),
            instructions: Vec::new(),
            requests: Vec::new(),
            requests_beside: Vec::new(),
            scale: Vec::new(),
            hashes: Vec::new(),
            sizes: Vec::new(),
            metrics: Vec::new(),
            metric_pairs: (0, 0),
            reconcile: String::new(),
            events: String::new(),
            tuning: String::new(),
            cost: String::new(),
        }
    }

    pub(crate) fn cold(&mut self, transport: &'static str, program: &str, init: Sample, first: Sample, total: Sample) {
        self.cold.push(Cold {
            transport,
            program: program.to_owned(),
            init,
            first,
            total,
        });
    }

    pub(crate) fn warm(&mut self, operation: &'static str, who: &str, times: Sample) {
        self.warm.push(Warm {
            operation,
            who: who.to_owned(),
            times,
        });
    }

    pub(crate) fn memory(
        &mut self,
        program: &str,
        peak_kib: Option<u64>,
        rss_at_100_kib: Option<u64>,
        rss_end_kib: Option<u64>,
    ) {
        self.memory.push(Memory {
            program: program.to_owned(),
            peak_kib,
            rss_at_100_kib,
            rss_end_kib,
        });
    }

    pub(crate) fn instructions(
        &mut self,
        program: &str,
        per_warm_invocation: u64,
        per_cold_start: u64,
        cold_cpu_ms: f64,
    ) {
        self.instructions
            .push((program.to_owned(), per_warm_invocation, per_cold_start, cold_cpu_ms));
    }

    pub(crate) fn requests(&mut self, rows: Vec<RequestRow>, beside: Vec<RequestRow>) {
        self.requests = rows;
        self.requests_beside = beside;
    }

    pub(crate) fn scale(&mut self, rows: Vec<ScaleRow>) {
        self.scale = rows;
    }

    pub(crate) fn hashes(&mut self, rows: Vec<HashRow>) {
        self.hashes = rows;
    }

    pub(crate) fn metrics(&mut self, rows: Vec<MetricsRow>, pairs: (usize, usize)) {
        self.metrics = rows;
        self.metric_pairs = pairs;
    }

    pub(crate) fn events(&mut self, section: String) {
        self.events = section;
    }

    pub(crate) fn tuning(&mut self, section: String) {
        self.tuning = format!("## Memory per function\n\n{section}\n");
    }

    pub(crate) fn reconcile(&mut self, section: String) {
        self.reconcile = section;
    }

    pub(crate) fn cost(&mut self, section: String) {
        self.cost = section;
    }

    /// What the cost model takes from this run: the requests section's rows
    /// (and the migration's beside them), the warm p50s of one GetItem and of
    /// the add + remove cycle, and the legacy password checks' p50s.
    pub(crate) fn cost_inputs(&self) -> crate::cost::Inputs<'_> {
        let hash_ms = crate::hashes::p50s(&self.hashes, self.smoke);
        if self.requests.is_empty() && self.warm.is_empty() && hash_ms.is_empty() {
            return crate::cost::Inputs::Committed;
        }
        // A smoke's debug binaries are no measure of time: units only.
        let p50 = |operation: &str, who: &str| {
            (!self.smoke)
                .then(|| self.warm_of(operation, who).map(|s| millis(s.p50())))
                .flatten()
        };
        crate::cost::Inputs::Run {
            rows: &self.requests,
            beside: &self.requests_beside,
            get_profile_ms: p50("get-profile", "get-profile"),
            add_remove_ms: p50("add+remove email", "add-email + remove-email"),
            hash_ms,
        }
    }

    pub(crate) fn sizes(&mut self, rows: Vec<SizeRow>) {
        self.sizes = rows;
    }

    pub(super) fn cold_of(&self, transport: &str, program: &str) -> Option<&Cold> {
        self.cold
            .iter()
            .find(|c| c.transport == transport && c.program == program)
    }

    pub(super) fn warm_of(&self, operation: &str, who: &str) -> Option<&Sample> {
        self.warm
            .iter()
            .find(|w| w.operation == operation && w.who == who)
            .map(|w| &w.times)
    }

    pub(super) fn peak_of(&self, program: &str) -> Option<u64> {
        self.memory
            .iter()
            .find(|m| m.program == program)
            .and_then(|m| m.peak_kib)
    }
}
