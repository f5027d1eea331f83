//! SCIM tokens as the API shows them: the long-lived bearer credentials an
//! organization's identity provider (Okta, Microsoft Entra ID) provisions
//! with. The secret itself is shown once, when the token is made; what
//! stays is a name, who made it and when, and when it was last used.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::ids::UserId;
use super::invalid::Invalid;
use super::person::PersonName;
use super::timestamp::Timestamp;

/// Identifies a SCIM token within its organization: random, shown as a
/// UUID's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ScimTokenId(Uuid);

impl ScimTokenId {
    /// A fresh id (UUIDv7: tokens list in the order they were made).
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// An id from a path or a stored item: the lower-case hyphenated form.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Uuid::try_parse(raw)
            .ok()
            .filter(|uuid| uuid.hyphenated().to_string() == raw)
            .map(Self)
            .ok_or(Invalid("must be a SCIM token id (a lower-case UUID)"))
    }

    /// Its 16 bytes, as a token carries them.
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// The id 16 bytes name.
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(Uuid::from_bytes(bytes))
    }
}

impl Default for ScimTokenId {
    fn default() -> Self {
        Self::new()
    }
}

impl TryFrom<String> for ScimTokenId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ScimTokenId> for String {
    fn from(value: ScimTokenId) -> Self {
        value.to_string()
    }
}

impl fmt::Display for ScimTokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// What an owner calls a token ("Okta production"): checked as a person's
/// name is (trimmed, NFC, 1 to 100 characters, nothing invisible).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ScimTokenName(String);

impl ScimTokenName {
    /// Checks a name; the result is what is stored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        PersonName::parse(raw).map(|name| Self(name.into()))
    }

    /// The name as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ScimTokenName {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ScimTokenName> for String {
    fn from(value: ScimTokenName) -> Self {
        value.0
    }
}

/// A live SCIM token as its organization's owners and admins see it: never
/// its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScimTokenInfo {
    /// Its id: what revoking it names.
    pub token_id: ScimTokenId,
    /// Its name.
    pub name: ScimTokenName,
    /// Who made it (a member's sub, or a deployment admin's).
    pub created_by: UserId,
    /// When it was made.
    pub created_at: Timestamp,
    /// When a request last proved itself with it, to the hour: absent until
    /// it is first used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_id_has_one_spelling_and_a_name_is_checked() {
        let id = ScimTokenId::new();
        assert_eq!(ScimTokenId::parse(&id.to_string()), Ok(id));
        assert_eq!(ScimTokenId::from_bytes(*id.as_bytes()), id);
        assert!(ScimTokenId::parse(&id.to_string().to_uppercase()).is_err());
        assert!(ScimTokenId::parse("").is_err());
        assert_eq!(ScimTokenName::parse("  Okta  ").unwrap().as_str(), "Okta");
        assert!(ScimTokenName::parse("").is_err());
        assert!(ScimTokenName::parse("a\u{200b}b").is_err());
        assert!(ScimTokenName::parse(&"x".repeat(101)).is_err());
    }
}
