//! Recovery tokens: the one-time link in the notice to a former primary
//! address, which undoes the switch away from it. 32 bytes from the OS random
//! source, with the account and the switch they belong to. Only a keyed hash
//! of a token is stored (`VerificationKey::recovery_hash`), on the switch.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::domain::UserId;
use crate::verification::RandomSourceError;

const SECRET_BYTES: usize = 32;
const VERSION_BYTES: usize = 8;

/// A recovery token. Debug never shows its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct RecoveryToken {
    user: UserId,
    version: u64,
    secret: [u8; SECRET_BYTES],
}

impl RecoveryToken {
    /// A fresh token for the switch of `user`'s primary that wrote profile version `version`.
    pub fn generate(user: &UserId, version: u64) -> Result<Self, RandomSourceError> {
        let mut secret = [0u8; SECRET_BYTES];
        crate::verification::fill_random(&mut secret)?;
        Ok(Self {
            user: user.clone(),
            version,
            secret,
        })
    }

    /// The token as a link carries it: URL-safe base64 of the switch's version,
    /// the secret and the account's `sub`, so the link names nothing readable.
    pub fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(VERSION_BYTES + SECRET_BYTES + self.user.as_str().len());
        bytes.extend_from_slice(&self.version.to_be_bytes());
        bytes.extend_from_slice(&self.secret);
        bytes.extend_from_slice(self.user.as_str().as_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A token as a link gave it back; `None` for anything no token encodes to.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        // A sub is at most 128 characters (Cognito's limit): nothing longer is decoded.
        if raw.is_empty() || raw.len() > 256 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        let (version, rest) = bytes.split_at_checked(VERSION_BYTES)?;
        let (secret, user) = rest.split_at_checked(SECRET_BYTES)?;
        let user = UserId::parse(std::str::from_utf8(user).ok()?).ok()?;
        Some(Self {
            user,
            version: u64::from_be_bytes(version.try_into().ok()?),
            secret: secret.try_into().ok()?,
        })
    }

    /// The account whose switch it undoes.
    pub fn user(&self) -> &UserId {
        &self.user
    }

    /// The profile version the switch wrote.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The secret, for the keyed hash alone.
    pub(crate) fn secret(&self) -> &[u8] {
        &self.secret
    }
}

impl fmt::Debug for RecoveryToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecoveryToken")
            .field("user", &self.user)
            .field("version", &self.version)
            .field("secret", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_as_written_and_hides_its_secret() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let token = RecoveryToken::generate(&user, 7).unwrap();
        let encoded = token.encode();
        assert!(
            encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert!(!encoded.contains("3f1c2a7e"), "the link names nothing readable");
        assert_eq!(RecoveryToken::parse(&encoded), Some(token.clone()));
        assert_eq!(token.user(), &user);
        assert_eq!(token.version(), 7);
        assert!(format!("{token:?}").contains("<redacted>"));
        assert!(!format!("{token:?}").contains(&format!("{:?}", token.secret())));
        assert_ne!(RecoveryToken::generate(&user, 7).unwrap(), token, "drawn afresh");
    }

    #[test]
    fn anything_else_is_no_token() {
        for raw in ["", "abc", "!!!!", &"A".repeat(300), &URL_SAFE_NO_PAD.encode([0u8; 40])] {
            assert_eq!(RecoveryToken::parse(raw), None, "{raw}");
        }
    }
}
