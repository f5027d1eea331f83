//! Verification codes: six digits from the OS random source. Only a keyed hash
//! (HMAC-SHA-256 under a secret key held in Secrets Manager) is stored, so a table
//! export, a backup or an index cannot be turned back into a live code.

use std::fmt;

#[cfg(feature = "aws")]
use aws_lc_rs::hmac;
#[cfg(feature = "aws")]
use subtle::ConstantTimeEq;

use crate::domain::Invalid;
#[cfg(feature = "aws")]
use crate::domain::{EmailAddress, EmailId};

#[cfg(feature = "aws")]
/// The secret behind code hashes and address hashes. Two keys are derived from it,
/// one per purpose, so a value of one kind never matches one of the other.
#[derive(Clone)]
pub struct VerificationKey {
    code_key: hmac::Key,
    address_key: hmac::Key,
}

#[cfg(feature = "aws")]
/// Why a secret cannot be a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the verification key must be at least {} bytes", VerificationKey::MIN_SECRET_BYTES)]
pub struct KeyTooShort;

#[cfg(feature = "aws")]
impl VerificationKey {
    pub const MIN_SECRET_BYTES: usize = 32;

    pub fn from_secret(secret: &[u8]) -> Result<Self, KeyTooShort> {
        if secret.len() < Self::MIN_SECRET_BYTES {
            return Err(KeyTooShort);
        }
        Ok(Self {
            code_key: derive(secret, b"user-service/verification-code/v2"),
            address_key: derive(secret, b"user-service/address/v1"),
        })
    }

    /// A keyed, non-reversible name for an address, for items that must not hold
    /// the address itself (the rate-limit counters).
    pub fn address_hash(&self, email: &EmailAddress) -> String {
        let tag = hmac::sign(&self.address_key, email.as_str().as_bytes());
        // 128 bits: collisions between addresses stay out of reach.
        hex::encode(&tag.as_ref()[..16])
    }
}

#[cfg(feature = "aws")]
/// A key for one purpose: HMAC-SHA-256 of the purpose under the secret.
fn derive(secret: &[u8], purpose: &[u8]) -> hmac::Key {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), purpose);
    hmac::Key::new(hmac::HMAC_SHA256, tag.as_ref())
}

#[cfg(feature = "aws")]
impl fmt::Debug for VerificationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VerificationKey(<redacted>)")
    }
}

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

    #[cfg(feature = "aws")]
    /// The stored form: an HMAC under the verification key, bound to the address
    /// record, so a hash copied to another record does not verify it.
    pub fn hash(&self, key: &VerificationKey, email_id: EmailId) -> String {
        let mut context = hmac::Context::with_key(&key.code_key);
        context.update(email_id.to_string().as_bytes());
        context.update(b"\0");
        context.update(self.0.as_bytes());
        hex::encode(context.sign().as_ref())
    }

    #[cfg(feature = "aws")]
    /// Constant-time comparison with a stored hash.
    pub fn matches(&self, key: &VerificationKey, email_id: EmailId, stored_hash: &str) -> bool {
        self.hash(key, email_id).as_bytes().ct_eq(stored_hash.as_bytes()).into()
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

    fn key(secret: &str) -> VerificationKey {
        VerificationKey::from_secret(secret.as_bytes()).unwrap()
    }

    #[test]
    fn hash_is_keyed_bound_to_the_record_and_matches_only_its_code() {
        let k = key("a development key of at least 32 bytes");
        let id = EmailId::new();
        let other = EmailId::new();
        let code = VerificationCode::parse("012345").unwrap();
        let stored = code.hash(&k, id);
        assert_eq!(stored.len(), 64);
        assert!(!stored.contains("012345"));
        assert!(code.matches(&k, id, &stored));
        assert!(!code.matches(&k, other, &stored));
        assert!(!VerificationCode::parse("012346").unwrap().matches(&k, id, &stored));
        // Without the key, the 10^6 codes cannot be tried against a stored hash.
        let other_key = key("another development key, 32 bytes long");
        assert!(!code.matches(&other_key, id, &stored));
        assert_ne!(code.hash(&other_key, id), stored);
    }

    #[test]
    fn short_secrets_are_refused() {
        assert_eq!(VerificationKey::from_secret(&[7; 31]).unwrap_err(), KeyTooShort);
        assert!(VerificationKey::from_secret(&[7; 32]).is_ok());
    }

    #[test]
    fn address_hashes_are_keyed_and_hide_the_address() {
        let k = key("a development key of at least 32 bytes");
        let ada = EmailAddress::parse("ada@example.com").unwrap();
        let h = k.address_hash(&ada);
        assert_eq!(h.len(), 32);
        assert_eq!(h, k.address_hash(&EmailAddress::parse("ADA@example.com").unwrap()));
        assert_ne!(h, k.address_hash(&EmailAddress::parse("bob@example.com").unwrap()));
        assert_ne!(h, key("another development key, 32 bytes long").address_hash(&ada));
        assert!(!h.contains("ada"));
        assert!(!format!("{k:?}").contains("development"));
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
