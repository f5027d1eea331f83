//! Configuration from the environment. Read once at cold start.

use std::time::Duration;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{0} is not set; set it to the DynamoDB table name (see README)")]
    Missing(&'static str),
    #[error("{name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: &'static str },
}

/// What the store needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub table_name: String,
    pub max_emails_per_user: u32,
    pub verification_ttl_seconds: i64,
    pub verification_max_attempts: u32,
    /// A new code for the same address at most this often.
    pub resend_interval_seconds: i64,
}

impl StoreConfig {
    pub const DEFAULT_MAX_EMAILS: u32 = 10;
    pub const DEFAULT_TTL_SECONDS: i64 = 86_400;
    pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
    pub const RESEND_INTERVAL_SECONDS: i64 = 60;

    pub fn new(table_name: impl Into<String>) -> Self {
        Self {
            table_name: table_name.into(),
            max_emails_per_user: Self::DEFAULT_MAX_EMAILS,
            verification_ttl_seconds: Self::DEFAULT_TTL_SECONDS,
            verification_max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            resend_interval_seconds: Self::RESEND_INTERVAL_SECONDS,
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let table_name = lookup("TABLE_NAME")
            .filter(|t| !t.trim().is_empty())
            .ok_or(ConfigError::Missing("TABLE_NAME"))?;
        let mut config = Self::new(table_name.trim());
        config.max_emails_per_user =
            number(&lookup, "MAX_EMAILS_PER_USER", 1, 50)?.unwrap_or(config.max_emails_per_user);
        config.verification_ttl_seconds =
            number(&lookup, "VERIFICATION_TTL_SECONDS", 60, 2_592_000)?.unwrap_or(config.verification_ttl_seconds);
        config.verification_max_attempts =
            number(&lookup, "VERIFICATION_MAX_ATTEMPTS", 1, 100)?.unwrap_or(config.verification_max_attempts);
        config.resend_interval_seconds = number(&lookup, "VERIFICATION_RESEND_INTERVAL_SECONDS", 1, 86_400)?
            .unwrap_or(config.resend_interval_seconds);
        Ok(config)
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

fn number<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    min: T,
    max: T,
) -> Result<Option<T>, ConfigError>
where
    T: std::str::FromStr + PartialOrd + Copy,
{
    let Some(raw) = lookup(name) else {
        return Ok(None);
    };
    let value: T = raw.trim().parse().map_err(|_| ConfigError::Invalid {
        name,
        reason: "not a whole number",
    })?;
    if value < min || value > max {
        return Err(ConfigError::Invalid {
            name,
            reason: "out of range",
        });
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
            Err(ConfigError::Missing("TABLE_NAME"))
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
            (10, 86_400, 5)
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
            err,
            ConfigError::Invalid {
                name: "MAX_EMAILS_PER_USER",
                reason: "not a whole number"
            }
        );
        let err =
            StoreConfig::from_lookup(lookup(&[("TABLE_NAME", "t"), ("VERIFICATION_MAX_ATTEMPTS", "0")])).unwrap_err();
        assert_eq!(
            err,
            ConfigError::Invalid {
                name: "VERIFICATION_MAX_ATTEMPTS",
                reason: "out of range"
            }
        );
    }

    #[test]
    fn timeouts_default_inside_cognitos_limit() {
        let t = ClientTimeouts::from_lookup(lookup(&[])).unwrap();
        assert!(t.operation < Duration::from_secs(5));
        assert!(t.attempt <= t.operation);
    }
}
