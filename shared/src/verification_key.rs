//! The verification key: the secret behind code hashes and address hashes, and
//! the keyed hash of a code, which is all the table stores of it.

use std::fmt;

use aws_lc_rs::hmac;
use subtle::ConstantTimeEq;

use crate::address_policy::CanonicalEmail;
use crate::domain::{EmailAddress, EmailId, ImportKey, InvitationId, OrgId, ScimTokenId};
use crate::verification::VerificationCode;

/// The secret behind code hashes and address hashes. Two keys are derived from it,
/// one per purpose, so a value of one kind never matches one of the other.
#[derive(Clone)]
pub struct VerificationKey {
    code_key: hmac::Key,
    address_key: hmac::Key,
    import_key: hmac::Key,
    recovery_key: hmac::Key,
    invitation_key: hmac::Key,
    scim_token_key: hmac::Key,
}

/// Why a secret cannot be a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the verification key must be at least {} bytes", VerificationKey::MIN_SECRET_BYTES)]
pub struct KeyTooShort;

impl VerificationKey {
    /// The shortest secret accepted: 32 bytes, as long as an HMAC-SHA-256 tag.
    pub const MIN_SECRET_BYTES: usize = 32;

    /// The key from the secret's bytes (at least [`Self::MIN_SECRET_BYTES`]): one derived key for codes, one for addresses.
    pub fn from_secret(secret: &[u8]) -> Result<Self, KeyTooShort> {
        if secret.len() < Self::MIN_SECRET_BYTES {
            return Err(KeyTooShort);
        }
        Ok(Self {
            code_key: derive(secret, b"user-service/verification-code/v2"),
            address_key: derive(secret, b"user-service/address/v1"),
            import_key: derive(secret, b"user-service/erased-import/v1"),
            recovery_key: derive(secret, b"user-service/recovery-token/v1"),
            invitation_key: derive(secret, b"user-service/invitation/v1"),
            scim_token_key: derive(secret, b"user-service/scim-token/v1"),
        })
    }

    /// A keyed, non-reversible name for an address, for items that must not hold
    /// the address itself (the rate-limit counters): of its canonical form,
    /// so every spelling of one address counts against one limit.
    pub fn address_hash(&self, email: &CanonicalEmail) -> String {
        let tag = hmac::sign(&self.address_key, email.as_str().as_bytes());
        // 128 bits: collisions between addresses stay out of reach.
        hex::encode(&tag.as_ref()[..16])
    }

    /// The keyed name of the person an import line describes, from their
    /// primary address as normalised (not under the deployment's policy, so
    /// a change of policy keeps it): what an erasure of an imported account
    /// keeps, so no re-run of the import brings them back. A key of its own,
    /// so it matches no address hash of a rate-limit item.
    pub fn import_key(&self, primary: &EmailAddress) -> ImportKey {
        let tag = hmac::sign(&self.import_key, primary.as_str().as_bytes());
        ImportKey::parse(&hex::encode(&tag.as_ref()[..16]))
            .unwrap_or_else(|_| unreachable!("16 bytes in hex are 32 hex digits"))
    }
}

impl VerificationKey {
    /// A keyed, non-reversible name for a network source (an IP address), for
    /// the counter of its refused recovery links: the table never holds it.
    pub fn source_hash(&self, source_ip: &str) -> String {
        let mut context = hmac::Context::with_key(&self.recovery_key);
        context.update(b"source\0");
        context.update(source_ip.as_bytes());
        hex::encode(&context.sign().as_ref()[..16])
    }

    /// The stored form of a recovery token's `secret`: an HMAC bound to its
    /// account and switch (the profile version it wrote), so a hash copied to
    /// another switch matches nothing.
    pub fn recovery_hash(&self, user: &crate::domain::UserId, version: u64, secret: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.recovery_key);
        context.update(b"token\0");
        context.update(user.as_str().as_bytes());
        context.update(b"\0");
        context.update(&version.to_be_bytes());
        context.update(secret);
        hex::encode(context.sign().as_ref())
    }
}

impl VerificationKey {
    /// The id of `org`'s invitation of an address (its canonical form): the
    /// same for every invitation of it, so an organization has one pending
    /// invitation per address and inviting again is a resend. Keyed, so the
    /// id names no address to whoever reads it.
    pub fn invitation_id(&self, org: OrgId, email: &CanonicalEmail) -> InvitationId {
        let mut context = hmac::Context::with_key(&self.invitation_key);
        context.update(b"id\0");
        context.update(org.as_bytes());
        context.update(email.as_str().as_bytes());
        let tag = context.sign();
        let mut id = [0u8; 16];
        id.copy_from_slice(&tag.as_ref()[..16]);
        InvitationId::from_bytes(id)
    }

    /// The stored form of an invitation token's `secret`: an HMAC bound to
    /// its organization and invitation, so a hash copied elsewhere matches nothing.
    pub fn invitation_hash(&self, org: OrgId, invitation: InvitationId, secret: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.invitation_key);
        context.update(b"token\0");
        context.update(org.as_bytes());
        context.update(invitation.as_bytes());
        context.update(secret);
        hex::encode(context.sign().as_ref())
    }

    /// Whether `secret` is the one whose hash is stored (constant time).
    pub fn invitation_matches(&self, org: OrgId, invitation: InvitationId, secret: &[u8], stored_hash: &str) -> bool {
        self.invitation_hash(org, invitation, secret)
            .as_bytes()
            .ct_eq(stored_hash.as_bytes())
            .into()
    }
}

impl VerificationKey {
    /// The stored form of a SCIM token's `secret`: an HMAC bound to its
    /// organization and token id, so a hash copied to another token matches nothing.
    pub fn scim_token_hash(&self, org: OrgId, id: ScimTokenId, secret: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.scim_token_key);
        context.update(org.as_bytes());
        context.update(id.as_bytes());
        context.update(secret);
        hex::encode(context.sign().as_ref())
    }

    /// Whether `secret` is the one whose hash is stored (constant time).
    pub fn scim_token_matches(&self, org: OrgId, id: ScimTokenId, secret: &[u8], stored_hash: &str) -> bool {
        self.scim_token_hash(org, id, secret)
            .as_bytes()
            .ct_eq(stored_hash.as_bytes())
            .into()
    }
}

/// A key for one purpose: HMAC-SHA-256 of the purpose under the secret.
fn derive(secret: &[u8], purpose: &[u8]) -> hmac::Key {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), purpose);
    hmac::Key::new(hmac::HMAC_SHA256, tag.as_ref())
}

impl fmt::Debug for VerificationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VerificationKey(<redacted>)")
    }
}

impl VerificationCode {
    /// The stored form: an HMAC under the verification key, bound to the address
    /// record, so a hash copied to another record does not verify it.
    pub fn hash(&self, key: &VerificationKey, email_id: EmailId) -> String {
        let mut context = hmac::Context::with_key(&key.code_key);
        context.update(email_id.to_string().as_bytes());
        context.update(b"\0");
        context.update(self.reveal().as_bytes());
        hex::encode(context.sign().as_ref())
    }

    /// Constant-time comparison with a stored hash.
    pub fn matches(&self, key: &VerificationKey, email_id: EmailId, stored_hash: &str) -> bool {
        self.hash(key, email_id).as_bytes().ct_eq(stored_hash.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn invitation_ids_and_hashes_are_keyed_and_bound() {
        let k = key("a development key of at least 32 bytes");
        let canonical = |raw: &str| {
            crate::address_policy::Canonicalization::NONE.canonical(&crate::domain::EmailAddress::parse(raw).unwrap())
        };
        let (org, other) = (OrgId::new(), OrgId::new());
        let id = k.invitation_id(org, &canonical("ada@example.com"));
        assert_eq!(id, k.invitation_id(org, &canonical("ADA@example.com")));
        assert_ne!(id, k.invitation_id(other, &canonical("ada@example.com")));
        assert_ne!(id, k.invitation_id(org, &canonical("bob@example.com")));
        let hash = k.invitation_hash(org, id, b"secret");
        assert!(k.invitation_matches(org, id, b"secret", &hash));
        assert!(
            !k.invitation_matches(org, id, b"resent", &hash),
            "a resend ends the token before"
        );
        assert!(
            !k.invitation_matches(other, id, b"secret", &hash),
            "bound to its organization"
        );
        assert!(!key("another development key, 32 bytes long").invitation_matches(org, id, b"secret", &hash));
    }

    #[test]
    fn address_hashes_are_keyed_and_hide_the_address() {
        let k = key("a development key of at least 32 bytes");
        let canonical = |raw: &str| {
            crate::address_policy::Canonicalization::NONE.canonical(&crate::domain::EmailAddress::parse(raw).unwrap())
        };
        let ada = canonical("ada@example.com");
        let h = k.address_hash(&ada);
        assert_eq!(h.len(), 32);
        assert_eq!(h, k.address_hash(&canonical("ADA@example.com")));
        assert_ne!(h, k.address_hash(&canonical("bob@example.com")));
        assert_ne!(h, key("another development key, 32 bytes long").address_hash(&ada));
        assert!(!h.contains("ada"));
        assert!(!format!("{k:?}").contains("development"));
        // An import key is keyed apart: it never equals the address's hash.
        let address = |raw: &str| crate::domain::EmailAddress::parse(raw).unwrap();
        let i = k.import_key(&address("ada@example.com"));
        assert_eq!(i, k.import_key(&address("ADA@example.com")));
        assert_ne!(i.as_str(), h);
        assert_ne!(
            i,
            key("another development key, 32 bytes long").import_key(&address("ada@example.com"))
        );
    }

    #[test]
    fn a_recovery_hash_is_bound_to_its_account_and_switch() {
        use crate::domain::UserId;
        let k = key(&"k".repeat(32));
        let (ada, grace) = (UserId::parse("ada").unwrap(), UserId::parse("grace").unwrap());
        let secret = [7u8; 32];
        let hash = k.recovery_hash(&ada, 3, &secret);
        assert_eq!(hash, k.recovery_hash(&ada, 3, &secret));
        assert_eq!(hash.len(), 64);
        assert_ne!(hash, key(&"j".repeat(32)).recovery_hash(&ada, 3, &secret), "keyed");
        assert_ne!(hash, k.recovery_hash(&ada, 4, &secret), "bound to the switch");
        assert_ne!(hash, k.recovery_hash(&grace, 3, &secret), "bound to the account");
        assert_ne!(hash, k.recovery_hash(&ada, 3, &[8u8; 32]));
    }
}
