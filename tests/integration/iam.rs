//! The catalog's DynamoDB actions are what each handler really sends: every
//! request (and every item inside a transaction) is recorded by an SDK
//! interceptor while the handler runs its success and failure paths against
//! DynamoDB Local. Granted but never used, or used but not granted, fails.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::get_item::GetItemInput;
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeSerializationInterceptorContextRef;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use integration_tests::ddb;
use serde_json::json;
use user_service::catalog::{self, Function};
use user_service::config::StoreConfig;
use user_service::domain::{EmailAddress, UserId};
use user_service::{App, Store};

use crate::handler_support::*;

#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<BTreeSet<String>>>);

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "Recorder"
    }

    fn read_before_serialization(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = context.input();
        let mut seen = self.0.lock().unwrap();
        if input.downcast_ref::<GetItemInput>().is_some() {
            seen.insert("GetItem".into());
        } else if let Some(q) = input.downcast_ref::<QueryInput>() {
            seen.insert(match q.index_name() {
                Some(index) => format!("Query:{index}"),
                None => "Query".into(),
            });
        } else if input.downcast_ref::<UpdateItemInput>().is_some() {
            seen.insert("UpdateItem".into());
        } else if let Some(tx) = input.downcast_ref::<TransactWriteItemsInput>() {
            for item in tx.transact_items() {
                let action = if item.put().is_some() {
                    "PutItem"
                } else if item.update().is_some() {
                    "UpdateItem"
                } else if item.delete().is_some() {
                    "DeleteItem"
                } else {
                    "ConditionCheckItem"
                };
                seen.insert(action.into());
            }
        } else {
            seen.insert(format!("unexpected:{input:?}"));
        }
        Ok(())
    }
}

/// An App whose client records what `function`'s handler sends, on a table
/// that `setup` has already filled (with an unrecorded client).
async fn recording(setup: &App) -> (TestApp, Recorder) {
    let recorder = Recorder::default();
    let client = Client::from_conf(
        ddb::sdk_config_builder()
            .endpoint_url(ddb::endpoint())
            .interceptor(recorder.clone())
            .build(),
    );
    let store = Store::new(client, StoreConfig::new(setup.store.config().table_name.clone())).with_key(ddb::test_key());
    (TestApp::from(App::new(store)), recorder)
}

/// A user the admin suspends and deletes (an admin must stay active to do it).
const TARGET: &str = "1e2f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b";
/// A user who closes their own account.
const CLOSER: &str = "2f3a4b5c-6d7e-4f8a-9b0c-1d2e3f4a5b6c";
/// A pending user's sub once migrated at sign-in.
const CLOSER_TOO: &str = "3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c6d";

fn assert_actions(function: &Function, recorder: &Recorder) {
    let used = recorder.0.lock().unwrap().clone();
    let mut granted: BTreeSet<String> = function.dynamodb_actions.iter().map(|a| (*a).to_owned()).collect();
    if function.queries_gsi1 {
        granted.insert("Query:GSI1".into());
    }
    if function.queries_gsi2 {
        granted.insert("Query:GSI2".into());
    }
    assert_eq!(used, granted, "{}: used vs granted", function.name);
}

#[tokio::test]
async fn every_function_uses_exactly_its_granted_actions() {
    let setup = TestApp::spawn().await;
    setup.sign_up(ADA, "ada@example.com").await;
    setup.sign_up(ADMIN, "grace@example.com").await;
    setup.sign_up(TARGET, "target@example.com").await;
    setup.sign_up(CLOSER, "closer@example.com").await;
    let pending = setup.add_address(ADA, "pending@example.com").await;
    let hash = user_service::import::PasswordHash::parse(
        user_service::import::HashAlgorithm::Pbkdf2Sha256,
        "$pbkdf2-sha256$i=1000,l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw",
    )
    .unwrap();
    for address in [
        "migrating@example.com",
        "resetting@example.com",
        "signing-in@example.com",
    ] {
        let mut account = user_service::domain::NewAccount::signed_up(
            user_service::domain::NewUser {
                user_id: user_service::domain::UserId::new_pending(),
                email: user_service::domain::EmailAddress::parse(address).unwrap(),
                first_name: None,
                last_name: None,
                phone: None,
            },
            setup.clock.now(),
        );
        account.more.clear();
        setup
            .store
            .create_pending_account(&account, &hash, setup.clock.now())
            .await
            .unwrap();
    }

    let (app, rec) = recording(&setup).await;
    app.get_profile(ADA).await;
    assert_actions(&catalog::GET_PROFILE, &rec);

    let (app, rec) = recording(&setup).await;
    app.get_account(ADA).await;
    assert_actions(&catalog::GET_ACCOUNT, &rec);

    let (app, rec) = recording(&setup).await;
    app.list_emails(ADA).await;
    assert_actions(&catalog::LIST_EMAILS, &rec);

    let (app, rec) = recording(&setup).await;
    let same = json!({"firstName": "Ada", "lastName": "Lovelace", "phone": "+14155550100"});
    app.update_profile(ADA, "\"1\"", same).await;
    assert_actions(&catalog::UPDATE_PROFILE, &rec);

    let (app, rec) = recording(&setup).await;
    app.check_email(ADA, "ada.work@example.com").await;
    assert_actions(&catalog::CHECK_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    app.export_account(ADA).await.assert_status(200);
    assert_actions(&catalog::EXPORT_ACCOUNT, &rec);

    // Add, including the take-over of an expired claim (DeleteItem of the holder's record).
    let expired = TestApp::spawn_with(|c| c.verification_ttl_seconds = 0).await;
    expired.sign_up(ADA, "ada@example.com").await;
    expired.sign_up(ADMIN, "grace@example.com").await;
    expired.add_address(ADMIN, "contested@example.com").await;
    let (app, rec) = recording(&expired).await;
    app.add_email(ADA, "contested@example.com").await.assert_status(201);
    assert_actions(&catalog::ADD_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    app.send_verification(ADA, &pending).await;
    assert_actions(&catalog::SEND_VERIFICATION, &rec);

    let (app, rec) = recording(&setup).await;
    app.verify_email(ADA, &pending, "000000").await;
    assert_actions(&catalog::VERIFY_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    let work = with_verified_address(&setup, ADA, "work@example.com", integration_tests::start_time())
        .await
        .to_string();
    app.set_primary_email(ADA, &work).await;
    assert_actions(&catalog::SET_PRIMARY_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    app.remove_email(ADA, &pending).await;
    assert_actions(&catalog::REMOVE_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    app.find_user_by_email(ADMIN, "grace@example.com").await;
    assert_actions(&catalog::FIND_USER_BY_EMAIL, &rec);

    let (app, rec) = recording(&setup).await;
    for status in ["suspended", "deleted"] {
        app.set_user_status(ADMIN, TARGET, status).await;
    }
    assert_actions(&catalog::SET_USER_STATUS, &rec);

    let (app, rec) = recording(&setup).await;
    app.pre_sign_up("x", "new@example.com").await.unwrap();
    assert_actions(&catalog::PRE_SIGN_UP, &rec);

    // Migration at sign-in. The trigger: the claim, the pending profile and
    // its hash read, a slot taken for the check (an Update). The first appearances
    // move the pending account: its partition's Query, then Puts, Deletes and
    // the claims' Updates; the reset's confirmation reads the profile first.
    let (app, rec) = recording(&setup).await;
    let mut sign_in = integration_tests::events::load("migrate-user");
    sign_in["userName"] = json!("migrating@example.com");
    sign_in["request"]["password"] = json!("not the password");
    app.invoke(&catalog::MIGRATE_USER, sign_in).await.unwrap_err();
    assert_actions(&catalog::MIGRATE_USER, &rec);

    // Sign-up taking over an unverified claim (Put, Delete and Update), and a
    // reset's confirmation moving a pending user.
    let (app, rec) = recording(&setup).await;
    setup.add_address(ADA, "wanted@example.com").await;
    app.post_confirmation("newcomer", "wanted@example.com").await.unwrap();
    let mut reset = integration_tests::events::load("post-confirmation-forgot-password");
    reset["userName"] = json!(NOBODY);
    reset["request"]["userAttributes"]["sub"] = json!(NOBODY);
    reset["request"]["userAttributes"]["email"] = json!("resetting@example.com");
    reset["request"]["userAttributes"]["email_verified"] = json!("true");
    app.invoke(&catalog::POST_CONFIRMATION, reset).await.unwrap();
    assert_actions(&catalog::POST_CONFIRMATION, &rec);

    // The repair at sign-in, taking over an unverified claim too (Get, Put,
    // Delete, Update), and a migrated user's first sign-in (the Query).
    let (app, rec) = recording(&setup).await;
    setup.add_address(ADA, "repaired@example.com").await;
    app.post_authentication("repaired", "repaired@example.com", true)
        .await
        .unwrap();
    app.post_authentication(CLOSER_TOO, "signing-in@example.com", true)
        .await
        .unwrap();
    assert_actions(&catalog::POST_AUTHENTICATION, &rec);

    let (app, rec) = recording(&setup).await;
    app.get_email(ADA, &pending).await;
    assert_actions(&catalog::GET_EMAIL, &rec);

    // Closing an account with addresses, one of them a former primary removed
    // since its switch: the partition's Query, the reservation's GetItem, then
    // the profile's update and every record's, claim's and switch's delete.
    let closer = UserId::parse(CLOSER).unwrap();
    let now = setup.clock.now();
    let added = with_verified_address(&setup, CLOSER, "closer.new@example.com", now).await;
    let first = setup.store.get_account(&closer).await.unwrap().emails[0].email_id;
    let switched = setup.store.set_primary(&closer, added, now).await.unwrap();
    setup
        .store
        .confirm_cognito_email(&closer, switched.email.as_ref().unwrap())
        .await
        .unwrap();
    setup.store.remove_email(&closer, first, now).await.unwrap();
    let version = setup.store.get_profile(&closer).await.unwrap().version;
    let (app, rec) = recording(&setup).await;
    let reply = app.delete_account(CLOSER, &format!("\"{version}\"")).await;
    reply.assert_status(204);
    assert_actions(&catalog::DELETE_ACCOUNT, &rec);
}

/// A verified address of `user`'s, added at `now`, set up without recording.
async fn with_verified_address(
    setup: &App,
    user: &str,
    address: &str,
    now: user_service::domain::Timestamp,
) -> user_service::domain::EmailId {
    let user = UserId::parse(user).unwrap();
    let code = user_service::verification::VerificationCode::generate().unwrap();
    let address = EmailAddress::parse(address).unwrap();
    let added = setup.store.add_email(&user, &address, &code, now).await.unwrap();
    setup
        .store
        .verify_email(&user, added.email_id, &code, now)
        .await
        .unwrap();
    added.email_id
}

/// The EventBridge operations a client sends.
#[derive(Debug, Clone, Default)]
struct BusCalls(Arc<Mutex<BTreeSet<String>>>);

impl Intercept for BusCalls {
    fn name(&self) -> &'static str {
        "BusCalls"
    }

    fn read_before_serialization(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let input = context.input();
        let name = if input
            .downcast_ref::<aws_sdk_eventbridge::operation::put_events::PutEventsInput>()
            .is_some()
        {
            "PutEvents".to_owned()
        } else {
            format!("unexpected:{input:?}")
        };
        self.0.lock().unwrap().insert(name);
        Ok(())
    }
}

#[tokio::test]
async fn the_publisher_reads_nothing_of_the_table_and_only_puts_events() {
    let moto = integration_tests::moto::Moto::start();
    let (_, watcher) = moto.event_bus(user_service::events::Personal::None).await;
    let setup = TestApp::spawn().await;
    let mut reader =
        integration_tests::stream::StreamReader::open(&ddb::client(), &setup.store.config().table_name).await;
    setup.sign_up(ADA, "ada@example.com").await;
    let records = reader.read_new().await;

    let (mut app, rec) = recording(&setup).await;
    let calls = BusCalls::default();
    let config = aws_sdk_eventbridge::config::Builder::from(&moto.sdk_config())
        .interceptor(calls.clone())
        .build();
    app.bus = Some(user_service::bus::Bus::new(
        aws_sdk_eventbridge::Client::from_conf(config),
        integration_tests::moto::EVENT_BUS,
        integration_tests::moto::EVENT_SOURCE,
        user_service::events::Personal::None,
    ));
    let batch = serde_json::from_value(integration_tests::stream::event(&records)).unwrap();
    let response = app
        .publish_events(lambda_runtime::LambdaEvent::new(
            batch,
            lambda_runtime::Context::default(),
        ))
        .await
        .unwrap();
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(watcher.collect(2).await.len(), 2);

    assert_actions(&catalog::PUBLISH_EVENTS, &rec);
    const { assert!(catalog::PUBLISH_EVENTS.publishes_events) };
    // The template grants events:PutEvents (on the bus alone) to a function
    // that publishes: the one call the publisher makes.
    assert_eq!(
        calls.0.lock().unwrap().clone(),
        BTreeSet::from(["PutEvents".to_owned()])
    );
}
