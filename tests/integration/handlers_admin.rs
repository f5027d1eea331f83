//! find-user-by-email, set-user-status, and what every handler shares: 5xx
//! bodies without internals, and logs without PII.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::types::error::ResourceNotFoundException;
use aws_smithy_mocks::{RuleMode, mock, mock_client};
use integration_tests::http::{Event, LogCapture, Reply};
use serde_json::json;
use user_service::api::{add_email, find_user_by_email, get_profile, set_user_status, update_profile, verify_email};
use user_service::config::StoreConfig;
use user_service::{App, Store};

use crate::handler_support::*;

#[tokio::test]
async fn admins_find_users_by_email() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let reply = Reply::from(
        find_user_by_email::handle(&app, Event::load("find-user-by-email").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["userId"], ADA);
    assert_eq!(reply.body["emails"].as_array().unwrap().len(), 1);

    let ask = |email: &str| Event::load("find-user-by-email").query("email", email);
    Reply::from(
        find_user_by_email::handle(&app, ask("nobody@example.com").request())
            .await
            .unwrap(),
    )
    .assert_problem(404, "NOT_FOUND");
    Reply::from(find_user_by_email::handle(&app, ask("bad").request()).await.unwrap())
        .assert_problem(400, "VALIDATION_FAILED");
    // The JSON-array form of the groups claim works too.
    let reply = Reply::from(
        find_user_by_email::handle(&app, ask("ada@example.com").groups(r#"["editors","admin"]"#).request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    for event in [
        ask("ada@example.com").groups("[editors]"),
        ask("ada@example.com").no_groups(),
        Event::load("get-profile").query("email", "ada@example.com"),
    ] {
        Reply::from(find_user_by_email::handle(&app, event.request()).await.unwrap()).assert_problem(403, "FORBIDDEN");
    }
    Reply::from(
        find_user_by_email::handle(&app, ask("ada@example.com").anonymous().request())
            .await
            .unwrap(),
    )
    .assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn admins_suspend_and_delete_users() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let status = |s: &str| Event::load("set-user-status").body(json!({ "status": s }));
    let reply = Reply::from(
        set_user_status::handle(&app, status("suspended").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(
        (reply.body["status"].as_str(), reply.body["version"].as_u64()),
        (Some("suspended"), Some(2))
    );
    assert_eq!(reply.header("etag"), Some("\"2\""));

    Reply::from(set_user_status::handle(&app, status("gone").request()).await.unwrap())
        .assert_problem(400, "VALIDATION_FAILED");
    Reply::from(
        set_user_status::handle(&app, status("active").no_groups().request())
            .await
            .unwrap(),
    )
    .assert_problem(403, "FORBIDDEN");
    Reply::from(
        set_user_status::handle(&app, status("active").path_param("userId", "nobody").request())
            .await
            .unwrap(),
    )
    .assert_problem(404, "NOT_FOUND");
    Reply::from(
        set_user_status::handle(&app, status("active").path_param("userId", "a#b").request())
            .await
            .unwrap(),
    )
    .assert_problem(400, "VALIDATION_FAILED");

    let reply = Reply::from(
        set_user_status::handle(&app, status("deleted").request())
            .await
            .unwrap(),
    );
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "deleted");
    Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    )
    .assert_problem(404, "NOT_FOUND");
    // The address is free again.
    sign_up(&app, "new-owner", "ada@example.com").await;
    assert_invariants(&app).await;
}

fn failing_app(rule: &aws_smithy_mocks::Rule) -> App {
    let client: Client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [rule]);
    App::new(Store::new(client, StoreConfig::new("mocked")))
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
    let reply = Reply::from(
        get_profile::handle(&failing_app(&throttled), Event::load("get-profile").request())
            .await
            .unwrap(),
    );
    reply.assert_problem(503, "SERVICE_UNAVAILABLE");
    assert_eq!(reply.header("retry-after"), Some("1"));

    let missing_table = mock!(Client::get_item).then_error(|| {
        GetItemError::ResourceNotFoundException(ResourceNotFoundException::builder().message("secret-detail-2").build())
    });
    let reply = Reply::from(
        get_profile::handle(&failing_app(&missing_table), Event::load("get-profile").request())
            .await
            .unwrap(),
    );
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
    let event = Event::load("get-profile").0;
    assert_eq!(failed["span"]["request_id"], event["requestContext"]["requestId"]);
}

#[tokio::test]
async fn logs_carry_request_id_and_sub_but_no_pii() {
    let app = app().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    sign_up(&app, ADA, "ada@example.com").await;
    let reply = Reply::from(
        add_email::handle(&app, Event::load("add-email").request())
            .await
            .unwrap(),
    );
    let id = reply.body["emailId"].as_str().unwrap().to_owned();
    let code = logs.code_for(&id);
    let event = Event::load("verify-email")
        .path_param("emailId", &id)
        .body(json!({ "code": "000001" }));
    verify_email::handle(&app, event.request()).await.unwrap();
    update_profile::handle(&app, Event::load("update-profile").request())
        .await
        .unwrap();
    let event = Event::load("verify-email")
        .path_param("emailId", &id)
        .body(json!({ "code": code }));
    verify_email::handle(&app, event.request()).await.unwrap();

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
