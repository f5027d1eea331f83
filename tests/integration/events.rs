//! The domain events of every write path, published by publish-events from
//! what DynamoDB Local's stream really emits after real writes, onto a bus in
//! moto's EventBridge, and read back from a queue its rule feeds: each path
//! makes exactly its documented events, every one fits its JSON Schema, none
//! carries personal data, and a replayed batch gives the same ids.

use std::collections::{BTreeMap, BTreeSet};

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use integration_tests::ddb;
use integration_tests::http::LogCapture;
use integration_tests::moto::Moto;
use integration_tests::stream::{self, StreamReader};
use lambda_runtime::{Context, LambdaEvent};
use local_api::events::LocalEvents;
use serde_json::{Value, json};
use user_service::events::{EventType, Personal, schema};

use crate::handler_support::*;

const BOB: &str = "5d2c7a91-3e4f-4a6b-9c8d-7e6f5a4b3c2d";

/// Publishes what the stream holds since the last call, as the deployed
/// mapping would hand it to publish-events, and reads back what the bus got.
struct Events {
    reader: StreamReader,
    watcher: LocalEvents,
    /// Every event so far, per user, in the order they arrived.
    by_user: BTreeMap<String, Vec<Value>>,
}

impl Events {
    /// Gives `app` the bus in `moto`, and starts reading the stream.
    async fn open(app: &mut TestApp, moto: &Moto) -> Self {
        let (bus, watcher) = moto.event_bus(Personal::None).await;
        app.bus = Some(bus);
        Self {
            reader: StreamReader::open(&ddb::client(), &app.store.config().table_name).await,
            watcher,
            by_user: BTreeMap::new(),
        }
    }

    /// Publishes `records` as one batch; every record is acknowledged.
    async fn publish(app: &TestApp, records: &[Value]) {
        let batch: StreamEvent = serde_json::from_value(stream::event(records)).expect("Lambda's DynamoDB event shape");
        let response = app
            .publish_events(LambdaEvent::new(batch, Context::default()))
            .await
            .unwrap();
        assert!(response.batch_item_failures.is_empty(), "{response:?}");
    }

    /// The types of the events the writes since the last call made, sorted
    /// (a transaction's items reach the stream, and the bus its entries, in
    /// no promised order), after checking each against its schema, for
    /// personal data, and that publishing the batch again repeats the ids.
    async fn since(&mut self, app: &TestApp) -> Vec<String> {
        let records = self.reader.read_new().await;
        Self::publish(app, &records).await;
        let received = self.watcher.collect().await;
        Self::publish(app, &records).await;
        let again = self.watcher.collect().await;
        let ids = |events: &[Value]| -> BTreeSet<String> {
            events.iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(ids(&received), ids(&again), "a replayed batch gives the same ids");
        assert_eq!(ids(&received).len(), received.len(), "one id per event");
        let mut types = Vec::new();
        for event in received {
            assert_valid(&event);
            types.push(event["type"].as_str().unwrap().to_owned());
            let user = event["subject"].as_str().unwrap().to_owned();
            self.by_user.entry(user).or_default().push(event);
        }
        types.sort();
        types
    }
}

/// An event of the catalogue, fitting its schema, without an address.
fn assert_valid(event: &Value) {
    let kind = EventType::ALL
        .into_iter()
        .find(|k| k.name() == event["type"])
        .expect("a catalogued type");
    let errors: Vec<String> = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema(kind))
        .unwrap()
        .iter_errors(event)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{event}: {errors:?}");
    assert_eq!(event["source"], integration_tests::moto::EVENT_SOURCE);
    assert!(!event.to_string().contains('@'), "no address by default: {event}");
}

fn sorted(types: &[&str]) -> Vec<String> {
    let mut types: Vec<String> = types.iter().map(|t| (*t).to_owned()).collect();
    types.sort();
    types
}

#[tokio::test]
async fn every_write_path_makes_exactly_its_documented_events() {
    let moto = Moto::start();
    let mut app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let mut events = Events::open(&mut app, &moto).await;

    app.sign_up(ADA, "ada@example.com").await;
    assert_eq!(
        events.since(&app).await,
        sorted(&["user.created", "email.added"]),
        "sign-up"
    );
    app.sign_up(ADMIN, "grace@example.com").await;
    events.since(&app).await;

    app.update_profile(ADA, "\"1\"", json!({ "firstName": "Ada", "phone": "+15555550100" }))
        .await
        .assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["user.updated"]), "profile edit");

    let id = app.add_address(ADA, "ada.work@example.com").await;
    assert_eq!(events.since(&app).await, sorted(&["email.added"]), "add");
    app.clock.advance(61);
    app.send_verification(ADA, &id).await.assert_status(202);
    assert_eq!(events.since(&app).await, Vec::<String>::new(), "a resend is no event");
    app.verify_email(ADA, &id, &logs.code_for(&id)).await.assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["email.verified"]), "verify");

    app.set_primary_email(ADA, &id).await.assert_status(200);
    assert_eq!(
        events.since(&app).await,
        sorted(&["email.primary_changed"]),
        "set primary"
    );
    app.cognito_holds_primary(ADA).await;
    assert_eq!(
        events.since(&app).await,
        Vec::<String>::new(),
        "Cognito's address recorded: no event"
    );
    let old = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &old).await.assert_status(204);
    assert_eq!(events.since(&app).await, sorted(&["email.removed"]), "remove");

    app.set_user_status(ADMIN, ADA, "suspended").await.assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["user.suspended"]), "suspend");
    app.set_user_status(ADMIN, ADA, "active").await.assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["user.reactivated"]), "reactivate");

    let etag = app.get_profile(ADA).await.header("etag").unwrap().to_owned();
    app.delete_account(ADA, &etag).await.assert_status(204);
    assert_eq!(
        events.since(&app).await,
        sorted(&["user.deleted", "email.removed"]),
        "DELETE /me erases every address"
    );

    // An admin's delete; the repair at sign-in of a user with no profile.
    app.sign_up(BOB, "bob@example.com").await;
    events.since(&app).await;
    app.set_user_status(ADMIN, BOB, "deleted").await.assert_status(200);
    assert_eq!(
        events.since(&app).await,
        sorted(&["user.deleted", "email.removed"]),
        "admin delete"
    );
    app.post_authentication(NOBODY, "nobody@example.com", true)
        .await
        .unwrap();
    assert_eq!(
        events.since(&app).await,
        sorted(&["user.created", "email.added"]),
        "the repair at sign-in"
    );

    // Each user's versions are distinct: they order the events.
    for (user, list) in &events.by_user {
        let versions: Vec<u64> = list.iter().filter_map(|e| e["data"]["version"].as_u64()).collect();
        let distinct: BTreeSet<u64> = versions.iter().copied().collect();
        assert_eq!(distinct.len(), versions.len(), "{user}: {versions:?}");
    }
    let deleted: Vec<&Value> = events.by_user[ADA]
        .iter()
        .filter(|e| e["type"] == "user.deleted")
        .collect();
    assert_eq!(deleted.len(), 1);
    assert_eq!(
        deleted[0]["data"]["goneFromCognito"], false,
        "deleted here, not in Cognito first"
    );
}

#[tokio::test]
async fn the_reconciles_erasure_of_a_user_gone_from_cognito_says_so() {
    let moto = integration_tests::moto::Moto::start();
    let (cognito, pool, subs) = moto.user_pool(&["carol@example.com"]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(user_service::identity::UserPool::new(cognito.clone(), pool.clone()));
    let mut events = Events::open(&mut app, &moto).await;
    app.sign_up(&subs[0], "carol@example.com").await;
    assert_eq!(events.since(&app).await, sorted(&["user.created", "email.added"]));
    app.clock.advance(60);
    cognito
        .admin_delete_user()
        .user_pool_id(&pool)
        .username(&subs[0])
        .send()
        .await
        .unwrap();
    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(answer["tally"]["erased"], 1, "{answer}");
    assert_eq!(events.since(&app).await, sorted(&["user.deleted", "email.removed"]));
    let deleted = events.by_user[&subs[0]]
        .iter()
        .find(|e| e["type"] == "user.deleted")
        .unwrap();
    assert_eq!(deleted["data"]["goneFromCognito"], true);
}
