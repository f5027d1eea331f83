//! Timeouts of the AWS clients.

use std::time::Duration;

use super::{
    ConfigError, DYNAMODB_ATTEMPT_TIMEOUT_MS, DYNAMODB_CONNECT_TIMEOUT_MS, DYNAMODB_OPERATION_TIMEOUT_MS,
    number_or_default,
};

/// Timeouts of the DynamoDB client. Attempts are retried by the SDK inside the
/// operation timeout; both stay well inside Cognito's 5 s trigger limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientTimeouts {
    /// Opening a connection.
    pub connect: Duration,
    /// One attempt of a call.
    pub attempt: Duration,
    /// A whole call, retries included.
    pub operation: Duration,
}

impl ClientTimeouts {
    /// The timeouts `lookup` gives, each within its range.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let ms = |setting| number_or_default(&lookup, setting).map(|ms| Duration::from_millis(u64::from(ms)));
        Ok(Self {
            connect: ms(DYNAMODB_CONNECT_TIMEOUT_MS)?,
            attempt: ms(DYNAMODB_ATTEMPT_TIMEOUT_MS)?,
            operation: ms(DYNAMODB_OPERATION_TIMEOUT_MS)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::lookup;
    use super::*;

    #[test]
    fn timeouts_default_inside_cognitos_limit() {
        let t = ClientTimeouts::from_lookup(lookup(&[])).unwrap();
        assert!(t.operation < Duration::from_secs(5));
        assert!(t.attempt <= t.operation);
        assert_eq!(
            t.operation,
            Duration::from_millis(u64::from(DYNAMODB_OPERATION_TIMEOUT_MS.default_number()))
        );
    }
}
