//! The purge of deleted organizations, one organization at a time: an
//! organization whose purge fails (a fault injected at the SDK level on its
//! partition's transactions, or a membership whose halves disagree, so its
//! removal's condition cannot hold) is passed over, the others are purged in
//! the same run, and the run reports the failure. Each organization resumes
//! from its own checkpoint, and the failed one goes behind the others.

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
use integration_tests::{ddb, sdk};
use serde_json::json;
use tokio::time::Instant;
use user_service::config::StoreConfig;
use user_service::domain::{
    Actor, EmailAddress, IfMatch, NewOrganization, NewUser, OrgId, OrgName, Role, Slug, UserId,
};
use user_service::store::items::{self, PurgeItem};
use user_service::store::keys::{self, Item};
use user_service::{Store, StoreError};

use crate::handler_support::*;

/// Answers every transaction that names one partition with DynamoDB's 500,
/// while `on`; nothing of it reaches the table.
#[derive(Debug, Clone, Default)]
struct FailPartition {
    pk: Arc<std::sync::Mutex<String>>,
    on: Arc<AtomicBool>,
    failed: Arc<AtomicUsize>,
}

#[derive(Debug, Clone)]
struct Failed(bool);

impl Storable for Failed {
    type Storer = StoreReplace<Self>;
}

impl Intercept for FailPartition {
    fn name(&self) -> &'static str {
        "FailPartition"
    }

    fn modify_before_signing(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request_mut();
        let pk = self.pk.lock().unwrap().clone();
        let hit = self.on.load(Ordering::SeqCst)
            && sdk::is_transaction(request)
            && String::from_utf8_lossy(request.body().bytes().unwrap_or_default()).contains(&pk);
        cfg.interceptor_state().store_put(Failed(hit));
        if hit {
            self.failed.fetch_add(1, Ordering::SeqCst);
            // DynamoDB Local lists tables instead; the answer is replaced below.
            *request.body_mut() = SdkBody::from("{}");
            request.headers_mut().insert("content-length", "2");
            request
                .headers_mut()
                .insert("x-amz-target", "DynamoDB_20120810.ListTables");
        }
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if !cfg.load::<Failed>().is_some_and(|f| f.0) {
            return Ok(());
        }
        let response = context.response_mut();
        *response.status_mut() = 500.try_into()?;
        response.headers_mut().remove("x-amz-crc32");
        response.headers_mut().remove("content-length");
        *response.body_mut() = SdkBody::from(
            json!({
                "__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
                "message": "injected",
            })
            .to_string(),
        );
        Ok(())
    }
}

fn sub() -> UserId {
    UserId::parse_sub(&uuid::Uuid::new_v4().to_string()).unwrap()
}

/// A deleted organization: its owner and `members` others, then its deletion.
async fn deleted_organization(app: &TestApp, slug: &str, members: usize) -> (OrgId, Vec<UserId>) {
    let now = app.clock.now();
    let mut people = Vec::new();
    for n in 0..=members {
        let user = sub();
        let new = NewUser {
            user_id: user.clone(),
            email: EmailAddress::parse(&format!("{slug}{n}@example.com")).unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        app.store.create_user(&new, now).await.unwrap();
        people.push(user);
    }
    let new = NewOrganization {
        name: OrgName::parse(slug).unwrap(),
        slug: Slug::parse(slug).unwrap(),
    };
    let org = app
        .store
        .create_organization(&people[0], &new, now)
        .await
        .unwrap()
        .org_id;
    for user in &people[1..] {
        assert!(app.store.join_organization(org, user, Role::Member, now).await.unwrap());
    }
    app.store
        .delete_organization(&Actor::Member(people[0].clone()), org, &IfMatch::Any, now)
        .await
        .unwrap();
    (org, people)
}

/// The item under `key`, read past any fault the app's client injects.
async fn item(app: &TestApp, key: Item) -> Option<Item> {
    ddb::client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

async fn checkpoint(app: &TestApp, org: OrgId) -> Option<PurgeItem> {
    item(app, keys::purge_key(org))
        .await
        .map(|i| items::from_item(i).unwrap())
}

/// How many of `people`'s memberships of `org` remain, counting both halves.
async fn halves_left(app: &TestApp, org: OrgId, people: &[UserId]) -> usize {
    let mut left = 0;
    for user in people {
        left += usize::from(item(app, keys::member_key(org, user)).await.is_some());
        left += usize::from(item(app, keys::membership_key(user, org)).await.is_some());
    }
    left
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_organizations_failing_purge_never_holds_back_the_others() {
    let fault = FailPartition::default();
    let client = Client::from_conf(
        ddb::sdk_config_builder()
            .endpoint_url(ddb::endpoint())
            // The SDK retries a 500 as deployed (three attempts), with short pauses.
            .retry_config(RetryConfig::standard().with_initial_backoff(Duration::from_millis(5)))
            .interceptor(fault.clone())
            .build(),
    );
    let table = ddb::fresh_table(&client).await;
    let store = Store::new(client, StoreConfig::new(table)).with_key(ddb::test_key());
    let app = TestApp::on(store);
    // Acme is deleted first, so it is first in the run's order.
    let (acme, acme_people) = deleted_organization(&app, "acme", 3).await;
    app.clock.advance(1);
    let (globex, globex_people) = deleted_organization(&app, "globex", 3).await;
    assert_eq!(app.store.pending_purges().await.unwrap(), vec![acme, globex]);

    // Every removal in Acme's partition fails from now on.
    *fault.pk.lock().unwrap() = keys::org_pk(acme);
    fault.on.store(true, Ordering::SeqCst);
    app.clock.advance(60);
    let failed = app.purge_organizations().await.unwrap_err();
    assert_eq!(failed.error_type, "PURGE_FAILED");
    assert!(failed.error_message.contains("1 deleted organization"), "{failed:?}");
    assert!(fault.failed.load(Ordering::SeqCst) > 0, "the fault was met");
    // Globex, behind it, was purged in the same run: every half, the
    // organization and its checkpoint.
    assert_eq!(halves_left(&app, globex, &globex_people).await, 0);
    assert!(item(&app, keys::org_key(globex)).await.is_none());
    assert!(checkpoint(&app, globex).await.is_none());
    // Acme is still there, its failed turn on its checkpoint.
    assert_eq!(halves_left(&app, acme, &acme_people).await, 8);
    let acme_checkpoint = checkpoint(&app, acme).await.unwrap();
    assert_eq!(acme_checkpoint.attempted_at, Some(app.clock.now()));
    assert_eq!((acme_checkpoint.failed_turns, acme_checkpoint.members_removed), (1, 0));
    app.assert_invariants().await;

    // A deletion made since goes before Acme, which was taken up already.
    app.clock.advance(1);
    let (initech, initech_people) = deleted_organization(&app, "initech", 2).await;
    assert_eq!(app.store.pending_purges().await.unwrap(), vec![initech, acme]);
    app.clock.advance(60);
    let again = app.purge_organizations().await.unwrap_err();
    assert_eq!(again.error_type, "PURGE_FAILED");
    assert_eq!(halves_left(&app, initech, &initech_people).await, 0);
    assert!(checkpoint(&app, initech).await.is_none());
    assert_eq!(checkpoint(&app, acme).await.unwrap().failed_turns, 2, "turns in a row");

    // The fault gone, Acme resumes from its partition and finishes.
    fault.on.store(false, Ordering::SeqCst);
    let done = app.purge_organizations().await.unwrap();
    assert_eq!(done, json!({ "pending": 1, "finished": 1, "removed": 4 }));
    assert_eq!(halves_left(&app, acme, &acme_people).await, 0);
    assert!(app.store.pending_purges().await.unwrap().is_empty());
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_membership_whose_halves_disagree_fails_its_organizations_turn_and_the_next_goes_on() {
    let app = TestApp::spawn().await;
    let (acme, acme_people) = deleted_organization(&app, "acme", 2).await;
    app.clock.advance(1);
    let (globex, globex_people) = deleted_organization(&app, "globex", 2).await;
    // One of Acme's members lost their own half: the removal's condition
    // (both halves there) cannot hold, and the organization's half stays.
    let broken = keys::membership_key(&acme_people[1], acme);
    let kept = item(&app, broken.clone()).await.unwrap();
    let table = app.store.config().table_name.clone();
    let raw = ddb::client();
    raw.delete_item()
        .table_name(&table)
        .set_key(Some(broken))
        .send()
        .await
        .unwrap();

    // Met again, the member fails the turn at once rather than at the deadline.
    let far = Instant::now() + Duration::from_secs(300);
    let turn = app.store.purge_turn(acme, app.clock.now(), far).await;
    assert!(matches!(turn, Err(StoreError::Inconsistent(_))), "{turn:?}");
    assert_eq!(checkpoint(&app, acme).await.unwrap().failed_turns, 1);

    // The schedule's run: Globex is purged, Acme's failure reported.
    app.clock.advance(60);
    let run = app.purge_organizations().await.unwrap_err();
    assert_eq!(run.error_type, "PURGE_FAILED");
    assert_eq!(halves_left(&app, globex, &globex_people).await, 0);
    assert!(checkpoint(&app, globex).await.is_none());
    let acme_checkpoint = checkpoint(&app, acme).await.unwrap();
    assert_eq!(acme_checkpoint.failed_turns, 2);
    // What the turns could remove, they removed, and counted.
    assert_eq!(acme_checkpoint.members_removed, 2);
    assert_eq!(halves_left(&app, acme, &acme_people).await, 1);

    // Repaired, Acme finishes and the table keeps every rule.
    raw.put_item()
        .table_name(&table)
        .set_item(Some(kept))
        .send()
        .await
        .unwrap();
    let done = app.purge_organizations().await.unwrap();
    assert_eq!(done, json!({ "pending": 1, "finished": 1, "removed": 1 }));
    assert!(app.store.pending_purges().await.unwrap().is_empty());
    app.assert_invariants().await;
}
