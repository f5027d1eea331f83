use serde_json::json;

use super::*;

fn address(raw: &str) -> EmailAddress {
    EmailAddress::parse(raw).unwrap()
}

fn acme() -> Domains {
    Domains([OrgDomain::parse("acme.example").unwrap()].into_iter().collect())
}

fn user(body: serde_json::Value) -> ScimUser {
    ScimUser::from_json(&body).unwrap()
}

fn id(raw: &str) -> UserId {
    UserId::parse(raw).unwrap()
}

fn free(_: &EmailAddress) -> Holder {
    Holder::Free
}

#[test]
fn a_create_at_a_verified_domain_makes_an_account_with_every_address_verified() {
    let ada = user(json!({ "userName": "ada", "emails": [
        { "value": "ada@acme.example", "primary": true }, { "value": "a.lovelace@acme.example" }
    ] }));
    assert_eq!(
        plan_create(&ada, &acme(), free).unwrap(),
        CreatePlan::NewAccount {
            primary: address("ada@acme.example"),
            addresses: vec![address("ada@acme.example"), address("a.lovelace@acme.example")],
        }
    );
    // No emails: Okta's login is the address.
    let okta = user(json!({ "userName": "Grace@Acme.example" }));
    assert!(matches!(
        plan_create(&okta, &acme(), free).unwrap(),
        CreatePlan::NewAccount { primary, .. } if primary == address("grace@acme.example")
    ));
}

#[test]
fn an_address_outside_the_verified_domains_is_refused_and_nothing_is_sent() {
    for emails in [
        json!([{ "value": "ada@gmail.com", "primary": true }]),
        json!([{ "value": "ada@acme.example", "primary": true }, { "value": "ada@gmail.com" }]),
        json!([{ "value": "ada@sub.acme.example" }]),
    ] {
        let err = plan_create(&user(json!({ "userName": "ada", "emails": emails })), &acme(), free).unwrap_err();
        assert_eq!(
            (err.status, err.detail.starts_with("emails: every address")),
            (400, true),
            "{emails}"
        );
    }
    let err = plan_create(&user(json!({ "userName": "not an address" })), &acme(), free).unwrap_err();
    assert_eq!(err.detail, "emails: a user needs an address");
}

#[test]
fn an_existing_account_is_linked_by_its_verified_domain_address_never_taken() {
    let ada = user(json!({ "userName": "ada", "emails": [
        { "value": "ada@acme.example", "primary": true }, { "value": "ada2@acme.example" }
    ] }));
    let holder = |a: &EmailAddress| {
        if a.as_str() == "ada@acme.example" {
            Holder::Verified(id("sub-ada"))
        } else {
            Holder::Free
        }
    };
    assert_eq!(
        plan_create(&ada, &acme(), holder).unwrap(),
        CreatePlan::Link { user: id("sub-ada") },
        "a linked account's addresses are the person's: the others listed are not added"
    );
    // Another address held by someone else: nobody's address is moved (a
    // link adds none).
    let holder = |a: &EmailAddress| match a.as_str() {
        "ada@acme.example" => Holder::Verified(id("sub-ada")),
        _ => Holder::Verified(id("sub-bob")),
    };
    assert_eq!(
        plan_create(&ada, &acme(), holder).unwrap(),
        CreatePlan::Link { user: id("sub-ada") }
    );
    // A new account never takes an address someone holds verified.
    let holder = |a: &EmailAddress| {
        if a.as_str() == "ada2@acme.example" {
            Holder::Verified(id("sub-bob"))
        } else {
            Holder::Free
        }
    };
    assert_eq!(plan_create(&ada, &acme(), holder).unwrap_err().status, 409);
    // One being verified yields, as it would to a sign-up: the organization proved the domain.
    let holder = |_: &EmailAddress| Holder::Pending(id("sub-bob"));
    assert!(matches!(
        plan_create(&ada, &acme(), holder).unwrap(),
        CreatePlan::NewAccount { .. }
    ));
}

fn facts(addresses: &[(&str, bool)], primary: &str, organizations: u32, provisioned: bool) -> AccountFacts {
    AccountFacts {
        addresses: addresses.iter().map(|(a, v)| (address(a), *v)).collect(),
        primary: address(primary),
        organizations,
        provisioned,
        role: Role::Member,
    }
}

#[test]
fn the_directory_sees_and_changes_only_the_organizations_addresses() {
    // A provisioned account the person made their own too (a verified address of theirs).
    let personal = facts(
        &[("ada@gmail.com", true), ("ada@acme.example", true)],
        "ada@gmail.com",
        1,
        true,
    );
    let shown: Vec<&str> = shown_addresses(&personal, &acme())
        .into_iter()
        .map(EmailAddress::as_str)
        .collect();
    assert_eq!(shown, ["ada@acme.example"]);
    assert!(!personal.alone(&acme()));
    // The directory swaps the work address and asks for it as primary: the
    // work addresses change, the person's primary does not, nor their profile.
    let after = user(json!({ "userName": "ada", "emails": [{ "value": "lovelace@acme.example", "primary": true }] }));
    let plan = plan_update(&personal, &after, &acme(), free, &id("sub-ada")).unwrap();
    assert_eq!(
        plan,
        UpdatePlan {
            manages_profile: false,
            added: vec![address("lovelace@acme.example")],
            removed: vec![address("ada@acme.example")],
            primary: None,
        }
    );
}

#[test]
fn an_account_the_organization_alone_uses_is_the_directorys_to_manage() {
    let work = facts(
        &[("ada@acme.example", true), ("a@acme.example", true)],
        "ada@acme.example",
        1,
        true,
    );
    let after = user(json!({ "userName": "ada", "emails": [
        { "value": "ada@acme.example" }, { "value": "a@acme.example", "primary": true }
    ] }));
    let plan = plan_update(&work, &after, &acme(), free, &id("sub-ada")).unwrap();
    assert!(plan.manages_profile);
    assert_eq!(plan.primary, Some(address("a@acme.example")));
    assert!(plan.added.is_empty() && plan.removed.is_empty());
    // Removing the primary without another is refused: one verified primary, always.
    let after =
        user(json!({ "userName": "ada", "emails": [{ "value": "a@acme.example" }, { "value": "b@acme.example" }] }));
    assert_eq!(
        plan_update(&work, &after, &acme(), free, &id("sub-ada"))
            .unwrap_err()
            .status,
        400
    );
    // An address someone else holds is never moved.
    let after = user(
        json!({ "userName": "ada", "emails": [{ "value": "ada@acme.example", "primary": true }, { "value": "bob@acme.example" }] }),
    );
    let bob = |_: &EmailAddress| Holder::Verified(id("sub-bob"));
    assert_eq!(
        plan_update(&work, &after, &acme(), bob, &id("sub-ada"))
            .unwrap_err()
            .status,
        409
    );
    // Nor one outside the domains added.
    let after = user(json!({ "userName": "ada", "emails": [{ "value": "ada@gmail.com" }] }));
    assert_eq!(
        plan_update(&work, &after, &acme(), free, &id("sub-ada"))
            .unwrap_err()
            .status,
        400
    );
}

#[test]
fn only_an_account_the_organization_made_and_alone_uses_is_erased() {
    let made_alone = facts(&[("ada@acme.example", true)], "ada@acme.example", 1, true);
    assert_eq!(plan_delete(&made_alone, &acme()), Ok(DeletePlan::Erase));
    // Another organization uses it.
    let shared = facts(
        &[("ada@acme.example", true), ("a2@acme.example", true)],
        "ada@acme.example",
        2,
        true,
    );
    assert_eq!(
        plan_delete(&shared, &acme()),
        Ok(DeletePlan::Leave {
            removed: vec![address("a2@acme.example")]
        })
    );
    // The person added an address of their own.
    let personal = facts(
        &[("ada@acme.example", true), ("ada@gmail.com", true)],
        "ada@gmail.com",
        1,
        true,
    );
    assert_eq!(
        plan_delete(&personal, &acme()),
        Ok(DeletePlan::Leave {
            removed: vec![address("ada@acme.example")]
        })
    );
    // The person signed up themselves and the directory linked them.
    let signed_up = facts(&[("ada@acme.example", true)], "ada@acme.example", 1, false);
    assert_eq!(
        plan_delete(&signed_up, &acme()),
        Ok(DeletePlan::Leave { removed: vec![] })
    );
    // A linked member keeps every address, their domain addresses included.
    let linked = facts(
        &[("ada@acme.example", true), ("a2@acme.example", true)],
        "ada@acme.example",
        1,
        false,
    );
    assert_eq!(plan_delete(&linked, &acme()), Ok(DeletePlan::Leave { removed: vec![] }));
    // An admin or an owner, even one the directory made, is the owners' to remove.
    for role in [Role::Admin, Role::Owner] {
        let privileged = AccountFacts {
            role,
            ..made_alone.clone()
        };
        assert_eq!(plan_delete(&privileged, &acme()).unwrap_err().status, 400, "{role:?}");
    }
    // An unverified address of the person's own does not make the account theirs.
    let pending = facts(
        &[("ada@acme.example", true), ("ada@gmail.com", false)],
        "ada@acme.example",
        1,
        true,
    );
    assert_eq!(plan_delete(&pending, &acme()), Ok(DeletePlan::Erase));
}

#[test]
fn an_updates_addresses_are_written_removed_added_switched_then_the_former_primary_removed() {
    let ours = facts(
        &[("ada@acme.example", true), ("old@acme.example", true)],
        "ada@acme.example",
        1,
        true,
    );
    let after = user(json!({
        "userName": "ada",
        "emails": [{ "value": "lovelace@acme.example", "primary": true }, { "value": "al@acme.example" }],
    }));
    let primary = address("ada@acme.example");
    let mut plan = plan_update(&ours, &after, &acme(), free, &id("sub-ada")).unwrap();
    // Room first: an account at its most addresses still takes the new ones.
    assert_eq!(
        plan.next_step(&primary),
        Some(AddressStep::Remove(address("old@acme.example")))
    );
    plan.removed.retain(|a| *a != address("old@acme.example"));
    assert_eq!(
        plan.next_step(&primary),
        Some(AddressStep::Add(address("lovelace@acme.example")))
    );
    plan.added.clear();
    // The new primary exists before the switch; the former primary goes last.
    assert_eq!(
        plan.next_step(&primary),
        Some(AddressStep::Primary(address("lovelace@acme.example")))
    );
    plan.primary = None;
    assert_eq!(
        plan.next_step(&primary),
        Some(AddressStep::Remove(address("ada@acme.example")))
    );
    plan.removed.clear();
    assert_eq!(plan.next_step(&primary), None, "then the names and active");
}

/// The takeover of issue 56: an admin's token links the owner, or a
/// stranger's links a person at the domain, then re-addresses them.
#[test]
fn a_directory_never_re_addresses_or_renames_an_account_it_only_linked() {
    let linked = facts(&[("owner@acme.example", true)], "owner@acme.example", 1, false);
    let before = user(json!({ "userName": "owner", "name": { "givenName": "Olga" },
        "emails": [{ "value": "owner@acme.example", "primary": true }] }));
    let takeover = user(json!({ "userName": "owner",
        "emails": [{ "value": "attacker+o@acme.example", "primary": true }] }));
    let refused = within_standing(&linked, &before, &takeover).unwrap_err();
    assert_eq!(
        (refused.status, refused.detail.starts_with("emails: a linked member")),
        (400, true)
    );
    // Adding one beside theirs is re-addressing too.
    let added = user(json!({ "userName": "owner", "emails": [
        { "value": "owner@acme.example", "primary": true }, { "value": "attacker@acme.example" }
    ] }));
    assert_eq!(within_standing(&linked, &before, &added).unwrap_err().status, 400);
    // Suspending, renaming the directory's own names: within its standing,
    // and the plan writes no address, no primary and no name of the person's.
    let suspended = user(
        json!({ "userName": "o.2", "active": false, "name": { "givenName": "Mallory" },
        "emails": [{ "value": "owner@acme.example", "primary": true }] }),
    );
    assert_eq!(within_standing(&linked, &before, &suspended), Ok(true));
    let plan = plan_update(&linked, &suspended, &acme(), free, &id("sub-o")).unwrap();
    assert_eq!(
        plan,
        UpdatePlan::default(),
        "nothing of the person's is the directory's"
    );
    // Even an account the organization alone uses, when it did not make it.
    assert!(linked.alone(&acme()) && !linked.managed(&acme()));
}

#[test]
fn an_admins_or_an_owners_membership_is_never_the_directorys_to_change() {
    for role in [Role::Admin, Role::Owner] {
        let made = AccountFacts {
            role,
            ..facts(&[("ada@acme.example", true)], "ada@acme.example", 1, true)
        };
        assert_eq!(made.standing(), Standing::Privileged);
        let before = user(json!({ "userName": "ada", "emails": [{ "value": "ada@acme.example", "primary": true }] }));
        // The same User again (a directory's routine sync): a no-op, nothing written.
        assert_eq!(within_standing(&made, &before, &before), Ok(false));
        for after in [
            json!({ "userName": "ada", "active": false, "emails": [{ "value": "ada@acme.example", "primary": true }] }),
            json!({ "userName": "ada.2", "emails": [{ "value": "ada@acme.example", "primary": true }] }),
            json!({ "userName": "ada", "emails": [{ "value": "new@acme.example", "primary": true }] }),
        ] {
            let refused = within_standing(&made, &before, &user(after.clone())).unwrap_err();
            assert_eq!(refused.status, 400, "{role:?} {after}");
        }
    }
}

#[test]
fn a_provisioned_member_is_managed_only_while_the_organization_alone_uses_it() {
    let made = facts(&[("ada@acme.example", true)], "ada@acme.example", 1, true);
    assert_eq!(made.standing(), Standing::Provisioned);
    assert!(made.managed(&acme()));
    let joined_elsewhere = AccountFacts {
        organizations: 2,
        ..made.clone()
    };
    assert!(!joined_elsewhere.managed(&acme()));
}

#[test]
fn a_reserved_address_links_nobody_and_is_nobody_elses() {
    // A former primary its account can still take back: never a link's key,
    // never a new account's address, never added to another.
    let ada = user(json!({ "userName": "ada", "emails": [{ "value": "ada@acme.example", "primary": true }] }));
    let reserved = |_: &EmailAddress| Holder::Reserved(id("sub-bob"));
    assert_eq!(plan_create(&ada, &acme(), reserved).unwrap_err().status, 409);
    let work = facts(&[("a@acme.example", true)], "a@acme.example", 1, true);
    let after = user(json!({ "userName": "a", "emails": [
        { "value": "a@acme.example", "primary": true }, { "value": "ada@acme.example" }
    ] }));
    assert_eq!(
        plan_update(&work, &after, &acme(), reserved, &id("sub-a"))
            .unwrap_err()
            .status,
        409
    );
}
