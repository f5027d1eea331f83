//! Races forced deterministically: another request changes an item between an
//! operation's read and its write (an SDK interceptor runs it just before the
//! first transaction leaves). The state only moved, so the operation reads again
//! and answers as the new state says, never 404 or 403.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aws_sdk_dynamodb::Client;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use futures::future::BoxFuture;
use integration_tests::ddb;
use user_service::domain::UserStatus;
use user_service::{Store, StoreError};

use crate::common::*;

type Meddle = Arc<dyn Fn(Store) -> BoxFuture<'static, ()> + Send + Sync>;

/// Runs `meddle` once, on a client of its own, just before the first
/// TransactWriteItems of the store under test is sent.
#[derive(Clone)]
struct BetweenReadAndWrite {
    done: Arc<AtomicBool>,
    other: Store,
    meddle: Meddle,
}

impl std::fmt::Debug for BetweenReadAndWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BetweenReadAndWrite")
    }
}

impl Intercept for BetweenReadAndWrite {
    fn name(&self) -> &'static str {
        "BetweenReadAndWrite"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if integration_tests::sdk::is_transaction(context.request()) && !self.done.swap(true, Ordering::SeqCst) {
            // Interceptors are synchronous: the other request runs to completion on a
            // thread and runtime of its own before this one is sent, with a client of
            // its own: a pooled connection of the test's client belongs to the test's
            // runtime, which is blocked here until the other request is done.
            let config = self.other.config().clone();
            let meddle = Arc::clone(&self.meddle);
            std::thread::spawn(move || {
                let other = Store::new(ddb::client(), config).with_key(ddb::test_key());
                tokio::runtime::Runtime::new()
                    .expect("a runtime")
                    .block_on(meddle(other))
            })
            .join()
            .map_err(|_| "the meddling request panicked")?;
        }
        Ok(())
    }
}

/// A store on `setup`'s table whose first transaction is preceded by `meddle`.
fn racing(setup: &Store, meddle: Meddle) -> Store {
    let interceptor = BetweenReadAndWrite {
        done: Arc::default(),
        other: setup.clone(),
        meddle,
    };
    let client = Client::from_conf(
        ddb::sdk_config_builder()
            .endpoint_url(ddb::endpoint())
            .interceptor(interceptor)
            .build(),
    );
    Store::new(client, setup.config().clone()).with_key(ddb::test_key())
}

#[tokio::test]
async fn a_wrong_code_racing_a_resend_is_judged_against_the_new_code() {
    let setup = ddb::store().await;
    let ada = signed_up(&setup, "ada", "ada@example.com").await;
    let added = setup
        .add_email(&ada, &addr("work@example.com"), &code("111111"), now())
        .await
        .unwrap();
    let (user, id) = (ada.clone(), added.email_id);
    let store = racing(
        &setup,
        Arc::new(move |other| {
            let user = user.clone();
            Box::pin(async move {
                other
                    .issue_code(&user, id, &code("222222"), now().plus_seconds(61))
                    .await
                    .unwrap();
            })
        }),
    );
    // Judged against the code that holds after the resend: wrong, one attempt used.
    let err = store
        .verify_email(&ada, id, &code("333333"), now().plus_seconds(62))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::VerificationFailed { attempts_left: 4 }),
        "{err:?}"
    );
    setup
        .verify_email(&ada, id, &code("222222"), now().plus_seconds(63))
        .await
        .unwrap();
    assert_invariants(&setup).await;
}

#[tokio::test]
async fn a_delete_racing_a_remove_and_an_add_deletes_everything() {
    let setup = ddb::store().await;
    let ada = signed_up(&setup, "ada", "ada@example.com").await;
    let work = with_verified(&setup, &ada, "work@example.com").await;
    let user = ada.clone();
    let store = racing(
        &setup,
        Arc::new(move |other| {
            let user = user.clone();
            Box::pin(async move {
                other
                    .remove_email(&user, work, user_service::domain::Timestamp::now())
                    .await
                    .unwrap();
                other
                    .add_email(&user, &addr("late@example.com"), &code("123456"), now())
                    .await
                    .unwrap();
            })
        }),
    );
    let deleted = store.set_status(&ada, UserStatus::Deleted, now()).await.unwrap();
    assert_eq!(deleted.status, UserStatus::Deleted);
    for address in ["ada@example.com", "work@example.com", "late@example.com"] {
        assert!(setup.is_available(&addr(address), now()).await.unwrap(), "{address}");
    }
    assert_invariants(&setup).await;
}

#[tokio::test]
async fn a_switch_racing_another_switch_lands_from_the_new_state() {
    let setup = ddb::store().await;
    let ada = signed_up(&setup, "ada", "ada@example.com").await;
    let a = with_verified(&setup, &ada, "a@example.com").await;
    let b = with_verified(&setup, &ada, "b@example.com").await;
    let user = ada.clone();
    // Between set-primary's read (primary: ada@) and its write, another request
    // makes `a` primary: the switch to `b` must still land, from the new state.
    let store = racing(
        &setup,
        Arc::new(move |other| {
            let user = user.clone();
            Box::pin(async move {
                other.set_primary(&user, a, now()).await.unwrap();
            })
        }),
    );
    let profile = store.set_primary(&ada, b, now()).await.unwrap();
    assert_eq!(profile.email.unwrap().as_str(), "b@example.com");
    assert_invariants(&setup).await;
}

/// An admin suspended after the route admitted them (it read their profile)
/// and before their action's write: the write carries the check that the
/// admin is active, so the action is refused and the target is untouched.
#[tokio::test]
async fn an_admin_suspended_between_admission_and_write_cannot_act() {
    use integration_tests::test_app::TestApp;
    const TARGET: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
    const ADMIN: &str = "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c";
    for (action, meddling_status) in [
        ("suspended", UserStatus::Suspended),
        ("active", UserStatus::Suspended),
        ("deleted", UserStatus::Suspended),
        ("suspended", UserStatus::Deleted),
        ("deleted", UserStatus::Deleted),
    ] {
        let setup = TestApp::spawn().await;
        setup.sign_up(TARGET, "target@example.com").await;
        setup.sign_up(ADMIN, "grace@example.com").await;
        let target = user_service::domain::UserId::parse(TARGET).unwrap();
        if action == "active" {
            setup
                .store
                .set_status(&target, UserStatus::Suspended, now())
                .await
                .unwrap();
        }
        let before = setup.store.get_profile(&target).await.unwrap();
        let admin = user_service::domain::UserId::parse(ADMIN).unwrap();
        let store = racing(
            &setup.store,
            Arc::new(move |other| {
                let admin = admin.clone();
                Box::pin(async move {
                    other.set_status(&admin, meddling_status, now()).await.unwrap();
                })
            }),
        );
        let app = TestApp::on(store);
        let reply = app.set_user_status(ADMIN, TARGET, action).await;
        reply.assert_problem(403, "FORBIDDEN");
        let after = setup.store.get_profile(&target).await.unwrap();
        assert_eq!(
            (after.status, after.version, after.email_count),
            (before.status, before.version, before.email_count),
            "{action} by an admin made {meddling_status:?} in between"
        );
        setup.assert_invariants().await;
    }
}
