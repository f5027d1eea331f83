//! get-profile, get-account, update-profile, list-emails.

use integration_tests::http::{Event, Reply};
use serde_json::json;
use user_service::api::{get_account, get_profile, list_emails, update_profile};
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

#[tokio::test]
async fn get_profile_returns_the_profile_with_its_etag() {
    let app = app().await;
    sign_up(&app, ADA, "Ada@Example.com").await;
    let reply = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.header("etag"), Some("\"1\""));
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let b = &reply.body;
    assert_eq!(b["userId"], ADA);
    assert_eq!(b["email"], "ada@example.com");
    assert_eq!(
        (b["firstName"].as_str(), b["lastName"].as_str()),
        (Some("Ada"), Some("Lovelace"))
    );
    assert_eq!(b["phone"], "+14155550100");
    assert_eq!((b["status"].as_str(), b["version"].as_u64()), (Some("active"), Some(1)));
    assert!(b["createdAt"].as_str().unwrap().ends_with('Z') && b["updatedAt"].is_string());
    assert!(b.get("emailCount").is_none(), "internal counters stay internal");
}

#[tokio::test]
async fn get_profile_errors() {
    let app = app().await;
    let reply = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").anonymous().request())
            .await
            .unwrap(),
    );
    reply.assert_problem(401, "UNAUTHENTICATED");
    let reply = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
    sign_up(&app, ADA, "ada@example.com").await;
    app.store
        .set_status(&UserId::parse(ADA).unwrap(), UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    let reply = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_suspended_user_can_read_but_not_write() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let reply = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "suspended");
    let reply = Reply::from(
        update_profile::handle(
            &app,
            Event::load("update-profile").header("if-match", "\"2\"").request(),
        )
        .await
        .unwrap(),
    );
    reply.assert_problem(403, "ACCOUNT_INACTIVE");
}

#[tokio::test]
async fn get_account_returns_profile_and_emails() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    add(&app, ADA, "ada.work@example.com").await;
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["email"], "ada@example.com");
    let emails = reply.body["emails"].as_array().unwrap();
    assert_eq!(emails.len(), 2);
    assert_eq!(emails[0]["isPrimary"], true);
    assert_eq!(emails[1]["email"], "ada.work@example.com");
    assert_eq!(emails[1]["verifiedAt"], json!(null));
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").caller("nobody").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
    let reply = Reply::from(
        get_account::handle(&app, Event::load("get-account").anonymous().request())
            .await
            .unwrap(),
    );
    reply.assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn list_emails_oldest_first() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let second = add(&app, ADA, "b@example.com").await;
    let third = add(&app, ADA, "c@example.com").await;
    let reply = Reply::from(
        list_emails::handle(&app, Event::load("list-emails").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    let emails = reply.body["emails"].as_array().unwrap();
    let ids: Vec<&str> = emails.iter().map(|e| e["emailId"].as_str().unwrap()).collect();
    assert_eq!(&ids[1..], &[second.as_str(), third.as_str()]);
    for e in emails {
        let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 6, "exactly the Email fields: {e}");
    }
    let reply = Reply::from(
        list_emails::handle(&app, Event::load("list-emails").anonymous().request())
            .await
            .unwrap(),
    );
    reply.assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn update_profile_with_if_match() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let reply = Reply::from(
        update_profile::handle(
            &app,
            Event::load("update-profile")
                .body(json!({"firstName": "  Augusta ", "phone": null}))
                .request(),
        )
        .await
        .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.header("etag"), Some("\"2\""));
    assert_eq!(reply.body["firstName"], "Augusta");
    assert_eq!(reply.body["lastName"], "Lovelace");
    assert_eq!(reply.body["phone"], json!(null));
    assert_eq!(reply.body["version"], 2);

    // The same If-Match again is stale now.
    let reply = Reply::from(
        update_profile::handle(&app, Event::load("update-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(412, "VERSION_MISMATCH");
    // The weak form of the current tag never matches (strong comparison), and
    // changes nothing; the strong one does.
    for weak in ["W/\"2\"", "w/\"2\"", " W/\"2\""] {
        let reply = Reply::from(
            update_profile::handle(&app, Event::load("update-profile").header("if-match", weak).request())
                .await
                .unwrap(),
        );
        if weak.trim().starts_with('W') {
            reply.assert_problem(412, "VERSION_MISMATCH");
        } else {
            reply.assert_problem(400, "VALIDATION_FAILED");
        }
    }
    for malformed in ["2", "\"\"", "\"2", "*", "\"-1\"", "\"0\""] {
        let event = Event::load("update-profile").header("if-match", malformed);
        let reply = Reply::from(update_profile::handle(&app, event.request()).await.unwrap());
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "If-Match", "{malformed}");
    }
    let reply = Reply::from(
        update_profile::handle(
            &app,
            Event::load("update-profile").header("if-match", "\"2\"").request(),
        )
        .await
        .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["phone"], "+14155550100");
    assert_eq!(reply.header("etag"), Some("\"3\""));
}

#[tokio::test]
async fn update_profile_refuses_bad_input_and_writes_nothing() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    let before = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    )
    .body;
    let base = || Event::load("update-profile");
    let cases: Vec<(Event, u16, &str, Option<&str>)> = vec![
        (base().without_header("if-match"), 428, "PRECONDITION_REQUIRED", None),
        (
            base().header("if-match", "*"),
            400,
            "VALIDATION_FAILED",
            Some("If-Match"),
        ),
        (
            base().body(json!({"phone": "0800 123"})),
            400,
            "VALIDATION_FAILED",
            Some("phone"),
        ),
        (
            base().body(json!({"firstName": ""})),
            400,
            "VALIDATION_FAILED",
            Some("firstName"),
        ),
        (
            base().body(json!({"firstName": null})),
            400,
            "VALIDATION_FAILED",
            Some("firstName"),
        ),
        (
            base().body(json!({"lastName": "x".repeat(101)})),
            400,
            "VALIDATION_FAILED",
            Some("lastName"),
        ),
        (
            base().body(json!({"firstName": 5})),
            400,
            "VALIDATION_FAILED",
            Some("firstName"),
        ),
        (base().body(json!({"nickname": "Ada"})), 400, "VALIDATION_FAILED", None),
        (base().body(json!({})), 400, "VALIDATION_FAILED", Some("body")),
        (base().raw_body("{not json"), 400, "VALIDATION_FAILED", None),
        (base().raw_body(""), 400, "VALIDATION_FAILED", Some("body")),
        (
            base().header("content-type", "text/plain"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        (
            base().body(json!({"firstName": "a".repeat(17 * 1024)})),
            413,
            "PAYLOAD_TOO_LARGE",
            None,
        ),
        (base().anonymous(), 401, "UNAUTHENTICATED", None),
    ];
    for (event, status, code, field) in cases {
        let reply = Reply::from(update_profile::handle(&app, event.request()).await.unwrap());
        reply.assert_problem(status, code);
        if let Some(field) = field {
            assert_eq!(reply.body["field"], field, "{}", reply.body);
        }
    }
    let after = Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    )
    .body;
    assert_eq!(before, after, "nothing was written");
    let reply = Reply::from(
        update_profile::handle(&app, base().caller("nobody").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(404, "NOT_FOUND");
}
