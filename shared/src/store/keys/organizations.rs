//! The keys of organizations: the organization and its members in a
//! partition of its own (`ORG#…`), each membership also under its member
//! (`USER#…`, `MEMBERSHIP#…`, so the account's one Query reads it), and the
//! claim of a slug, one per deployment (`SLUG#…`).

use super::accounts::user_pk;
use super::names::{Item, key};
use crate::domain::{OrgId, Slug, UserId};

pub(super) const ORG_PREFIX: &str = "ORG#";
pub(super) const ORG_SK: &str = "ORG";
pub(super) const MEMBER_PREFIX: &str = "MEMBER#";
pub(super) const MEMBERSHIP_PREFIX: &str = "MEMBERSHIP#";
pub(super) const SLUG_PREFIX: &str = "SLUG#";
pub(super) const SLUG_SK: &str = "UNIQUE";
pub(super) const PURGES_PK: &str = "PURGES";

/// The partition of an organization: the organization, then its members.
pub fn org_pk(org: OrgId) -> String {
    format!("{ORG_PREFIX}{org}")
}

/// Key of the organization item.
pub fn org_key(org: OrgId) -> Item {
    key(org_pk(org), ORG_SK.to_owned())
}

/// The sort key of a member under their organization.
pub fn member_sk(user: &UserId) -> String {
    format!("{MEMBER_PREFIX}{user}")
}

/// What every member's sort key begins with, to page through the members.
pub fn member_sk_prefix() -> &'static str {
    MEMBER_PREFIX
}

/// Key of a member under their organization: the organization's half of a membership.
pub fn member_key(org: OrgId, user: &UserId) -> Item {
    key(org_pk(org), member_sk(user))
}

/// The sort key of a membership under its member.
pub fn membership_sk(org: OrgId) -> String {
    format!("{MEMBERSHIP_PREFIX}{org}")
}

/// What every membership's sort key begins with, under its member.
pub fn membership_sk_prefix() -> &'static str {
    MEMBERSHIP_PREFIX
}

/// Key of a membership under its member: the user's half of it.
pub fn membership_key(user: &UserId, org: OrgId) -> Item {
    key(user_pk(user), membership_sk(org))
}

/// Key of the claim of a slug: one item per slug, so one organization holds it.
pub fn slug_key(slug: &Slug) -> Item {
    key(format!("{SLUG_PREFIX}{}", slug.as_str()), SLUG_SK.to_owned())
}

/// The partition of the deletions under way: one item per deleted
/// organization whose members are still being removed, so the scheduled
/// purge finds its work with one small Query and never a scan.
pub fn purges_pk() -> &'static str {
    PURGES_PK
}

/// Key of a deleted organization's place in the purge's work.
pub fn purge_key(org: OrgId) -> Item {
    key(PURGES_PK.to_owned(), format!("{ORG_PREFIX}{org}"))
}

/// The organization a partition key names.
pub fn org_of_pk(pk: &str) -> Option<OrgId> {
    pk.strip_prefix(ORG_PREFIX).and_then(|id| OrgId::parse(id).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn organization_keys_are_exact() {
        let org = OrgId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let s = |item: &Item, k: &str| item[k].as_s().unwrap().clone();
        assert_eq!(s(&org_key(org), "PK"), "ORG#0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(s(&org_key(org), "SK"), "ORG");
        assert_eq!(s(&member_key(org, &user), "PK"), org_pk(org));
        assert_eq!(
            s(&member_key(org, &user), "SK"),
            "MEMBER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"
        );
        assert_eq!(s(&membership_key(&user, org), "PK"), user_pk(&user));
        assert_eq!(
            s(&membership_key(&user, org), "SK"),
            "MEMBERSHIP#0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
        );
        let slug = Slug::parse("acme").unwrap();
        assert_eq!(s(&slug_key(&slug), "PK"), "SLUG#acme");
        assert_eq!(s(&slug_key(&slug), "SK"), "UNIQUE");
        assert_eq!(org_of_pk(&org_pk(org)), Some(org));
        assert_eq!(s(&purge_key(org), "PK"), "PURGES");
        assert_eq!(s(&purge_key(org), "SK"), org_pk(org));
        // Members sort before the organization item, so a page of members
        // (begins_with MEMBER#) never meets it.
        assert!(member_sk(&user).as_str() < ORG_SK);
        // Under the user, memberships sort after the addresses and before the
        // profile: list-emails' read (SK > EMAIL#) meets them and skips them.
        assert!(super::super::EMAIL_SK_PREFIX < MEMBERSHIP_PREFIX);
        assert!(membership_sk(org).as_str() < super::super::accounts::PROFILE_SK);
    }
}
