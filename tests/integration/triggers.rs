//! The Cognito triggers, with events shaped as Cognito sends them.

use futures::future::join_all;
use integration_tests::events;

use crate::handler_support::*;

#[tokio::test]
async fn pre_sign_up_passes_free_addresses_unchanged() {
    let app = TestApp::spawn().await;
    for name in ["pre-sign-up", "pre-sign-up-admin-create-user"] {
        let event = events::load(name);
        let out = app.invoke(&PRE_SIGN_UP, event.clone()).await.unwrap();
        assert_eq!(out, event, "{name} is returned unchanged");
    }
    assert_eq!(app.item_count().await, 0, "a pre-sign-up check writes nothing");
}

/// Pre-sign-up tells a stranger, before any proof, no more than Cognito's own
/// sign-up does: that an address is some user's sign-in address. Another
/// account's verified secondary address passes; an unverified one too.
#[tokio::test]
async fn pre_sign_up_refuses_only_addresses_accounts_sign_in_with() {
    use integration_tests::logs::LogCapture;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "ada@example.com").await;
    let err = app.pre_sign_up("someone", " ADA@example.com").await.unwrap_err();
    assert!(err.error_message.starts_with("EMAIL_TAKEN"), "{err:?}");
    assert!(!err.error_message.contains("ada@"), "{err:?}");

    // A live unverified claim never blocks a sign-up: the sign-up will take it over.
    app.add_address(ADMIN, "pending@example.com").await;
    app.pre_sign_up("someone", "pending@example.com").await.unwrap();

    // A verified secondary address is not what Cognito signs Ada in with: a
    // stranger learns nothing of it here (the confirmation, once the mailbox is
    // proved, closes such a sign-up).
    let id = app.add_address(ADMIN, "ada.work@example.com").await;
    app.verify_email(ADMIN, &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    app.pre_sign_up("someone", "ada.work@example.com").await.unwrap();

    // Made primary, it becomes Cognito's once the switch reaches Cognito; until
    // then Cognito still has the former one, and so does this check.
    app.set_primary_email(ADMIN, &id).await.assert_status(200);
    app.pre_sign_up("someone", "ada.work@example.com").await.unwrap();
    app.pre_sign_up("someone", "ada@example.com").await.unwrap_err();
    app.cognito_holds_primary(ADMIN).await;
    app.pre_sign_up("someone", "ada.work@example.com").await.unwrap_err();
    app.pre_sign_up("someone", "ada@example.com").await.unwrap();

    let err = app.pre_sign_up("someone", "not an address").await.unwrap_err();
    assert!(err.error_message.starts_with("VALIDATION_FAILED"));
}

#[tokio::test]
async fn post_confirmation_creates_the_user_once_however_often_delivered() {
    let app = TestApp::spawn().await;
    let event = events::load("post-confirmation");
    let deliveries = join_all((0..4).map(|_| app.invoke(&POST_CONFIRMATION, event.clone()))).await;
    for out in deliveries {
        assert_eq!(
            out.unwrap(),
            event,
            "every delivery succeeds and returns the event unchanged"
        );
    }
    for _ in 0..2 {
        app.invoke(&POST_CONFIRMATION, event.clone()).await.unwrap();
    }
    assert_eq!(app.item_count().await, 3);
    let reply = app.get_account(ADA).await;
    reply.assert_status(200);
    let profile = &reply.body["profile"];
    assert_eq!(
        (profile["firstName"].as_str(), profile["lastName"].as_str()),
        (Some("Ada"), Some("Lovelace"))
    );
    assert_eq!(profile["phone"], "+14155550100");
    let primary = &reply.body["emails"][0];
    assert_eq!(
        (primary["isPrimary"].as_bool(), primary["isVerified"].as_bool()),
        (Some(true), Some(true))
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn post_confirmation_without_optional_attributes() {
    let app = TestApp::spawn().await;
    let mut event = cognito_event(&POST_CONFIRMATION, ADA, "ada@example.com");
    let attributes = event["request"]["userAttributes"].as_object_mut().unwrap();
    attributes.remove("given_name");
    attributes.remove("family_name");
    attributes.insert("phone_number".into(), "12345".into());
    app.invoke(&POST_CONFIRMATION, event).await.unwrap();
    let reply = app.get_account(ADA).await;
    let profile = &reply.body["profile"];
    assert!(
        profile["firstName"].is_null() && profile["lastName"].is_null() && profile["phone"].is_null(),
        "{profile}"
    );
}

#[tokio::test]
async fn confirmed_sign_up_takes_an_unverified_address_over() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    app.add_address(ADMIN, "ada@example.com").await;
    app.sign_up(ADA, "ada@example.com").await;
    let reply = app.get_account(ADMIN).await;
    assert_eq!(reply.body["emails"].as_array().unwrap().len(), 1);
    app.assert_invariants().await;
    // And a verified address is never taken over.
    let err = app.post_confirmation("third", "grace@example.com").await.unwrap_err();
    assert!(err.error_message.starts_with("EMAIL_TAKEN"));
}

#[tokio::test]
async fn confirm_forgot_password_writes_nothing() {
    let app = TestApp::spawn().await;
    let event = events::load("post-confirmation-forgot-password");
    let out = app.invoke(&POST_CONFIRMATION, event.clone()).await.unwrap();
    assert_eq!(out, event);
    assert_eq!(app.item_count().await, 0);
    let reply = app.add_email(ADA, "ada.work@example.com").await;
    reply.assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_confirmed_user_without_a_profile_gets_one_at_sign_in() {
    // Post-confirmation failed after Cognito's retries, or the user was made with
    // AdminCreateUser (no confirmation at all): the first sign-in repairs it.
    let app = TestApp::spawn().await;
    let mut event = cognito_event(&POST_AUTHENTICATION, ADA, "ada@example.com");
    event["request"]["userAttributes"]["email_verified"] = serde_json::json!("true");
    let out = app.invoke(&POST_AUTHENTICATION, event.clone()).await.unwrap();
    assert_eq!(out, event, "returned unchanged");
    let reply = app.get_account(ADA).await;
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["email"], "ada@example.com");
    assert_eq!(reply.body["emails"][0]["isPrimary"], true);
    assert_eq!(reply.body["emails"][0]["isVerified"], true);

    // Later sign-ins change nothing.
    let before = app.item_count().await;
    for _ in 0..3 {
        app.post_authentication(ADA, "ada@example.com", true).await.unwrap();
    }
    assert_eq!(app.item_count().await, before);
    app.assert_invariants().await;
}

#[tokio::test]
async fn no_profile_from_an_address_cognito_has_not_verified() {
    let app = TestApp::spawn().await;
    // A confirmation whose address Cognito has not verified makes no profile...
    let mut confirmation = cognito_event(&POST_CONFIRMATION, ADA, "ada@example.com");
    confirmation["request"]["userAttributes"]["email_verified"] = serde_json::json!("false");
    app.invoke(&POST_CONFIRMATION, confirmation).await.unwrap();
    // ...nor does a sign-in before it is verified, and no one's claim is taken over.
    app.sign_up(ADMIN, "grace@example.com").await;
    app.add_address(ADMIN, "ada@example.com").await;
    let before = app.item_count().await;
    app.post_authentication(ADA, "ada@example.com", false).await.unwrap();
    assert_eq!(app.item_count().await, before);
    app.get_account(ADA).await.assert_problem(404, "NOT_FOUND");
    // Once Cognito has verified it, the next sign-in creates the profile.
    app.post_authentication(ADA, "ada@example.com", true).await.unwrap();
    app.get_account(ADA).await.assert_status(200);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_deleted_account_cannot_sign_in() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = user_service::domain::UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, user_service::domain::UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    let err = app.post_authentication(ADA, "ada@example.com", true).await.unwrap_err();
    assert!(err.error_message.starts_with("ACCOUNT_DELETED"), "{err:?}");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_suspended_account_cannot_sign_in_before_cognito_disables_it() {
    // The sync disables a suspended user in Cognito; until it has, the sign-in
    // trigger refuses, so no fresh tokens reach an account an admin stopped.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = user_service::domain::UserId::parse(ADA).unwrap();
    let status = |s| app.store.set_status(&ada, s, app.clock.now());
    status(user_service::domain::UserStatus::Suspended).await.unwrap();
    let before = app.item_count().await;
    let err = app.post_authentication(ADA, "ada@example.com", true).await.unwrap_err();
    assert!(err.error_message.starts_with("ACCOUNT_SUSPENDED"), "{err:?}");
    assert_eq!(app.item_count().await, before, "a refused sign-in writes nothing");
    // Reactivated: the sign-in goes through again.
    status(user_service::domain::UserStatus::Active).await.unwrap();
    app.post_authentication(ADA, "ada@example.com", true).await.unwrap();
}

/// One person signs up; before they confirm, another account adds and verifies
/// the same address. Their confirmation, and any sign-in after it, would be
/// refused EMAIL_TAKEN for good: instead the sign-up is closed (its Cognito user,
/// which holds nothing here, is deleted) and the refusal says what to do next.
#[tokio::test]
async fn a_sign_up_confirmed_after_another_account_verified_its_address_is_closed_not_looped() {
    use integration_tests::logs::LogCapture;
    use integration_tests::moto::{Moto, cognito_user};
    use user_service::identity::UserPool;

    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let (cognito, pool, subs) = moto.user_pool(&["late@example.com", "later@example.com"]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::from_events(cognito.clone()));
    app.sign_up(ADMIN, "grace@example.com").await;
    for address in ["late@example.com", "later@example.com"] {
        let id = app.add_address(ADMIN, address).await;
        app.verify_email(ADMIN, &id, &logs.code_for(&id))
            .await
            .assert_status(200);
    }
    let before = app.item_count().await;

    // The confirmation of the first, and the first sign-in of the second (its
    // confirmation found Cognito had not verified the address yet).
    let mut confirmed = cognito_event(&POST_CONFIRMATION, &subs[0], "late@example.com");
    confirmed["userPoolId"] = serde_json::json!(pool);
    let mut signed_in = cognito_event(&POST_AUTHENTICATION, &subs[1], "later@example.com");
    signed_in["userPoolId"] = serde_json::json!(pool);
    for (function, event, sub) in [
        (&POST_CONFIRMATION, confirmed, &subs[0]),
        (&POST_AUTHENTICATION, signed_in, &subs[1]),
    ] {
        // Delivered twice, as Cognito retries: the same answer, nothing written.
        for _ in 0..2 {
            let refused = app.invoke(function, event.clone()).await.unwrap_err();
            assert_eq!(refused.error_type, "EMAIL_TAKEN", "{refused:?}");
            assert!(refused.error_message.contains("sign-up has been closed"), "{refused:?}");
            assert!(
                !refused.error_message.contains("example.com"),
                "no address in the message"
            );
        }
        // No sign-in can reach the trigger again: the Cognito user is gone, and
        // the address is free in Cognito for its owner's account.
        assert_eq!(cognito_user(&cognito, &pool, sub).await, None, "{sub}");
        app.get_profile(sub).await.assert_problem(404, "NOT_FOUND");
    }
    // The verified owner keeps both addresses; nothing else was written.
    assert_eq!(app.item_count().await, before);
    let emails = app.list_emails(ADMIN).await;
    let verified = emails.body["emails"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["isVerified"] == true)
        .count();
    assert_eq!(verified, 3);
    app.assert_invariants().await;
}

/// The closing of a sign-up must never reach an account that exists: a
/// confirmation delivered again (Cognito retries, or a replay) for a user who
/// has a profile, after their sign-up address went to another account, still
/// finds the user and leaves their Cognito user alone.
#[tokio::test]
async fn a_replayed_confirmation_of_an_existing_user_never_closes_their_account() {
    use integration_tests::logs::LogCapture;
    use integration_tests::moto::{Moto, cognito_user};
    use user_service::identity::UserPool;

    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let (cognito, pool, subs) = moto.user_pool(&["grace@example.com"]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::from_events(cognito.clone()));
    let grace = &subs[0];
    let mut confirmation = cognito_event(&POST_CONFIRMATION, grace, "grace@example.com");
    confirmation["userPoolId"] = serde_json::json!(pool);
    app.invoke(&POST_CONFIRMATION, confirmation.clone()).await.unwrap();

    // Grace moves to another address and drops the first; Ada takes it.
    let id = app.add_address(grace, "grace.new@example.com").await;
    app.verify_email(grace, &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    app.set_primary_email(grace, &id).await.assert_status(200);
    app.cognito_holds_primary(grace).await;
    let first = app.email_id_of(grace, "grace@example.com").await;
    app.remove_email(grace, &first).await.assert_status(204);
    // Reserved to Grace while her switch away from it can be undone; then free.
    app.clock.advance(app.store.config().address_recovery_seconds + 1);
    app.sign_up(ADA, "ada@example.com").await;
    let taken = app.add_address(ADA, "grace@example.com").await;
    app.verify_email(ADA, &taken, &logs.code_for(&taken))
        .await
        .assert_status(200);

    // The first confirmation, delivered again, and a sign-in: Grace exists.
    app.invoke(&POST_CONFIRMATION, confirmation).await.unwrap();
    let mut sign_in = cognito_event(&POST_AUTHENTICATION, grace, "grace@example.com");
    sign_in["userPoolId"] = serde_json::json!(pool);
    app.invoke(&POST_AUTHENTICATION, sign_in).await.unwrap();
    assert!(
        cognito_user(&cognito, &pool, grace).await.is_some(),
        "Grace keeps her Cognito user"
    );
    app.get_profile(grace).await.assert_status(200);
    app.assert_invariants().await;
}

/// While the table moves to a new address policy, another user's claim on an
/// address's previous form is theirs, verified or not, and blocks a sign-up
/// with it. Only another account's *verified* claim closes a sign-up: an
/// unverified one refuses it for now (`SERVICE_UNAVAILABLE`, as Cognito shows
/// a trigger's failure) and leaves its Cognito user alone, so the sign-in
/// after the move, or after the claim lapses, goes through.
#[tokio::test]
async fn a_sign_up_held_up_by_an_unverified_claim_while_the_policy_moves_is_never_closed() {
    use integration_tests::moto::{Moto, cognito_user};
    use user_service::address_policy::{AddressPolicy, Canonicalization};
    use user_service::identity::UserPool;

    let moto = Moto::start();
    let (cognito, pool, subs) = moto.user_pool(&["a.da@gmail.com"]).await;
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    // Under the old policy (none), Ada adds the address and never verifies it.
    app.add_address(ADA, "a.da@gmail.com").await;
    let mut moving = TestApp::on(
        app.store.clone().with_policy(
            AddressPolicy::default()
                .canonicalizing(Canonicalization::parse("gmail").unwrap())
                .moving_from(Canonicalization::NONE),
        ),
    );
    moving.users = Some(UserPool::from_events(cognito.clone()));
    let mut confirmation = cognito_event(&POST_CONFIRMATION, &subs[0], "a.da@gmail.com");
    confirmation["userPoolId"] = serde_json::json!(pool);
    let err = moving.invoke(&POST_CONFIRMATION, confirmation).await.unwrap_err();
    assert_eq!(err.error_type, "SERVICE_UNAVAILABLE", "{err:?}");
    assert!(
        cognito_user(&cognito, &pool, &subs[0]).await.is_some(),
        "the sign-up is not closed"
    );
    moving.assert_invariants().await;
}

/// An owner switches their primary, removes the former one and adds it back
/// unverified: it stays reserved to them for the recovery window. Another
/// person who signs up with it and confirms is refused `EMAIL_TAKEN` and their
/// sign-up closed, as for any address another account holds, never
/// `SERVICE_UNAVAILABLE` at every sign-in (issue: delegated power stays
/// bounded, item 8).
#[tokio::test]
async fn a_sign_up_with_a_former_primary_added_back_unverified_is_email_taken_and_closed() {
    use integration_tests::logs::LogCapture;
    use integration_tests::moto::{Moto, cognito_user};
    use user_service::domain::{EmailAddress, UserId};
    use user_service::identity::UserPool;

    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let (cognito, pool, subs) = moto.user_pool(&["ada@example.com"]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::from_events(cognito.clone()));
    app.sign_up(ADA, "ada@example.com").await;
    let new = app.add_address(ADA, "ada.new@example.com").await;
    app.verify_email(ADA, &new, &logs.code_for(&new))
        .await
        .assert_status(200);
    app.set_primary_email(ADA, &new).await.assert_status(200);
    app.cognito_holds_primary(ADA).await;
    let former = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &former).await.assert_status(204);
    app.add_address(ADA, "ada@example.com").await;
    let address = EmailAddress::parse("ada@example.com").unwrap();
    assert_eq!(
        app.store.verified_holder(&address, app.clock.now()).await.unwrap(),
        Some(UserId::parse(ADA).unwrap()),
        "the reservation names its account"
    );
    let before = app.item_count().await;

    let mut confirmed = cognito_event(&POST_CONFIRMATION, &subs[0], "ada@example.com");
    confirmed["userPoolId"] = serde_json::json!(pool);
    // Delivered twice, as Cognito retries: the same answer, nothing written.
    for _ in 0..2 {
        let refused = app.invoke(&POST_CONFIRMATION, confirmed.clone()).await.unwrap_err();
        assert_eq!(refused.error_type, "EMAIL_TAKEN", "{refused:?}");
        assert!(refused.error_message.contains("sign-up has been closed"), "{refused:?}");
    }
    assert_eq!(
        cognito_user(&cognito, &pool, &subs[0]).await,
        None,
        "the sign-up is closed"
    );
    app.get_profile(&subs[0]).await.assert_problem(404, "NOT_FOUND");
    // Ada keeps the address, unverified and hers, and nothing else was written.
    assert_eq!(app.item_count().await, before);
    let emails = app.list_emails(ADA).await;
    let kept = emails.body["emails"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["email"] == "ada@example.com")
        .cloned()
        .expect("Ada still has the address");
    assert_eq!(kept["isVerified"], false);
    app.assert_invariants().await;
}
