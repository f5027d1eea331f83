//! The reconcile's pass: its schedule, Cognito's quotas, its alarms.

use super::super::setting::{From, Need, Range, Reaches, Setting, Value};

/// A reconcile pass (the table's live profiles against Cognito's users) starts this long after the last one started.
pub const RECONCILE_INTERVAL_HOURS: Setting = Setting {
    variable: Some("RECONCILE_INTERVAL_HOURS"),
    parameter: Some("ReconcileIntervalHours"),
    value: Value::Number(Range {
        default: 24,
        min: 1,
        max: Some(168),
    }),
    about: "A reconcile pass (the table's live profiles against Cognito's users) starts this long after the last one started.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The share of Cognito's UserList (ListUsers) and UserRead (AdminGetUser) quotas the pass may use; the rest is the sign-in path's.
pub const RECONCILE_QUOTA_SHARE_PERCENT: Setting = Setting {
    variable: Some("RECONCILE_QUOTA_SHARE_PERCENT"),
    parameter: Some("ReconcileQuotaSharePercent"),
    value: Value::Number(Range {
        default: 50,
        min: 1,
        max: Some(100),
    }),
    about: "The share of Cognito's UserList (ListUsers) and UserRead (AdminGetUser) quotas the pass may use; the rest is the sign-in path's.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The account's UserRead quota in this region, requests a second (120 unless raised in Service Quotas).
pub const COGNITO_USER_READ_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_READ_RPS"),
    parameter: Some("CognitoUserReadRps"),
    value: Value::Number(Range {
        default: 120,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserRead quota in this region, requests a second (120 unless raised in Service Quotas).",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Parameter),
};

/// The pass-overdue alarm fires when no reconcile pass completed for this many days.
pub const RECONCILE_ALARM_DAYS: Setting = Setting {
    variable: None,
    parameter: Some("ReconcileAlarmDays"),
    value: Value::Number(Range {
        default: 7,
        min: 1,
        max: Some(7),
    }),
    about: "The pass-overdue alarm fires when no reconcile pass completed for this many days.",
    why: &[],
    reaches: Reaches::Stack,
};

/// LegacyPasswordMigration only.
pub const MIGRATION_RESET_ALARM_THRESHOLD: Setting = Setting {
    variable: None,
    parameter: Some("MigrationResetAlarmThreshold"),
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(1_000_000),
    }),
    about: "LegacyPasswordMigration only. The alarm fires when more pending users than this are migrated by a forgot-password in five minutes (anyone who knows an address can start one).",
    why: &[],
    reaches: Reaches::Stack,
};

/// The account's UserList quota.
pub const COGNITO_USER_LIST_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_LIST_RPS"),
    parameter: None,
    value: Value::Number(Range {
        default: 30,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserList quota (ListUsers), requests a second: fixed at 30 by Cognito.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// The account's UserUpdate quota.
pub const COGNITO_USER_UPDATE_RPS: Setting = Setting {
    variable: Some("COGNITO_USER_UPDATE_RPS"),
    parameter: None,
    value: Value::Number(Range {
        default: 25,
        min: 1,
        max: Some(100_000),
    }),
    about: "The account's UserUpdate quota (AdminDeleteUser), requests a second: fixed at 25 by Cognito.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// Segments of the reconcile's parallel scan.
pub const RECONCILE_SCAN_SEGMENTS: Setting = Setting {
    variable: Some("RECONCILE_SCAN_SEGMENTS"),
    parameter: None,
    value: Value::Number(Range {
        default: 4,
        min: 1,
        max: Some(64),
    }),
    about: "The reconcile: segments of the parallel scan of the table.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};

/// Partitions the reconcile lists from Cognito at once.
pub const RECONCILE_PARTITIONS_AT_ONCE: Setting = Setting {
    variable: Some("RECONCILE_PARTITIONS_AT_ONCE"),
    parameter: None,
    value: Value::Number(Range {
        default: 4,
        min: 1,
        max: Some(64),
    }),
    about: "The reconcile: partitions listed from Cognito at once.",
    why: &[],
    reaches: Reaches::Functions(Need::Reconcile, From::Default),
};
