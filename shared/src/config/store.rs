//! What the store needs to know: the table, and the limits it enforces in its writes.

use super::{
    ADDRESS_RECOVERY_DAYS, AVAILABILITY_CHECKS_PER_USER, ConfigError, EXPORTS_PER_USER, INVITATION_TTL_HOURS,
    MAX_EMAILS_PER_USER, MAX_INVITATIONS_PER_ADDRESS, MAX_INVITATIONS_PER_ORGANIZATION, MAX_MEMBERS_PER_ORGANIZATION,
    MAX_ORGANIZATIONS_PER_USER, SCIM_CREATES_PER_ORGANIZATION_PER_DAY, SCIM_CREATES_PER_ORGANIZATION_PER_SECOND,
    SCIM_CREATES_PER_SECOND, TABLE_NAME, VERIFICATION_CODE_TTL_SECONDS, VERIFICATION_MAX_ATTEMPTS,
    VERIFICATION_MAX_CODES_PER_ADDRESS, VERIFICATION_MAX_CODES_PER_USER, VERIFICATION_MAX_CODES_PER_USER_ADDRESS,
    VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS, VERIFICATION_MAX_WRONG_CODES_PER_USER,
    VERIFICATION_RESEND_INTERVAL_SECONDS, VERIFICATION_TTL_SECONDS, override_number, required,
};

const DAY_SECONDS: i64 = 86_400;

/// What the store needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// The table every access pattern uses.
    pub table_name: String,
    /// Addresses per user, primary included.
    pub max_emails_per_user: u32,
    /// Organizations per user.
    pub max_organizations_per_user: u32,
    /// Accounts the SCIM directories make a second, every organization's together.
    pub scim_creates_per_second: u32,
    /// Members one organization may have.
    pub max_members_per_organization: u32,
    /// Accounts one organization's directory makes a second (its share).
    pub scim_creates_per_organization_per_second: u32,
    /// Accounts one organization's directory makes in a UTC day.
    pub scim_creates_per_organization_per_day: u32,
    /// How long an unverified address holds its claim, from when the user first
    /// added it (in the last 24 hours). Resends never extend it.
    pub verification_ttl_seconds: i64,
    /// How long one code is valid.
    pub code_ttl_seconds: i64,
    /// Wrong codes allowed per code.
    pub verification_max_attempts: u32,
    /// Wrong codes allowed per user and address in a rolling 24 hours.
    pub max_wrong_codes_per_address: u32,
    /// Wrong codes allowed per user in a rolling 24 hours.
    pub max_wrong_codes_per_user: u32,
    /// Codes issued per address (adds and resends, by anyone) in a rolling 24
    /// hours, past each requester's first [`CODES_NEVER_CROWDED_OUT`](super::CODES_NEVER_CROWDED_OUT).
    pub max_codes_per_address: u32,
    /// Codes one user may have sent to one address in a rolling 24 hours.
    pub max_codes_per_user_address: u32,
    /// Codes one user may have sent, to any addresses, in a rolling 24 hours.
    pub max_codes_per_user: u32,
    /// A new code for the same address at most this often.
    pub resend_interval_seconds: i64,
    /// Availability checks per user in a rolling 24 hours.
    pub max_availability_checks: u32,
    /// Exports of their own account per user in a rolling 24 hours.
    pub max_exports: u32,
    /// How long the address a switch moved away from can recover the account,
    /// and stays reserved to it.
    pub address_recovery_seconds: i64,
    /// How long an invitation's token works, from its last send.
    pub invitation_ttl_seconds: i64,
    /// Invitations one address may receive a day, from all organizations.
    pub max_invitations_per_address: u32,
    /// Invitations one organization may send a day.
    pub max_invitations_per_organization: u32,
}

impl StoreConfig {
    /// Addresses per user unless configured.
    pub const DEFAULT_MAX_EMAILS: u32 = MAX_EMAILS_PER_USER.default_number();
    /// The most addresses whose deletion fits one 100-item transaction.
    pub const MAX_EMAILS_CAP: u32 = MAX_EMAILS_PER_USER.max_number();
    /// How long an unverified address holds its claim unless configured.
    pub const DEFAULT_TTL_SECONDS: i64 = VERIFICATION_TTL_SECONDS.default_number() as i64;
    /// How long a code is valid unless configured.
    pub const DEFAULT_CODE_TTL_SECONDS: i64 = VERIFICATION_CODE_TTL_SECONDS.default_number() as i64;
    /// Wrong codes per code unless configured.
    pub const DEFAULT_MAX_ATTEMPTS: u32 = VERIFICATION_MAX_ATTEMPTS.default_number();
    /// Wrong codes per user and address a day unless configured.
    pub const DEFAULT_MAX_WRONG_CODES_PER_ADDRESS: u32 = VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS.default_number();
    /// Wrong codes per user a day unless configured.
    pub const DEFAULT_MAX_WRONG_CODES_PER_USER: u32 = VERIFICATION_MAX_WRONG_CODES_PER_USER.default_number();
    /// Codes per address a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_ADDRESS: u32 = VERIFICATION_MAX_CODES_PER_ADDRESS.default_number();
    /// Codes one user may send to one address a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_USER_ADDRESS: u32 = VERIFICATION_MAX_CODES_PER_USER_ADDRESS.default_number();
    /// Codes one user may send a day unless configured.
    pub const DEFAULT_MAX_CODES_PER_USER: u32 = VERIFICATION_MAX_CODES_PER_USER.default_number();
    /// The pause between two codes for one address unless configured.
    pub const RESEND_INTERVAL_SECONDS: i64 = VERIFICATION_RESEND_INTERVAL_SECONDS.default_number() as i64;

    /// The defaults, on `table_name`: what tests and tools start from.
    pub fn new(table_name: impl Into<String>) -> Self {
        Self {
            table_name: table_name.into(),
            max_emails_per_user: Self::DEFAULT_MAX_EMAILS,
            max_organizations_per_user: MAX_ORGANIZATIONS_PER_USER.default_number(),
            scim_creates_per_second: SCIM_CREATES_PER_SECOND.default_number(),
            max_members_per_organization: MAX_MEMBERS_PER_ORGANIZATION.default_number(),
            scim_creates_per_organization_per_second: SCIM_CREATES_PER_ORGANIZATION_PER_SECOND.default_number(),
            scim_creates_per_organization_per_day: SCIM_CREATES_PER_ORGANIZATION_PER_DAY.default_number(),
            verification_ttl_seconds: Self::DEFAULT_TTL_SECONDS,
            code_ttl_seconds: Self::DEFAULT_CODE_TTL_SECONDS,
            verification_max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            max_wrong_codes_per_address: Self::DEFAULT_MAX_WRONG_CODES_PER_ADDRESS,
            max_wrong_codes_per_user: Self::DEFAULT_MAX_WRONG_CODES_PER_USER,
            max_codes_per_address: Self::DEFAULT_MAX_CODES_PER_ADDRESS,
            max_codes_per_user_address: Self::DEFAULT_MAX_CODES_PER_USER_ADDRESS,
            max_codes_per_user: Self::DEFAULT_MAX_CODES_PER_USER,
            resend_interval_seconds: Self::RESEND_INTERVAL_SECONDS,
            max_availability_checks: AVAILABILITY_CHECKS_PER_USER.default_number(),
            max_exports: EXPORTS_PER_USER.default_number(),
            address_recovery_seconds: i64::from(ADDRESS_RECOVERY_DAYS.default_number()) * DAY_SECONDS,
            invitation_ttl_seconds: i64::from(INVITATION_TTL_HOURS.default_number()) * 3_600,
            max_invitations_per_address: MAX_INVITATIONS_PER_ADDRESS.default_number(),
            max_invitations_per_organization: MAX_INVITATIONS_PER_ORGANIZATION.default_number(),
        }
    }

    /// The configuration a function's environment gives.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration `lookup` gives, for tests that set variables without
    /// touching the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let table_name = required(&lookup, TABLE_NAME, "the DynamoDB table name")?;
        let mut c = Self::new(table_name);
        let set = |target: &mut u32, setting| override_number(&lookup, target, setting);
        set(&mut c.max_emails_per_user, MAX_EMAILS_PER_USER)?;
        set(&mut c.max_organizations_per_user, MAX_ORGANIZATIONS_PER_USER)?;
        set(&mut c.scim_creates_per_second, SCIM_CREATES_PER_SECOND)?;
        set(
            &mut c.scim_creates_per_organization_per_second,
            SCIM_CREATES_PER_ORGANIZATION_PER_SECOND,
        )?;
        set(
            &mut c.scim_creates_per_organization_per_day,
            SCIM_CREATES_PER_ORGANIZATION_PER_DAY,
        )?;
        set(&mut c.max_members_per_organization, MAX_MEMBERS_PER_ORGANIZATION)?;
        set(&mut c.verification_max_attempts, VERIFICATION_MAX_ATTEMPTS)?;
        set(
            &mut c.max_wrong_codes_per_address,
            VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS,
        )?;
        set(&mut c.max_wrong_codes_per_user, VERIFICATION_MAX_WRONG_CODES_PER_USER)?;
        set(&mut c.max_codes_per_address, VERIFICATION_MAX_CODES_PER_ADDRESS)?;
        set(
            &mut c.max_codes_per_user_address,
            VERIFICATION_MAX_CODES_PER_USER_ADDRESS,
        )?;
        set(&mut c.max_codes_per_user, VERIFICATION_MAX_CODES_PER_USER)?;
        set(&mut c.max_availability_checks, AVAILABILITY_CHECKS_PER_USER)?;
        set(&mut c.max_exports, EXPORTS_PER_USER)?;
        set(&mut c.max_invitations_per_address, MAX_INVITATIONS_PER_ADDRESS)?;
        set(
            &mut c.max_invitations_per_organization,
            MAX_INVITATIONS_PER_ORGANIZATION,
        )?;
        let mut hours = INVITATION_TTL_HOURS.default_number();
        set(&mut hours, INVITATION_TTL_HOURS)?;
        c.invitation_ttl_seconds = i64::from(hours) * 3_600;
        let set_seconds = |target: &mut i64, setting| override_number(&lookup, target, setting);
        set_seconds(&mut c.verification_ttl_seconds, VERIFICATION_TTL_SECONDS)?;
        set_seconds(&mut c.code_ttl_seconds, VERIFICATION_CODE_TTL_SECONDS)?;
        set_seconds(&mut c.resend_interval_seconds, VERIFICATION_RESEND_INTERVAL_SECONDS)?;
        let mut days = ADDRESS_RECOVERY_DAYS.default_number();
        set(&mut days, ADDRESS_RECOVERY_DAYS)?;
        c.address_recovery_seconds = i64::from(days) * DAY_SECONDS;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::lookup;
    use super::*;

    #[test]
    fn table_name_is_required() {
        assert_eq!(
            StoreConfig::from_lookup(lookup(&[])),
            Err(ConfigError::Missing {
                name: "TABLE_NAME",
                what: "the DynamoDB table name"
            })
        );
        assert!(
            StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "  ")]))
                .unwrap_err()
                .to_string()
                .contains("TABLE_NAME is not set")
        );
    }

    #[test]
    fn defaults_and_overrides() {
        let c = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "users")])).unwrap();
        assert_eq!(c, StoreConfig::new("users"));
        assert_eq!(
            (
                c.max_emails_per_user,
                c.verification_ttl_seconds,
                c.verification_max_attempts
            ),
            (10, 3_600, 5)
        );
        let c = StoreConfig::from_lookup(lookup(&[
            ("TABLE_NAME", "users"),
            ("MAX_EMAILS_PER_USER", "3"),
            ("VERIFICATION_TTL_SECONDS", "600"),
            ("VERIFICATION_MAX_ATTEMPTS", "2"),
        ]))
        .unwrap();
        assert_eq!(
            (
                c.max_emails_per_user,
                c.verification_ttl_seconds,
                c.verification_max_attempts
            ),
            (3, 600, 2)
        );
    }

    #[test]
    fn bad_numbers_are_refused_by_name() {
        let err = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "ten")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 48; got \"ten\""
        );
        let err =
            StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("VERIFICATION_MAX_ATTEMPTS", "0")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "VERIFICATION_MAX_ATTEMPTS is invalid: must be a whole number from 1 to 100; got \"0\""
        );
    }

    #[test]
    fn a_delete_of_the_most_addresses_fits_one_transaction() {
        // The profile, a record and a claim per address, and an admin's delete
        // the acting admin's own profile: at most 100 items.
        const ITEMS: u32 = 1 + StoreConfig::MAX_EMAILS_CAP * 2 + 1;
        const { assert!(ITEMS <= 100) };
        let err = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "49")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 48; got \"49\""
        );
        let c = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "48")])).unwrap();
        assert_eq!(c.max_emails_per_user, 48);
    }
}
