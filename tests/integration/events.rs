//! The domain events of every write path, published by publish-events from
//! what DynamoDB Local's stream really emits after real writes, onto a bus in
//! moto's EventBridge, and read back from a queue its rule feeds: each path
//! makes exactly its documented events, every one fits its JSON Schema, none
//! carries personal data, and a replayed batch gives the same ids.

use std::collections::{BTreeMap, BTreeSet};

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use integration_tests::ddb;
use integration_tests::logs::LogCapture;
use integration_tests::moto::Moto;
use integration_tests::stream::{self, StreamReader};
use lambda_runtime::{Context, LambdaEvent};
use local_api::events::LocalEvents;
use serde_json::{Value, json};
use user_service::events::{EventType, Personal, envelopes, schema};

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
        // In the mapping's batches (BatchSize 10), in stream order.
        for batch in records.chunks(local_api::mapping::BATCH_SIZE) {
            Self::publish(app, batch).await;
        }
        let expected = expected_events(&records);
        let received = self.watcher.collect(expected).await;
        for batch in records.chunks(local_api::mapping::BATCH_SIZE) {
            Self::publish(app, batch).await;
        }
        let again = self.watcher.collect(expected).await;
        let ids = |events: &[Value]| -> BTreeSet<String> {
            events.iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
        };
        let (first, replayed) = (ids(&received), ids(&again));
        assert!(
            first == replayed,
            "a replayed batch gives the same ids: {expected} expected, {} events, {} replayed; only first {:?}; only replayed {:?}",
            received.len(),
            again.len(),
            first.difference(&replayed).take(3).collect::<Vec<_>>(),
            replayed.difference(&first).take(3).collect::<Vec<_>>()
        );
        assert_eq!(ids(&received).len(), received.len(), "one id per event");
        assert_eq!(
            received.len(),
            expected,
            "every event derived from the records is on the bus"
        );
        integration_tests::logs::keep_events(&received);
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

/// How many events `records` make, derived here as the publisher does.
fn expected_events(records: &[Value]) -> usize {
    let batch: StreamEvent = serde_json::from_value(stream::event(records)).unwrap();
    batch
        .records
        .iter()
        .map(|r| {
            user_service::store::changes::change_of_record(r)
                .unwrap()
                .map_or(0, |change| envelopes(&change, "urn:count", Personal::None).len())
        })
        .sum()
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
async fn every_organization_write_path_makes_exactly_its_documented_events() {
    use user_service::domain::{OrgId, Role, UserId};
    let moto = Moto::start();
    let mut app = TestApp::spawn().await;
    let mut events = Events::open(&mut app, &moto).await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(BOB, "bob@example.com").await;
    events.since(&app).await;

    let reply = app.create_organization(ADA, "Acme", "acme").await;
    reply.assert_status(201);
    let org = reply.body["orgId"].as_str().unwrap().to_owned();
    assert_eq!(
        events.since(&app).await,
        sorted(&["organization.created", "membership.created"]),
        "create: the organization and its owner; the user's half and count make none"
    );
    app.update_organization(ADA, &org, "\"1\"", json!({ "name": "Acme EU" }))
        .await
        .assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["organization.updated"]), "rename");
    app.update_organization(ADA, &org, "\"2\"", json!({ "rules": { "blockSubaddresses": true } }))
        .await
        .assert_status(200);
    assert_eq!(events.since(&app).await, sorted(&["organization.updated"]), "its rules");
    let id = OrgId::parse(&org).unwrap();
    // An invitation makes none (it names an address, and nothing is decided
    // until it is accepted); its accept is the join.
    let token = app
        .store
        .invite(
            &user_service::domain::Actor::Member(UserId::parse(ADA).unwrap()),
            id,
            &user_service::domain::EmailAddress::parse("bob@example.com").unwrap(),
            Role::Member,
            app.clock.now(),
        )
        .await
        .unwrap()
        .token
        .encode();
    assert_eq!(events.since(&app).await, Vec::<String>::new(), "an invitation");
    app.accept_invitation(BOB, &token).await.assert_status(200);
    assert_eq!(
        events.since(&app).await,
        sorted(&["membership.created"]),
        "an accepted invitation"
    );
    // A domain's claim and record make none.
    app.claim_domain(ADA, &org, "acme-events.example")
        .await
        .assert_status(201);
    assert_eq!(events.since(&app).await, Vec::<String>::new(), "a domain");
    app.set_member_role(ADA, &org, BOB, "owner").await.assert_status(200);
    assert_eq!(
        events.since(&app).await,
        sorted(&["membership.role_changed"]),
        "a new owner: the count moves, the membership says it"
    );
    app.remove_member(ADA, &org, ADA).await.assert_status(204);
    assert_eq!(events.since(&app).await, sorted(&["membership.removed"]), "leave");
    app.delete_organization(BOB, &org, "*").await.assert_status(202);
    assert_eq!(events.since(&app).await, sorted(&["organization.deleted"]), "delete");
    app.purge_organizations().await.unwrap();
    assert_eq!(
        events.since(&app).await,
        sorted(&["membership.removed"]),
        "the purge: each member's removal, and the organization's item going makes none"
    );

    // An account closed with a membership: the membership goes with it.
    let kept = app.create_organization(BOB, "Kept", "kept").await.body["orgId"]
        .as_str()
        .unwrap()
        .to_owned();
    app.store
        .join_organization(
            OrgId::parse(&kept).unwrap(),
            &UserId::parse(ADA).unwrap(),
            Role::Admin,
            app.clock.now(),
        )
        .await
        .unwrap();
    events.since(&app).await;
    app.delete_account(ADA, "*").await.assert_status(204);
    assert_eq!(
        events.since(&app).await,
        sorted(&["membership.removed", "user.deleted", "email.removed"]),
        "DELETE /me leaves every organization"
    );
    let about_org: Vec<&Value> = events.by_user[&org].iter().collect();
    assert!(about_org.iter().all(|e| e["subject"] == org.as_str()));
    assert!(
        about_org.iter().all(|e| !e.to_string().contains("Acme")),
        "ids and times, no names"
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

/// What a consumer holds of a user, rebuilt from the user's events alone.
#[derive(Debug, Default, PartialEq, Eq)]
struct Held {
    status: String,
    /// Addresses present: email id → verified.
    emails: BTreeMap<String, bool>,
    primary: Option<String>,
}

/// The state a consumer following docs/events.md rebuilds: user.* events
/// ordered by `version`; per address its lifecycle; the primary the address
/// of the highest-version switch (or the one added as primary).
fn rebuild(events: &[Value]) -> Held {
    let mut user: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("user."))
        .collect();
    user.sort_by_key(|e| e["data"]["version"].as_u64().unwrap());
    let mut held = Held::default();
    for event in user {
        match event["type"].as_str().unwrap() {
            "user.created" | "user.reactivated" => held.status = "active".to_owned(),
            "user.suspended" => held.status = "suspended".to_owned(),
            "user.deleted" => held.status = "deleted".to_owned(),
            _ => {}
        }
    }
    let mut removed = BTreeSet::new();
    let mut primary: Option<(u64, String)> = None;
    for event in events {
        let id = event["data"]["emailId"].as_str().unwrap_or_default().to_owned();
        match event["type"].as_str().unwrap() {
            "email.added" => {
                let verified = event["data"]["isVerified"].as_bool().unwrap();
                let entry = held.emails.entry(id.clone()).or_insert(false);
                *entry |= verified;
                if event["data"]["isPrimary"] == true && primary.is_none() {
                    primary = Some((0, id));
                }
            }
            "email.verified" => {
                held.emails.insert(id, true);
            }
            "email.primary_changed" => {
                let version = event["data"]["version"].as_u64().expect("a switch carries its version");
                if primary.as_ref().is_none_or(|(v, _)| version > *v) {
                    primary = Some((version, id));
                }
            }
            "email.removed" => {
                removed.insert(id);
            }
            _ => {}
        }
    }
    held.emails.retain(|id, _| !removed.contains(id));
    held.primary = primary.map(|(_, id)| id).filter(|id| held.emails.contains_key(id));
    held
}

/// What the table holds of each user, read as a consumer would want it.
async fn table_state(app: &TestApp) -> BTreeMap<String, Held> {
    use user_service::store::items::{EmailItem, ProfileItem};
    use user_service::store::keys::{self, ItemKind};
    let mut state: BTreeMap<String, Held> = BTreeMap::new();
    for item in integration_tests::invariants::scan(&ddb::client(), &app.store.config().table_name).await {
        let key = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default();
        match keys::classify(&key(keys::PK), &key(keys::SK)) {
            ItemKind::Profile => {
                let profile: ProfileItem = serde_dynamo::from_item(item).unwrap();
                state.entry(profile.user_id.to_string()).or_default().status = profile.status.as_str().to_owned();
            }
            ItemKind::Email => {
                let email: EmailItem = serde_dynamo::from_item(item).unwrap();
                let held = state.entry(email.user_id.to_string()).or_default();
                held.emails.insert(email.email_id.to_string(), email.is_verified);
                if email.is_primary {
                    held.primary = Some(email.email_id.to_string());
                }
            }
            _ => {}
        }
    }
    state
}

/// A deterministic sequence of choices (a linear congruential generator).
struct Choices(u64);

impl Choices {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

/// Users of the concurrent workload: 20 in `make test` (420 operations),
/// `EVENTS_WORKLOAD_USERS` (50 in `make bench`, 1,050 operations) for the full size.
fn workload_users() -> usize {
    std::env::var("EVENTS_WORKLOAD_USERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

#[tokio::test]
async fn a_concurrent_workloads_events_rebuild_every_users_final_state() {
    let users_n = workload_users();
    const ROUNDS: usize = 21;
    let moto = Moto::start();
    let mut app = TestApp::spawn_with(|config| {
        // Codes enough for the workload: the limits are not what it tests.
        config.max_codes_per_user = 10_000;
        config.max_codes_per_address = 10_000;
        config.max_codes_per_user_address = 10_000;
    })
    .await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let mut events = Events::open(&mut app, &moto).await;
    let users: Vec<String> = (0..users_n)
        .map(|i| format!("0e0f0b1c-2d3e-4a57-9b7d-{i:012}"))
        .collect();
    futures::future::join_all(users.iter().map(|u| {
        let app = &app;
        async move { app.sign_up(u, &format!("u{}@example.com", &u[24..])).await }
    }))
    .await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let mut choices = Choices(27);
    let mut operations = 0;
    for round in 0..ROUNDS {
        let picks: Vec<(usize, u64, u64)> = users
            .iter()
            .enumerate()
            .map(|(i, _)| (i, choices.next(100), choices.next(1_000)))
            .collect();
        operations += picks.len();
        futures::future::join_all(picks.into_iter().map(|(i, op, pick)| {
            let app = &app;
            let logs = &logs;
            let user = users[i].as_str();
            // Two users share each address pool, so adds race for addresses too.
            let address = format!("shared{}-{}@example.com", i / 2, pick % 4);
            async move {
                let account = app.get_account(user).await;
                let emails: Vec<Value> = account.body["emails"].as_array().cloned().unwrap_or_default();
                let nth = |filter: &dyn Fn(&Value) -> bool| -> Option<String> {
                    let chosen: Vec<&Value> = emails.iter().filter(|e| filter(e)).collect();
                    (!chosen.is_empty()).then(|| {
                        chosen[pick as usize % chosen.len()]["emailId"]
                            .as_str()
                            .unwrap()
                            .to_owned()
                    })
                };
                match op {
                    0..=19 => {
                        let profile = app.get_profile(user).await;
                        let etag = profile.header("etag").unwrap_or("\"0\"").to_owned();
                        let name = format!("Name{round}");
                        app.update_profile(user, &etag, json!({ "firstName": name })).await;
                    }
                    20..=44 => {
                        app.add_email(user, &address).await;
                    }
                    45..=64 => {
                        if let Some(id) = nth(&|e| e["isVerified"] == false) {
                            let code = logs.code_for(&id);
                            app.verify_email(user, &id, &code).await;
                        }
                    }
                    65..=79 => {
                        if let Some(id) = nth(&|e| e["isVerified"] == true && e["isPrimary"] == false) {
                            app.set_primary_email(user, &id).await;
                            app.cognito_holds_primary(user).await;
                        }
                    }
                    80..=91 => {
                        if let Some(id) = nth(&|e| e["isPrimary"] == false) {
                            app.remove_email(user, &id).await;
                        }
                    }
                    92..=97 => {
                        let status = if pick % 2 == 0 { "suspended" } else { "active" };
                        app.set_user_status(ADMIN, user, status).await;
                    }
                    _ => {
                        let profile = app.get_profile(user).await;
                        if let Some(etag) = profile.header("etag") {
                            app.delete_account(user, etag).await;
                        }
                    }
                }
            }
        }))
        .await;
    }
    assert_eq!(operations, users_n * ROUNDS, "{operations} operations");

    events.since(&app).await;
    let table = table_state(&app).await;
    let mut deleted = 0;
    for user in &users {
        let rebuilt = rebuild(events.by_user.get(user).map_or(&[][..], Vec::as_slice));
        let mut held = table.get(user).map(|h| Held {
            status: h.status.clone(),
            emails: h.emails.clone(),
            primary: h.primary.clone(),
        });
        if let Some(h) = held.as_mut() {
            deleted += usize::from(h.status == "deleted");
        }
        assert_eq!(Some(rebuilt), held, "{user}: the events rebuild the table's state");
    }
    assert!(
        table.values().any(|h| h.status == "suspended"),
        "the workload suspends someone"
    );
    assert!(deleted > 0, "the workload deletes someone");
    assert!(
        table.values().any(|h| h.emails.len() > 1),
        "someone ends with more than one address"
    );
    app.assert_invariants().await;
}
