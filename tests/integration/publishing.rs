//! publish-events when things go wrong: an entry PutEvents refuses alone is
//! sent again alone; a record whose images cannot be read is retried, then
//! its range goes to the on-failure queue (the one its alarm watches), and the
//! records after it are not lost: `cargo xtask replay-events` publishes them
//! from the stream, with the ids they would have had.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextMut;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::ConfigBag;
use integration_tests::ddb;
use integration_tests::moto::{EVENT_BUS, EVENT_SOURCE, Moto};
use integration_tests::stream::{self, StreamReader};
use lambda_runtime::{Context, LambdaEvent};
use local_api::mapping::{Delivered, FailureQueue, Mapping};
use serde_json::{Value, json};
use user_service::bus::Bus;
use user_service::catalog;
use user_service::events::Personal;
use user_service::store::keys;

use crate::handler_support::*;

const CAROL: &str = "7a9e3c1d-5b2f-4e8a-9c6d-1f0e2d3c4b5a";

/// Records each PutEvents call's entries (their event ids), and spoils the
/// detail of some, so moto refuses those alone (MalformedDetail): a real
/// partial failure from the emulator.
#[derive(Debug, Default, Clone)]
struct Spoil {
    /// On the first call, the entries at these places.
    first_call_at: Vec<usize>,
    /// On every call, the entries of this user.
    always_of: Option<&'static str>,
    calls: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Intercept for Spoil {
    fn name(&self) -> &'static str {
        "Spoil"
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request_mut();
        let mut sent: Value = serde_json::from_slice(request.body().bytes().unwrap_or_default())?;
        let entries = sent["Entries"].as_array_mut().ok_or("a PutEvents body")?;
        let details: Vec<Value> = entries
            .iter()
            .map(|e| serde_json::from_str(e["Detail"].as_str().unwrap_or_default()).unwrap_or_default())
            .collect();
        let mut calls = self.calls.lock().unwrap();
        for (i, detail) in details.iter().enumerate() {
            let first = calls.is_empty() && self.first_call_at.contains(&i);
            if first || self.always_of.is_some_and(|user| detail["subject"] == user) {
                entries[i]["Detail"] = json!("{not json");
            }
        }
        let body = sent.to_string();
        request.headers_mut().insert("content-length", body.len().to_string());
        *request.body_mut() = SdkBody::from(body);
        calls.push(
            details
                .iter()
                .map(|d| d["id"].as_str().unwrap_or_default().to_owned())
                .collect(),
        );
        Ok(())
    }
}

fn spoiled_bus(moto: &Moto, spoil: &Spoil) -> Bus {
    let config = aws_sdk_eventbridge::config::Builder::from(&moto.sdk_config())
        .interceptor(spoil.clone())
        .build();
    Bus::new(
        aws_sdk_eventbridge::Client::from_conf(config),
        EVENT_BUS,
        EVENT_SOURCE,
        Personal::None,
    )
}

async fn publish(app: &TestApp, records: &[Value]) -> Vec<String> {
    let batch: StreamEvent = serde_json::from_value(stream::event(records)).unwrap();
    let response = app
        .publish_events(LambdaEvent::new(batch, Context::default()))
        .await
        .unwrap();
    response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone().unwrap_or_default())
        .collect()
}

fn ids(events: &[Value]) -> BTreeSet<String> {
    events.iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_put_events_partial_failure_sends_again_only_the_failed_entries() {
    let moto = Moto::start();
    let (_, watcher) = moto.event_bus(Personal::None).await;
    let spoiler = Spoil {
        first_call_at: vec![1, 3],
        ..Spoil::default()
    };
    let mut app = TestApp::spawn().await;
    app.bus = Some(spoiled_bus(&moto, &spoiler));
    let mut reader = StreamReader::open(&ddb::client(), &app.store.config().table_name).await;
    for (sub, email) in [
        (ADA, "ada@example.com"),
        (ADMIN, "grace@example.com"),
        (CAROL, "carol@example.com"),
    ] {
        app.sign_up(sub, email).await;
    }
    let records = reader.read_new().await;

    assert!(publish(&app, &records).await.is_empty(), "every record acknowledged");

    let calls = spoiler.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2, "one call, then one for the refused entries: {calls:?}");
    assert_eq!(calls[0].len(), 6, "three sign-ups, two events each");
    assert_eq!(
        calls[1],
        vec![calls[0][1].clone(), calls[0][3].clone()],
        "the second call carries exactly the two refused entries"
    );
    let received = watcher.collect(6).await;
    assert_eq!(received.len(), 6, "each event on the bus once: {received:?}");
    assert_eq!(ids(&received), calls[0].iter().cloned().collect());
}

#[tokio::test]
async fn an_entry_refused_every_time_holds_its_record_back_and_nothing_before_it() {
    let moto = Moto::start();
    let (_, watcher) = moto.event_bus(Personal::None).await;
    let spoiler = Spoil {
        always_of: Some(CAROL),
        ..Spoil::default()
    };
    let mut app = TestApp::spawn().await;
    app.bus = Some(spoiled_bus(&moto, &spoiler));
    let mut reader = StreamReader::open(&ddb::client(), &app.store.config().table_name).await;
    for (sub, email) in [
        (ADA, "ada@example.com"),
        (CAROL, "carol@example.com"),
        (ADMIN, "grace@example.com"),
    ] {
        app.sign_up(sub, email).await;
    }
    let records = reader.read_new().await;
    // Carol's first record that makes an event: where Lambda must retry from.
    let carols = records
        .iter()
        .find(|r| {
            r["dynamodb"]["NewImage"]["userId"]["S"] == CAROL
                && ["User", "Email"].contains(
                    &r["dynamodb"]["NewImage"]["entityType"]["S"]
                        .as_str()
                        .unwrap_or_default(),
                )
        })
        .unwrap();

    let failed = publish(&app, &records).await;

    assert_eq!(failed, [carols["dynamodb"]["SequenceNumber"].as_str().unwrap()]);
    let calls = spoiler.calls.lock().unwrap().len();
    assert_eq!(
        calls, 6,
        "the first call and five retries of Carol's entries, then the record is reported"
    );
    let received = watcher.collect(4).await;
    let subjects: BTreeSet<&str> = received.iter().map(|e| e["subject"].as_str().unwrap()).collect();
    assert_eq!(received.len(), 4, "{received:?}");
    assert_eq!(
        subjects,
        BTreeSet::from([ADA, ADMIN]),
        "Carol's events are not on the bus"
    );
}

/// A profile item whose images cannot be read as a profile (no version, no
/// status): what a bug or a hand edit could leave.
async fn write_unreadable_profile(app: &TestApp, sub: &str) {
    let user = user_service::domain::UserId::parse(sub).unwrap();
    let mut item = keys::profile_key(&user);
    item.insert(
        keys::attr::ENTITY_TYPE.to_owned(),
        aws_sdk_dynamodb::types::AttributeValue::S("User".to_owned()),
    );
    ddb::client()
        .put_item()
        .table_name(&app.store.config().table_name)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_poison_record_ends_in_the_on_failure_queue_and_a_replay_publishes_the_rest() {
    let moto = Moto::start();
    let (bus, watcher) = moto.event_bus(Personal::None).await;
    let mut app = TestApp::spawn().await;
    app.bus = Some(bus);
    let app = Arc::new(app);
    let sqs = aws_sdk_sqs::Client::new(&moto.sdk_config());
    let queue = local_api::events::create_queue(&sqs, "publish-events-failures")
        .await
        .unwrap();
    let invoke: local_api::mapping::Invoke = {
        let app = app.clone();
        Arc::new(move |_, event| {
            let app = app.clone();
            Box::pin(async move {
                let batch: StreamEvent = serde_json::from_value(event).unwrap();
                let response = app
                    .publish_events(LambdaEvent::new(batch, Context::default()))
                    .await
                    .unwrap();
                Ok(serde_json::to_value(response).unwrap())
            })
        })
    };
    let mut mapping = Mapping::open(
        &catalog::PUBLISH_EVENTS,
        &ddb::endpoint(),
        &app.store.config().table_name,
        invoke,
        FailureQueue {
            client: sqs.clone(),
            url: queue.clone(),
        },
    )
    .await
    .unwrap();

    let stream_arn = StreamReader::open(&ddb::client(), &app.store.config().table_name)
        .await
        .arn()
        .to_owned();
    app.sign_up(ADA, "ada@example.com").await;
    write_unreadable_profile(&app, CAROL).await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let outcomes = mapping.drain().await.unwrap();

    assert!(
        outcomes.contains(&Delivered::GaveUp(3)),
        "the poison record and the two after it in its batch: {outcomes:?}"
    );
    let types: Vec<String> = watcher
        .collect(2)
        .await
        .iter()
        .map(|e| e["subject"].as_str().unwrap().to_owned() + " " + e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 2, "Ada's events, before the poison: {types:?}");
    assert!(types.iter().all(|t| t.starts_with(ADA)), "{types:?}");
    // What the alarm watches: a message on the queue (the template's alarm,
    // ApproximateNumberOfMessagesVisible >= 1, is checked in template.rs).
    let messages = sqs
        .receive_message()
        .queue_url(&queue)
        .max_number_of_messages(10)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    assert_eq!(messages.messages().len(), 1);
    let failure: Value = serde_json::from_str(messages.messages()[0].body().unwrap()).unwrap();
    let info = &failure["DDBStreamBatchInfo"];
    assert_eq!(info["batchSize"], 3, "{failure}");
    assert_eq!(failure["requestContext"]["condition"], "RetryAttemptsExhausted");
    assert!(!failure.to_string().contains('@'), "a range, never a record's content");

    // The replay reads the range from the stream: Grace's events are published
    // with the ids the stream record gives; the poison record is reported, and
    // its message stays on the queue.
    let sources = xtask::replay::Sources {
        streams: xtask::replay::streams_client(&ddb::shared_sdk_config()),
        stream_arn,
        sqs: sqs.clone(),
        queue_url: queue.clone(),
    };
    let bus = app.bus.as_ref().unwrap();
    let report = xtask::replay::replay(&sources, bus, false).await.unwrap();
    assert_eq!(
        (report.messages, report.published_records, report.unreadable_records),
        (1, 2, 1),
        "{report:?}"
    );
    assert_eq!(report.kept, 1, "a message with an unreadable record stays");
    let replayed = watcher.collect(2).await;
    assert_eq!(replayed.len(), 2, "{replayed:?}");
    assert!(replayed.iter().all(|e| e["subject"] == ADMIN));
    let mut expected_types: Vec<&str> = replayed.iter().map(|e| e["type"].as_str().unwrap()).collect();
    expected_types.sort_unstable();
    assert_eq!(expected_types, ["email.added", "user.created"]);

    // A message naming another stream, or no range at all, is kept and never read.
    for forged in [
        json!({"DDBStreamBatchInfo": {"shardId": "s", "startSequenceNumber": "1", "endSequenceNumber": "2",
            "batchSize": 2, "streamArn": "arn:aws:dynamodb:us-east-1:000000000000:table/other/stream/x"}}),
        json!({"hello": "world"}),
    ] {
        sqs.send_message()
            .queue_url(&queue)
            .message_body(forged.to_string())
            .send()
            .await
            .unwrap();
    }

    // Told to, the replay drops the unreadable record's message; the forged
    // ones stay; a second replay publishes nothing twice.
    let report = xtask::replay::replay(&sources, bus, true).await.unwrap();
    assert_eq!((report.messages, report.foreign, report.kept), (3, 2, 2), "{report:?}");
    let again = watcher.collect(2).await;
    assert_eq!(ids(&again), ids(&replayed), "the same events, the same ids");
    let report = xtask::replay::replay(&sources, bus, true).await.unwrap();
    assert_eq!(
        (report.messages, report.published_records, report.kept),
        (2, 0, 2),
        "{report:?}"
    );
}
