//! Verification codes: six digits from the OS random source. Only a keyed hash
//! (HMAC-SHA-256 under a secret key held in Secrets Manager, `verification_key`)
//! is stored, so a table export, a backup or an index cannot be turned back into
//! a live code.

use std::fmt;

use crate::domain::Invalid;

/// A six-digit code. Debug never shows it, so it cannot leak through a log line.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub struct VerificationCode(String);

impl TryFrom<String> for VerificationCode {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

/// No code could be drawn: the OS random source failed, so none is issued.
#[derive(Debug, thiserror::Error)]
#[error("the OS random source failed")]
pub struct RandomSourceError(#[source] getrandom::Error);

/// Fills `bytes` from the OS random source.
pub(crate) fn fill_random(bytes: &mut [u8]) -> Result<(), RandomSourceError> {
    getrandom::fill(bytes).map_err(RandomSourceError)
}

impl VerificationCode {
    /// A fresh code, uniform over 000000 to 999999, drawn from the OS random source.
    pub fn generate() -> Result<Self, RandomSourceError> {
        // Rejection sampling: values at or above the largest multiple of 10^6 below
        // 2^32 would make low codes slightly more likely.
        const RANGE: u32 = 1_000_000;
        const LIMIT: u32 = u32::MAX - (u32::MAX % RANGE);
        loop {
            let mut bytes = [0u8; 4];
            fill_random(&mut bytes)?;
            let value = u32::from_le_bytes(bytes);
            if value < LIMIT {
                return Ok(Self(format!("{:06}", value % RANGE)));
            }
        }
    }

    /// A code as the client typed it: six ASCII digits, surrounding whitespace ignored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let raw = raw.trim();
        if raw.len() == 6 && raw.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid("must be six digits"))
        }
    }

    /// The code itself, for the one place that delivers it.
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for VerificationCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VerificationCode(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_codes_are_six_digits_and_vary() {
        let codes: std::collections::HashSet<String> = (0..200)
            .map(|_| VerificationCode::generate().unwrap().reveal().to_owned())
            .collect();
        assert!(
            codes
                .iter()
                .all(|c| c.len() == 6 && c.bytes().all(|b| b.is_ascii_digit()))
        );
        assert!(codes.len() > 190, "only {} distinct codes of 200", codes.len());
    }

    #[test]
    fn parse_accepts_only_six_digits() {
        assert!(VerificationCode::parse(" 123456 ").is_ok());
        for bad in ["12345", "1234567", "12345a", "", "１２３４５６"] {
            assert!(VerificationCode::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn debug_is_redacted() {
        let code = VerificationCode::parse("123456").unwrap();
        assert!(!format!("{code:?}").contains("123456"));
    }
}
