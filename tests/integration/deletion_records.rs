//! The EventBridge rule that brings Cognito's DeleteUser records to
//! reconcile-users, as the template deploys it (the catalog's pattern), run by
//! moto's EventBridge against the recorded sample and its near misses: the
//! rule's target is an SQS queue, and what reaches the queue is what matched.

use aws_sdk_eventbridge::types::{PutEventsRequestEntry, Target};
use integration_tests::events;
use integration_tests::moto::Moto;
use serde_json::{Value, json};
use user_service::catalog::{self, Trigger};

/// The `events/` sample, changed by `adjust`, as a PutEvents entry.
fn entry(adjust: impl FnOnce(&mut Value)) -> PutEventsRequestEntry {
    let mut event = events::load("reconcile-users-delete-user");
    adjust(&mut event);
    PutEventsRequestEntry::builder()
        .source(event["source"].as_str().unwrap())
        .detail_type(event["detail-type"].as_str().unwrap())
        .detail(event["detail"].to_string())
        .build()
}

fn pattern() -> &'static str {
    match catalog::RECONCILE_USERS.trigger {
        Trigger::Schedule {
            api_calls: Some(calls), ..
        } => calls.pattern,
        other => panic!("reconcile-users has no CloudTrail rule: {other:?}"),
    }
}

#[tokio::test]
async fn the_rule_passes_delete_user_records_and_nothing_else() {
    let moto = Moto::start();
    let config = moto.sdk_config();
    let bridge = aws_sdk_eventbridge::Client::new(&config);
    let sqs = aws_sdk_sqs::Client::new(&config);
    let queue = sqs.create_queue().queue_name("matched").send().await.unwrap();
    let queue_url = queue.queue_url.unwrap();
    let queue_arn = sqs
        .get_queue_attributes()
        .queue_url(&queue_url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap()[&aws_sdk_sqs::types::QueueAttributeName::QueueArn]
        .clone();
    bridge
        .put_rule()
        .name("cognito-delete-user")
        .event_pattern(pattern())
        .send()
        .await
        .unwrap();
    bridge
        .put_targets()
        .rule("cognito-delete-user")
        .targets(Target::builder().id("queue").arn(&queue_arn).build().unwrap())
        .send()
        .await
        .unwrap();

    // Each case names itself in the record's eventID, which the queue gives back.
    let cases: Vec<(&str, bool, PutEventsRequestEntry)> = vec![
        ("the recorded sample", true, entry(|_| {})),
        (
            "a DeleteUser in another pool (the record names no pool: the handler checks)",
            true,
            entry(|e| e["detail"]["additionalEventData"]["sub"] = json!("0e5c2b1a-4d3f-4a6b-9c8d-7e6f5a4b3c2d")),
        ),
        (
            "a failed DeleteUser (the handler ignores it)",
            true,
            entry(|e| e["detail"]["errorCode"] = json!("NotAuthorizedException")),
        ),
        (
            "an admin's AdminDeleteUser (the stream's consumer made it)",
            false,
            entry(|e| e["detail"]["eventName"] = json!("AdminDeleteUser")),
        ),
        (
            "another call of the same user",
            false,
            entry(|e| e["detail"]["eventName"] = json!("UpdateUserAttributes")),
        ),
        (
            "DeleteUser of another service",
            false,
            entry(|e| e["detail"]["eventSource"] = json!("cognito-identity.amazonaws.com")),
        ),
        (
            "another source",
            false,
            entry(|e| e["source"] = json!("aws.cognito-identity")),
        ),
        (
            "the schedule's event",
            false,
            entry(|e| e["detail-type"] = json!("Scheduled Event")),
        ),
    ];
    let mut expected = Vec::new();
    for (n, (name, matches, entry)) in cases.into_iter().enumerate() {
        let mut detail: Value = serde_json::from_str(entry.detail().unwrap()).unwrap();
        detail["eventID"] = json!(format!("case-{n}"));
        let entry = PutEventsRequestEntry::builder()
            .source(entry.source().unwrap())
            .detail_type(entry.detail_type().unwrap())
            .detail(detail.to_string())
            .build();
        let put = bridge.put_events().entries(entry).send().await.unwrap();
        assert_eq!(put.failed_entry_count, 0, "{name}");
        if matches {
            expected.push(format!("case-{n}"));
        }
        eprintln!("case-{n}: {name} (matches: {matches})");
    }

    let mut delivered = Vec::new();
    for round in 0..6 {
        let out = sqs
            .receive_message()
            .queue_url(&queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        for message in out.messages.unwrap_or_default() {
            let event: Value = serde_json::from_str(message.body().unwrap()).unwrap();
            assert_eq!(event["detail-type"], "AWS API Call via CloudTrail");
            delivered.push(event["detail"]["eventID"].as_str().unwrap().to_owned());
        }
        // Two rounds past the expected count: a late, unexpected delivery shows too.
        if delivered.len() >= expected.len() && round >= 2 {
            break;
        }
    }
    delivered.sort();
    assert_eq!(delivered, expected);
}

#[test]
fn the_template_deploys_the_catalogs_rule_on_reconcile_users() {
    let template = integration_tests::template::load();
    let function = &template["Resources"]["ReconcileUsersFunction"]["Properties"];
    let rule = &function["Events"]["CognitoDeleteUser"];
    assert_eq!(rule["Type"].as_str(), Some("EventBridgeRule"));
    let deployed: Value = serde_json::to_value(&rule["Properties"]["Pattern"]).unwrap();
    let catalog: Value = serde_json::from_str(pattern()).unwrap();
    assert_eq!(deployed, catalog);
    assert_eq!(function["Timeout"].as_u64(), Some(900));
}
