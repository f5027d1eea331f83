//! get-profile, get-account, update-profile, list-emails.

use serde_json::{Value, json};
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

/// The profile update-profile's event sends: Ada's own fields.
fn ada() -> Value {
    json!({"firstName": "Ada", "lastName": "Lovelace", "phone": "+14155550100"})
}

#[tokio::test]
async fn get_profile_returns_the_profile_with_its_etag() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "Ada@Example.com").await;
    let reply = app.get_profile(ADA).await;
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
    let app = TestApp::spawn().await;
    let reply = app.send(&GET_PROFILE, Event::of(&GET_PROFILE).anonymous()).await;
    reply.assert_problem(401, "UNAUTHENTICATED");
    let reply = app.get_profile(ADA).await;
    reply.assert_problem(404, "NOT_FOUND");
    app.sign_up(ADA, "ada@example.com").await;
    app.store
        .set_status(&UserId::parse(ADA).unwrap(), UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    let reply = app.get_profile(ADA).await;
    reply.assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_suspended_user_can_read_but_not_write() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada_id = UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada_id, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let reply = app.get_profile(ADA).await;
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "suspended");
    let reply = app.update_profile(ADA, "\"2\"", ada()).await;
    reply.assert_problem(403, "ACCOUNT_INACTIVE");
}

#[tokio::test]
async fn get_account_returns_profile_and_emails() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.add_address(ADA, "ada.work@example.com").await;
    let reply = app.get_account(ADA).await;
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["email"], "ada@example.com");
    let emails = reply.body["emails"].as_array().unwrap();
    assert_eq!(emails.len(), 2);
    assert_eq!(emails[0]["isPrimary"], true);
    assert_eq!(emails[1]["email"], "ada.work@example.com");
    assert_eq!(emails[1]["verifiedAt"], json!(null));
    let reply = app.get_account(NOBODY).await;
    reply.assert_problem(404, "NOT_FOUND");
    let reply = app.send(&GET_ACCOUNT, Event::of(&GET_ACCOUNT).anonymous()).await;
    reply.assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn list_emails_oldest_first() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let second = app.add_address(ADA, "b@example.com").await;
    let third = app.add_address(ADA, "c@example.com").await;
    let reply = app.list_emails(ADA).await;
    reply.assert_status(200);
    let emails = reply.body["emails"].as_array().unwrap();
    let ids: Vec<&str> = emails.iter().map(|e| e["emailId"].as_str().unwrap()).collect();
    assert_eq!(&ids[1..], &[second.as_str(), third.as_str()]);
    for e in emails {
        let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 6, "exactly the Email fields: {e}");
    }
    let reply = app.send(&LIST_EMAILS, Event::of(&LIST_EMAILS).anonymous()).await;
    reply.assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn update_profile_with_if_match() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let reply = app
        .update_profile(ADA, "\"1\"", json!({"firstName": "  Augusta ", "phone": null}))
        .await;
    reply.assert_status(200);
    assert_eq!(reply.header("etag"), Some("\"2\""));
    assert_eq!(reply.body["firstName"], "Augusta");
    assert_eq!(reply.body["lastName"], "Lovelace");
    assert_eq!(reply.body["phone"], json!(null));
    assert_eq!(reply.body["version"], 2);

    // The same If-Match again is stale now.
    let reply = app.update_profile(ADA, "\"1\"", ada()).await;
    reply.assert_problem(412, "VERSION_MISMATCH");
    // The weak form of the current tag never matches (strong comparison), and
    // changes nothing; the strong one does.
    for weak in ["W/\"2\"", "w/\"2\"", " W/\"2\""] {
        let reply = app.update_profile(ADA, weak, ada()).await;
        if weak.trim().starts_with('W') {
            reply.assert_problem(412, "VERSION_MISMATCH");
        } else {
            reply.assert_problem(400, "VALIDATION_FAILED");
        }
    }
    // No entity tag at all: 400. Well-formed tags that name no version: 412
    // (tests/integration/preconditions.rs holds the rest of RFC 9110).
    for malformed in ["2", "\"2", "garbage"] {
        let reply = app.update_profile(ADA, malformed, ada()).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "If-Match", "{malformed}");
    }
    for matches_nothing in ["\"\"", "\"-1\"", "\"0\""] {
        let reply = app.update_profile(ADA, matches_nothing, ada()).await;
        reply.assert_problem(412, "VERSION_MISMATCH");
    }
    let reply = app.update_profile(ADA, "\"2\"", ada()).await;
    reply.assert_status(200);
    assert_eq!(reply.body["phone"], "+14155550100");
    assert_eq!(reply.header("etag"), Some("\"3\""));
}

#[tokio::test]
async fn update_profile_refuses_bad_input_and_writes_nothing() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let before = app.get_profile(ADA).await.body;
    let base = || Event::of(&UPDATE_PROFILE);
    let cases: Vec<(Event, u16, &str, Option<&str>)> = vec![
        (base().without_header("if-match"), 428, "PRECONDITION_REQUIRED", None),
        (
            base().header("if-match", "garbage"),
            400,
            "VALIDATION_FAILED",
            Some("If-Match"),
        ),
        (base().caller("nobody"), 401, "UNAUTHENTICATED", None),
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
        let reply = app.send(&UPDATE_PROFILE, event).await;
        reply.assert_problem(status, code);
        if let Some(field) = field {
            assert_eq!(reply.body["field"], field, "{}", reply.body);
        }
    }
    let after = app.get_profile(ADA).await.body;
    assert_eq!(before, after, "nothing was written");
    let reply = app.update_profile(NOBODY, "\"1\"", ada()).await;
    reply.assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_deleted_or_unknown_caller_is_not_found_on_every_read() {
    // An access token outlives the account (60 minutes by default): after
    // DELETE /me it must not read an empty list or ask about addresses.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.delete_account(ADA, "\"1\"").await.assert_status(204);
    let nobody = uuid::Uuid::new_v4().to_string();
    for sub in [ADA, nobody.as_str()] {
        app.get_profile(sub).await.assert_problem(404, "NOT_FOUND");
        app.list_emails(sub).await.assert_problem(404, "NOT_FOUND");
        app.get_account(sub).await.assert_problem(404, "NOT_FOUND");
        app.check_email(sub, "free@example.com")
            .await
            .assert_problem(404, "NOT_FOUND");
        app.add_email(sub, "free@example.com")
            .await
            .assert_problem(404, "NOT_FOUND");
    }
    // A suspended caller reads as GET /me lets them: their list, and availability.
    app.sign_up(ADMIN, "grace@example.com").await;
    app.store
        .set_status(&UserId::parse(ADMIN).unwrap(), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.get_profile(ADMIN).await.assert_status(200);
    app.list_emails(ADMIN).await.assert_status(200);
    let reply = app.check_email(ADMIN, "free@example.com").await;
    reply.assert_status(200);
    assert_eq!(reply.body["available"], true);
    app.add_email(ADMIN, "free@example.com")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
}

#[tokio::test]
async fn names_with_line_or_paragraph_separators_are_refused_and_not_stored() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    for name in ["Ada\u{2028}Lovelace", "Ada\u{2029}Byron", "A\u{2028}\u{2029}B"] {
        for field in ["firstName", "lastName"] {
            let reply = app.update_profile(ADA, "\"1\"", json!({ field: name })).await;
            reply.assert_problem(400, "VALIDATION_FAILED");
            assert_eq!(reply.body["field"], field);
        }
    }
    let profile = app.store.get_profile(&UserId::parse(ADA).unwrap()).await.unwrap();
    assert_eq!((profile.version, profile.first_name.unwrap().as_str()), (1, "Ada"));
    // At either end they are whitespace, trimmed like any other: never stored.
    let reply = app
        .update_profile(ADA, "\"1\"", json!({"firstName": "\u{2029}Augusta\u{2028}"}))
        .await;
    reply.assert_status(200);
    assert_eq!(reply.body["firstName"], "Augusta");
}
