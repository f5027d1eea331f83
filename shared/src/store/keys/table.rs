//! Every kind of stored item, as docs/architecture.md's table shows it:
//! `cargo xtask docs` writes the table from [`ITEMS`], and the tests here
//! build each kind's keys and hold them to its row.

/// One kind of stored item: what it is, what it says it is (`entityType`),
/// and its keys, `{placeholders}` standing for the parts that vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemShape {
    /// What the item is, in words.
    pub item: &'static str,
    /// Its `entityType`.
    pub entity_type: &'static str,
    /// Its partition key.
    pub pk: &'static str,
    /// Its sort key.
    pub sk: &'static str,
    /// Its GSI1 keys, when it is in GSI1 (`GSI1PK`, `GSI1SK`).
    pub gsi1: Option<(&'static str, &'static str)>,
    /// Its GSI2 keys, when it is in GSI2 (`GSI2PK`, `GSI2SK`).
    pub gsi2: Option<(&'static str, &'static str)>,
}

const fn item(item: &'static str, entity_type: &'static str, pk: &'static str, sk: &'static str) -> ItemShape {
    ItemShape {
        item,
        entity_type,
        pk,
        sk,
        gsi1: None,
        gsi2: None,
    }
}

/// Every kind of item the service writes.
pub const ITEMS: &[ItemShape] = &[
    ItemShape {
        gsi2: Some(("USERS#{status}#{shard}", "{createdAt}#{userId}")),
        ..item("profile", "User", "USER#{userId}", "PROFILE")
    },
    ItemShape {
        gsi1: Some(("EMAIL#{canonicalEmail}", "USER#{userId}")),
        ..item("email", "Email", "USER#{userId}", "EMAIL#{emailId}")
    },
    item("email claim", "EmailClaim", "EMAIL#{canonicalEmail}", "UNIQUE"),
    item(
        "a switch of the primary, kept for its undoing",
        "PrimaryChange",
        "USER#{userId}",
        "CHANGE#{version}",
    ),
    item(
        "codes issued for an address",
        "RateLimit",
        "LIMIT#ADDRESS#{addressHash}",
        "CODES_ISSUED",
    ),
    item(
        "wrong codes of a user",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "WRONG_CODES",
    ),
    item(
        "a user and an address",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "ADDRESS#{addressHash}",
    ),
    item(
        "codes a user had sent to an address",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "CODES_TO#{addressHash}",
    ),
    item(
        "codes a user had sent",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "CODES_SENT",
    ),
    item(
        "availability checks of a user",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "AVAILABILITY_CHECKS",
    ),
    item(
        "exports of a user's own account",
        "RateLimit",
        "LIMIT#USER#{userId}",
        "EXPORTS",
    ),
    item(
        "recovery links from a source that undid nothing",
        "RateLimit",
        "LIMIT#SOURCE#{sourceHash}",
        "RECOVERY_GUESSES",
    ),
    item(
        "the reconcile's checkpoint and lease",
        "Reconcile",
        "RECONCILE",
        "CHECKPOINT",
    ),
    item(
        "a pass's snapshot of live subs",
        "Reconcile",
        "RECONCILE#PASS#{passId}",
        "LIVE#{bucket}#{segment}#{chunk}",
    ),
    item(
        "a pass's snapshot of deleted subs Cognito may still have",
        "Reconcile",
        "RECONCILE#PASS#{passId}",
        "DELETED#{bucket}#{segment}#{chunk}",
    ),
    item(
        "a partition's place in a pass, between runs",
        "Reconcile",
        "RECONCILE#PASS#{passId}",
        "PARTITION#{prefix}",
    ),
    item(
        "a recovery's hold on sign-in, until Cognito has followed it",
        "Reconcile",
        "RECONCILE",
        "HOLD#{recoveredAt}#{userId}",
    ),
    item(
        "a pending user's legacy password hash",
        "LegacyPassword",
        "PASSWORD#{userId}",
        "LEGACY",
    ),
    item(
        "what the erasure of an imported account keeps",
        "ErasedImport",
        "ERASED#{importKey}",
        "IMPORT",
    ),
    item("an organization", "Organization", "ORG#{orgId}", "ORG"),
    item(
        "a member, under their organization",
        "Member",
        "ORG#{orgId}",
        "MEMBER#{userId}",
    ),
    item(
        "a membership, under its member",
        "Membership",
        "USER#{userId}",
        "MEMBERSHIP#{orgId}",
    ),
    item("a slug's claim", "SlugClaim", "SLUG#{slug}", "UNIQUE"),
    item(
        "a deleted organization whose members are being removed",
        "OrganizationPurge",
        "PURGES",
        "ORG#{orgId}",
    ),
    ItemShape {
        gsi1: Some(("INVITED#{canonicalEmail}", "ORG#{orgId}")),
        ..item(
            "a pending invitation",
            "Invitation",
            "ORG#{orgId}",
            "INVITATION#{invitationId}",
        )
    },
    item(
        "a domain of an organization",
        "OrgDomain",
        "ORG#{orgId}",
        "DOMAIN#{domain}",
    ),
    item("a domain's claim", "DomainClaim", "DOMAIN#{domain}", "UNIQUE"),
    item(
        "a SCIM token of an organization",
        "ScimToken",
        "ORG#{orgId}",
        "CREDENTIAL#SCIM#{tokenId}",
    ),
    item(
        "a directory's userName for a member",
        "DirectoryClaim",
        "ORG#{orgId}",
        "DIRECTORY#NAME#{userName, lower-cased}",
    ),
    item(
        "a directory's externalId for a member",
        "DirectoryClaim",
        "ORG#{orgId}",
        "DIRECTORY#EXTERNAL#{externalId}",
    ),
    item(
        "SCIM requests from a source whose token proved nothing",
        "RateLimit",
        "LIMIT#SOURCE#{sourceHash}",
        "SCIM_GUESSES",
    ),
    item(
        "invitations sent to an address",
        "RateLimit",
        "LIMIT#ADDRESS#{addressHash}",
        "INVITATIONS",
    ),
    item(
        "invitations an organization sent",
        "RateLimit",
        "LIMIT#ORG#{orgId}",
        "INVITATIONS",
    ),
    item(
        "invitations an organization sent to an address",
        "RateLimit",
        "LIMIT#ORG#{orgId}",
        "INVITED#{addressHash}",
    ),
    item(
        "accounts every organization's directory made in a second",
        "RateLimit",
        "LIMIT#DEPLOYMENT#SCIM_CREATIONS",
        "SECOND#{second}",
    ),
    item(
        "accounts an organization's directory made in a second",
        "RateLimit",
        "LIMIT#ORG#{orgId}",
        "SCIM_CREATIONS#SECOND#{second}",
    ),
    item(
        "accounts an organization's directory made in a day",
        "RateLimit",
        "LIMIT#ORG#{orgId}",
        "SCIM_CREATIONS#DAY#{day}",
    ),
    item(
        "an organization's counts of members",
        "OrgCounts",
        "ORG#{orgId}",
        "COUNTS",
    ),
    item(
        "where a directory's list resumes at an index",
        "ScimCursor",
        "ORG#{orgId}",
        "CURSOR#{view}#{startIndex}",
    ),
];

/// Whether `key` is `pattern` with each `{placeholder}` filled by some text.
pub fn fits(pattern: &str, key: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        parts.push(&rest[..open]);
        rest = rest[open..].find('}').map_or("", |close| &rest[open + close + 1..]);
    }
    let last = rest;
    let Some((first, middle)) = parts.split_first() else {
        return key == pattern;
    };
    let Some(mut left) = key.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match left.find(part) {
            Some(at) if !part.is_empty() => left = &left[at + part.len()..],
            _ if part.is_empty() => {}
            _ => return false,
        }
    }
    left.ends_with(last) && left.len() >= last.len()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::*;
    use super::*;
    use crate::domain::{EmailAddress, EmailId, ImportKey, Timestamp, UserId, UserStatus};
    use crate::reconcile::Snapshot;
    use crate::store::items::EntityType;

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    /// Each kind's keys as the service builds them, by the row's item.
    fn built() -> Vec<(&'static str, Item)> {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let email_id = EmailId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
        let email =
            crate::address_policy::Canonicalization::NONE.canonical(&EmailAddress::parse("ada@example.com").unwrap());
        let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let import = ImportKey::parse(&"ab".repeat(16)).unwrap();
        let org = crate::domain::OrgId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c").unwrap();
        vec![
            ("profile", profile_keys(&user, UserStatus::Active, now)),
            ("email", email_record_keys(&user, email_id, &email)),
            ("email claim", claim_key(&email)),
            ("a switch of the primary, kept for its undoing", change_key(&user, 7)),
            ("codes issued for an address", codes_issued_key("h")),
            ("wrong codes of a user", wrong_codes_key(&user)),
            ("a user and an address", user_address_key(&user, "h")),
            ("codes a user had sent to an address", codes_requested_key(&user, "h")),
            ("codes a user had sent", codes_sent_key(&user)),
            ("availability checks of a user", availability_checks_key(&user)),
            ("exports of a user's own account", exports_key(&user)),
            (
                "recovery links from a source that undid nothing",
                recovery_guesses_key("h"),
            ),
            ("the reconcile's checkpoint and lease", reconcile_checkpoint_key()),
            (
                "a pass's snapshot of live subs",
                snapshot_chunk_key("p", Snapshot::Live, "3f", 1, 2),
            ),
            (
                "a pass's snapshot of deleted subs Cognito may still have",
                snapshot_chunk_key("p", Snapshot::Deleted, "3f", 1, 2),
            ),
            (
                "a partition's place in a pass, between runs",
                partition_progress_key("p", "3f"),
            ),
            (
                "a recovery's hold on sign-in, until Cognito has followed it",
                sign_in_hold_key(1_800_000_000, &user),
            ),
            ("a pending user's legacy password hash", legacy_password_key(&user)),
            (
                "what the erasure of an imported account keeps",
                erased_import_key(&import),
            ),
            ("an organization", org_key(org)),
            ("a member, under their organization", member_key(org, &user)),
            ("a membership, under its member", membership_key(&user, org)),
            ("a slug's claim", slug_key(&crate::domain::Slug::parse("acme").unwrap())),
            ("a deleted organization whose members are being removed", purge_key(org)),
            (
                "a pending invitation",
                invitation_keys(org, crate::domain::InvitationId::from_bytes([1; 16]), &email),
            ),
            (
                "a domain of an organization",
                org_domain_key(org, &crate::domain::OrgDomain::parse("acme.com").unwrap()),
            ),
            (
                "a domain's claim",
                domain_claim_key(&crate::domain::OrgDomain::parse("acme.com").unwrap()),
            ),
            (
                "a SCIM token of an organization",
                scim_token_key(org, crate::domain::ScimTokenId::from_bytes([2; 16])),
            ),
            (
                "a directory's userName for a member",
                directory_name_key(org, "ada@acme.com"),
            ),
            (
                "a directory's externalId for a member",
                directory_external_key(org, "00u1"),
            ),
            (
                "SCIM requests from a source whose token proved nothing",
                scim_guesses_key("h"),
            ),
            ("invitations sent to an address", invitations_to_key("h")),
            ("invitations an organization sent", invitations_by_key(org)),
            (
                "invitations an organization sent to an address",
                invitations_pair_key(org, "h"),
            ),
            (
                "accounts every organization's directory made in a second",
                scim_creations_key(1_700_000_000),
            ),
            (
                "accounts an organization's directory made in a second",
                scim_org_creations_second_key(org, 1_700_000_000),
            ),
            (
                "accounts an organization's directory made in a day",
                scim_org_creations_day_key(org, 19_675),
            ),
            ("an organization's counts of members", org_counts_key(org)),
            (
                "where a directory's list resumes at an index",
                scim_cursor_key(org, "all", 101),
            ),
        ]
    }

    #[test]
    fn every_kind_of_item_is_built_as_its_row_says() {
        let built = built();
        assert_eq!(built.len(), ITEMS.len(), "a built key for every row");
        for (name, keys) in built {
            let shape = ITEMS
                .iter()
                .find(|i| i.item == name)
                .unwrap_or_else(|| panic!("{name} has no row"));
            assert!(
                fits(shape.pk, &s(&keys, PK)),
                "{name}: {} against {}",
                s(&keys, PK),
                shape.pk
            );
            assert!(
                fits(shape.sk, &s(&keys, SK)),
                "{name}: {} against {}",
                s(&keys, SK),
                shape.sk
            );
            for (index, keys_of) in [(shape.gsi1, [GSI1PK, GSI1SK]), (shape.gsi2, [GSI2PK, GSI2SK])] {
                match index {
                    Some((pk, sk)) => {
                        assert!(fits(pk, &s(&keys, keys_of[0])), "{name}: {}", s(&keys, keys_of[0]));
                        assert!(fits(sk, &s(&keys, keys_of[1])), "{name}: {}", s(&keys, keys_of[1]));
                    }
                    None => assert!(!keys.contains_key(keys_of[0]), "{name} is in no such index"),
                }
            }
            assert_ne!(classify(&s(&keys, PK), &s(&keys, SK)), ItemKind::Unknown, "{name}");
        }
    }

    #[test]
    fn every_entity_type_has_its_rows() {
        let types: BTreeSet<&str> = ITEMS.iter().map(|i| i.entity_type).collect();
        let declared: BTreeSet<String> = [
            EntityType::User,
            EntityType::Email,
            EntityType::EmailClaim,
            EntityType::PrimaryChange,
            EntityType::RateLimit,
            EntityType::LegacyPassword,
            EntityType::ErasedImport,
            EntityType::Reconcile,
            EntityType::Organization,
            EntityType::Member,
            EntityType::Membership,
            EntityType::SlugClaim,
            EntityType::OrganizationPurge,
            EntityType::Invitation,
            EntityType::OrgDomain,
            EntityType::DomainClaim,
            EntityType::ScimToken,
            EntityType::DirectoryClaim,
            EntityType::OrgCounts,
            EntityType::ScimCursor,
        ]
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap().as_str().unwrap().to_owned())
        .collect();
        assert_eq!(types, declared.iter().map(String::as_str).collect());
    }

    #[test]
    fn a_pattern_fits_what_fills_its_placeholders_and_nothing_else() {
        assert!(fits("USER#{userId}", "USER#u1"));
        assert!(fits("LIVE#{bucket}#{segment}#{chunk}", "LIVE#3f#001#000002"));
        assert!(fits("PROFILE", "PROFILE"));
        assert!(!fits("PROFILE", "PROFILES"));
        assert!(!fits("USER#{userId}", "EMAIL#u1"));
        assert!(!fits("LIVE#{bucket}#{segment}#{chunk}", "LIVE#3f"));
    }
}
