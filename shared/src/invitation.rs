//! Invitation tokens: the one-time secret an invitation's mail carries. 32
//! bytes from the OS random source, with the organization and the
//! invitation they belong to, so accepting reads one item by its key. Only a
//! keyed hash of the secret is stored (`VerificationKey::invitation_hash`),
//! on the invitation.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::domain::{InvitationId, OrgId};
use crate::verification::RandomSourceError;

const SECRET_BYTES: usize = 32;
const ID_BYTES: usize = 16;

/// An invitation token. Debug never shows its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct InvitationToken {
    org: OrgId,
    invitation: InvitationId,
    secret: [u8; SECRET_BYTES],
}

impl InvitationToken {
    /// A fresh token for `invitation` of `org`: each send draws a new one,
    /// which ends the one before.
    pub fn generate(org: OrgId, invitation: InvitationId) -> Result<Self, RandomSourceError> {
        let mut secret = [0u8; SECRET_BYTES];
        crate::verification::fill_random(&mut secret)?;
        Ok(Self {
            org,
            invitation,
            secret,
        })
    }

    /// The token as a link carries it: URL-safe base64 of the organization's
    /// and the invitation's ids and the secret (86 characters).
    pub fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(2 * ID_BYTES + SECRET_BYTES);
        bytes.extend_from_slice(self.org.as_bytes());
        bytes.extend_from_slice(self.invitation.as_bytes());
        bytes.extend_from_slice(&self.secret);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A token as a link gave it back; `None` for anything no token encodes to.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if raw.len() != 86 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        let (org, rest) = bytes.split_at_checked(ID_BYTES)?;
        let (invitation, secret) = rest.split_at_checked(ID_BYTES)?;
        let token = Self {
            org: OrgId::from_bytes(org.try_into().ok()?),
            invitation: InvitationId::from_bytes(invitation.try_into().ok()?),
            secret: secret.try_into().ok()?,
        };
        // One spelling only: what re-encodes differently is no token of ours.
        (token.encode() == raw).then_some(token)
    }

    /// The organization that invites.
    pub fn org(&self) -> OrgId {
        self.org
    }

    /// The invitation.
    pub fn invitation(&self) -> InvitationId {
        self.invitation
    }

    /// The secret, for the keyed hash alone.
    pub(crate) fn secret(&self) -> &[u8] {
        &self.secret
    }
}

impl fmt::Debug for InvitationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvitationToken")
            .field("org", &self.org)
            .field("invitation", &self.invitation)
            .field("secret", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_as_written_and_hides_its_secret() {
        let token = InvitationToken::generate(OrgId::new(), InvitationId::from_bytes([9; 16])).unwrap();
        let encoded = token.encode();
        assert_eq!(encoded.len(), 86);
        assert_eq!(InvitationToken::parse(&encoded), Some(token.clone()));
        assert!(!format!("{token:?}").contains(&encoded[32..]));
        for bad in [
            "",
            "x",
            &encoded[1..],
            &format!("{encoded}A"),
            &encoded.replace('A', "+"),
        ] {
            if bad != encoded {
                assert!(InvitationToken::parse(bad).is_none(), "{bad:?}");
            }
        }
        let other = InvitationToken::generate(token.org(), token.invitation()).unwrap();
        assert_ne!(other.secret(), token.secret(), "each send draws a new secret");
    }
}
