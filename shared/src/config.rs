//! Configuration from the environment. Read once at cold start.

use std::time::Duration;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{name} is not set; set it to {what} (see docs/configuration.md)")]
    Missing { name: &'static str, what: &'static str },
    #[error("{name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: String },
    /// What the variable names could not be read (a secret, say).
    #[error("{name} could not be read: {reason}")]
    Unavailable { name: &'static str, reason: String },
}

/// A variable that must be set to something other than blanks; trimmed.
pub fn required(
    lookup: impl Fn(&str) -> Option<String>,
    name: &'static str,
    what: &'static str,
) -> Result<String, ConfigError> {
    optional(lookup, name).ok_or(ConfigError::Missing { name, what })
}

/// A variable's value, trimmed; `None` when it is unset or blank.
pub fn optional(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// What the store needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub table_name: String,
    pub max_emails_per_user: u32,
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
    /// Codes issued per address (adds and resends, by anyone) in a rolling 24 hours.
    pub max_codes_per_address: u32,
    /// A new code for the same address at most this often.
    pub resend_interval_seconds: i64,
}

impl StoreConfig {
    pub const DEFAULT_MAX_EMAILS: u32 = 10;
    /// The most addresses whose deletion fits one 100-item transaction.
    pub const MAX_EMAILS_CAP: u32 = 49;
    pub const DEFAULT_TTL_SECONDS: i64 = 3_600;
    pub const DEFAULT_CODE_TTL_SECONDS: i64 = 900;
    pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
    pub const DEFAULT_MAX_WRONG_CODES_PER_ADDRESS: u32 = 20;
    pub const DEFAULT_MAX_WRONG_CODES_PER_USER: u32 = 100;
    pub const DEFAULT_MAX_CODES_PER_ADDRESS: u32 = 10;
    pub const RESEND_INTERVAL_SECONDS: i64 = 60;

    pub fn new(table_name: impl Into<String>) -> Self {
        Self {
            table_name: table_name.into(),
            max_emails_per_user: Self::DEFAULT_MAX_EMAILS,
            verification_ttl_seconds: Self::DEFAULT_TTL_SECONDS,
            code_ttl_seconds: Self::DEFAULT_CODE_TTL_SECONDS,
            verification_max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            max_wrong_codes_per_address: Self::DEFAULT_MAX_WRONG_CODES_PER_ADDRESS,
            max_wrong_codes_per_user: Self::DEFAULT_MAX_WRONG_CODES_PER_USER,
            max_codes_per_address: Self::DEFAULT_MAX_CODES_PER_ADDRESS,
            resend_interval_seconds: Self::RESEND_INTERVAL_SECONDS,
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let table_name = required(&lookup, "TABLE_NAME", "the DynamoDB table name")?;
        let mut c = Self::new(table_name);
        let set_u32 = |target: &mut u32, name, min, max| override_number(&lookup, target, name, min, max);
        // Deleting a user writes the profile and each address's record and claim in
        // one transaction of at most 100 items: 1 + 2 × 49.
        set_u32(
            &mut c.max_emails_per_user,
            "MAX_EMAILS_PER_USER",
            1,
            Self::MAX_EMAILS_CAP,
        )?;
        set_u32(&mut c.verification_max_attempts, "VERIFICATION_MAX_ATTEMPTS", 1, 100)?;
        set_u32(
            &mut c.max_wrong_codes_per_address,
            "VERIFICATION_MAX_WRONG_CODES_PER_ADDRESS",
            1,
            1_000,
        )?;
        set_u32(
            &mut c.max_wrong_codes_per_user,
            "VERIFICATION_MAX_WRONG_CODES_PER_USER",
            1,
            1_000,
        )?;
        set_u32(
            &mut c.max_codes_per_address,
            "VERIFICATION_MAX_CODES_PER_ADDRESS",
            1,
            1_000,
        )?;
        let set_seconds = |target: &mut i64, name, min, max| override_number(&lookup, target, name, min, max);
        // At most a day: the first add is remembered for 24 hours.
        set_seconds(&mut c.verification_ttl_seconds, "VERIFICATION_TTL_SECONDS", 60, 86_400)?;
        set_seconds(&mut c.code_ttl_seconds, "VERIFICATION_CODE_TTL_SECONDS", 60, 86_400)?;
        set_seconds(
            &mut c.resend_interval_seconds,
            "VERIFICATION_RESEND_INTERVAL_SECONDS",
            1,
            86_400,
        )?;
        Ok(c)
    }
}

/// Timeouts of the DynamoDB client. Attempts are retried by the SDK inside the
/// operation timeout; both stay well inside Cognito's 5 s trigger limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientTimeouts {
    pub connect: Duration,
    pub attempt: Duration,
    pub operation: Duration,
}

impl ClientTimeouts {
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let ms = |name, default| -> Result<Duration, ConfigError> {
            Ok(Duration::from_millis(
                number(&lookup, name, 50, 60_000)?.unwrap_or(default),
            ))
        };
        Ok(Self {
            connect: ms("DYNAMODB_CONNECT_TIMEOUT_MS", 1_000)?,
            attempt: ms("DYNAMODB_ATTEMPT_TIMEOUT_MS", 1_000)?,
            operation: ms("DYNAMODB_OPERATION_TIMEOUT_MS", 3_000)?,
        })
    }
}

/// Sets `target` from the variable `name` when it is set (a whole number from `min` to `max`).
fn override_number<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    target: &mut T,
    name: &'static str,
    min: T,
    max: T,
) -> Result<(), ConfigError>
where
    T: std::str::FromStr + PartialOrd + Copy + std::fmt::Display,
{
    if let Some(value) = number(lookup, name, min, max)? {
        *target = value;
    }
    Ok(())
}

/// A whole number from `min` to `max`, or `None` when unset. The error names the
/// variable, the allowed range and the value given.
fn number<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    min: T,
    max: T,
) -> Result<Option<T>, ConfigError>
where
    T: std::str::FromStr + PartialOrd + Copy + std::fmt::Display,
{
    let Some(raw) = lookup(name) else {
        return Ok(None);
    };
    let invalid = || ConfigError::Invalid {
        name,
        reason: format!("must be a whole number from {min} to {max}; got {raw:?}"),
    };
    let value: T = raw.trim().parse().map_err(|_| invalid())?;
    if value < min || value > max {
        return Err(invalid());
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

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
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 49; got \"ten\""
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
        // The profile plus a record and a claim per address.
        const { assert!(StoreConfig::MAX_EMAILS_CAP * 2 < 100) };
        let err = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "50")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "MAX_EMAILS_PER_USER is invalid: must be a whole number from 1 to 49; got \"50\""
        );
        let c = StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("MAX_EMAILS_PER_USER", "49")])).unwrap();
        assert_eq!(c.max_emails_per_user, 49);
    }

    #[test]
    fn timeouts_default_inside_cognitos_limit() {
        let t = ClientTimeouts::from_lookup(lookup(&[])).unwrap();
        assert!(t.operation < Duration::from_secs(5));
        assert!(t.attempt <= t.operation);
    }
}
