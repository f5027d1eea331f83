//! The keys of organizations: the organization and its members in a
//! partition of its own (`ORG#…`), each membership also under its member
//! (`USER#…`, `MEMBERSHIP#…`, so the account's one Query reads it), and the
//! claim of a slug, one per deployment (`SLUG#…`).

use aws_sdk_dynamodb::types::AttributeValue;

use super::accounts::user_pk;
use super::names::{GSI1PK, GSI1SK, Item, key};
use crate::address_policy::CanonicalEmail;
use crate::domain::{InvitationId, OrgDomain, OrgId, ScimTokenId, Slug, UserId};

pub(super) const ORG_PREFIX: &str = "ORG#";
pub(super) const ORG_SK: &str = "ORG";
pub(super) const MEMBER_PREFIX: &str = "MEMBER#";
pub(super) const MEMBERSHIP_PREFIX: &str = "MEMBERSHIP#";
pub(super) const SLUG_PREFIX: &str = "SLUG#";
pub(super) const SLUG_SK: &str = "UNIQUE";
pub(super) const PURGES_PK: &str = "PURGES";
pub(super) const INVITATION_PREFIX: &str = "INVITATION#";
pub(super) const DOMAIN_PREFIX: &str = "DOMAIN#";
pub(super) const DOMAIN_CLAIM_SK: &str = "UNIQUE";
// Sorts before `ORG`, with the members, invitations and domains: the
// purge's one range reads them all.
pub(super) const SCIM_TOKEN_PREFIX: &str = "CREDENTIAL#SCIM#";
// A directory's names for a member, unique in the organization; they sort
// before `ORG` too.
pub(super) const DIRECTORY_PREFIX: &str = "DIRECTORY#";
const DIRECTORY_NAME_PREFIX: &str = "DIRECTORY#NAME#";
const DIRECTORY_EXTERNAL_PREFIX: &str = "DIRECTORY#EXTERNAL#";
const INVITED_PREFIX: &str = "INVITED#";
// The organization's counts and its directory's page cursors: before `ORG`,
// so the purge's range takes them too.
pub(super) const COUNTS_SK: &str = "COUNTS";
pub(super) const CURSOR_PREFIX: &str = "CURSOR#";

/// The partition of an organization: the organization, then its members.
pub fn org_pk(org: OrgId) -> String {
    format!("{ORG_PREFIX}{org}")
}

/// Key of the organization item.
pub fn org_key(org: OrgId) -> Item {
    key(org_pk(org), ORG_SK.to_owned())
}

/// Key of the organization's counts: its members, and those its directory holds.
pub fn org_counts_key(org: OrgId) -> Item {
    key(org_pk(org), COUNTS_SK.to_owned())
}

/// Key of where a directory's list of `org`'s members (`view`: all, or
/// active or suspended alone) resumes at `start_index`, remembered by the
/// page before it.
pub fn scim_cursor_key(org: OrgId, view: &str, start_index: u64) -> Item {
    key(org_pk(org), format!("{CURSOR_PREFIX}{view}#{start_index}"))
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

/// Key of a domain under its organization.
pub fn org_domain_key(org: OrgId, domain: &OrgDomain) -> Item {
    key(org_pk(org), format!("{DOMAIN_PREFIX}{domain}"))
}

/// What every domain's sort key begins with, under its organization.
pub fn org_domain_sk_prefix() -> &'static str {
    DOMAIN_PREFIX
}

/// Key of the claim of a domain: one item per domain, so one organization holds it.
pub fn domain_claim_key(domain: &OrgDomain) -> Item {
    key(format!("{DOMAIN_PREFIX}{domain}"), DOMAIN_CLAIM_SK.to_owned())
}

/// What every invitation's sort key begins with, under its organization.
pub fn invitation_sk_prefix() -> &'static str {
    INVITATION_PREFIX
}

/// Key of an invitation under its organization.
pub fn invitation_key(org: OrgId, invitation: InvitationId) -> Item {
    key(org_pk(org), format!("{INVITATION_PREFIX}{invitation}"))
}

/// The invitation an invitation's sort key names.
pub fn invitation_of_sk(sk: &str) -> Option<InvitationId> {
    sk.strip_prefix(INVITATION_PREFIX)
        .and_then(|id| InvitationId::parse(id).ok())
}

/// What every SCIM token's sort key begins with, under its organization.
pub fn scim_token_sk_prefix() -> &'static str {
    SCIM_TOKEN_PREFIX
}

/// Key of a SCIM token under its organization.
pub fn scim_token_key(org: OrgId, token: ScimTokenId) -> Item {
    key(org_pk(org), format!("{SCIM_TOKEN_PREFIX}{token}"))
}

/// Key of the claim of a SCIM `userName` in an organization: `key` is its
/// lower-cased form, as uniqueness is decided without regard to case.
pub fn directory_name_key(org: OrgId, key_form: &str) -> Item {
    key(org_pk(org), format!("{DIRECTORY_NAME_PREFIX}{key_form}"))
}

/// Key of the claim of a SCIM `externalId` in an organization, compared exactly.
pub fn directory_external_key(org: OrgId, external_id: &str) -> Item {
    key(org_pk(org), format!("{DIRECTORY_EXTERNAL_PREFIX}{external_id}"))
}

/// A name a directory claim holds, as its sort key spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectoryClaimName<'a> {
    /// A `userName`, in the lower-cased form it is compared in.
    UserName(&'a str),
    /// An `externalId`, compared exactly.
    ExternalId(&'a str),
}

/// The name a directory claim's sort key holds (`DIRECTORY#NAME#…` or
/// `DIRECTORY#EXTERNAL#…`): what an export says the organization keeps for
/// its member, read back from the keys the claims are written under.
pub fn directory_claim_of_sk(sk: &str) -> Option<DirectoryClaimName<'_>> {
    match sk.strip_prefix(DIRECTORY_NAME_PREFIX) {
        Some(name) => Some(DirectoryClaimName::UserName(name)),
        None => sk
            .strip_prefix(DIRECTORY_EXTERNAL_PREFIX)
            .map(DirectoryClaimName::ExternalId),
    }
}

/// The sort key of the organization item: its members and invitations sort before it.
pub fn org_sk() -> &'static str {
    ORG_SK
}

/// The GSI1 partition of the invitations to one address, by its canonical
/// form (as an email record's is): what the invitee's export and erasure
/// read, with no key to hash by.
pub fn invited_gsi1pk(email: &CanonicalEmail) -> String {
    format!("{INVITED_PREFIX}{}", email.as_str())
}

/// Every key attribute of an invitation: under its organization, and in
/// GSI1 under the address's canonical form.
pub fn invitation_keys(org: OrgId, invitation: InvitationId, email: &CanonicalEmail) -> Item {
    let mut item = invitation_key(org, invitation);
    item.insert(GSI1PK.to_owned(), AttributeValue::S(invited_gsi1pk(email)));
    item.insert(GSI1SK.to_owned(), AttributeValue::S(org_pk(org)));
    item
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
        let invitation = InvitationId::from_bytes([1; 16]);
        let ada = crate::address_policy::Canonicalization::NONE
            .canonical(&crate::domain::EmailAddress::parse("ada@example.com").unwrap());
        let keys = invitation_keys(org, invitation, &ada);
        assert_eq!(s(&keys, "PK"), org_pk(org));
        assert_eq!(s(&keys, "SK"), "INVITATION#01010101-0101-0101-0101-010101010101");
        assert_eq!(s(&keys, "GSI1PK"), "INVITED#ada@example.com");
        assert_eq!(s(&keys, "GSI1SK"), org_pk(org));
        assert_eq!(invitation_of_sk(&s(&keys, "SK")), Some(invitation));
        assert_eq!(invitation_of_sk("MEMBER#x"), None);
        let acme = OrgDomain::parse("acme.com").unwrap();
        assert_eq!(s(&org_domain_key(org, &acme), "SK"), "DOMAIN#acme.com");
        assert_eq!(s(&domain_claim_key(&acme), "PK"), "DOMAIN#acme.com");
        assert_eq!(s(&domain_claim_key(&acme), "SK"), "UNIQUE");
        assert!(DOMAIN_PREFIX < INVITATION_PREFIX && DOMAIN_PREFIX < ORG_SK);
        assert!(DIRECTORY_PREFIX < ORG_SK && SCIM_TOKEN_PREFIX < ORG_SK);
        // Invitations sort before members: a page of members never meets them.
        assert!(INVITATION_PREFIX < MEMBER_PREFIX);
        // Members sort before the organization item, so a page of members
        // (begins_with MEMBER#) never meets it.
        assert!(member_sk(&user).as_str() < ORG_SK);
        // Under the user, memberships sort after the addresses and before the
        // profile: list-emails' read (SK > EMAIL#) meets them and skips them.
        assert!(super::super::EMAIL_SK_PREFIX < MEMBERSHIP_PREFIX);
        assert!(membership_sk(org).as_str() < super::super::accounts::PROFILE_SK);
    }

    #[test]
    fn a_directory_claims_name_reads_back_from_its_key() {
        let org = OrgId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
        let sk = |item: Item| item["SK"].as_s().unwrap().clone();
        let name = sk(directory_name_key(org, "ada@corp.example"));
        assert_eq!(name, "DIRECTORY#NAME#ada@corp.example");
        assert_eq!(
            directory_claim_of_sk(&name),
            Some(DirectoryClaimName::UserName("ada@corp.example"))
        );
        // An externalId is free text: one that looks like another key stays itself.
        let external = sk(directory_external_key(org, "NAME#00u1"));
        assert_eq!(
            directory_claim_of_sk(&external),
            Some(DirectoryClaimName::ExternalId("NAME#00u1"))
        );
        assert_eq!(directory_claim_of_sk("MEMBER#x"), None);
        assert_eq!(directory_claim_of_sk(ORG_SK), None);
    }
}
