//! The one-off cost of migrating a pool at sign-in: migrate-user checking
//! each pending user's legacy password once (after some wrong ones), and
//! post-authentication moving the account. No monthly traffic, so priced apart
//! from the month.

use super::measured::Measured;
use super::prices::Prices;
use super::stack::{Stack, gb_second};
use super::usage::{DAYS_PER_MONTH, GB, Profile};

/// What migrating a pool at sign-in costs once, for one hash format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MigrationCost {
    /// migrate-user: its requests and GB-seconds at its own memory.
    pub(crate) trigger_lambda: f64,
    /// post-authentication moving each account to its new sub.
    pub(crate) adoption_lambda: f64,
    /// On-demand units: the trigger's reads, the wrong passwords' counts, the moves.
    pub(crate) dynamodb: f64,
    pub(crate) logs: f64,
    pub(crate) xray: f64,
}

impl MigrationCost {
    pub(crate) fn total(&self) -> f64 {
        self.trigger_lambda + self.adoption_lambda + self.dynamodb + self.logs + self.xray
    }
}

/// The one-off migration of `users` pending users whose legacy check takes
/// `hash_ms`: each signs in once with their password (after
/// `migration_wrong_passwords_per_user` wrong ones), and post-authentication
/// moves their account. An upper bound: users who never come back cost
/// nothing, and a forgot-password skips the check. Cognito is not here: a
/// migrated user is an active user of the month they sign in, as any other.
pub(crate) fn migration(
    users: f64,
    hash_ms: f64,
    p: &Profile,
    s: &Stack,
    m: &Measured,
    prices: &Prices,
) -> MigrationCost {
    let per_gb_s = gb_second(s, prices);
    let fee = prices.get("lambda_requests") / 1e6;
    let function = |name: &str| m.functions.iter().find(|f| f.name == name);
    let gb_of = |name: &str| function(name).and_then(|f| f.memory_mb).unwrap_or(s.memory_mb) / 1024.0;
    let (trigger_rcu, trigger_requests) = function("migrate-user").map_or((0.0, 0.0), |f| (f.rcu, f.requests));
    let wrong = &m.migration.wrong_password;
    let adoption = &m.migration.adoption;
    let wrongs = users * p.migration_wrong_passwords_per_user;
    // Init billed on the share of invocations that start cold, as in the month.
    let init_ms = m.init_ms.ceil() * s.cold_start_share;
    let right_ms = (trigger_requests * m.ms_per_request + hash_ms).ceil() + init_ms;
    let wrong_ms =
        (wrong.requests * m.ms_per_request + wrong.transactions * m.ms_per_transaction + hash_ms).ceil() + init_ms;
    let trigger_lambda =
        (users + wrongs) * fee + (users * right_ms + wrongs * wrong_ms) / 1000.0 * gb_of("migrate-user") * per_gb_s;
    let adopt_ms =
        (adoption.requests * m.ms_per_request + adoption.transactions * m.ms_per_transaction).ceil() + init_ms;
    let adoption_lambda = users * (fee + adopt_ms / 1000.0 * gb_of("post-authentication") * per_gb_s);
    let rru = prices.get("dynamodb_read_request_units") / 1e6;
    let wru = prices.get("dynamodb_write_request_units") / 1e6;
    let dynamodb = (users * (trigger_rcu + adoption.rcu) + wrongs * wrong.rcu) * rru
        + (users * (adoption.wcu + adoption.gsi1_wcu) + wrongs * (wrong.wcu + wrong.gsi1_wcu)) * wru;
    // Every invocation logs its line and counts a metric (MigrationsStarted,
    // WrongLegacyPasswords, UsersMigrated).
    let invocations = 2.0 * users + wrongs;
    let log_gb = invocations * (s.log_line_bytes + s.emf_bytes) / GB;
    let logs = log_gb * prices.get("cloudwatch_logs_ingestion_gb")
        + log_gb
            * s.log_compression
            * (s.log_retention_days / DAYS_PER_MONTH)
            * prices.get("cloudwatch_logs_storage_gb_month");
    // Past X-Ray's reservoir (a request a second), its rate.
    let xray = invocations * s.xray_rate * prices.get("xray_traces_recorded") / 1e6;
    MigrationCost {
        trigger_lambda,
        adoption_lambda,
        dynamodb,
        logs,
        xray,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::measured::{FunctionInput, MigrationInput, PathInput};
    use crate::cost::prices::book;
    use crate::cost::usage::invocations;

    /// One million pending users migrated, priced by hand.
    #[test]
    fn a_hand_computed_migration() {
        let (prices, mut measured) = book();
        let function = |name: &str, rcu: f64, requests: f64, memory_mb: Option<f64>| FunctionInput {
            name: name.to_owned(),
            rcu,
            wcu: 0.0,
            gsi1_wcu: 0.0,
            requests,
            transactions: 0.0,
            external_calls: 0.0,
            emf: true,
            http: false,
            reads_key: false,
            memory_mb,
            billed: None,
        };
        measured.functions = vec![
            function("migrate-user", 3.0, 3.0, Some(1769.0)),
            function("post-authentication", 1.0, 1.0, Some(256.0)),
        ];
        measured.migration = MigrationInput {
            wrong_password: PathInput {
                rcu: 3.0,
                wcu: 2.0,
                gsi1_wcu: 0.0,
                requests: 3.0,
                transactions: 1.0,
            },
            adoption: PathInput {
                rcu: 4.0,
                wcu: 12.0,
                gsi1_wcu: 2.0,
                requests: 4.0,
                transactions: 2.0,
            },
            hash_ms: vec![("bcrypt cost 12".to_owned(), 250.0)],
        };
        measured.ms_per_request = 2.0;
        measured.ms_per_transaction = 8.0;
        let profile = Profile {
            migration_wrong_passwords_per_user: 0.1,
            ..Profile::default()
        };
        let stack = Stack {
            cold_start_share: 0.0,
            log_line_bytes: 0.0,
            emf_bytes: 0.0,
            xray_rate: 0.0,
            ..Stack::default()
        };
        let c = migration(1_000_000.0, 250.0, &profile, &stack, &measured, &prices);
        // migrate-user: 1.1M invocations × $0.20 / 1M = $0.22. The right
        // password bills ceil(3 × 2 + 250) = 256 ms, a wrong one ceil(3 × 2 + 8
        // + 250) = 264 ms: 1M × 0.256 s + 100,000 × 0.264 s = 282,400 s at
        // 1,769 MB (1.7275390625 GB) × $0.0000133334 = $6.50479294.
        assert!((c.trigger_lambda - 6.724_792_940_468_75).abs() < 1e-9, "{c:?}");
        // post-authentication: ceil(4 × 2 + 2 × 8) = 24 ms at 256 MB: 24,000 s ×
        // 0.25 GB × $0.0000133334 = $0.0800004, and 1M requests $0.20.
        assert!((c.adoption_lambda - 0.280_000_4).abs() < 1e-9, "{c:?}");
        // Reads: 1M × (3 + 4) + 100,000 × 3 = 7.3M RRU × $0.125 / 1M = $0.9125;
        // writes: 1M × (12 + 2) + 100,000 × 2 = 14.2M WRU × $0.625 / 1M = $8.875.
        assert!((c.dynamodb - (0.9125 + 8.875)).abs() < 1e-9, "{c:?}");
        assert_eq!((c.logs, c.xray), (0.0, 0.0));
        assert!((c.total() - (6.724_792_940_468_75 + 0.280_000_4 + 9.7875)).abs() < 1e-9);
        // The monthly bill has no migration in it.
        assert_eq!(invocations("migrate-user", &profile, 1_000_000.0), 0.0);
    }
}
