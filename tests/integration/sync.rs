//! sync-cognito-email on what DynamoDB really emits: records read from DynamoDB
//! Local's stream after real writes, selected by the template's filter, applied
//! to moto's Cognito and SES. Faults moto cannot produce (throttling, a timeout,
//! a failure mid-batch) come from the SDK's test support.

use std::time::Duration;

use aws_sdk_cognitoidentityprovider::Client as Cognito;
use aws_sdk_cognitoidentityprovider::operation::admin_disable_user::{AdminDisableUserError, AdminDisableUserOutput};
use aws_sdk_cognitoidentityprovider::operation::admin_update_user_attributes::{
    AdminUpdateUserAttributesError, AdminUpdateUserAttributesOutput,
};
use aws_sdk_cognitoidentityprovider::operation::admin_user_global_sign_out::AdminUserGlobalSignOutOutput;
use aws_sdk_cognitoidentityprovider::types::AttributeType;
use aws_sdk_cognitoidentityprovider::types::error::TooManyRequestsException;
use aws_smithy_mocks::{Rule, RuleMode, mock, mock_client};
use integration_tests::logs::LogCapture;
use integration_tests::moto::{CognitoUser, Moto, cognito_user};
use integration_tests::stream::{self, StreamReader};
use integration_tests::{ddb, template};
use lambda_runtime::{Context, LambdaEvent};
use local_api::filter;
use serde_json::{Value, json};
use user_service::App;
use user_service::domain::{UserId, UserStatus};
use user_service::identity::UserPool;
use user_service::mail::Sender;

use crate::handler_support::*;

/// The FilterCriteria pattern of the consumer's event source mapping, from template.yaml.
fn template_filter() -> Value {
    let t = template::load();
    let function = template::of_type(&t, "AWS::Serverless::Function")
        .into_iter()
        .find(|(_, f)| template::text(&f["Metadata"]["BuildProperties"]["Binary"]) == "sync-cognito-email")
        .expect("the consumer's resource")
        .1
        .clone();
    let stream = function["Properties"]["Events"]
        .as_mapping()
        .unwrap()
        .values()
        .find(|e| template::text(&e["Type"]) == "DynamoDB")
        .expect("a DynamoDB stream event")
        .clone();
    let filters = stream["Properties"]["FilterCriteria"]["Filters"].as_sequence().unwrap();
    assert_eq!(filters.len(), 1);
    filter::parse(&template::text(&filters[0]["Pattern"])).unwrap()
}

/// Delivers `records` as one Lambda batch; returns the failed sequence numbers.
async fn deliver(app: &TestApp, records: &[Value]) -> Vec<String> {
    deliver_with(app, records, Context::default()).await
}

async fn deliver_with(app: &TestApp, records: &[Value], context: Context) -> Vec<String> {
    let event = serde_json::from_value(stream::event(records)).expect("Lambda's DynamoDB event shape");
    let response = app.sync_cognito_email(LambdaEvent::new(event, context)).await.unwrap();
    let value = serde_json::to_value(&response).unwrap();
    value["batchItemFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap().to_owned())
        .collect()
}

/// The one record among `records` whose primary address changed.
fn the_switch(records: &[Value]) -> String {
    let switches: Vec<&Value> = records
        .iter()
        .filter(|r| r["dynamodb"]["NewImage"]["email"] != r["dynamodb"]["OldImage"]["email"])
        .collect();
    assert_eq!(switches.len(), 1, "{records:?}");
    sequence(switches[0])
}

fn sequence(record: &Value) -> String {
    record["dynamodb"]["SequenceNumber"].as_str().unwrap().to_owned()
}

/// What the template's filter passes of `records`.
fn selected(records: &[Value]) -> Vec<Value> {
    let pattern = template_filter();
    records
        .iter()
        .filter(|r| filter::matches(&pattern, r))
        .cloned()
        .collect()
}

/// The records that change a profile, told by their keys (not by the filter).
fn profile_modifications(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| r["eventName"] == "MODIFY" && r["dynamodb"]["Keys"]["SK"]["S"] == "PROFILE")
        .cloned()
        .collect()
}

struct Synced {
    moto: Moto,
    app: TestApp,
    cognito: Cognito,
    pool: String,
    reader: StreamReader,
    /// Ada's sub, then those of the other Cognito users.
    sub: String,
    subs: Vec<String>,
}

impl Synced {
    /// Ada, signed up in Cognito (moto) and in the table, with a verified sender.
    async fn start(cognito_users: &[&str]) -> Self {
        let moto = Moto::start();
        let (cognito, pool, subs) = moto.user_pool(cognito_users).await;
        let mut app = TestApp::spawn().await;
        app.users = Some(UserPool::new(cognito.clone(), &pool));
        app.sender = Some(Sender::Ses(moto.ses_sender().await));
        let sub = subs[0].clone();
        app.sign_up(&sub, cognito_users[0]).await;
        let reader = StreamReader::open(&ddb::client(), &app.store.config().table_name).await;
        Self {
            moto,
            app,
            cognito,
            pool,
            reader,
            sub,
            subs,
        }
    }

    async fn user(&self) -> Option<CognitoUser> {
        cognito_user(&self.cognito, &self.pool, &self.sub).await
    }

    /// Adds `address` for Ada, verifies it with the code SES delivered, makes it primary.
    async fn switch_primary_to(&self, address: &str) {
        let id = self.app.add_address(&self.sub, address).await;
        let code = self.moto.mail_to(address).await.last().and_then(|m| m.code()).unwrap();
        self.app.verify_email(&self.sub, &id, &code).await.assert_status(200);
        let email_id = user_service::domain::EmailId::parse(&id).unwrap();
        self.app
            .store
            .set_primary(&self.user_id(), email_id, self.app.clock.now())
            .await
            .unwrap();
    }

    fn user_id(&self) -> UserId {
        UserId::parse(&self.sub).unwrap()
    }

    /// The stream's new records, checked against the filter, and what it passes.
    async fn changes(&mut self) -> (Vec<Value>, Vec<Value>) {
        let records = self.reader.read_new().await;
        let passed = selected(&records);
        assert_eq!(
            passed,
            profile_modifications(&records),
            "the filter passes profile MODIFY records alone"
        );
        (records, passed)
    }
}

#[tokio::test]
async fn cognito_follows_real_profile_changes_from_the_stream() {
    let logs = LogCapture::default();
    let _guard = logs.install();
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    let (records, passed) = s.changes().await;
    assert!(!records.is_empty(), "sign-up wrote to the stream");
    assert!(passed.is_empty(), "sign-up's INSERTs are not passed");

    // A primary switch: Cognito's email follows, verified; the former primary is told.
    s.switch_primary_to("ada.work@example.com").await;
    let (records, passed) = s.changes().await;
    assert!(
        records.len() > passed.len(),
        "emails, claims and limits are filtered out"
    );
    assert!(!passed.is_empty());
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(
        s.user().await,
        Some(CognitoUser {
            email: Some("ada.work@example.com".to_owned()),
            email_verified: true,
            enabled: true
        })
    );
    let notices = s.moto.mail_to("ada@example.com").await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].subject, "Your primary email address was changed");
    assert_eq!(notices[0].code(), None);
    // Replayed, the switch leaves Cognito as it is (the user already holds the
    // address) and tells the former primary again: notices are at least once.
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(
        s.user().await.and_then(|u| u.email).as_deref(),
        Some("ada.work@example.com")
    );
    assert_eq!(s.moto.mail_to("ada@example.com").await.len(), 2);
    // Recording the address Cognito now holds is a profile change of its own,
    // with nothing for Cognito (written once: the replay wrote the same value).
    let (_, recorded) = s.changes().await;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(deliver(&s.app, &recorded).await, Vec::<String>::new());

    // A suspension signs out and disables; re-activation enables.
    let now = s.app.clock.now();
    s.app
        .store
        .set_status(&s.user_id(), UserStatus::Suspended, now)
        .await
        .unwrap();
    let (_, passed) = s.changes().await;
    assert_eq!(passed.len(), 1);
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await.map(|u| u.enabled), Some(false));
    s.app
        .store
        .set_status(&s.user_id(), UserStatus::Active, now)
        .await
        .unwrap();
    let (_, passed) = s.changes().await;
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await.map(|u| u.enabled), Some(true));

    // A deletion removes the Cognito user, so the address is free to sign up again.
    s.app
        .store
        .delete_user(&s.user_id(), user_service::store::Deleter::System, now)
        .await
        .unwrap();
    let (_, passed) = s.changes().await;
    assert_eq!(passed.len(), 1);
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await, None);
    s.cognito
        .admin_create_user()
        .user_pool_id(&s.pool)
        .username("ada.work@example.com")
        .send()
        .await
        .expect("the address is free in Cognito");

    // Replayed (a retried batch), the deletion changes nothing and fails nothing.
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await, None);
    let lines = logs.lines();
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "Cognito has no such user" && l["sub"] == s.sub.as_str())
    );
    assert!(
        !logs.text().contains("@example.com"),
        "no address in any log line:\n{}",
        logs.text()
    );
}

#[tokio::test]
async fn an_address_another_cognito_user_holds_is_retried_and_logged_by_sub_only() {
    // Bob's Cognito user still holds Ada's new address: his own switch away from
    // it has not reached Cognito yet (another shard).
    let mut s = Box::pin(Synced::start(&["ada@example.com", "ada.work@example.com"])).await;
    let bob = s.subs[1].clone();
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    let (_, passed) = s.changes().await;

    let logs = LogCapture::default();
    let failed = {
        let _guard = logs.install();
        deliver(&s.app, &passed).await
    };
    assert_eq!(failed, [the_switch(&passed)], "the record is retried");
    assert_eq!(s.user().await.and_then(|u| u.email).as_deref(), Some("ada@example.com"));
    assert!(
        s.moto.mail_to("ada@example.com").await.is_empty(),
        "no notice before the switch lands"
    );
    let line = logs
        .lines()
        .into_iter()
        .find(|l| l["code"] == "ALIAS_EXISTS")
        .expect("the conflict is logged");
    assert_eq!(line["sub"], s.sub.as_str());
    assert!(!logs.text().contains("@example.com"), "{}", logs.text());

    // Bob's switch lands; the retried batch succeeds.
    s.cognito
        .admin_update_user_attributes()
        .user_pool_id(&s.pool)
        .username(&bob)
        .user_attributes(
            AttributeType::builder()
                .name("email")
                .value("bob@example.com")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(
        s.user().await.and_then(|u| u.email).as_deref(),
        Some("ada.work@example.com")
    );
}

#[tokio::test]
async fn a_notice_that_cannot_be_sent_retries_the_record() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    let (_, passed) = s.changes().await;
    let mut app = s.app.clone();
    // From an address SES has no verified identity for.
    app.sender = Some(Sender::Ses(s.moto.sender_from("no-reply@unverified.example")));
    assert_eq!(deliver(&app, &passed).await, [the_switch(&passed)]);
    // Cognito was brought in line before the notice; the retry writes it again.
    assert_eq!(
        s.user().await.and_then(|u| u.email).as_deref(),
        Some("ada.work@example.com")
    );
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.moto.mail_to("ada@example.com").await.len(), 1);
}

/// A profile change record for the fault tests, shaped as the real ones above.
fn change(sequence: u32, sub: &str, old: (&str, &str), new: (&str, &str)) -> Value {
    let image = |(email, status): (&str, &str)| {
        json!({
            "PK": {"S": format!("USER#{sub}")}, "SK": {"S": "PROFILE"},
            "entityType": {"S": "User"}, "userId": {"S": sub},
            "email": {"S": email}, "status": {"S": status},
            "version": {"N": "2"}, "emailCount": {"N": "2"},
            "createdAt": {"S": "2026-11-21T10:00:00.000Z"}, "updatedAt": {"S": "2026-11-21T10:00:00.000Z"}
        })
    };
    json!({
        "eventID": format!("event-{sequence}"), "eventName": "MODIFY", "eventVersion": "1.1",
        "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": 1795305600,
            "Keys": {"PK": {"S": format!("USER#{sub}")}, "SK": {"S": "PROFILE"}},
            "NewImage": image(new), "OldImage": image(old),
            "SequenceNumber": format!("{sequence:021}"), "SizeBytes": 300,
            "StreamViewType": "NEW_AND_OLD_IMAGES"
        },
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-11-21T00:00:00.000"
    })
}

/// `sub`'s suspension, as a profile change record.
fn suspension(sequence: u32, sub: &str) -> Value {
    change(
        sequence,
        sub,
        ("a@example.com", "active"),
        ("a@example.com", "suspended"),
    )
}

const SUB_A: &str = "0b6e7c1a-1d2e-4f3a-8b4c-5d6e7f8a9b01";
const SUB_B: &str = "0b6e7c1a-1d2e-4f3a-8b4c-5d6e7f8a9b02";
const SUB_C: &str = "0b6e7c1a-1d2e-4f3a-8b4c-5d6e7f8a9b03";

/// An app whose Cognito answers with `rules` alone, in any order.
macro_rules! app_answering {
    ($($rule:expr),+ $(,)?) => {
        app_with_cognito(mock_client!(
            aws_sdk_cognitoidentityprovider,
            RuleMode::MatchAny,
            [$($rule),+]
        ))
    };
}

/// Cognito signs the user out.
fn signs_out() -> Rule {
    mock!(Cognito::admin_user_global_sign_out).then_output(|| AdminUserGlobalSignOutOutput::builder().build())
}

/// Cognito disables the user.
fn disables() -> Rule {
    mock!(Cognito::admin_disable_user).then_output(|| AdminDisableUserOutput::builder().build())
}

fn app_with_cognito(client: Cognito) -> TestApp {
    TestApp::from(App {
        users: Some(UserPool::new(client, "us-east-1_faults")),
        sender: Some(Sender::Log),
        ..App::new(user_service::Store::new(
            ddb::client(),
            user_service::config::StoreConfig::new("not-read"),
        ))
    })
}

#[tokio::test]
async fn a_throttled_record_mid_batch_is_reported_and_nothing_after_it_is_applied() {
    let sign_out = signs_out();
    let disable = disables();
    let throttled = mock!(Cognito::admin_update_user_attributes).then_error(|| {
        AdminUpdateUserAttributesError::TooManyRequestsException(
            TooManyRequestsException::builder().message("Rate exceeded").build(),
        )
    });
    let app = app_answering!(&sign_out, &disable, &throttled);
    let batch = [
        suspension(1, SUB_A),
        change(2, SUB_B, ("b@example.com", "active"), ("b.new@example.com", "active")),
        suspension(3, SUB_C),
    ];
    assert_eq!(deliver(&app, &batch).await, [sequence(&batch[1])]);
    // The first record was applied; the third waits for the retry from the second.
    assert_eq!((sign_out.num_calls(), disable.num_calls()), (1, 1));
    assert!(throttled.num_calls() >= 1);
}

#[tokio::test]
async fn an_error_that_persists_is_reported_every_time() {
    let failing = mock!(Cognito::admin_disable_user)
        .then_error(|| AdminDisableUserError::TooManyRequestsException(TooManyRequestsException::builder().build()));
    let sign_out = signs_out();
    let app = app_answering!(&sign_out, &failing);
    let batch = [suspension(7, SUB_A)];
    for _ in 0..3 {
        assert_eq!(deliver(&app, &batch).await, [sequence(&batch[0])]);
    }
}

#[tokio::test]
async fn a_cognito_call_that_times_out_is_reported() {
    // A listener that accepts and never answers: the SDK's own timeout fires.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let config = aws_sdk_cognitoidentityprovider::Config::builder()
        .behavior_version(aws_sdk_cognitoidentityprovider::config::BehaviorVersion::latest())
        .region(aws_sdk_cognitoidentityprovider::config::Region::new(
            integration_tests::local_aws::region(),
        ))
        .credentials_provider(integration_tests::local_aws::credentials())
        .endpoint_url(endpoint)
        .timeout_config(
            aws_sdk_cognitoidentityprovider::config::timeout::TimeoutConfig::builder()
                .operation_timeout(Duration::from_millis(300))
                .build(),
        )
        .build();
    let app = app_with_cognito(Cognito::from_conf(config));
    let batch = [change(
        9,
        SUB_A,
        ("a@example.com", "active"),
        ("a.new@example.com", "active"),
    )];
    assert_eq!(deliver(&app, &batch).await, [sequence(&batch[0])]);
    drop(silent);
}

#[tokio::test]
async fn records_the_invocation_has_no_time_for_are_retried_untouched() {
    let update =
        mock!(Cognito::admin_update_user_attributes).then_output(|| AdminUpdateUserAttributesOutput::builder().build());
    let app = app_answering!(&update);
    let batch = [change(
        11,
        SUB_A,
        ("a@example.com", "active"),
        ("a.new@example.com", "active"),
    )];
    let mut context = Context::default();
    // One second left: less than one record needs.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    context.deadline = u64::try_from(now_ms).unwrap() + 1_000;
    assert_eq!(deliver_with(&app, &batch, context).await, [sequence(&batch[0])]);
    assert_eq!(update.num_calls(), 0);
}

#[tokio::test]
async fn a_suspended_user_who_is_deleted_is_gone_from_cognito() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    let now = s.app.clock.now();
    s.app
        .store
        .set_status(&s.user_id(), UserStatus::Suspended, now)
        .await
        .unwrap();
    s.app
        .store
        .delete_user(&s.user_id(), user_service::store::Deleter::System, now)
        .await
        .unwrap();
    let (_, passed) = s.changes().await;
    assert_eq!(passed.len(), 2);
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await, None);
}

#[tokio::test]
async fn signing_out_a_user_cognito_already_disabled_counts_as_done() {
    use aws_sdk_cognitoidentityprovider::operation::admin_user_global_sign_out::AdminUserGlobalSignOutError;
    use aws_sdk_cognitoidentityprovider::types::error::NotAuthorizedException;
    let sign_out = mock!(Cognito::admin_user_global_sign_out).then_error(|| {
        AdminUserGlobalSignOutError::NotAuthorizedException(
            NotAuthorizedException::builder().message("User is disabled.").build(),
        )
    });
    let disable = disables();
    let app = app_answering!(&sign_out, &disable);
    // A suspension replayed after it landed.
    let batch = [suspension(5, SUB_A)];
    assert_eq!(deliver(&app, &batch).await, Vec::<String>::new());
    assert_eq!((sign_out.num_calls(), disable.num_calls()), (1, 1));
}

#[tokio::test]
async fn switching_back_and_forth_in_one_batch_ends_at_the_last_primary() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    // And back (undo, then redo within one batch of the stream).
    let original = s
        .app
        .store
        .list_emails(&s.user_id())
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.email.as_str() == "ada@example.com")
        .unwrap()
        .email_id;
    s.app
        .store
        .set_primary(&s.user_id(), original, s.app.clock.now())
        .await
        .unwrap();
    let (_, passed) = s.changes().await;
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(
        s.user().await.and_then(|u| u.email).as_deref(),
        Some("ada@example.com"),
        "records apply in order: the last switch wins"
    );
    // Each former primary was told once.
    assert_eq!(s.moto.mail_to("ada@example.com").await.len(), 1);
    let to_work = s.moto.mail_to("ada.work@example.com").await;
    assert_eq!(to_work.iter().filter(|m| m.code().is_none()).count(), 1, "{to_work:?}");
}

/// Cognito's password reset mails the address Cognito holds. Until the switch
/// of the primary has reached Cognito, the former primary is still that
/// address: removing it would leave whoever keeps that mailbox able to reset
/// the password and sign in. So it cannot be removed until the consumer has
/// set the new one there and recorded it.
#[tokio::test]
async fn a_former_primary_cannot_be_removed_until_cognito_holds_the_new_one() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    let (_, passed) = s.changes().await;
    let former = s.app.email_id_of(&s.sub, "ada@example.com").await;

    // The record has not been applied (lag, retries, or the failure queue).
    let refused = s.app.remove_email(&s.sub, &former).await;
    refused.assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada@example.com"));
    // Refused again on retry, and nothing was written: the record is still there.
    s.app
        .remove_email(&s.sub, &former)
        .await
        .assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    assert_eq!(
        s.app.list_emails(&s.sub).await.body["emails"].as_array().unwrap().len(),
        2
    );

    // Applied: Cognito holds the new primary, and the profile records it.
    assert_eq!(deliver(&s.app, &passed).await, Vec::<String>::new());
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada.work@example.com"));
    s.app.remove_email(&s.sub, &former).await.assert_status(204);
    // The record of it is a profile change with nothing for Cognito: delivered, no call fails.
    let (_, recorded) = s.changes().await;
    assert_eq!(deliver(&s.app, &recorded).await, Vec::<String>::new());
    s.app.assert_invariants().await;
}

/// A switch whose record failed for good left Cognito on the former primary.
/// The pass sees it in ListUsers, records what Cognito holds and asks the
/// consumer, Cognito's one writer, to apply the primary again: in the
/// stream's order, with a notice to the address Cognito held.
#[tokio::test]
async fn a_switch_that_never_reached_cognito_is_applied_again_through_the_stream() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    s.changes().await; // the switch's record, lost
    let former = s.app.email_id_of(&s.sub, "ada@example.com").await;
    s.app
        .remove_email(&s.sub, &former)
        .await
        .assert_problem(409, "SIGN_IN_ADDRESS_PENDING");

    s.app.clock.advance(60);
    let answer = s.app.reconcile_users().await.unwrap();
    assert_eq!(answer["tally"]["signInResynced"], 1, "{answer}");
    // The pass writes nothing to Cognito itself.
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada@example.com"));
    let (_, asked) = s.changes().await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(deliver(&s.app, &asked).await, Vec::<String>::new());
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada.work@example.com"));
    let notices = s.moto.mail_to("ada@example.com").await;
    assert_eq!(notices.len(), 1, "the address Cognito held is told: {notices:?}");
    let (_, recorded) = s.changes().await;
    assert_eq!(deliver(&s.app, &recorded).await, Vec::<String>::new());
    s.app.remove_email(&s.sub, &former).await.assert_status(204);

    // The next pass finds Cognito and the table agreeing.
    s.app.clock.advance(24 * 3600);
    let next = s.app.reconcile_users().await.unwrap();
    assert_eq!(
        (&next["tally"]["signInResynced"], &next["tally"]["signInRecorded"]),
        (&0.into(), &0.into()),
        "{next}"
    );
    s.app.assert_invariants().await;
}

/// The pass asks, then the user switches again before the consumer runs: the
/// records are applied in order, so the later switch is not overtaken, and
/// Cognito ends on the primary the user chose last.
#[tokio::test]
async fn a_switch_after_the_pass_asked_is_applied_after_it() {
    let mut s = Box::pin(Synced::start(&["ada@example.com"])).await;
    s.changes().await;
    s.switch_primary_to("ada.work@example.com").await;
    s.changes().await; // lost
    s.app.clock.advance(60);
    let answer = s.app.reconcile_users().await.unwrap();
    assert_eq!(answer["tally"]["signInResynced"], 1, "{answer}");
    s.switch_primary_to("ada.home@example.com").await;
    // The pass's request, the add's count, then the switch: in that order.
    let (_, all) = s.changes().await;
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(deliver(&s.app, &all).await, Vec::<String>::new());
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada.home@example.com"));
    let (_, recorded) = s.changes().await;
    assert_eq!(deliver(&s.app, &recorded).await, Vec::<String>::new());
    assert_eq!(s.user().await.unwrap().email.as_deref(), Some("ada.home@example.com"));
    // Both former primaries may go now; the one Cognito holds may not.
    for address in ["ada@example.com", "ada.work@example.com"] {
        let id = s.app.email_id_of(&s.sub, address).await;
        s.app.remove_email(&s.sub, &id).await.assert_status(204);
    }
    s.app.assert_invariants().await;
}
