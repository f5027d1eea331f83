//! The business metrics: every outcome counts its metric once, and nothing
//! else, with a real recorder (metrics-util's `DebuggingRecorder`) installed
//! for the test's thread around a current-thread runtime, so every count the
//! handlers and the store make lands in it. DynamoDB Local for the outcomes;
//! SDK-level fault injection for contention and DynamoDB's errors. And the
//! admin actions' audit events.

use std::collections::BTreeMap;
use std::future::Future;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::transact_write_items::{TransactWriteItemsError, TransactWriteItemsOutput};
use aws_sdk_dynamodb::types::CancellationReason;
use aws_sdk_dynamodb::types::error::{ProvisionedThroughputExceededException, TransactionCanceledException};
use aws_smithy_mocks::{RuleMode, mock, mock_client};
use integration_tests::logs::LogCapture;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use serde_json::{Value, json};
use user_service::config::StoreConfig;
use user_service::metrics::Metric;
use user_service::store::retry::MAX_ATTEMPTS;

use crate::handler_support::*;

const GRACE: &str = "5d2c7a91-3e4f-4a6b-9c8d-7e6f5a4b3c2d";
const MALLORY: &str = "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d";

/// The counts of a recorder, step by step.
struct Counts(Snapshotter);

impl Counts {
    /// Every metric that moved since the last call, with how much.
    fn moved(&self) -> BTreeMap<String, u64> {
        self.0
            .snapshot()
            .into_vec()
            .into_iter()
            .filter_map(|(key, _, _, value)| match value {
                DebugValue::Counter(n) if n > 0 => Some((key.key().name().to_owned(), n)),
                _ => None,
            })
            .collect()
    }

    /// Asserts that the step since the last call counted exactly `expected`.
    #[track_caller]
    fn step(&self, what: &str, expected: &[(Metric, u64)]) {
        let expected: BTreeMap<String, u64> = expected.iter().map(|(m, n)| (m.name().to_owned(), *n)).collect();
        assert_eq!(self.moved(), expected, "{what}");
    }
}

/// Runs `test` with a recorder of its own on this thread; every name it
/// records must be in `Metric::ALL`.
fn metered<F: Future<Output = ()>>(test: impl FnOnce(Counts) -> F) {
    let recorder = DebuggingRecorder::new();
    let counts = Counts(recorder.snapshotter());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    ::metrics::with_local_recorder(&recorder, || runtime.block_on(test(counts)));
    let names: Vec<String> = recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, ..)| key.key().name().to_owned())
        .collect();
    for name in names {
        assert!(
            Metric::ALL.iter().any(|m| m.name() == name),
            "{name} is not in Metric::ALL"
        );
    }
}

#[test]
fn each_outcome_of_a_users_routes_counts_its_metric_once() {
    metered(|counts| async move {
        let app = TestApp::spawn().await;
        let logs = LogCapture::default();
        let _guard = logs.install();

        app.sign_up(ADA, "ada@example.com").await;
        counts.step("sign-up", &[(Metric::SignUps, 1)]);
        app.sign_up(ADA, "ada@example.com").await;
        counts.step("a repeated delivery creates nothing", &[]);

        let id = app.add_address(ADA, "ada.work@example.com").await;
        counts.step("add", &[(Metric::CodesIssued, 1)]);
        app.send_verification(ADA, &id)
            .await
            .assert_problem(429, "TOO_MANY_REQUESTS");
        // The resend spacing is a condition of the write: refused by it.
        counts.step(
            "a resend within the minute",
            &[(Metric::CodesRefusedByLimit, 1), (Metric::ConditionalCheckFailures, 1)],
        );
        app.clock.advance(61);
        app.send_verification(ADA, &id).await.assert_status(202);
        counts.step("a resend after the minute", &[(Metric::CodesIssued, 1)]);

        let code = logs.code_for(&id);
        let wrong = if code == "000000" { "111111" } else { "000000" };
        app.verify_email(ADA, &id, wrong)
            .await
            .assert_problem(400, "VERIFICATION_FAILED");
        counts.step("a wrong code", &[(Metric::VerificationsFailed, 1)]);
        app.verify_email(ADA, &id, &code).await.assert_status(200);
        counts.step("the right code", &[(Metric::VerificationsSucceeded, 1)]);
        app.verify_email(ADA, &id, &code).await.assert_status(200);
        counts.step("verifying a verified address again", &[]);

        app.set_primary_email(ADA, &id).await.assert_status(200);
        counts.step("a switch", &[(Metric::PrimarySwitches, 1)]);
        app.set_primary_email(ADA, &id).await.assert_status(200);
        counts.step("a switch to the primary", &[]);

        let old = app.list_emails(ADA).await.body["emails"][0]["emailId"]
            .as_str()
            .unwrap()
            .to_owned();
        app.cognito_holds_primary(ADA).await;
        counts.step("Cognito's address recorded", &[]);
        app.remove_email(ADA, &old).await.assert_status(204);
        counts.step("a removal", &[(Metric::EmailsRemoved, 1)]);
        app.remove_email(ADA, &old).await.assert_problem(404, "NOT_FOUND");
        counts.step("removing it again", &[]);

        app.update_profile(ADA, "\"2\"", json!({"firstName": "Augusta"}))
            .await
            .assert_status(200);
        counts.step("an edit", &[]);
        app.update_profile(ADA, "\"2\"", json!({"lastName": "King"}))
            .await
            .assert_problem(412, "VERSION_MISMATCH");
        counts.step("a stale If-Match", &[(Metric::ConditionalCheckFailures, 1)]);

        app.get_account(ADA).await.assert_status(200);
        app.check_email(ADA, "ada@example.com").await.assert_status(200);
        counts.step("reads", &[]);

        app.delete_account(ADA, "\"3\"").await.assert_status(204);
        counts.step("closing one's own account", &[(Metric::UsersDeleted, 1)]);
    });
}

#[test]
fn limits_count_as_refusals_and_take_overs_as_such() {
    metered(|counts| async move {
        let app = TestApp::spawn().await;
        let logs = LogCapture::default();
        let _guard = logs.install();
        app.sign_up(ADA, "ada@example.com").await;
        app.sign_up(MALLORY, "mallory@example.com").await;
        counts.step("two sign-ups", &[(Metric::SignUps, 2)]);

        let id = app.add_address(ADA, "ada.work@example.com").await;
        let wrong = if logs.code_for(&id) == "000000" {
            "111111"
        } else {
            "000000"
        };
        counts.moved();
        for _ in 0..5 {
            app.verify_email(ADA, &id, wrong)
                .await
                .assert_problem(400, "VERIFICATION_FAILED");
        }
        counts.step("five wrong codes", &[(Metric::VerificationsFailed, 5)]);
        app.verify_email(ADA, &id, &logs.code_for(&id))
            .await
            .assert_problem(429, "TOO_MANY_ATTEMPTS");
        counts.step("past the limit", &[(Metric::VerificationsRefusedByLimit, 1)]);

        // An address Mallory claimed and never verified: once the claim has
        // lapsed, an add takes it over. The cancellation that shows the claim
        // (and the codes counter Mallory's add wrote) is no lost race.
        app.add_address(MALLORY, "shared@example.com").await;
        app.clock.advance(3_601);
        counts.moved();
        app.add_address(ADA, "shared@example.com").await;
        counts.step(
            "an add taking a lapsed claim over",
            &[(Metric::TakeOvers, 1), (Metric::CodesIssued, 1)],
        );

        // A confirmed sign-up takes over a live unverified claim.
        app.add_address(MALLORY, "grace@example.com").await;
        counts.moved();
        app.sign_up(GRACE, "grace@example.com").await;
        counts.step(
            "a sign-up taking a claim over",
            &[(Metric::SignUps, 1), (Metric::TakeOvers, 1)],
        );

        // A claim another user verified: the add is refused by its condition.
        app.add_email(MALLORY, "ada@example.com")
            .await
            .assert_problem(409, "EMAIL_TAKEN");
        counts.step("a taken address", &[(Metric::ConditionalCheckFailures, 1)]);
        app.assert_invariants().await;
    });
}

/// The audit events `logs` holds.
fn audit_events(logs: &LogCapture) -> Vec<Value> {
    logs.lines()
        .into_iter()
        .filter(|l| l["audit"] == "admin_action")
        .collect()
}

#[test]
fn admin_actions_are_counted_and_audited_by_sub_alone() {
    metered(|counts| async move {
        let app = TestApp::spawn().await;
        let logs = LogCapture::default();
        let _guard = logs.install();
        app.sign_up(ADA, "ada@example.com").await;
        app.sign_up(ADMIN, "grace@example.com").await;
        counts.moved();

        app.find_user_by_email(ADMIN, "ada@example.com")
            .await
            .assert_status(200);
        counts.step("a lookup", &[(Metric::AdminLookups, 1)]);
        app.find_user_by_email(ADMIN, "nobody@example.com")
            .await
            .assert_problem(404, "NOT_FOUND");
        counts.step("a lookup that finds nobody", &[(Metric::AdminLookups, 1)]);
        app.find_user_by_email(ADMIN, "not an address")
            .await
            .assert_problem(400, "VALIDATION_FAILED");
        counts.step("a lookup of no address", &[(Metric::AdminActionsRefused, 1)]);

        app.set_user_status(ADMIN, ADA, "suspended").await.assert_status(200);
        counts.step("a suspension", &[(Metric::AdminStatusChanges, 1)]);
        app.set_user_status(ADMIN, ADA, "active").await.assert_status(200);
        counts.step("a re-activation", &[(Metric::AdminStatusChanges, 1)]);
        app.set_user_status(ADMIN, ADA, "active").await.assert_status(200);
        // Already active: audited as unchanged, counted as no change.
        counts.step("a re-activation of an active user", &[]);
        app.set_user_status(ADMIN, ADMIN, "suspended")
            .await
            .assert_problem(403, "FORBIDDEN");
        counts.step("an admin's own status", &[(Metric::AdminActionsRefused, 1)]);
        app.set_user_status(ADMIN, "nobody", "suspended")
            .await
            .assert_problem(404, "NOT_FOUND");
        // Found missing by the read before the write: no condition failed.
        counts.step("an unknown user", &[(Metric::AdminActionsRefused, 1)]);
        app.set_user_status(ADMIN, ADA, "gone")
            .await
            .assert_problem(400, "VALIDATION_FAILED");
        counts.step("no such status", &[(Metric::AdminActionsRefused, 1)]);
        app.set_user_status(ADMIN, ADA, "deleted").await.assert_status(200);
        counts.step(
            "a delete",
            &[(Metric::AdminStatusChanges, 1), (Metric::UsersDeleted, 1)],
        );

        let events = audit_events(&logs);
        let shape = |e: &Value| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["target"].as_str().map(str::to_owned),
                e["outcome"].as_str().unwrap().to_owned(),
            )
        };
        let seen: Vec<_> = events.iter().map(shape).collect();
        let own = |action: &str, target: Option<&str>, outcome: &str| {
            (action.to_owned(), target.map(str::to_owned), outcome.to_owned())
        };
        assert_eq!(
            seen,
            vec![
                own("lookup", Some(ADA), "found"),
                own("lookup", None, "not_found"),
                own("lookup", None, "VALIDATION_FAILED"),
                own("suspend", Some(ADA), "suspended"),
                own("reactivate", Some(ADA), "reactivated"),
                own("reactivate", Some(ADA), "unchanged"),
                own("suspend", Some(ADMIN), "FORBIDDEN"),
                own("suspend", Some("nobody"), "NOT_FOUND"),
                own("set_status", None, "VALIDATION_FAILED"),
                own("delete", Some(ADA), "deleted"),
            ]
        );
        for event in &events {
            assert_eq!(event["level"], "INFO", "{event}");
            assert_eq!(event["admin"], ADMIN, "{event}");
            assert_eq!(event["span"]["sub"], ADMIN, "{event}");
            // Users by sub alone: not the address searched for, nor any other.
            let text = event.to_string();
            assert!(!text.contains('@') && !text.contains("%40"), "{event}");
            let keys: Vec<&str> = event.as_object().unwrap().keys().map(String::as_str).collect();
            for key in keys {
                assert!(
                    [
                        "timestamp",
                        "level",
                        "message",
                        "span",
                        "audit",
                        "action",
                        "admin",
                        "target",
                        "outcome"
                    ]
                    .contains(&key),
                    "{key} in {event}"
                );
            }
        }
        let findings: Vec<_> = logs
            .text()
            .lines()
            .flat_map(|l| integration_tests::log_check::check_line(l, &Default::default()))
            .collect();
        assert!(findings.is_empty(), "{findings:?}");
    });
}

/// A TransactWriteItems cancelled by a conflicting transaction.
fn conflict() -> TransactWriteItemsError {
    let reason = |code: &str| CancellationReason::builder().code(code).build();
    TransactWriteItemsError::TransactionCanceledException(
        TransactionCanceledException::builder()
            .cancellation_reasons(reason("TransactionConflict"))
            .cancellation_reasons(reason("None"))
            .cancellation_reasons(reason("None"))
            .build(),
    )
}

/// A forgot-password migrates a pending user at once and ends their legacy
/// password, and anyone who knows the address can ask: counted apart from
/// the migrations a matching password starts, for its burst alarm.
#[test]
fn migrations_by_a_password_reset_are_counted_apart_from_sign_ins() {
    metered(|counts| async move {
        let app = TestApp::spawn().await;
        let hash = user_service::import::PasswordHash::parse(
            user_service::import::HashAlgorithm::Bcrypt,
            "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
        )
        .unwrap();
        for address in ["ada@example.com", "grace@example.com"] {
            let user = user_service::domain::NewUser {
                user_id: user_service::domain::UserId::new_pending(),
                email: user_service::domain::EmailAddress::parse(address).unwrap(),
                first_name: None,
                last_name: None,
                phone: None,
            };
            let account = user_service::domain::NewAccount::signed_up(user, app.clock.now());
            app.store
                .create_pending_account(&account, &hash, app.clock.now())
                .await
                .unwrap();
        }
        counts.step("the import", &[]);
        let mut reset = integration_tests::events::load("migrate-user-forgot-password");
        reset["userName"] = json!("ada@example.com");
        app.invoke(&MIGRATE_USER, reset).await.unwrap();
        counts.step("a forgot-password", &[(Metric::MigrationsByPasswordReset, 1)]);
        let mut sign_in = integration_tests::events::load("migrate-user");
        sign_in["userName"] = json!("grace@example.com");
        sign_in["request"]["password"] = json!("correct horse battery staple");
        app.invoke(&MIGRATE_USER, sign_in).await.unwrap();
        counts.step("a sign-in with the legacy password", &[(Metric::MigrationsStarted, 1)]);
    });
}

fn mocked(client: Client) -> TestApp {
    TestApp::on(user_service::Store::new(client, StoreConfig::new("mocked")))
}

#[test]
fn contention_and_dynamodb_errors_count_once_per_failed_store_call() {
    metered(|counts| async move {
        // Lost once, then committed: one retry, one sign-up.
        let rule = mock!(Client::transact_write_items)
            .sequence()
            .error(conflict)
            .output(|| TransactWriteItemsOutput::builder().build())
            .build();
        let app = mocked(mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]));
        app.sign_up(ADA, "ada@example.com").await;
        assert_eq!(rule.num_calls(), 2);
        counts.step(
            "a sign-up that lost a race once",
            &[(Metric::SignUps, 1), (Metric::ContentionRetries, 1)],
        );

        // Lost every time: the retries, then one conflict error.
        let rule = mock!(Client::transact_write_items).then_error(conflict);
        let app = mocked(mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]));
        app.post_confirmation(ADA, "ada@example.com").await.unwrap_err();
        assert_eq!(rule.num_calls(), MAX_ATTEMPTS as usize);
        counts.step(
            "a sign-up that kept losing",
            &[
                (Metric::ContentionRetries, u64::from(MAX_ATTEMPTS) - 1),
                (Metric::DynamoDbTransactionConflicts, 1),
            ],
        );

        // Throttled, whatever the SDK's own attempts: one failed store call.
        let rule = mock!(Client::get_item).then_error(|| {
            GetItemError::ProvisionedThroughputExceededException(
                ProvisionedThroughputExceededException::builder().build(),
            )
        });
        let app = mocked(mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]));
        app.get_profile(ADA).await.assert_problem(503, "SERVICE_UNAVAILABLE");
        assert!(rule.num_calls() >= 1);
        counts.step("a throttled read", &[(Metric::DynamoDbThrottled, 1)]);

        // A 500 on every attempt.
        let rule = mock!(Client::get_item).then_http_response(|| {
            aws_smithy_runtime_api::http::Response::new(
                aws_smithy_runtime_api::http::StatusCode::try_from(500).unwrap(),
                aws_smithy_types::body::SdkBody::from(
                    r#"{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}"#,
                ),
            )
        });
        let app = mocked(mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]));
        app.get_profile(ADA).await.assert_problem(503, "SERVICE_UNAVAILABLE");
        counts.step("a 500", &[(Metric::DynamoDbServerErrors, 1)]);
    });
}

#[test]
fn callers_refused_at_admin_admission_are_audited_and_counted() {
    // A user probing the admin routes with their own token, and an admin whose
    // account was suspended but whose token still names the group: refused
    // before any handler, and still in the audit trail, by sub alone.
    metered(|counts| async move {
        let app = TestApp::spawn().await;
        let logs = LogCapture::default();
        let _guard = logs.install();
        app.sign_up(ADA, "ada@example.com").await;
        app.sign_up(ADMIN, "grace@example.com").await;
        counts.moved();

        let not_an_admin = app
            .send(
                &FIND_USER_BY_EMAIL,
                Event::of(&FIND_USER_BY_EMAIL).caller(ADA).groups("[]"),
            )
            .await;
        not_an_admin.assert_problem(403, "FORBIDDEN");
        counts.step("a user at the admin door", &[(Metric::AdminActionsRefused, 1)]);

        app.store
            .set_status(
                &user_service::domain::UserId::parse(ADMIN).unwrap(),
                user_service::domain::UserStatus::Suspended,
                app.clock.now(),
            )
            .await
            .unwrap();
        counts.moved();
        app.set_user_status(ADMIN, ADA, "suspended")
            .await
            .assert_problem(403, "FORBIDDEN");
        counts.step("a suspended admin", &[(Metric::AdminActionsRefused, 1)]);

        let seen: Vec<(String, String, Option<String>, String)> = audit_events(&logs)
            .iter()
            .map(|e| {
                (
                    e["action"].as_str().unwrap().to_owned(),
                    e["admin"].as_str().unwrap().to_owned(),
                    e["target"].as_str().map(str::to_owned),
                    e["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let admit = |who: &str| ("admit".to_owned(), who.to_owned(), None, "FORBIDDEN".to_owned());
        assert_eq!(seen, vec![admit(ADA), admit(ADMIN)]);
        assert!(!logs.text().contains('@'), "no address in the log");
    });
}

#[test]
fn a_refusal_by_the_address_policy_counts_once_at_add_and_at_sign_up_and_a_check_not_at_all() {
    metered(|counts| async move {
        let policy = user_service::address_policy::AddressPolicy::default().blocking_subaddresses();
        let app = TestApp::spawn_with_policy(policy).await;
        app.sign_up(ADA, "ada@example.com").await;
        counts.step("sign-up", &[(Metric::SignUps, 1)]);
        app.add_email(ADA, "ada+x@example.com")
            .await
            .assert_problem(422, "ADDRESS_NOT_ALLOWED");
        counts.step("an add refused", &[(Metric::AddressesNotAllowed, 1)]);
        app.check_email(ADA, "ada+x@example.com")
            .await
            .assert_problem(422, "ADDRESS_NOT_ALLOWED");
        counts.step("a check refused, not an add", &[]);
        let err = app.pre_sign_up(MALLORY, "mallory+x@example.com").await.unwrap_err();
        assert_eq!(err.error_type, "ADDRESS_NOT_ALLOWED");
        counts.step("a sign-up refused", &[(Metric::AddressesNotAllowed, 1)]);
    });
}
