//! How the reconcile pass runs, and the Cognito quotas it shares with the sign-in path.

use super::{
    COGNITO_USER_LIST_RPS, COGNITO_USER_READ_RPS, COGNITO_USER_UPDATE_RPS, ConfigError, RECONCILE_INTERVAL_HOURS,
    RECONCILE_PARTITIONS_AT_ONCE, RECONCILE_QUOTA_SHARE_PERCENT, RECONCILE_SCAN_SEGMENTS, override_number,
};

/// How the reconcile pass runs, and the quotas it shares with the sign-in path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconcileConfig {
    /// A pass starts this long after the last one started.
    pub interval_hours: u32,
    /// The share of each Cognito quota category the pass may use, in percent.
    pub quota_share_percent: u32,
    /// The account's UserList quota, requests a second.
    pub user_list_rps: u32,
    /// The account's UserRead quota, requests a second.
    pub user_read_rps: u32,
    /// The account's UserUpdate quota, requests a second.
    pub user_update_rps: u32,
    /// Segments of the parallel scan.
    pub scan_segments: u32,
    /// Partitions listed at once.
    pub partitions_at_once: u32,
    /// ListUsers calls one run may make, if bounded: a run that has made
    /// them stops as if its time were up. No variable sets it: tests do, to
    /// cut runs at a place of their choosing rather than at a machine's speed.
    pub list_calls_per_run: Option<u32>,
}

impl Default for ReconcileConfig {
    fn default() -> Self {
        Self {
            interval_hours: RECONCILE_INTERVAL_HOURS.default_number(),
            quota_share_percent: RECONCILE_QUOTA_SHARE_PERCENT.default_number(),
            user_list_rps: COGNITO_USER_LIST_RPS.default_number(),
            user_read_rps: COGNITO_USER_READ_RPS.default_number(),
            user_update_rps: COGNITO_USER_UPDATE_RPS.default_number(),
            scan_segments: RECONCILE_SCAN_SEGMENTS.default_number(),
            partitions_at_once: RECONCILE_PARTITIONS_AT_ONCE.default_number(),
            list_calls_per_run: None,
        }
    }
}

impl ReconcileConfig {
    /// The settings `lookup` gives, each within its range.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut c = Self::default();
        let set = |target: &mut u32, setting| override_number(&lookup, target, setting);
        set(&mut c.interval_hours, RECONCILE_INTERVAL_HOURS)?;
        set(&mut c.quota_share_percent, RECONCILE_QUOTA_SHARE_PERCENT)?;
        set(&mut c.user_list_rps, COGNITO_USER_LIST_RPS)?;
        set(&mut c.user_read_rps, COGNITO_USER_READ_RPS)?;
        set(&mut c.user_update_rps, COGNITO_USER_UPDATE_RPS)?;
        set(&mut c.scan_segments, RECONCILE_SCAN_SEGMENTS)?;
        set(&mut c.partitions_at_once, RECONCILE_PARTITIONS_AT_ONCE)?;
        Ok(c)
    }
}
