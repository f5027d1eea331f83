//! The deployment's address policy through the HTTP routes and pre-sign-up,
//! against DynamoDB Local: canonical uniqueness (`EMAIL_CANONICALIZATION`) on
//! every path that reads or writes a claim or GSI1, and the refusals
//! (`BLOCK_SUBADDRESSES`, `BLOCK_DISPOSABLE_DOMAINS`, `ALLOWED_EMAIL_DOMAINS`).

use futures::future::join_all;
use integration_tests::logs::LogCapture;
use user_service::address_policy::{AddressPolicy, Canonicalization};
use user_service::app::App;
use user_service::config::ConfigError;

use crate::handler_support::*;

const BOB: &str = "5d2c7a91-3e4f-4a6b-9c8d-7e6f5a4b3c2d";

fn policy(canonicalization: &str) -> AddressPolicy {
    AddressPolicy::default().canonicalizing(Canonicalization::parse(canonicalization).unwrap())
}

#[tokio::test]
async fn under_gmail_every_spelling_of_a_taken_address_is_taken_and_under_none_it_is_not() {
    let app = TestApp::spawn_with_policy(policy("gmail")).await;
    app.sign_up(ADA, "ada@gmail.com").await;
    app.sign_up(BOB, "bob@example.com").await;
    let items = app.item_count().await;

    // Another account: taken, on every path, whatever the spelling.
    app.add_email(BOB, "a.d.a@googlemail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.add_email(BOB, "A.D.A+news@Gmail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    let err = app.pre_sign_up(BOB, "A.D.A@googlemail.com").await.unwrap_err();
    assert_eq!(err.error_type, "EMAIL_TAKEN", "{err:?}");
    // The owner: added already.
    app.add_email(ADA, "a.d.a+1@gmail.com")
        .await
        .assert_problem(409, "EMAIL_ALREADY_ADDED");
    assert_eq!(app.item_count().await, items, "nothing written");
    let check = app.check_email(BOB, "a.da+x@gmail.com").await;
    check.assert_status(200);
    assert_eq!(
        (&check.body["email"], &check.body["available"]),
        (&"a.da+x@gmail.com".into(), &false.into()),
        "the check names the address as typed"
    );

    // An admin who types any spelling finds the owner.
    app.sign_up(ADMIN, "grace@example.com").await;
    let found = app.find_user_by_email(ADMIN, "a.d.a+x@googlemail.com").await;
    found.assert_status(200);
    assert_eq!(found.body["profile"]["userId"], ADA, "{found:?}");
    // Other domains keep their dots and tags apart.
    app.add_address(BOB, "b.ob+x@example.com").await;
    app.add_address(ADA, "bob+x@example.com").await;
    app.assert_invariants().await;

    // The default policy: the seed's, every spelling its own.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@gmail.com").await;
    app.sign_up(BOB, "bob@example.com").await;
    app.add_address(BOB, "a.d.a@googlemail.com").await;
    app.add_address(BOB, "ada+news@gmail.com").await;
    assert!(app.pre_sign_up(NOBODY, "a.d.a@gmail.com").await.is_ok());
    app.assert_invariants().await;
}

#[tokio::test]
async fn under_subaddress_tags_are_ignored_on_every_domain_and_dots_are_kept() {
    let app = TestApp::spawn_with_policy(policy("subaddress")).await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(BOB, "bob@example.com").await;
    app.add_email(BOB, "ada+tag@example.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.add_address(BOB, "a.da@example.com").await;
    app.add_address(BOB, "ada@gmail.com").await;
    app.add_email(ADA, "a.d.a+x@gmail.com").await.assert_status(201);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_canonical_address_lives_its_whole_life_as_typed_and_frees_every_spelling_when_it_goes() {
    let app = TestApp::spawn_with_policy(policy("gmail,subaddress")).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(BOB, "bob@example.com").await;

    // Added, shown, verified and made primary as typed.
    let id = app.add_address(ADA, "A.Da+Work@GoogleMail.com").await;
    let listed = app.list_emails(ADA).await;
    let shown: Vec<&str> = listed.body["emails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["email"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["ada@example.com", "a.da+work@googlemail.com"]);
    app.clock.advance(61);
    app.send_verification(ADA, &id).await.assert_status(202);
    app.verify_email(ADA, &id, &logs.code_for(&id)).await.assert_status(200);
    let primary = app.set_primary_email(ADA, &id).await;
    primary.assert_status(200);
    assert_eq!(primary.body["email"], "a.da+work@googlemail.com");
    app.assert_invariants().await;
    // A sign-up with another spelling of the address Cognito signs Ada in with is refused.
    app.cognito_holds_primary(ADA).await;
    let err = app.pre_sign_up(NOBODY, "ada+other@gmail.com").await.unwrap_err();
    assert_eq!(err.error_type, "EMAIL_TAKEN", "{err:?}");

    // Removed: reserved to Ada while her switch away from it can be undone,
    // in every spelling; then every spelling is free again.
    let old = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &old).await.assert_status(204);
    app.add_email(BOB, "ada+again@example.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.clock.advance(app.store.config().address_recovery_seconds + 1);
    app.add_address(BOB, "ada+again@example.com").await;
    app.assert_invariants().await;

    // Deleted: the canonical claim goes with the account.
    let etag = app.get_profile(ADA).await.header("etag").unwrap().to_owned();
    app.delete_account(ADA, &etag).await.assert_status(204);
    app.add_address(BOB, "ada@gmail.com").await;
    app.assert_invariants().await;
}

#[tokio::test]
async fn twenty_concurrent_adds_of_spellings_of_one_address_end_with_one_owner() {
    let app = TestApp::spawn_with_policy(policy("gmail,subaddress")).await;
    let users: Vec<String> = (0..20)
        .map(|i| format!("{i:08x}-2b7d-4b0e-9a57-0e0f0b1c2d3e"))
        .collect();
    for (i, user) in users.iter().enumerate() {
        app.sign_up(user, &format!("user{i}@example.com")).await;
    }
    let spellings: Vec<String> = (0..20)
        .map(|i| {
            let dotted = if i % 2 == 0 { "j.o.e" } else { "jo.e" };
            let domain = if i % 3 == 0 { "googlemail.com" } else { "gmail.com" };
            format!("{dotted}+{i}@{domain}")
        })
        .collect();
    let replies = join_all(
        users
            .iter()
            .zip(&spellings)
            .map(|(user, spelling)| app.add_email(user, spelling)),
    )
    .await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let taken = replies
        .iter()
        .filter(|r| r.status == 409 && r.body["code"] == "EMAIL_TAKEN")
        .count();
    // Contention may leave a loser with 503 (retry later); never a second owner.
    let unavailable = replies.iter().filter(|r| r.status == 503).count();
    assert_eq!(created, 1, "{replies:?}");
    assert_eq!(created + taken + unavailable, 20, "{replies:?}");
    app.assert_invariants().await;
}

#[tokio::test]
async fn each_refusal_answers_422_with_its_reason_writes_nothing_and_refuses_the_sign_up_too() {
    let policy = AddressPolicy::default()
        .blocking_subaddresses()
        .blocking_disposable_domains("throwaway.example")
        .unwrap();
    let app = TestApp::spawn_with_policy(policy).await;
    app.sign_up(ADA, "ada@example.com").await;
    let items = app.item_count().await;
    for (address, reason) in [
        ("ada+news@example.com", "subaddress"),
        ("ada@mailinator.com", "disposable_domain"),
        ("ada@inbox.mailinator.com", "disposable_domain"),
        ("ada@throwaway.example", "disposable_domain"),
    ] {
        let reply = app.add_email(ADA, address).await;
        reply.assert_problem(422, "ADDRESS_NOT_ALLOWED");
        assert_eq!(reply.body["reason"], reason, "{address}: {reply:?}");
        assert!(
            !reply.body.to_string().contains(address),
            "the answer never echoes the address"
        );
        let check = app.check_email(ADA, address).await;
        check.assert_problem(422, "ADDRESS_NOT_ALLOWED");
        assert_eq!(check.body["reason"], reason);
        let err = app.pre_sign_up(NOBODY, address).await.unwrap_err();
        assert_eq!(err.error_type, "ADDRESS_NOT_ALLOWED", "{err:?}");
        assert!(err.error_message.starts_with("ADDRESS_NOT_ALLOWED: "), "{err:?}");
    }
    assert_eq!(
        app.item_count().await,
        items,
        "nothing written, not even a counted check"
    );
    // What the policy allows goes through.
    app.add_address(ADA, "ada.news@example.com").await;
    assert!(app.pre_sign_up(NOBODY, "someone@example.org").await.is_ok());
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_allow_list_closes_sign_up_and_adds_to_other_domains() {
    let policy = AddressPolicy::default()
        .allowing_only("example.com, *.example.org")
        .unwrap();
    let app = TestApp::spawn_with_policy(policy).await;
    app.sign_up(ADA, "ada@example.com").await;
    for address in ["ada@gmail.com", "ada@example.org", "ada@eu.example.com"] {
        let reply = app.add_email(ADA, address).await;
        reply.assert_problem(422, "ADDRESS_NOT_ALLOWED");
        assert_eq!(reply.body["reason"], "domain_not_allowed");
        let err = app.pre_sign_up(NOBODY, address).await.unwrap_err();
        assert_eq!(err.error_type, "ADDRESS_NOT_ALLOWED", "{address}: {err:?}");
    }
    app.add_address(ADA, "ada@eu.example.org").await;
    assert!(app.pre_sign_up(NOBODY, "bob@example.com").await.is_ok());
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_policy_the_function_cannot_read_stops_it_at_init_naming_the_variable() {
    for (name, value) in [
        ("EMAIL_CANONICALIZATION", "dots"),
        ("BLOCK_DISPOSABLE_DOMAINS", "yes"),
        ("ALLOWED_EMAIL_DOMAINS", "*."),
    ] {
        let lookup = move |var: &str| match var {
            "TABLE_NAME" => Some("t".to_owned()),
            _ if var == name => Some(value.to_owned()),
            _ => None,
        };
        let err = App::from_lookup(&CHECK_EMAIL, lookup).await.unwrap_err();
        assert!(
            matches!(&err, ConfigError::Invalid { name: n, .. } if *n == name),
            "{err}"
        );
    }
}

#[tokio::test]
async fn cycling_spellings_of_one_inbox_buys_no_more_codes_than_one_spelling() {
    let spelling = |i: usize| {
        let local: String = "victim"
            .chars()
            .enumerate()
            .flat_map(|(at, c)| if at == i % 6 { vec![c, '.'] } else { vec![c] })
            .collect();
        format!("{local}+{i}@gmail.com")
    };
    let cap = user_service::config::StoreConfig::DEFAULT_MAX_CODES_PER_USER_ADDRESS as usize;
    let app = TestApp::spawn_with_policy(policy("gmail")).await;
    app.sign_up(BOB, "bob@example.com").await;
    // Add, remove, add another spelling: each add is a code to the same inbox.
    for i in 0..cap {
        let id = app.add_address(BOB, &spelling(i)).await;
        app.remove_email(BOB, &id).await.assert_status(204);
    }
    app.add_email(BOB, &spelling(cap))
        .await
        .assert_problem(429, "TOO_MANY_REQUESTS");
    app.assert_invariants().await;
}
