//! Invitations as the API shows them: an organization's offer of a role to
//! whoever holds one address, verified.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::email_address::EmailAddress;
use super::ids::UserId;
use super::invalid::Invalid;
use super::organization::{OrgId, Role};
use super::timestamp::Timestamp;

/// Identifies an invitation within its organization. Derived from the
/// organization and the address's canonical form under a key
/// (`VerificationKey::invitation_id`), so one address has at most one
/// pending invitation per organization: inviting it again is a resend.
/// Shown as a UUID's spelling; it names no address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct InvitationId(Uuid);

impl InvitationId {
    /// An id from a path or a stored item: the lower-case hyphenated form.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Uuid::try_parse(raw)
            .ok()
            .filter(|uuid| uuid.hyphenated().to_string() == raw)
            .map(Self)
            .ok_or(Invalid("must be an invitation id (a lower-case UUID)"))
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

impl TryFrom<String> for InvitationId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<InvitationId> for String {
    fn from(value: InvitationId) -> Self {
        value.to_string()
    }
}

impl fmt::Display for InvitationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A pending invitation, as the organization's owners and admins, and the
/// invitee's export, see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Invitation {
    /// Its id.
    pub invitation_id: InvitationId,
    /// The organization that invites.
    pub org_id: OrgId,
    /// The address invited, as the inviter typed it.
    pub email: EmailAddress,
    /// The role accepting gives.
    pub role: Role,
    /// Who invited last (a member's sub, or a deployment admin's).
    pub invited_by: UserId,
    /// When it was first made.
    pub created_at: Timestamp,
    /// When its last mail went out.
    pub sent_at: Timestamp,
    /// When its token lapses: each send restarts it.
    pub expires_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_id_has_one_spelling() {
        let id = InvitationId::from_bytes([0xab; 16]);
        assert_eq!(InvitationId::parse(&id.to_string()), Ok(id));
        assert_eq!(InvitationId::from_bytes(*id.as_bytes()), id);
        assert!(InvitationId::parse(&id.to_string().to_uppercase()).is_err());
        assert!(InvitationId::parse(&id.to_string().replace('-', "")).is_err());
        assert!(InvitationId::parse("").is_err());
    }
}
