//! The reconcile sweep's month: one pass by the design's arithmetic (or as
//! `reconcile_sim` simulates it at the report's sizes), times the passes a
//! month, and the scheduled runs with nothing to do.

use user_service::{identity, reconcile};

use super::prices::Prices;
use super::stack::{Stack, gb_second};
use super::usage::{DAYS_PER_MONTH, Profile, SECONDS_PER_MONTH, SIZES};

/// The sweep's constants, as the function has them.
const LIST_PAGE: f64 = identity::LIST_USERS_PAGE as f64;
const SUB_BYTES: f64 = reconcile::SUB_BYTES as f64;

/// One pass of reconcile-users and its month.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sweep {
    pub(crate) partitions: f64,
    pub(crate) list_users_calls: f64,
    pub(crate) admin_get_user_calls: f64,
    pub(crate) pass_seconds: f64,
    pub(crate) passes: f64,
    /// DynamoDB units a month: scans, chunks, checkpoints, erasures, leases.
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    pub(crate) lambda_usd: f64,
}

/// The sweep at `users`: one pass by the design's arithmetic, times the
/// passes a month, and the scheduled runs with nothing to do.
pub(crate) fn sweep(users: f64, p: &Profile, s: &Stack, prices: &Prices) -> Sweep {
    // As the function cuts the sub space.
    let partitions = f64::from(reconcile::partition_count(reconcile::prefix_digits(users as u64)));
    let per_partition = users / partitions;
    let list_users_calls = partitions * (per_partition / LIST_PAGE).ceil().max(1.0);
    let passes = DAYS_PER_MONTH * 24.0 / s.sweep_interval_hours;
    let deleted = users * p.cognito_deletions_per_user / passes;
    let list_seconds = list_users_calls / s.list_users_rps;
    // Users signed up while the pass lists Cognito are confirmed, not erased.
    let created = users * p.sign_ups_per_user / SECONDS_PER_MONTH * list_seconds;
    let admin_get_user_calls = deleted + created;
    let mut pass_seconds = list_seconds + admin_get_user_calls / s.admin_get_user_rps;
    let mut list_users_calls = list_users_calls;
    if let Some((_, seconds, calls)) = s.simulated_passes.iter().find(|(u, _, _)| *u == users) {
        pass_seconds = *seconds;
        list_users_calls = *calls;
    }

    let table_bytes = users * p.table_bytes_per_user;
    let scan_rcu = table_bytes / 4096.0 * 0.5;
    let chunk_wcu = users * SUB_BYTES / 1024.0;
    let chunk_rcu = users * SUB_BYTES / 4096.0 * 0.5;
    // One checkpoint per partition and per Scan page (1 MB).
    let checkpoint_wcu = partitions + (table_bytes / 1_048_576.0).ceil();
    let erase_wcu = deleted * 2.0 * (1.0 + 2.0 * p.addresses_per_user);
    // Every listed user's profile, read back (BatchGetItem, eventually
    // consistent) to compare the address Cognito lists with the primary.
    let compare_rcu = users * 0.5;
    let runs = s.sweep_runs_per_day * DAYS_PER_MONTH;
    // Every run takes the lease (a conditional write) and reads the checkpoint.
    let rcu = passes * (scan_rcu + chunk_rcu + compare_rcu) + runs * 0.5;
    let wcu = passes * (chunk_wcu + checkpoint_wcu + erase_wcu) + runs;

    let gb = s.memory_mb / 1024.0;
    let seconds = passes * pass_seconds + runs * s.sweep_idle_ms / 1000.0;
    let lambda_usd = seconds * gb * gb_second(s, prices) + runs * prices.get("lambda_requests") / 1e6;
    Sweep {
        partitions,
        list_users_calls,
        admin_get_user_calls,
        pass_seconds,
        passes,
        rcu,
        wcu,
        lambda_usd,
    }
}

/// The scheduled pass at every size, simulated call by call with this
/// profile's deletions and sign-ups.
pub(super) fn simulated(p: &Profile, s: &Stack) -> Vec<(f64, f64, f64)> {
    use crate::reconcile_sim::{Driver, Params, simulate};
    let passes = DAYS_PER_MONTH * 24.0 / s.sweep_interval_hours;
    SIZES
        .iter()
        .map(|users| {
            let params = Params {
                users: *users as u64,
                deleted_share: p.cognito_deletions_per_user / passes,
                created_per_s: users * p.sign_ups_per_user / SECONDS_PER_MONTH,
                bytes_per_user: p.table_bytes_per_user,
                memory_gb: s.memory_mb / 1024.0,
                ..Params::default()
            };
            let pass = simulate(&params, Driver::Scheduled);
            (*users, pass.lambda_s(), pass.list_calls as f64)
        })
        .collect()
}
