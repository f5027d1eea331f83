//! What the service consumes a month at a given size: the users' profile
//! (active share, what each does), and from it each function's invocations and
//! billed milliseconds, the domain events, the stream consumer's Cognito calls
//! and the traces X-Ray records.

use super::measured::{FunctionInput, Measured};
use super::stack::Stack;

/// The sizes the report prices.
pub(crate) const SIZES: [f64; 4] = [10_000.0, 100_000.0, 1_000_000.0, 10_000_000.0];

/// AWS bills a month as 730 hours.
pub(super) const HOURS_PER_MONTH: f64 = 730.0;
pub(super) const SECONDS_PER_MONTH: f64 = HOURS_PER_MONTH * 3600.0;
pub(super) const DAYS_PER_MONTH: f64 = HOURS_PER_MONTH / 24.0;
/// AWS's GB in storage and ingestion prices.
pub(super) const GB: f64 = 1_073_741_824.0;

/// What users do. Rates per monthly active user (MAU) a month, unless the
/// name says per user (every registered user, active or not).
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    /// Registered users active in a month: Cognito bills these.
    pub(crate) mau_share: f64,
    pub(crate) sign_ins: f64,
    /// Token refreshes: no function runs, but CloudTrail logs them.
    pub(crate) token_refreshes: f64,
    pub(crate) profile_reads: f64,
    pub(crate) account_reads: f64,
    pub(crate) email_lists: f64,
    pub(crate) email_reads: f64,
    pub(crate) profile_edits: f64,
    pub(crate) address_checks: f64,
    /// Exports of one's own account (GET /me/export).
    pub(crate) exports: f64,
    pub(crate) address_adds: f64,
    pub(crate) resends: f64,
    /// Code entries, wrong ones included.
    pub(crate) verifications: f64,
    pub(crate) primary_switches: f64,
    pub(crate) removals: f64,
    /// Cognito's own mail (forgotten passwords), sent through SES.
    pub(crate) password_resets: f64,
    pub(crate) sign_ups_per_user: f64,
    pub(crate) deletions_per_user: f64,
    /// Users who delete themselves in Cognito: the sweep erases their profile.
    pub(crate) cognito_deletions_per_user: f64,
    pub(crate) admin_lookups_per_user: f64,
    pub(crate) admin_status_changes_per_user: f64,
    pub(crate) addresses_per_user: f64,
    /// Wrong legacy passwords per migrated user at their first sign-in: each
    /// one a check, the reads and the count written.
    pub(crate) migration_wrong_passwords_per_user: f64,
    /// Table bytes a user holds (profile, address records, claims, counters),
    /// DynamoDB's 100 bytes of overhead per item included.
    pub(crate) table_bytes_per_user: f64,
    pub(crate) gsi1_bytes_per_user: f64,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            mau_share: 0.4,
            sign_ins: 6.0,
            token_refreshes: 30.0,
            profile_reads: 20.0,
            account_reads: 4.0,
            email_lists: 1.0,
            email_reads: 0.5,
            profile_edits: 0.5,
            address_checks: 0.2,
            exports: 0.01,
            address_adds: 0.1,
            resends: 0.03,
            verifications: 0.12,
            primary_switches: 0.03,
            removals: 0.03,
            password_resets: 0.02,
            sign_ups_per_user: 0.02,
            deletions_per_user: 0.005,
            cognito_deletions_per_user: 0.001,
            admin_lookups_per_user: 0.001,
            admin_status_changes_per_user: 0.0002,
            addresses_per_user: 1.3,
            migration_wrong_passwords_per_user: 0.1,
            table_bytes_per_user: 1_200.0,
            gsi1_bytes_per_user: 150.0,
        }
    }
}

/// Invocations of a function a month.
pub(super) fn invocations(name: &str, p: &Profile, users: f64) -> f64 {
    let mau = users * p.mau_share;
    match name {
        "get-profile" => mau * p.profile_reads,
        "get-account" => mau * p.account_reads,
        "list-emails" => mau * p.email_lists,
        "get-email" => mau * p.email_reads,
        "update-profile" => mau * p.profile_edits,
        "check-email" => mau * p.address_checks,
        "export-account" => mau * p.exports,
        "add-email" => mau * p.address_adds,
        "send-verification" => mau * p.resends,
        "verify-email" => mau * p.verifications,
        "set-primary-email" => mau * p.primary_switches,
        "remove-email" => mau * p.removals,
        "post-authentication" => mau * p.sign_ins,
        "delete-account" => users * p.deletions_per_user,
        "find-user-by-email" => users * p.admin_lookups_per_user,
        "set-user-status" => users * p.admin_status_changes_per_user,
        "pre-sign-up" | "post-confirmation" => users * p.sign_ups_per_user,
        // Pending users' first sign-ins only: a one-off, priced by `migration`.
        "migrate-user" => 0.0,
        // Every profile MODIFY passes the stream filter; the consumer compares.
        "sync-cognito-email" => {
            mau * (p.profile_edits + p.address_adds + p.removals + p.primary_switches)
                + users * (p.deletions_per_user + p.admin_status_changes_per_user)
        }
        // Every change of a profile or an email record, one invocation each
        // at worst (batches of up to 10 make fewer).
        "publish-events" => {
            mau * (p.profile_edits + p.address_adds + p.verifications + p.primary_switches + p.removals)
                + users * (2.0 * p.sign_ups_per_user + p.deletions_per_user + p.admin_status_changes_per_user)
        }
        // Priced in the sweep's own line.
        _ => 0.0,
    }
}

/// Domain events put on the bus a month: one per change, two per sign-up
/// (the user and the address) and per deletion (the user and, at least, an address).
pub(super) fn domain_events(p: &Profile, users: f64) -> f64 {
    users * p.mau_share * (p.profile_edits + p.address_adds + p.verifications + p.primary_switches + p.removals)
        + users * 2.0 * (p.sign_ups_per_user + p.deletions_per_user)
        + users * p.admin_status_changes_per_user
}

/// Cognito calls of the stream consumer a month: the primary moves (the
/// attribute and the old primary's notice), deletions and status changes.
pub(super) fn sync_external_calls(p: &Profile, users: f64) -> f64 {
    users * p.mau_share * p.primary_switches * 2.0 + users * (p.deletions_per_user + p.admin_status_changes_per_user)
}

/// Milliseconds Lambda bills for one invocation (rounded up to 1 ms).
pub(super) fn billed_ms(f: &FunctionInput, m: &Measured, s: &Stack) -> f64 {
    let ms =
        f.requests * m.ms_per_request + f.transactions * m.ms_per_transaction + f.external_calls * s.external_call_ms;
    ms.ceil().max(1.0)
}

/// Traces X-Ray records for `n` requests of one function a month.
pub(super) fn traces(n: f64, s: &Stack) -> f64 {
    let reservoir = s.xray_reservoir_per_second * SECONDS_PER_MONTH;
    let kept = n.min(reservoir);
    kept + (n - kept) * s.xray_rate
}
