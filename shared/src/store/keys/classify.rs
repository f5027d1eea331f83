//! A stored key read back: the kind of item it addresses, and the user or
//! the address it names.

use super::accounts::{
    CLAIM_SK, EMAIL_PREFIX, ERASED_IMPORT_SK, ERASED_PREFIX, LEGACY_PASSWORD_PREFIX, LEGACY_PASSWORD_SK, PROFILE_SK,
    USER_PREFIX,
};
use super::counters::LIMIT_PREFIX;
use super::names::{Item, PK, SK};
use super::organizations::{
    COUNTS_SK, CURSOR_PREFIX, DIRECTORY_PREFIX, DOMAIN_CLAIM_SK, DOMAIN_PREFIX, INVITATION_PREFIX, MEMBER_PREFIX,
    MEMBERSHIP_PREFIX, ORG_PREFIX, ORG_SK, PURGES_PK, SCIM_TOKEN_PREFIX, SLUG_PREFIX, SLUG_SK,
};
use super::reconcile::{PASS_PREFIX, RECONCILE_PK};
use super::recovery::CHANGE_PREFIX;

/// What kind of item a stored key addresses, told from the key alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A user's profile (`USER#…`, `PROFILE`).
    Profile,
    /// One email record of a user (`USER#…`, `EMAIL#…`).
    Email,
    /// A switch of the primary its former address can still undo (`USER#…`, `CHANGE#…`).
    PrimaryChange,
    /// An address's uniqueness claim (`EMAIL#…`, `UNIQUE`).
    Claim,
    /// A rate-limit counter (`LIMIT#…`): no address in it, never in GSI1.
    Limit,
    /// The reconcile's checkpoint, or a snapshot chunk of live subs: no address in it.
    Reconcile,
    /// A pending user's legacy password hash (`PASSWORD#…`, `LEGACY`).
    LegacyPassword,
    /// What an erasure keeps of an imported account (`ERASED#…`, `IMPORT`): its import key alone.
    ErasedImport,
    /// An organization (`ORG#…`, `ORG`).
    Organization,
    /// A member under their organization (`ORG#…`, `MEMBER#…`).
    Member,
    /// A membership under its member (`USER#…`, `MEMBERSHIP#…`).
    Membership,
    /// A slug's claim (`SLUG#…`, `UNIQUE`).
    SlugClaim,
    /// A deleted organization whose members are being removed (`PURGES`, `ORG#…`).
    Purge,
    /// A pending invitation under its organization (`ORG#…`, `INVITATION#…`).
    Invitation,
    /// A domain under its organization (`ORG#…`, `DOMAIN#…`).
    OrgDomain,
    /// A domain's claim (`DOMAIN#…`, `UNIQUE`).
    DomainClaim,
    /// A SCIM token under its organization (`ORG#…`, `CREDENTIAL#SCIM#…`).
    ScimToken,
    /// A directory's `userName` or `externalId` for a member, claimed in its
    /// organization (`ORG#…`, `DIRECTORY#NAME#…` or `DIRECTORY#EXTERNAL#…`).
    DirectoryClaim,
    /// An organization's counts (`ORG#…`, `COUNTS`).
    OrgCounts,
    /// Where a directory's list resumes (`ORG#…`, `CURSOR#…`).
    ScimCursor,
    /// A key this service does not write: readers skip it, the invariant checks report it.
    Unknown,
}

/// The kind of a stored item, from its `PK` and `SK` alone, so readers can tell a partition's items apart.
pub fn classify(pk: &str, sk: &str) -> ItemKind {
    match (pk.starts_with(USER_PREFIX), pk.starts_with(EMAIL_PREFIX)) {
        (true, _) if sk == PROFILE_SK => ItemKind::Profile,
        (true, _) if sk.starts_with(EMAIL_PREFIX) => ItemKind::Email,
        (true, _) if sk.starts_with(CHANGE_PREFIX) => ItemKind::PrimaryChange,
        (true, _) if sk.starts_with(MEMBERSHIP_PREFIX) => ItemKind::Membership,
        (_, true) if sk == CLAIM_SK => ItemKind::Claim,
        _ if pk.starts_with(LIMIT_PREFIX) => ItemKind::Limit,
        _ if pk.starts_with(ORG_PREFIX) && sk == ORG_SK => ItemKind::Organization,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(MEMBER_PREFIX) => ItemKind::Member,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(INVITATION_PREFIX) => ItemKind::Invitation,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(DOMAIN_PREFIX) => ItemKind::OrgDomain,
        _ if pk.starts_with(DOMAIN_PREFIX) && sk == DOMAIN_CLAIM_SK => ItemKind::DomainClaim,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(SCIM_TOKEN_PREFIX) => ItemKind::ScimToken,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(DIRECTORY_PREFIX) => ItemKind::DirectoryClaim,
        _ if pk.starts_with(ORG_PREFIX) && sk == COUNTS_SK => ItemKind::OrgCounts,
        _ if pk.starts_with(ORG_PREFIX) && sk.starts_with(CURSOR_PREFIX) => ItemKind::ScimCursor,
        _ if pk.starts_with(SLUG_PREFIX) && sk == SLUG_SK => ItemKind::SlugClaim,
        _ if pk == PURGES_PK && sk.starts_with(ORG_PREFIX) => ItemKind::Purge,
        _ if pk == RECONCILE_PK || pk.starts_with(PASS_PREFIX) => ItemKind::Reconcile,
        _ if pk.starts_with(LEGACY_PASSWORD_PREFIX) && sk == LEGACY_PASSWORD_SK => ItemKind::LegacyPassword,
        _ if pk.starts_with(ERASED_PREFIX) && sk == ERASED_IMPORT_SK => ItemKind::ErasedImport,
        _ => ItemKind::Unknown,
    }
}

/// The user a profile's or an email record's partition key names.
pub fn user_of_pk(pk: &str) -> Option<&str> {
    pk.strip_prefix(USER_PREFIX)
}

/// The address a claim's partition key names.
pub fn claim_address(pk: &str) -> Option<&str> {
    pk.strip_prefix(EMAIL_PREFIX)
}

/// The string value of a key attribute of a stored item.
pub fn key_string<'a>(item: &'a Item, attribute: &str) -> Option<&'a str> {
    item.get(attribute).and_then(|v| v.as_s().ok()).map(String::as_str)
}

/// The table key (PK and SK) of a stored item, for a write that names it.
pub fn key_of(item: &Item) -> Item {
    [PK, SK]
        .into_iter()
        .filter_map(|k| item.get(k).map(|v| (k.to_owned(), v.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys::erased_import_key;

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn keys_classify_back() {
        assert_eq!(classify("USER#u", "PROFILE"), ItemKind::Profile);
        assert_eq!(classify("USER#u", "EMAIL#x"), ItemKind::Email);
        assert_eq!(classify("EMAIL#a@b.co", "UNIQUE"), ItemKind::Claim);
        assert_eq!(classify("LIMIT#USER#u", "WRONG_CODES"), ItemKind::Limit);
        assert_eq!(classify("LIMIT#ADDRESS#h", "CODES_ISSUED"), ItemKind::Limit);
        assert_eq!(classify("ORDER#1", "X"), ItemKind::Unknown);
        let erased = erased_import_key(&crate::domain::ImportKey::parse(&"ab".repeat(16)).unwrap());
        assert_eq!(classify(&s(&erased, PK), &s(&erased, SK)), ItemKind::ErasedImport);
    }
}
