//! One address under a flood of requests. Its rate-limit counter is one item
//! (`LIMIT#ADDRESS#<hash>`, `CODES_ISSUED`), the table's only key that many
//! users' requests can share. The flood meets the service's own limit on that
//! address, and DynamoDB's per-key throttling on that item, without touching
//! any other address: other addresses' requests at the same time succeed.
//! docs/scale.md cites these tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use futures::future::join_all;
use integration_tests::ddb;
use serde_json::{Value, json};
use user_service::config::StoreConfig;
use user_service::domain::EmailAddress;
use user_service::store::keys::{self, ItemKind};
use user_service::{Store, StoreError};

use crate::handler_support::*;

const VICTIM: &str = "victim@example.com";
/// Holds the victim address unverified and asks for code after code.
const MALLORY: &str = "0b5e9d3c-1111-4a2b-8c3d-4e5f60718293";
/// Other users who try to add the victim address too.
const CROWD: [&str; 4] = [
    "1c6f0e4d-2222-4b3c-9d4e-5f6071829304",
    "2d7a1f5e-3333-4c4d-8e5f-60718293a415",
    "3e8b2a6f-4444-4d5e-9f60-718293a4b526",
    "4f9c3b7a-5555-4e6f-8a71-8293a4b5c637",
];
/// Bystanders, busy with addresses of their own meanwhile.
const GRACE: &str = "7c8d9e0f-3333-4a5b-8c9d-0e1f2a3b4c5d";
const GRACE_WORK: &str = "grace.work@example.com";
/// Requests Mallory sends at once, in every wave of the flood.
const FLOOD: usize = 16;

fn hash(address: &str) -> String {
    ddb::test_key().address_hash(
        &user_service::address_policy::Canonicalization::NONE.canonical(&EmailAddress::parse(address).unwrap()),
    )
}

/// The partition key of an address's counter of codes issued.
fn counter_pk(address: &str) -> String {
    keys::key_string(&keys::codes_issued_key(&hash(address)), keys::PK)
        .unwrap()
        .to_owned()
}

/// The events an address's counter of codes issued holds (0 without one),
/// read past any fault the app's client injects.
async fn codes_counted(app: &TestApp, address: &str) -> usize {
    let item = ddb::client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(keys::codes_issued_key(&hash(address))))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item;
    item.and_then(|i| i.get("events").and_then(|e| e.as_l().ok()).map(Vec::len))
        .unwrap_or(0)
}

/// Every item of the table, keyed by (PK, SK), as the SDK's Debug prints it.
async fn snapshot(app: &TestApp) -> std::collections::BTreeMap<(String, String), String> {
    integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .into_iter()
        .map(|item| {
            let key = |k| keys::key_string(&item, k).unwrap_or_default().to_owned();
            let mut sorted: Vec<_> = item.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
            sorted.sort();
            ((key(keys::PK), key(keys::SK)), sorted.join(","))
        })
        .collect()
}

fn retry_after(reply: &Reply) -> u64 {
    reply
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {reply:?}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_for_one_address_gets_its_daily_codes_and_no_more_and_other_addresses_go_on() {
    let cap = 4;
    let app = Arc::new(
        TestApp::spawn_with(|c| {
            c.max_codes_per_address = cap;
            // The claim outlives the flood: the crowd never takes the address over.
            c.verification_ttl_seconds = 86_400;
            c.max_emails_per_user = 20;
        })
        .await,
    );
    let (victim_id, grace_id) = cast(&app).await;
    let crowd_before = {
        let all = snapshot(&app).await;
        let mine = |pk: &str| CROWD.iter().any(|u| pk.ends_with(u));
        all.into_iter().filter(|((pk, _), _)| mine(pk)).collect::<Vec<_>>()
    };

    // Waves of the flood, a minute apart (the resend interval): Mallory's
    // requests and the crowd's adds at once, and Ada adding an address of her
    // own in the same wave, until a whole wave is refused by the daily limit.
    let mut issued = 1; // the add
    let mut ada_added = Vec::new();
    let mut capped = false;
    for wave in 0..3 * cap {
        app.clock.advance(61);
        let (resends, crowd) = flood(&app, &victim_id);
        let own = format!("ada.w{wave}@example.com");
        let ada = {
            let (app, own) = (Arc::clone(&app), own.clone());
            tokio::spawn(async move { app.add_email(ADA, &own).await })
        };
        let resends: Vec<Reply> = join_all(resends).await.into_iter().map(Result::unwrap).collect();
        let crowd: Vec<Reply> = join_all(crowd).await.into_iter().map(Result::unwrap).collect();
        // Another address, in the same wave: untouched by the flood.
        ada.await.unwrap().assert_status(201);
        ada_added.push(own);

        let sent = resends.iter().filter(|r| r.status == 202).count();
        assert!(
            sent <= 1,
            "one code a minute for one address, whatever the flood: {resends:?}"
        );
        issued += sent;
        for reply in &resends {
            match reply.status {
                202 => {}
                // Refused by the resend interval or the daily limit; or, under
                // contention, lost every retry: none issued a code.
                429 => assert_eq!(reply.body["code"], "TOO_MANY_REQUESTS", "{reply:?}"),
                503 => assert_eq!(reply.body["code"], "SERVICE_UNAVAILABLE", "{reply:?}"),
                _ => panic!("{reply:?}"),
            }
        }
        // The crowd is refused: the claim is Mallory's, or the address has had its codes.
        for reply in &crowd {
            assert!(
                (reply.status == 409 && reply.body["code"] == "EMAIL_TAKEN")
                    || (reply.status == 429 && reply.body["code"] == "TOO_MANY_REQUESTS")
                    || (reply.status == 503 && reply.body["code"] == "SERVICE_UNAVAILABLE"),
                "{reply:?}"
            );
        }
        let daily = resends.iter().all(|r| r.status == 429 && retry_after(r) > 3_600);
        if daily {
            capped = true;
            break;
        }
    }
    assert!(capped, "the flood met the daily limit");
    assert_eq!(
        issued, cap as usize,
        "codes for the flooded address: its daily limit exactly"
    );
    assert_eq!(codes_counted(&app, VICTIM).await, cap as usize);

    // While the flooded address is refused, another address's code goes out.
    app.send_verification(MALLORY, &victim_id)
        .await
        .assert_problem(429, "TOO_MANY_REQUESTS");
    app.send_verification(GRACE, &grace_id).await.assert_status(202);
    assert_eq!(
        codes_counted(&app, GRACE_WORK).await,
        2,
        "Grace's add and resend, nothing else"
    );
    for own in &ada_added {
        assert_eq!(codes_counted(&app, own).await, 1, "{own}: its one add");
    }
    // The crowd's refused requests wrote nothing: their items are as they were.
    let crowd_after: Vec<_> = {
        let all = snapshot(&app).await;
        let mine = |pk: &str| CROWD.iter().any(|u| pk.ends_with(u));
        all.into_iter().filter(|((pk, _), _)| mine(pk)).collect()
    };
    assert_eq!(crowd_after, crowd_before);
    // One counter per address: the flood made no other.
    let counters = snapshot(&app)
        .await
        .into_keys()
        .filter(|(pk, sk)| keys::classify(pk, sk) == ItemKind::Limit && pk.starts_with("LIMIT#ADDRESS#"))
        .count();
    assert_eq!(counters, 2 + ada_added.len(), "the victim's, Grace's and Ada's");
    app.assert_invariants().await;
}

/// Marks the request in flight as throttled: set before it is signed, read
/// when its response comes back.
#[derive(Debug, Clone, Copy)]
struct Throttled(bool);

impl Storable for Throttled {
    type Storer = StoreReplace<Self>;
}

/// DynamoDB's per-key throttling, on one key: every request that names `pk`
/// is answered as DynamoDB answers a request over a partition's throughput
/// (a plain call: ProvisionedThroughputExceededException, which the SDK
/// retries; a transaction: cancelled, `ThrottlingError` on that item), and
/// never reaches DynamoDB Local. Every other request goes through.
#[derive(Debug, Clone)]
struct ThrottleKey {
    pk: String,
    on: Arc<AtomicBool>,
    throttled: Arc<AtomicUsize>,
    passed: Arc<AtomicUsize>,
}

impl ThrottleKey {
    fn new(pk: String) -> Self {
        Self {
            pk,
            on: Arc::default(),
            throttled: Arc::default(),
            passed: Arc::default(),
        }
    }
}

impl Intercept for ThrottleKey {
    fn name(&self) -> &'static str {
        "ThrottleKey"
    }

    fn modify_before_signing(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request_mut();
        let body = request.body().bytes().unwrap_or_default();
        let hit = self.on.load(Ordering::SeqCst) && String::from_utf8_lossy(body).contains(&self.pk);
        if !hit {
            self.passed.fetch_add(1, Ordering::SeqCst);
            cfg.interceptor_state().store_put(Throttled(false));
            return Ok(());
        }
        self.throttled.fetch_add(1, Ordering::SeqCst);
        // What the answer must look like: a transaction's reasons, item by item.
        let sent: Value = serde_json::from_slice(body)?;
        let reasons: Option<Vec<Value>> = sent["TransactItems"].as_array().map(|items| {
            items
                .iter()
                .map(|item| {
                    if item.to_string().contains(&self.pk) {
                        json!({ "Code": "ThrottlingError", "Message": "Throughput exceeds the capacity of a partition." })
                    } else {
                        json!({ "Code": "None" })
                    }
                })
                .collect()
        });
        cfg.interceptor_state().store_put(Throttled(true));
        cfg.interceptor_state().store_put(Reasons(reasons));
        // Nothing of it reaches the table: DynamoDB Local lists tables instead.
        *request.body_mut() = SdkBody::from("{}");
        request.headers_mut().insert("content-length", "2");
        request
            .headers_mut()
            .insert("x-amz-target", "DynamoDB_20120810.ListTables");
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if !cfg.load::<Throttled>().is_some_and(|t| t.0) {
            return Ok(());
        }
        let body = match cfg.load::<Reasons>().and_then(|r| r.0.clone()) {
            Some(reasons) => json!({
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons",
                "CancellationReasons": reasons,
            }),
            None => json!({
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": "The level of configured provisioned throughput for the table was exceeded.",
            }),
        };
        let response = context.response_mut();
        *response.status_mut() = 400.try_into()?;
        response.headers_mut().remove("x-amz-crc32");
        response.headers_mut().remove("content-length");
        *response.body_mut() = SdkBody::from(body.to_string());
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct Reasons(Option<Vec<Value>>);

impl Storable for Reasons {
    type Storer = StoreReplace<Self>;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn throttling_on_one_addresses_counter_fails_only_that_addresses_requests() {
    let throttle = ThrottleKey::new(counter_pk(VICTIM));
    let client = Client::from_conf(
        ddb::sdk_config_builder()
            .endpoint_url(ddb::endpoint())
            // The SDK retries throttling as deployed (three attempts), with
            // short pauses: the retries are throttled too.
            .retry_config(RetryConfig::standard().with_initial_backoff(Duration::from_millis(5)))
            .interceptor(throttle.clone())
            .build(),
    );
    let table = ddb::fresh_table(&client).await;
    let store = Store::new(client, StoreConfig::new(table)).with_key(ddb::test_key());
    let app = Arc::new(TestApp::on(store));
    let (victim_id, grace_id) = cast(&app).await;
    app.clock.advance(61);
    let before = snapshot(&app).await;

    // The victim's counter is over its partition's throughput from now on.
    throttle.on.store(true, Ordering::SeqCst);
    let passed_before = throttle.passed.load(Ordering::SeqCst);
    let (resends, crowd) = flood(&app, &victim_id);
    let ada = {
        let app = Arc::clone(&app);
        tokio::spawn(async move { app.add_email(ADA, "ada.work@example.com").await })
    };
    let grace = {
        let (app, id) = (Arc::clone(&app), grace_id.clone());
        tokio::spawn(async move { app.send_verification(GRACE, &id).await })
    };
    let flooded: Vec<Reply> = join_all(resends.into_iter().chain(crowd))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    // Other addresses' requests, at the same time: answered as ever.
    ada.await.unwrap().assert_status(201);
    grace.await.unwrap().assert_status(202);
    // Every request that names the hot counter: 503, retry in a second.
    assert_eq!(flooded.len(), FLOOD + CROWD.len());
    for reply in &flooded {
        reply.assert_problem(503, "SERVICE_UNAVAILABLE");
        assert_eq!(retry_after(reply), 1, "{reply:?}");
    }
    assert!(throttle.throttled.load(Ordering::SeqCst) >= flooded.len());
    assert!(
        throttle.passed.load(Ordering::SeqCst) > passed_before,
        "other requests reached the table"
    );

    // Nothing of the flood was written: the victim's items are as they were.
    let after = snapshot(&app).await;
    let victims = |m: &std::collections::BTreeMap<(String, String), String>| {
        m.iter()
            .filter(|((pk, _), _)| {
                pk.ends_with(MALLORY)
                    || *pk == counter_pk(VICTIM)
                    || pk.ends_with(VICTIM)
                    || CROWD.iter().any(|u| pk.ends_with(u))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(victims(&after), victims(&before));
    assert_eq!(codes_counted(&app, VICTIM).await, 1);
    assert_eq!(codes_counted(&app, GRACE_WORK).await, 2);
    assert_eq!(codes_counted(&app, "ada.work@example.com").await, 1);

    // The store says so too: unavailable, retryable.
    let err = app
        .store
        .add_email(
            &user_service::domain::UserId::parse(CROWD[0]).unwrap(),
            &EmailAddress::parse(VICTIM).unwrap(),
            &user_service::verification::VerificationCode::parse("123456").unwrap(),
            app.clock.now(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Unavailable(_)) && err.is_retryable(),
        "{err:?}"
    );

    // Once the partition has room again, the address is served as before.
    throttle.on.store(false, Ordering::SeqCst);
    app.send_verification(MALLORY, &victim_id).await.assert_status(202);
    assert_eq!(codes_counted(&app, VICTIM).await, 2);
    app.assert_invariants().await;
}

/// Signs up everyone the tests name; Mallory adds the victim's address and
/// Grace her work address. Their record ids, in that order.
async fn cast(app: &TestApp) -> (String, String) {
    app.sign_up(MALLORY, "mallory@example.com").await;
    for (i, user) in CROWD.iter().enumerate() {
        app.sign_up(user, &format!("crowd{i}@example.com")).await;
    }
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(GRACE, "grace@example.com").await;
    (
        app.add_address(MALLORY, VICTIM).await,
        app.add_address(GRACE, GRACE_WORK).await,
    )
}

type Spawned = Vec<tokio::task::JoinHandle<Reply>>;

/// One wave of the flood, started at once: Mallory's resends to the victim's
/// address and the crowd's adds of it.
fn flood(app: &Arc<TestApp>, victim_id: &str) -> (Spawned, Spawned) {
    let resends = (0..FLOOD)
        .map(|_| {
            let (app, id) = (Arc::clone(app), victim_id.to_owned());
            tokio::spawn(async move { app.send_verification(MALLORY, &id).await })
        })
        .collect();
    let crowd = CROWD
        .iter()
        .map(|user| {
            let app = Arc::clone(app);
            tokio::spawn(async move { app.add_email(user, VICTIM).await })
        })
        .collect();
    (resends, crowd)
}
