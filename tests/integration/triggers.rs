//! The Cognito triggers, with events shaped as Cognito sends them.

use futures::future::join_all;
use integration_tests::events;
use integration_tests::http::{Event, Reply};
use lambda_runtime::{Context, LambdaEvent};
use user_service::api::{add_email, get_account, post_authentication, post_confirmation, pre_sign_up};

use crate::handler_support::*;

#[tokio::test]
async fn pre_sign_up_passes_free_addresses_unchanged() {
    let app = app().await;
    for name in ["pre-sign-up", "pre-sign-up-admin-create-user"] {
        let event = events::load(name);
        let out = pre_sign_up::handle(&app, LambdaEvent::new(event.clone(), Context::default()))
            .await
            .unwrap();
        assert_eq!(out, event, "{name} is returned unchanged");
    }
    assert_eq!(item_count(&app).await, 0, "a pre-sign-up check writes nothing");
}

#[tokio::test]
async fn pre_sign_up_refuses_only_verified_addresses() {
    let app = app().await;
    sign_up(&app, ADMIN, "ada@example.com").await;
    let err = pre_sign_up::handle(&app, cognito_event("pre-sign-up", "someone", " ADA@example.com"))
        .await
        .unwrap_err();
    assert!(err.error_message.starts_with("EMAIL_TAKEN"), "{err:?}");
    assert!(!err.error_message.contains("ada@"), "{err:?}");

    // A live unverified claim never blocks a sign-up: the sign-up will take it over.
    add(&app, ADMIN, "pending@example.com").await;
    pre_sign_up::handle(&app, cognito_event("pre-sign-up", "someone", "pending@example.com"))
        .await
        .unwrap();

    let err = pre_sign_up::handle(&app, cognito_event("pre-sign-up", "someone", "not an address"))
        .await
        .unwrap_err();
    assert!(err.error_message.starts_with("VALIDATION_FAILED"));
}

#[tokio::test]
async fn post_confirmation_creates_the_user_once_however_often_delivered() {
    let app = app().await;
    let event = events::load("post-confirmation");
    let deliveries =
        join_all((0..4).map(|_| post_confirmation::handle(&app, LambdaEvent::new(event.clone(), Context::default()))))
            .await;
    for out in deliveries {
        assert_eq!(
            out.unwrap(),
            event,
            "every delivery succeeds and returns the event unchanged"
        );
    }
    for _ in 0..2 {
        post_confirmation::handle(&app, LambdaEvent::new(event.clone(), Context::default()))
            .await
            .unwrap();
    }
    assert_eq!(item_count(&app).await, 3);
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    );
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
    assert_invariants(&app).await;
}

#[tokio::test]
async fn post_confirmation_without_optional_attributes() {
    let app = app().await;
    let mut event = cognito_event("post-confirmation", ADA, "ada@example.com");
    let attributes = event.payload["request"]["userAttributes"].as_object_mut().unwrap();
    attributes.remove("given_name");
    attributes.remove("family_name");
    attributes.insert("phone_number".into(), "12345".into());
    post_confirmation::handle(&app, event).await.unwrap();
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    );
    let profile = &reply.body["profile"];
    assert!(
        profile["firstName"].is_null() && profile["lastName"].is_null() && profile["phone"].is_null(),
        "{profile}"
    );
}

#[tokio::test]
async fn confirmed_sign_up_takes_an_unverified_address_over() {
    let app = app().await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    add(&app, ADMIN, "ada@example.com").await;
    sign_up(&app, ADA, "ada@example.com").await;
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").caller(ADMIN).request())
            .await
            .unwrap(),
    );
    assert_eq!(reply.body["emails"].as_array().unwrap().len(), 1);
    assert_invariants(&app).await;
    // And a verified address is never taken over.
    let err = post_confirmation::handle(&app, cognito_event("post-confirmation", "third", "grace@example.com"))
        .await
        .unwrap_err();
    assert!(err.error_message.starts_with("EMAIL_TAKEN"));
}

#[tokio::test]
async fn confirm_forgot_password_writes_nothing() {
    let app = app().await;
    let event = events::load("post-confirmation-forgot-password");
    let out = post_confirmation::handle(&app, LambdaEvent::new(event.clone(), Context::default()))
        .await
        .unwrap();
    assert_eq!(out, event);
    assert_eq!(item_count(&app).await, 0);
    let reply = Reply::from(
        add_email::handle(&app, Event::load("add-email").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
}

/// A sign-in as Cognito reports it: the user's attributes as Cognito holds them.
fn sign_in(sub: &str, email: &str, verified: bool) -> LambdaEvent<serde_json::Value> {
    let mut event = cognito_event("post-authentication", sub, email);
    event.payload["request"]["userAttributes"]["email_verified"] = serde_json::json!(verified.to_string());
    event
}

#[tokio::test]
async fn a_confirmed_user_without_a_profile_gets_one_at_sign_in() {
    // Post-confirmation failed after Cognito's retries, or the user was made with
    // AdminCreateUser (no confirmation at all): the first sign-in repairs it.
    let app = app().await;
    let event = sign_in(ADA, "ada@example.com", true);
    let out = post_authentication::handle(&app, LambdaEvent::new(event.payload.clone(), Context::default()))
        .await
        .unwrap();
    assert_eq!(out, event.payload, "returned unchanged");
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["email"], "ada@example.com");
    assert_eq!(reply.body["emails"][0]["isPrimary"], true);
    assert_eq!(reply.body["emails"][0]["isVerified"], true);

    // Later sign-ins change nothing.
    let before = item_count(&app).await;
    for _ in 0..3 {
        post_authentication::handle(&app, sign_in(ADA, "ada@example.com", true))
            .await
            .unwrap();
    }
    assert_eq!(item_count(&app).await, before);
    assert_invariants(&app).await;
}

#[tokio::test]
async fn no_profile_from_an_address_cognito_has_not_verified() {
    let app = app().await;
    // A confirmation whose address Cognito has not verified makes no profile...
    let mut confirmation = cognito_event("post-confirmation", ADA, "ada@example.com");
    confirmation.payload["request"]["userAttributes"]["email_verified"] = serde_json::json!("false");
    post_confirmation::handle(&app, confirmation).await.unwrap();
    // ...nor does a sign-in before it is verified, and no one's claim is taken over.
    sign_up(&app, ADMIN, "grace@example.com").await;
    add(&app, ADMIN, "ada@example.com").await;
    let before = item_count(&app).await;
    post_authentication::handle(&app, sign_in(ADA, "ada@example.com", false))
        .await
        .unwrap();
    assert_eq!(item_count(&app).await, before);
    Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    )
    .assert_problem(404, "NOT_FOUND");
    // Once Cognito has verified it, the next sign-in creates the profile.
    post_authentication::handle(&app, sign_in(ADA, "ada@example.com", true))
        .await
        .unwrap();
    Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    )
    .assert_status(200);
    assert_invariants(&app).await;
}

#[tokio::test]
async fn a_deleted_account_cannot_sign_in() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let ada = user_service::domain::UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, user_service::domain::UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    let err = post_authentication::handle(&app, sign_in(ADA, "ada@example.com", true))
        .await
        .unwrap_err();
    assert!(err.error_message.starts_with("ACCOUNT_DELETED"), "{err:?}");
    assert_invariants(&app).await;
}
