//! add-email, send-verification, verify-email, set-primary-email, remove-email, check-email.

use integration_tests::http::{Event, LogCapture, Reply};
use serde_json::json;
use user_service::api::{add_email, check_email, remove_email, set_primary_email};
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

#[tokio::test]
async fn add_verify_switch_and_remove() {
    let app = app().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    sign_up(&app, ADA, "ada@example.com").await;

    let reply = Reply::from(
        add_email::handle(&app, Event::load("add-email").request())
            .await
            .unwrap(),
    );
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
    let reply = verify(&app, ADA, &id, &code).await;
    reply.assert_status(200);
    assert_eq!(reply.body["isVerified"], true);
    assert!(reply.body["verifiedAt"].is_string());

    let event = Event::load("set-primary-email").body(json!({ "emailId": id }));
    let reply = Reply::from(set_primary_email::handle(&app, event.request()).await.unwrap());
    reply.assert_status(200);
    assert_eq!(reply.body["email"], "ada.work@example.com");
    assert_eq!(reply.header("etag"), Some("\"2\""));

    // The old primary can go now; the new one cannot.
    let old = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap()[0]
        .email_id
        .to_string();
    let reply = Reply::from(
        remove_email::handle(&app, Event::load("remove-email").path_param("emailId", &id).request())
            .await
            .unwrap(),
    );
    reply.assert_problem(409, "PRIMARY_EMAIL");
    let reply = Reply::from(
        remove_email::handle(&app, Event::load("remove-email").path_param("emailId", &old).request())
            .await
            .unwrap(),
    );
    reply.assert_status(204);
    let reply = Reply::from(
        remove_email::handle(&app, Event::load("remove-email").path_param("emailId", &old).request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
    assert_invariants(&app).await;
}

#[tokio::test]
async fn add_email_errors() {
    let app = app_with(|c| c.max_emails_per_user = 2).await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let count = item_count(&app).await;
    let base = || Event::load("add-email");
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
        (base().caller("nobody"), 404, "NOT_FOUND"),
    ];
    for (event, status, code) in cases {
        Reply::from(add_email::handle(&app, event.request()).await.unwrap()).assert_problem(status, code);
    }
    assert_eq!(item_count(&app).await, count, "nothing was written");
    let reply = Reply::from(
        add_email::handle(&app, base().body(json!({"email": "x@example.com"})).request())
            .await
            .unwrap(),
    );
    assert_eq!(reply.body["field"], json!(null));
    reply.assert_status(201);
    let reply = Reply::from(
        add_email::handle(&app, base().body(json!({"email": "y@example.com"})).request())
            .await
            .unwrap(),
    );
    reply.assert_problem(409, "EMAIL_LIMIT_REACHED");
    app.store
        .set_status(&UserId::parse(ADMIN).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let reply = Reply::from(
        add_email::handle(
            &app,
            base().caller(ADMIN).body(json!({"email": "z@example.com"})).request(),
        )
        .await
        .unwrap(),
    );
    reply.assert_problem(403, "ACCOUNT_INACTIVE");
    let reply = Reply::from(
        add_email::handle(&app, base().body(json!({"email": "bad@"})).request())
            .await
            .unwrap(),
    );
    assert_eq!(reply.body["field"], "email");
}

#[tokio::test]
async fn verification_errors() {
    let app = app_with(|c| c.verification_max_attempts = 2).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let id = add(&app, ADA, "ada.work@example.com").await;
    let code = logs.code_for(&id);
    let wrong = if code == "000000" { "111111" } else { "000000" };

    verify(&app, ADMIN, &id, &code).await.assert_problem(404, "NOT_FOUND");
    verify(&app, ADA, "not-a-uuid", &code)
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    verify(&app, ADA, &id, "12ab")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let reply = verify(&app, ADA, &id, wrong).await;
    reply.assert_problem(400, "VERIFICATION_FAILED");
    assert_eq!(reply.body["attemptsLeft"], 1);
    verify(&app, ADA, &id, wrong)
        .await
        .assert_problem(400, "VERIFICATION_FAILED");
    verify(&app, ADA, &id, &code)
        .await
        .assert_problem(429, "TOO_MANY_ATTEMPTS");

    // A new code at most once a minute.
    let reply = resend(&app, ADA, &id).await;
    reply.assert_problem(429, "TOO_MANY_REQUESTS");
    let retry_after: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after));
    resend(&app, ADMIN, &id).await.assert_problem(404, "NOT_FOUND");
    resend(&app, ADA, "nope").await.assert_problem(400, "VALIDATION_FAILED");
    resend(&app, ADA, &id).await;
    let primary = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap()[0]
        .email_id
        .to_string();
    resend(&app, ADA, &primary)
        .await
        .assert_problem(409, "EMAIL_ALREADY_VERIFIED");
    let event = Event::load("set-primary-email").body(json!({ "emailId": id }));
    Reply::from(set_primary_email::handle(&app, event.request()).await.unwrap())
        .assert_problem(409, "EMAIL_NOT_VERIFIED");
    let event = Event::load("set-primary-email").body(json!({ "emailId": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" }));
    Reply::from(set_primary_email::handle(&app, event.request()).await.unwrap()).assert_problem(404, "NOT_FOUND");
    let event = Event::load("set-primary-email").body(json!({ "emailId": 7 }));
    Reply::from(set_primary_email::handle(&app, event.request()).await.unwrap())
        .assert_problem(400, "VALIDATION_FAILED");

    let other = add(&app, ADMIN, "grace.work@example.com").await;
    let other_code = logs.code_for(&other);
    app.store
        .set_status(&UserId::parse(ADMIN).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    verify(&app, ADMIN, &other, &other_code)
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&UserId::parse(ADA).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let event = Event::load("remove-email").path_param("emailId", &id);
    Reply::from(remove_email::handle(&app, event.request()).await.unwrap()).assert_problem(403, "ACCOUNT_INACTIVE");
    assert_invariants(&app).await;
}

#[tokio::test]
async fn a_new_code_replaces_the_old_one() {
    let app = app().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    sign_up(&app, ADA, "ada@example.com").await;
    let id = add(&app, ADA, "ada.work@example.com").await;
    let first = logs.code_for(&id);
    // Within the resend interval: refused, with the seconds left.
    let early = resend(&app, ADA, &id).await;
    early.assert_problem(429, "TOO_MANY_REQUESTS");
    assert_eq!(early.header("retry-after"), Some("60"));
    app.clock.advance(59);
    assert_eq!(resend(&app, ADA, &id).await.header("retry-after"), Some("1"));
    // Past it: a fresh code, and only the newest one verifies.
    app.clock.advance(1);
    resend(&app, ADA, &id).await.assert_status(202);
    let second = logs.code_for(&id);
    let issued = logs
        .lines()
        .iter()
        .filter(|l| l["message"] == "verification code issued")
        .count();
    assert_eq!(issued, 2);
    if first != second {
        verify(&app, ADA, &id, &first)
            .await
            .assert_problem(400, "VERIFICATION_FAILED");
    }
    verify(&app, ADA, &id, &second).await.assert_status(200);
}

#[tokio::test]
async fn an_expired_code_is_gone_and_a_new_one_works() {
    let app = app_with(|c| c.code_ttl_seconds = 600).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    sign_up(&app, ADA, "ada@example.com").await;
    let id = add(&app, ADA, "ada.work@example.com").await;
    let first = logs.code_for(&id);
    app.clock.advance(600);
    verify(&app, ADA, &id, &first)
        .await
        .assert_problem(410, "VERIFICATION_EXPIRED");
    resend(&app, ADA, &id).await.assert_status(202);
    verify(&app, ADA, &id, &logs.code_for(&id)).await.assert_status(200);
    assert_invariants(&app).await;
}

#[tokio::test]
async fn check_email_normalizes_and_answers() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let ask = |email: &str| Event::load("check-email").query("email", email).request();
    let reply = Reply::from(check_email::handle(&app, ask(" ADA@Example.com")).await.unwrap());
    reply.assert_status(200);
    assert_eq!(reply.body, json!({"email": "ada@example.com", "available": false}));
    let reply = Reply::from(check_email::handle(&app, ask("free@example.com")).await.unwrap());
    assert_eq!(reply.body, json!({"email": "free@example.com", "available": true}));
    let reply = Reply::from(check_email::handle(&app, ask("nope")).await.unwrap());
    reply.assert_problem(400, "VALIDATION_FAILED");
    assert_eq!(reply.body["field"], "email");
    let reply = Reply::from(
        check_email::handle(&app, Event::load("check-email").no_query().request())
            .await
            .unwrap(),
    );
    reply.assert_problem(400, "VALIDATION_FAILED");
    let reply = Reply::from(
        check_email::handle(&app, Event::load("check-email").anonymous().request())
            .await
            .unwrap(),
    );
    reply.assert_problem(401, "UNAUTHENTICATED");
}
