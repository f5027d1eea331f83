//! The stored items against their attribute names.
use std::collections::BTreeSet;

use super::*;
use crate::domain::NewUser;

/// Every attribute constant names a field the items are stored with, so an
/// expression built from the constants addresses what the items hold.
#[test]
fn attribute_names_are_the_stored_field_names() {
    let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
    let user = UserId::parse("u").unwrap();
    let email = EmailAddress::parse("a.b+c@gmail.com").unwrap();
    let profile = ProfileItem::new(
        &NewUser {
            user_id: user.clone(),
            email: email.clone(),
            first_name: Some(PersonName::parse("A").unwrap()),
            last_name: Some(PersonName::parse("B").unwrap()),
            phone: Some(Phone::parse("+15555550100").unwrap()),
        },
        1,
        now,
    );
    let gmail = Canonicalization::parse("gmail").unwrap();
    let mut record = EmailItem::unverified(&user, EmailId::new(), &email, gmail, "h".into(), now, now);
    record.verified_at = Some(now);
    record.primary_version = Some(2);
    assert_eq!(record.canonical().as_str(), "ab@gmail.com");
    let claim = record.claim(Some(now));
    let reserved = ClaimItem {
        reserved_until: Some(now),
        ..claim.clone()
    };
    let mut change = PrimaryChangeItem::new(&record, &record, 3, now, 60);
    change.token_hashes.push("h".into());
    let gone = ProfileItem {
        gone_from_cognito: true,
        sync_requested_at: Some(now),
        tokens_valid_after: Some(now.unix_seconds()),
        sign_in_held: true,
        recoveries: vec![Recovery {
            from_version: 2,
            to_version: 4,
            at: now,
        }],
        import_key: Some(crate::domain::ImportKey::parse(&"0f".repeat(16)).unwrap()),
        organizations: 2,
        ..profile.clone()
    };
    let org = OrganizationItem {
        entity_type: EntityType::Organization,
        domains: 0,
        scim_tokens: 0,
        rules: Default::default(),
        org_id: crate::domain::OrgId::new(),
        name: crate::domain::OrgName::parse("Acme").unwrap(),
        slug: crate::domain::Slug::parse("acme").unwrap(),
        status: OrgStatus::Deleting,
        version: 1,
        owners: 1,
        created_by: user.clone(),
        created_at: now,
        updated_at: now,
    };
    let member = MemberItem {
        entity_type: EntityType::Member,
        org_id: org.org_id,
        user_id: user.clone(),
        role: crate::domain::Role::Owner,
        joined_at: now,
        directory: Some(super::DirectoryIdentity {
            user_name: "ada".into(),
            external_id: None,
            provisioned: true,
        }),
        version: 1,
        suspended: true,
    };
    assert!(
        profile.cognito_email.is_some(),
        "a new profile records Cognito's address"
    );
    let legacy = LegacyPasswordItem {
        entity_type: EntityType::LegacyPassword,
        user_id: user.clone(),
        password_hash: crate::import::PasswordHash::parse(
            crate::import::HashAlgorithm::Bcrypt,
            "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
        )
        .unwrap(),
        wrong_passwords: vec![now.unix_seconds()],
        version: 2,
    };
    let stored: BTreeSet<String> = [
        to_item(keys::legacy_password_key(&user), &legacy).unwrap(),
        profile_item(&profile).unwrap(),
        profile_item(&gone).unwrap(),
        email_item(&record).unwrap(),
        claim_item(&record.canonical(), &claim).unwrap(),
        claim_item(&record.canonical(), &reserved).unwrap(),
        change_item(&change).unwrap(),
        to_item(keys::org_key(org.org_id), &org).unwrap(),
        to_item(keys::member_key(org.org_id, &user), &member).unwrap(),
        to_item(
            keys::org_domain_key(org.org_id, &crate::domain::OrgDomain::parse("acme.com").unwrap()),
            &super::OrgDomainItem {
                entity_type: EntityType::OrgDomain,
                org_id: org.org_id,
                domain: crate::domain::OrgDomain::parse("acme.com").unwrap(),
                status: crate::domain::DomainStatus::Verified,
                enrollment: crate::domain::Enrollment::Invite,
                claimed_at: now,
                pending_until: Some(now),
                verified_at: Some(now),
                verified_by: Some(user.clone()),
            },
        )
        .unwrap(),
        to_item(
            keys::scim_token_key(org.org_id, crate::domain::ScimTokenId::new()),
            &super::ScimTokenItem {
                entity_type: EntityType::ScimToken,
                org_id: org.org_id,
                token_id: crate::domain::ScimTokenId::new(),
                name: crate::domain::ScimTokenName::parse("Okta").unwrap(),
                token_hash: "h".into(),
                created_by: user.clone(),
                created_at: now,
                last_used_at: Some(now),
            },
        )
        .unwrap(),
        // An organization's counts and a directory's cursor.
        to_item(
            keys::org_counts_key(org.org_id),
            &super::OrgCountsItem {
                members: 2,
                directory_members: 1,
                suspended_members: 1,
                version: 3,
                exact: true,
            },
        )
        .unwrap(),
        to_item(
            keys::scim_cursor_key(org.org_id, "all", 101),
            &super::ScimCursorItem {
                entity_type: EntityType::ScimCursor,
                after: "MEMBER#u".into(),
                ttl: now.unix_seconds(),
            },
        )
        .unwrap(),
        // A directory's identity's own names (a map in the member's half; the
        // write conditions `directory.provisioned`).
        to_item(
            keys::member_key(org.org_id, &user),
            &super::DirectoryIdentity {
                user_name: "ada".into(),
                external_id: Some("e".into()),
                provisioned: true,
            },
        )
        .unwrap(),
        // A rate-limit counter, as the SCIM pace writes one.
        to_item(
            keys::scim_creations_key(now.unix_seconds()),
            &LimitItem {
                entity_type: EntityType::RateLimit,
                events: vec![now.unix_seconds()],
                version: 1,
                first_added_at: None,
                ttl: now.unix_seconds(),
            },
        )
        .unwrap(),
        to_item(
            keys::purge_key(org.org_id),
            &PurgeItem {
                attempted_at: Some(now),
                members_removed: 3,
                failed_turns: 1,
                ..PurgeItem::new(org.org_id, now)
            },
        )
        .unwrap(),
    ]
    .into_iter()
    .flat_map(|item| item.into_keys())
    .collect();
    for name in attr::ALL {
        assert!(stored.contains(*name), "{name} is not a stored attribute");
    }
}

/// A reservation names its user as the address's owner whether the address
/// was removed or added back unverified: a sign-up it blocks is another
/// account's address, refused for good, never "try again" (issue item 8).
#[test]
fn a_reserved_claim_is_owned_until_the_reservation_lapses_added_back_or_not() {
    let now = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
    let user = UserId::parse("u").unwrap();
    let email = EmailAddress::parse("a@example.com").unwrap();
    let record = EmailItem::unverified(
        &user,
        EmailId::new(),
        &email,
        Canonicalization::NONE,
        "h".into(),
        now,
        now,
    );
    let until = now.plus_seconds(60);
    let verified = ClaimItem {
        expires_at: None,
        ..record.claim(None)
    };
    let unverified = record.claim(Some(now.plus_seconds(600)));
    let removed = ClaimItem {
        expires_at: None,
        reserved_until: Some(until),
        ..verified.clone()
    };
    let added_back = ClaimItem {
        reserved_until: Some(until),
        ..unverified.clone()
    };
    assert!(verified.is_owned(now));
    assert!(
        !unverified.is_owned(now),
        "an unverified claim yields to a confirmed sign-up"
    );
    assert!(removed.is_owned(now));
    assert!(added_back.is_owned(now), "added back unverified, still reserved");
    let after = until.plus_seconds(1);
    assert!(!removed.is_owned(after), "a lapsed reservation holds nothing");
    assert!(
        !added_back.is_owned(after),
        "a lapsed reservation leaves an unverified claim"
    );
    assert!(verified.is_owned(after));
}
