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

#[tokio::test]
async fn pre_sign_up_refuses_only_verified_addresses() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "ada@example.com").await;
    let err = app.pre_sign_up("someone", " ADA@example.com").await.unwrap_err();
    assert!(err.error_message.starts_with("EMAIL_TAKEN"), "{err:?}");
    assert!(!err.error_message.contains("ada@"), "{err:?}");

    // A live unverified claim never blocks a sign-up: the sign-up will take it over.
    app.add_address(ADMIN, "pending@example.com").await;
    app.pre_sign_up("someone", "pending@example.com").await.unwrap();

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
