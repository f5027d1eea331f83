//! add-email, send-verification, verify-email, set-primary-email, remove-email, check-email.

use integration_tests::logs::LogCapture;
use serde_json::json;
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

#[tokio::test]
async fn add_verify_switch_and_remove() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;

    let reply = app.add_email(ADA, "ada.work@example.com").await;
    reply.assert_status(201);
    let id = reply.body["emailId"].as_str().unwrap().to_owned();
    assert_eq!(reply.header("location"), Some(format!("/me/emails/{id}").as_str()));
    assert_eq!(reply.body["email"], "ada.work@example.com");
    assert_eq!(
        (reply.body["isPrimary"].as_bool(), reply.body["isVerified"].as_bool()),
        (Some(false), Some(false))
    );

    let code = logs.code_for(&id);
    assert_eq!(code.len(), 6);
    let reply = app.verify_email(ADA, &id, &code).await;
    reply.assert_status(200);
    assert_eq!(reply.body["isVerified"], true);
    assert!(reply.body["verifiedAt"].is_string());

    let reply = app.set_primary_email(ADA, &id).await;
    reply.assert_status(200);
    assert_eq!(reply.body["email"], "ada.work@example.com");
    assert_eq!(reply.header("etag"), Some("\"2\""));

    // The old primary can go once Cognito holds the new one; the new one cannot.
    let old = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap()[0]
        .email_id
        .to_string();
    let reply = app.remove_email(ADA, &id).await;
    reply.assert_problem(409, "PRIMARY_EMAIL");
    let reply = app.remove_email(ADA, &old).await;
    reply.assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    app.cognito_holds_primary(ADA).await;
    let reply = app.remove_email(ADA, &old).await;
    reply.assert_status(204);
    let reply = app.remove_email(ADA, &old).await;
    reply.assert_problem(404, "NOT_FOUND");
    app.assert_invariants().await;
}

/// A profile written before the address Cognito holds was kept, and not yet
/// settled by a pass: its first switch records the former primary as what
/// Cognito signs in with, in the switch's own write, so the former primary
/// waits for the sync as a newer profile's does.
#[tokio::test]
async fn an_older_profiles_first_switch_keeps_the_former_primary_until_cognito_follows() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    let user = UserId::parse(ADA).unwrap();
    integration_tests::ddb::client()
        .update_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(user_service::store::keys::profile_key(&user)))
        .update_expression("REMOVE cognitoEmail")
        .send()
        .await
        .unwrap();
    let work = app.add_address(ADA, "ada.work@example.com").await;
    app.verify_email(ADA, &work, &logs.code_for(&work))
        .await
        .assert_status(200);
    let home = app.add_address(ADA, "ada.home@example.com").await;
    app.verify_email(ADA, &home, &logs.code_for(&home))
        .await
        .assert_status(200);
    app.set_primary_email(ADA, &work).await.assert_status(200);
    let former = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &former)
        .await
        .assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    // A second switch before the sync keeps what Cognito still holds.
    app.set_primary_email(ADA, &home).await.assert_status(200);
    app.remove_email(ADA, &former)
        .await
        .assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    // The address in between was never Cognito's: it goes at once.
    app.remove_email(ADA, &work).await.assert_status(204);
    app.cognito_holds_primary(ADA).await;
    app.remove_email(ADA, &former).await.assert_status(204);
    app.assert_invariants().await;
}

/// The caller's own address, unverified and past its hold, is not "available"
/// to them: the add would answer that they have it already.
#[tokio::test]
async fn an_address_the_caller_added_is_never_available_to_them_even_lapsed() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.add_address(ADA, "ada.work@example.com").await;
    app.clock.advance(app.store.config().verification_ttl_seconds + 1);
    let check = app.check_email(ADA, "ada.work@example.com").await;
    check.assert_status(200);
    assert_eq!(check.body["available"], false, "{check:?}");
    app.add_email(ADA, "ada.work@example.com")
        .await
        .assert_problem(409, "EMAIL_ALREADY_ADDED");
    // Anyone else may add it now, and is told so.
    app.sign_up(ADMIN, "grace@example.com").await;
    assert_eq!(
        app.check_email(ADMIN, "ada.work@example.com").await.body["available"],
        true
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn add_email_errors() {
    let app = TestApp::spawn_with(|c| c.max_emails_per_user = 2).await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let count = app.item_count().await;
    let base = || Event::of(&ADD_EMAIL);
    let cases: Vec<(Event, u16, &str)> = vec![
        (base().body(json!({"email": "grace@example.com"})), 409, "EMAIL_TAKEN"),
        (
            base().body(json!({"email": "ADA@example.com"})),
            409,
            "EMAIL_ALREADY_ADDED",
        ),
        (
            base().body(json!({"email": "not-an-address"})),
            400,
            "VALIDATION_FAILED",
        ),
        (base().body(json!({})), 400, "VALIDATION_FAILED"),
        (
            base().body(json!({"email": "a@example.com", "primary": true})),
            400,
            "VALIDATION_FAILED",
        ),
        (
            base().header("content-type", "application/xml"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (base().raw_body(&" ".repeat(16 * 1024 + 1)), 413, "PAYLOAD_TOO_LARGE"),
        (base().anonymous(), 401, "UNAUTHENTICATED"),
        (base().caller(NOBODY), 404, "NOT_FOUND"),
        (base().caller("nobody"), 401, "UNAUTHENTICATED"),
    ];
    for (event, status, code) in cases {
        app.send(&ADD_EMAIL, event).await.assert_problem(status, code);
    }
    assert_eq!(app.item_count().await, count, "nothing was written");
    let reply = app.add_email(ADA, "x@example.com").await;
    assert_eq!(reply.body["field"], json!(null));
    reply.assert_status(201);
    let reply = app.add_email(ADA, "y@example.com").await;
    reply.assert_problem(409, "EMAIL_LIMIT_REACHED");
    app.store
        .set_status(&UserId::parse(ADMIN).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let reply = app.add_email(ADMIN, "z@example.com").await;
    reply.assert_problem(403, "ACCOUNT_INACTIVE");
    let reply = app.add_email(ADA, "bad@").await;
    assert_eq!(reply.body["field"], "email");
}

#[tokio::test]
async fn verification_errors() {
    let app = TestApp::spawn_with(|c| c.verification_max_attempts = 2).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let id = app.add_address(ADA, "ada.work@example.com").await;
    let code = logs.code_for(&id);
    let wrong = if code == "000000" { "111111" } else { "000000" };

    app.verify_email(ADMIN, &id, &code)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.verify_email(ADA, "not-a-uuid", &code)
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    app.verify_email(ADA, &id, "12ab")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let reply = app.verify_email(ADA, &id, wrong).await;
    reply.assert_problem(400, "VERIFICATION_FAILED");
    assert_eq!(reply.body["attemptsLeft"], 1);
    app.verify_email(ADA, &id, wrong)
        .await
        .assert_problem(400, "VERIFICATION_FAILED");
    app.verify_email(ADA, &id, &code)
        .await
        .assert_problem(429, "TOO_MANY_ATTEMPTS");

    // A new code at most once a minute.
    let reply = app.send_verification(ADA, &id).await;
    reply.assert_problem(429, "TOO_MANY_REQUESTS");
    let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after));
    app.send_verification(ADMIN, &id).await.assert_problem(404, "NOT_FOUND");
    app.send_verification(ADA, "nope")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    app.send_verification(ADA, &id).await;
    let primary = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap()[0]
        .email_id
        .to_string();
    app.send_verification(ADA, &primary)
        .await
        .assert_problem(409, "EMAIL_ALREADY_VERIFIED");
    app.set_primary_email(ADA, &id)
        .await
        .assert_problem(409, "EMAIL_NOT_VERIFIED");
    app.set_primary_email(ADA, "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
        .await
        .assert_problem(404, "NOT_FOUND");
    let event = Event::of(&SET_PRIMARY_EMAIL).caller(ADA).body(json!({ "emailId": 7 }));
    app.send(&SET_PRIMARY_EMAIL, event)
        .await
        .assert_problem(400, "VALIDATION_FAILED");

    let other = app.add_address(ADMIN, "grace.work@example.com").await;
    let other_code = logs.code_for(&other);
    app.store
        .set_status(&UserId::parse(ADMIN).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.verify_email(ADMIN, &other, &other_code)
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&UserId::parse(ADA).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.remove_email(ADA, &id).await.assert_problem(403, "ACCOUNT_INACTIVE");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_new_code_replaces_the_old_one() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    let id = app.add_address(ADA, "ada.work@example.com").await;
    let first = logs.code_for(&id);
    // Within the resend interval: refused, with the seconds left.
    let early = app.send_verification(ADA, &id).await;
    early.assert_problem(429, "TOO_MANY_REQUESTS");
    assert_eq!(early.header("retry-after"), Some("60"));
    app.clock.advance(59);
    assert_eq!(app.send_verification(ADA, &id).await.header("retry-after"), Some("1"));
    // Past it: a fresh code, and only the newest one verifies.
    app.clock.advance(1);
    app.send_verification(ADA, &id).await.assert_status(202);
    let second = logs.code_for(&id);
    let issued = logs
        .lines()
        .iter()
        .filter(|l| l["message"] == "verification code issued")
        .count();
    assert_eq!(issued, 2);
    if first != second {
        app.verify_email(ADA, &id, &first)
            .await
            .assert_problem(400, "VERIFICATION_FAILED");
    }
    app.verify_email(ADA, &id, &second).await.assert_status(200);
}

#[tokio::test]
async fn an_expired_code_is_gone_and_a_new_one_works() {
    let app = TestApp::spawn_with(|c| c.code_ttl_seconds = 600).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    let id = app.add_address(ADA, "ada.work@example.com").await;
    let first = logs.code_for(&id);
    app.clock.advance(600);
    app.verify_email(ADA, &id, &first)
        .await
        .assert_problem(410, "VERIFICATION_EXPIRED");
    app.send_verification(ADA, &id).await.assert_status(202);
    app.verify_email(ADA, &id, &logs.code_for(&id)).await.assert_status(200);
    app.assert_invariants().await;
}

#[tokio::test]
async fn check_email_normalizes_and_answers() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let reply = app.check_email(ADA, " ADA@Example.com").await;
    reply.assert_status(200);
    assert_eq!(reply.body, json!({"email": "ada@example.com", "available": false}));
    let reply = app.check_email(ADA, "free@example.com").await;
    assert_eq!(reply.body, json!({"email": "free@example.com", "available": true}));
    let reply = app.check_email(ADA, "nope").await;
    reply.assert_problem(400, "VALIDATION_FAILED");
    assert_eq!(reply.body["field"], "email");
    let reply = app.send(&CHECK_EMAIL, Event::of(&CHECK_EMAIL).no_query()).await;
    reply.assert_problem(400, "VALIDATION_FAILED");
    let reply = app.send(&CHECK_EMAIL, Event::of(&CHECK_EMAIL).anonymous()).await;
    reply.assert_problem(401, "UNAUTHENTICATED");
}
