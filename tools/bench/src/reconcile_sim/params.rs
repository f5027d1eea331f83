//! Everything the simulation assumes, with the defaults of reconcile-users'
//! configuration, and the prices and sizes it counts in.

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
    /// Memory of the function (reconcile-users' in the catalog), for GB-s.
    pub(crate) memory_gb: f64,
}

/// Lambda arm64 duration, us-east-1, per GB-second.
pub(super) const LAMBDA_USD_PER_GB_S: f64 = 0.000_013_333_4;
/// Step Functions standard workflows, per state transition ($0.025 per 1,000).
pub(super) const SFN_USD_PER_TRANSITION: f64 = 0.025 / 1000.0;
pub(super) const MB: f64 = 1_048_576.0;
/// An eventually consistent read unit covers 8 KB (half a unit per 4 KB).
pub(super) const BYTES_PER_RRU: f64 = 8_192.0;

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
            memory_gb: f64::from(user_service::catalog::RECONCILE_USERS.memory_mb) / 1024.0,
        }
    }
}
