//! Verification codes: six digits from the OS random source. Only a hash is stored.

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::{EmailId, Invalid};

/// A six-digit code. Debug never shows it, so it cannot leak through a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct VerificationCode(String);

#[derive(Debug, thiserror::Error)]
#[error("the OS random source failed")]
pub struct RandomSourceError(#[source] getrandom::Error);

impl VerificationCode {
    pub fn generate() -> Result<Self, RandomSourceError> {
        // Rejection sampling: values at or above the largest multiple of 10^6 below
        // 2^32 would make low codes slightly more likely.
        const RANGE: u32 = 1_000_000;
        const LIMIT: u32 = u32::MAX - (u32::MAX % RANGE);
        loop {
            let mut bytes = [0u8; 4];
            getrandom::fill(&mut bytes).map_err(RandomSourceError)?;
            let value = u32::from_le_bytes(bytes);
            if value < LIMIT {
                return Ok(Self(format!("{:06}", value % RANGE)));
            }
        }
    }

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

    /// The stored form: a hash bound to the address record, so a hash copied to
    /// another record does not verify it.
    pub fn hash(&self, email_id: EmailId) -> String {
        let digest = Sha256::new()
            .chain_update(b"user-service/verification/v1\0")
            .chain_update(email_id.to_string().as_bytes())
            .chain_update(b"\0")
            .chain_update(self.0.as_bytes())
            .finalize();
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Constant-time comparison with a stored hash.
    pub fn matches(&self, email_id: EmailId, stored_hash: &str) -> bool {
        self.hash(email_id).as_bytes().ct_eq(stored_hash.as_bytes()).into()
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
    fn hash_is_bound_to_the_record_and_matches_only_its_code() {
        let id = EmailId::new();
        let other = EmailId::new();
        let code = VerificationCode::parse("012345").unwrap();
        let stored = code.hash(id);
        assert_eq!(stored.len(), 64);
        assert!(!stored.contains("012345"));
        assert!(code.matches(id, &stored));
        assert!(!code.matches(other, &stored));
        assert!(!VerificationCode::parse("012346").unwrap().matches(id, &stored));
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
