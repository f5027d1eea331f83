//! find-user-by-email, set-user-status, and what every handler shares: 5xx
//! bodies without internals, and logs without PII.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::types::error::ResourceNotFoundException;
use aws_smithy_mocks::{RuleMode, mock, mock_client};
use integration_tests::logs::LogCapture;
use serde_json::json;
use user_service::config::StoreConfig;
use user_service::{App, Store};

use crate::handler_support::*;
use user_service::domain::{UserId, UserStatus};

#[tokio::test]
async fn admins_find_users_by_email() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let reply = app.find_user_by_email(ADMIN, "ada@example.com").await;
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["userId"], ADA);
    assert_eq!(reply.body["emails"].as_array().unwrap().len(), 1);

    app.find_user_by_email(ADMIN, "nobody@example.com")
        .await
        .assert_problem(404, "NOT_FOUND");
    app.find_user_by_email(ADMIN, "bad")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let ask = |email: &str| Event::of(&FIND_USER_BY_EMAIL).query("email", email);
    // The JSON-array form of the groups claim works too.
    let reply = app
        .send(
            &FIND_USER_BY_EMAIL,
            ask("ada@example.com").groups(r#"["editors","admin"]"#),
        )
        .await;
    reply.assert_status(200);
    for event in [
        ask("ada@example.com").groups("[editors]"),
        ask("ada@example.com").no_groups(),
        Event::of(&GET_PROFILE).query("email", "ada@example.com"),
    ] {
        app.send(&FIND_USER_BY_EMAIL, event)
            .await
            .assert_problem(403, "FORBIDDEN");
    }
    app.send(&FIND_USER_BY_EMAIL, ask("ada@example.com").anonymous())
        .await
        .assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn admins_suspend_and_delete_users() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let reply = app.set_user_status(ADMIN, ADA, "suspended").await;
    reply.assert_status(200);
    assert_eq!(
        (reply.body["status"].as_str(), reply.body["version"].as_u64()),
        (Some("suspended"), Some(2))
    );
    assert_eq!(reply.header("etag"), Some("\"2\""));

    app.set_user_status(ADMIN, ADA, "gone")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let status = |s: &str| Event::of(&SET_USER_STATUS).body(json!({ "status": s }));
    app.send(&SET_USER_STATUS, status("active").no_groups())
        .await
        .assert_problem(403, "FORBIDDEN");
    app.set_user_status(ADMIN, "nobody", "active")
        .await
        .assert_problem(404, "NOT_FOUND");
    app.set_user_status(ADMIN, "a#b", "active")
        .await
        .assert_problem(400, "VALIDATION_FAILED");

    let reply = app.set_user_status(ADMIN, ADA, "deleted").await;
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "deleted");
    app.get_profile(ADA).await.assert_problem(404, "NOT_FOUND");
    // The address is free again.
    app.sign_up("new-owner", "ada@example.com").await;
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_status_the_user_already_has_is_still_refused_to_an_admin_no_longer_active() {
    // Admitted, then suspended before the write: even a change that changes
    // nothing checks the admin's own profile inside the write.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let now = app.clock.now();
    let (ada, admin) = (UserId::parse(ADA).unwrap(), UserId::parse(ADMIN).unwrap());
    let set = app
        .store
        .set_status_as_admin(&admin, &ada, UserStatus::Suspended, now)
        .await
        .unwrap();
    assert!(set.changed);
    let again = app
        .store
        .set_status_as_admin(&admin, &ada, UserStatus::Suspended, now)
        .await
        .unwrap();
    assert!(!again.changed, "already suspended");
    assert_eq!(again.profile.version, set.profile.version, "nothing written");
    app.store.set_status(&admin, UserStatus::Suspended, now).await.unwrap();
    let refused = app
        .store
        .set_status_as_admin(&admin, &ada, UserStatus::Suspended, now)
        .await;
    assert!(
        matches!(refused, Err(user_service::StoreError::AdminInactive)),
        "{refused:?}"
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn admins_do_not_set_their_own_status() {
    // Suspending or deleting oneself would lock the admin out mid-session;
    // closing one's own account is DELETE /me with If-Match.
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let before = app.get_profile(ADMIN).await;
    for status in ["suspended", "deleted", "active"] {
        app.set_user_status(ADMIN, ADMIN, status)
            .await
            .assert_problem(403, "FORBIDDEN");
    }
    let after = app.get_profile(ADMIN).await;
    after.assert_status(200);
    assert_eq!(after.body, before.body, "nothing written");
}

#[tokio::test]
async fn an_admin_delete_racing_suspensions_still_deletes() {
    // The concurrent workload found it: a suspension moving the version under
    // the delete was answered ACCOUNT_INACTIVE instead of being read again.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let toggles = (0..4).map(|i| {
        let app = app.clone();
        tokio::spawn(async move {
            let status = if i % 2 == 0 { "suspended" } else { "active" };
            app.set_user_status(ADMIN, ADA, status).await.status
        })
    });
    let toggles: Vec<_> = toggles.collect();
    let delete = app.set_user_status(ADMIN, ADA, "deleted").await;
    delete.assert_status(200);
    for toggle in toggles {
        let status = toggle.await.unwrap();
        assert!(matches!(status, 200 | 404), "a toggle answered {status}");
    }
    app.get_profile(ADA).await.assert_problem(404, "NOT_FOUND");
    app.assert_invariants().await;
}

fn failing_app(rule: &aws_smithy_mocks::Rule) -> TestApp {
    let client: Client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [rule]);
    TestApp::from(App::new(Store::new(client, StoreConfig::new("mocked"))))
}

#[tokio::test]
async fn server_side_failures_hide_internals() {
    let logs = LogCapture::default();
    let _guard = logs.install();
    let throttled = mock!(Client::get_item).then_error(|| {
        GetItemError::ProvisionedThroughputExceededException(
            aws_sdk_dynamodb::types::error::ProvisionedThroughputExceededException::builder()
                .message("secret-detail-1")
                .build(),
        )
    });
    let reply = failing_app(&throttled).get_profile(ADA).await;
    reply.assert_problem(503, "SERVICE_UNAVAILABLE");
    assert_eq!(reply.header("retry-after"), Some("1"));

    let missing_table = mock!(Client::get_item).then_error(|| {
        GetItemError::ResourceNotFoundException(ResourceNotFoundException::builder().message("secret-detail-2").build())
    });
    let reply = failing_app(&missing_table).get_profile(ADA).await;
    reply.assert_problem(500, "INTERNAL");
    let body = reply.body.to_string();
    assert!(
        !body.contains("secret-detail") && !body.contains("ResourceNotFound"),
        "{body}"
    );
    // The cause chain is in the log, with the request id and sub.
    let failed = logs
        .lines()
        .into_iter()
        .find(|l| l["message"] == "request failed")
        .expect("logged");
    assert!(failed["cause"].as_str().unwrap().contains("GetItem failed"), "{failed}");
    assert_eq!(failed["span"]["sub"], ADA);
    let event = Event::of(&GET_PROFILE).0;
    assert_eq!(failed["span"]["request_id"], event["requestContext"]["requestId"]);
}

#[tokio::test]
async fn logs_carry_request_id_and_sub_but_no_pii() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    let reply = app.add_email(ADA, "ada.work@example.com").await;
    let id = reply.body["emailId"].as_str().unwrap().to_owned();
    let code = logs.code_for(&id);
    app.verify_email(ADA, &id, "000001").await;
    app.update_profile(
        ADA,
        "\"1\"",
        json!({"firstName": "Ada", "lastName": "Lovelace", "phone": "+14155550100"}),
    )
    .await;
    app.verify_email(ADA, &id, &code).await;

    let lines = logs.lines();
    assert!(lines.len() >= 6, "{}", logs.text());
    for line in &lines {
        let text = line.to_string();
        for pii in [
            "ada@example.com",
            "ada.work@example.com",
            "+14155550100",
            "Lovelace",
            "Bearer",
        ] {
            assert!(!text.contains(pii), "PII {pii:?} in log line {text}");
        }
        if line["message"] != "verification code issued" {
            assert!(!text.contains(&code), "code in log line {text}");
        }
        assert!(line["span"]["sub"] == ADA, "every line names the sub: {text}");
        assert!(
            line["span"]["request_id"].is_string(),
            "every line has a request id: {text}"
        );
    }
}
