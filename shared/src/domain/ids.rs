//! The ids: a user's (a Cognito `sub`, or a pending user's provisional id),
//! an email record's, and the keyed name of an imported person.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::invalid::Invalid;

/// The Cognito `sub` of a user. Never taken from a path, query or body for the caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UserId(String);

impl UserId {
    /// An id from a stored item or a Cognito event: 1 to 128 characters, none of them the key delimiter `#`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
        if raw.is_empty() || raw.len() > 128 {
            return Err(Invalid("must be 1 to 128 characters"));
        }
        // `#` is the key delimiter; anything outside this set cannot be a Cognito sub.
        if !raw.chars().all(ok_char) {
            return Err(Invalid("contains characters a user id cannot have"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// A caller's `sub` as Cognito issues it: a UUID in its lower-case
    /// hyphenated form. Anything else never came from the user pool, so it is
    /// refused before any table request (a `sub` of `admin` or `PROFILE` would
    /// otherwise be looked up).
    pub fn parse_sub(raw: &str) -> Result<Self, Invalid> {
        let canonical = Uuid::try_parse(raw)
            .ok()
            .map(|uuid| uuid.hyphenated().to_string())
            .filter(|canonical| canonical == raw)
            .ok_or(Invalid("must be a user pool sub (a lower-case UUID)"))?;
        Ok(Self(canonical))
    }

    /// The id as text, for keys, logs and responses.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A new provisional id for a user imported to migrate at sign-in, until
    /// Cognito gives them a `sub`: `pending-` and a random UUID. Random, not
    /// derived from the address: it is logged and stored as the user's id,
    /// and a hash of an address would name the address to anyone who guesses
    /// it. Never a sub: no token carries it, and the reconcile, the Cognito
    /// sync and the domain events pass it by.
    pub fn new_pending() -> Self {
        Self(format!("{PENDING_USER_PREFIX}{}", Uuid::new_v4()))
    }

    /// A user id a listing may name: a sub, or a pending user's provisional
    /// id exactly as [`UserId::new_pending`] spells it.
    pub fn parse_listed(raw: &str) -> Result<Self, Invalid> {
        if let Some(uuid) = raw.strip_prefix(PENDING_USER_PREFIX) {
            let sub = Self::parse_sub(uuid).map_err(|_| Invalid("must be a user id"))?;
            return Ok(Self(format!("{PENDING_USER_PREFIX}{sub}")));
        }
        Self::parse_sub(raw)
    }

    /// Whether this is a pending user's provisional id (see [`UserId::new_pending`]).
    pub fn is_pending(&self) -> bool {
        self.0.starts_with(PENDING_USER_PREFIX)
    }
}

/// What starts every pending user's provisional id; a Cognito sub (a UUID) never does.
pub const PENDING_USER_PREFIX: &str = "pending-";

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for UserId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<UserId> for String {
    fn from(value: UserId) -> Self {
        value.0
    }
}

/// Identifies one email record of a user. A UUID (v7 for new records: time-ordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailId(Uuid);

impl EmailId {
    /// A fresh id for a new record; v7, so records sort by when they were added.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// An id from a path or a stored item: any UUID, surrounding whitespace ignored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Uuid::parse_str(raw.trim())
            .map(Self)
            .map_err(|_| Invalid("must be a UUID"))
    }
}

impl Default for EmailId {
    fn default() -> Self {
        Self::new()
    }
}

impl TryFrom<String> for EmailId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<EmailId> for String {
    fn from(value: EmailId) -> Self {
        value.to_string()
    }
}

impl fmt::Display for EmailId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A keyed, non-reversible name of the person an import line describes: an
/// HMAC of their primary address's canonical form under the service's key
/// (`VerificationKey::import_key`), 32 hex digits. It holds no address, and
/// cannot be turned back into one without the key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ImportKey(String);

impl ImportKey {
    /// The key from its hex form.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        if raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid("must be 32 lower-case hex digits"))
        }
    }

    /// Its hex form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ImportKey {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ImportKey> for String {
    fn from(value: ImportKey) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_is_a_lower_case_uuid() {
        let sub = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
        assert_eq!(UserId::parse_sub(sub).unwrap().as_str(), sub);
        for bad in [
            "admin",
            "PROFILE",
            "",
            "3F1C2A7E-2B7D-4B0E-9A57-0E0F0B1C2D3E",
            "3f1c2a7e2b7d4b0e9a570e0f0b1c2d3e",
            "{3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e}",
            "urn:uuid:3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e",
            " 3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e",
        ] {
            assert!(UserId::parse_sub(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn user_id_rejects_key_delimiter() {
        assert!(UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").is_ok());
        assert!(UserId::parse("a#b").is_err());
        assert!(UserId::parse("").is_err());
    }
}
