//! SCIM bearer tokens: what an identity provider sends on every SCIM request.
//! 32 bytes from the OS random source, with the organization and the token's
//! id, so checking one reads one item by its key; a `scim_` prefix, so
//! secret scanners (and people) can tell one apart. Only a keyed hash of the
//! secret is stored (`VerificationKey::scim_token_hash`).

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::domain::{OrgId, ScimTokenId};
use crate::verification::RandomSourceError;

const PREFIX: &str = "scim_";
const SECRET_BYTES: usize = 32;
const ID_BYTES: usize = 16;
/// The length of an encoded token: the prefix and 86 base64 characters.
pub const ENCODED_LEN: usize = 91;

/// A SCIM token. Debug never shows its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ScimToken {
    org: OrgId,
    id: ScimTokenId,
    secret: [u8; SECRET_BYTES],
}

impl ScimToken {
    /// A fresh token `id` of `org`.
    pub fn generate(org: OrgId, id: ScimTokenId) -> Result<Self, RandomSourceError> {
        let mut secret = [0u8; SECRET_BYTES];
        crate::verification::fill_random(&mut secret)?;
        Ok(Self { org, id, secret })
    }

    /// The token as the identity provider is given it: `scim_` and URL-safe
    /// base64 of the organization's and the token's ids and the secret.
    pub fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(2 * ID_BYTES + SECRET_BYTES);
        bytes.extend_from_slice(self.org.as_bytes());
        bytes.extend_from_slice(self.id.as_bytes());
        bytes.extend_from_slice(&self.secret);
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A token as a request gave it; `None` for anything no token encodes to.
    pub fn parse(raw: &str) -> Option<Self> {
        if raw.len() != ENCODED_LEN {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw.strip_prefix(PREFIX)?).ok()?;
        let (org, rest) = bytes.split_at_checked(ID_BYTES)?;
        let (id, secret) = rest.split_at_checked(ID_BYTES)?;
        let token = Self {
            org: OrgId::from_bytes(org.try_into().ok()?),
            id: ScimTokenId::from_bytes(id.try_into().ok()?),
            secret: secret.try_into().ok()?,
        };
        // One spelling only: what re-encodes differently is no token of ours.
        (token.encode() == raw).then_some(token)
    }

    /// The `Authorization` header's token: `Bearer <token>` (the scheme in
    /// any case, as RFC 7235 has it); `None` for any other header.
    pub fn from_authorization(header: &str) -> Option<Self> {
        let (scheme, token) = header.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        Self::parse(token.trim())
    }

    /// The organization the token acts on.
    pub fn org(&self) -> OrgId {
        self.org
    }

    /// The token's id.
    pub fn id(&self) -> ScimTokenId {
        self.id
    }

    /// The secret, for the keyed hash alone.
    pub(crate) fn secret(&self) -> &[u8] {
        &self.secret
    }
}

impl fmt::Debug for ScimToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScimToken")
            .field("org", &self.org)
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_as_written_and_hides_its_secret() {
        let token = ScimToken::generate(OrgId::new(), ScimTokenId::new()).unwrap();
        let encoded = token.encode();
        assert_eq!(encoded.len(), ENCODED_LEN);
        assert!(encoded.starts_with("scim_"));
        assert_eq!(ScimToken::parse(&encoded), Some(token.clone()));
        assert_eq!(
            ScimToken::from_authorization(&format!("Bearer {encoded}")),
            Some(token.clone())
        );
        assert_eq!(
            ScimToken::from_authorization(&format!("bearer {encoded}")),
            Some(token.clone())
        );
        assert!(!format!("{token:?}").contains(&encoded[40..]));
        for bad in [
            String::new(),
            "scim_".to_owned(),
            encoded[1..].to_owned(),
            format!("{encoded}A"),
            format!("SCIM_{}", &encoded[5..]),
            encoded.replace('A', "+"),
        ] {
            if bad != encoded {
                assert!(ScimToken::parse(&bad).is_none(), "{bad:?}");
            }
        }
        for header in [format!("Basic {encoded}"), encoded.clone(), format!("Bearer{encoded}")] {
            assert!(ScimToken::from_authorization(&header).is_none(), "{header:?}");
        }
        let other = ScimToken::generate(token.org(), token.id()).unwrap();
        assert_ne!(other.secret(), token.secret());
    }
}
