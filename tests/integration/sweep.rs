//! The daily sweep against moto's Cognito: a user who deleted themselves in
//! Cognito (no trigger fires) loses profile, claims and personal data.

use integration_tests::moto::Moto;
use serde_json::json;
use user_service::domain::UserId;
use user_service::identity::UserPool;

use crate::handler_support::*;

#[tokio::test]
async fn users_deleted_in_cognito_are_erased_by_the_sweep() {
    let moto = Moto::start();
    // Grace deleted herself in Cognito: only Ada is left in the pool.
    let (cognito, pool_id) = moto.pool_of_subs(&[ADA]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::new(cognito, pool_id));
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    app.add_address(ADMIN, "grace.pending@example.com").await;

    assert_eq!(app.reconcile_users().await.unwrap(), json!({"checked": 2, "erased": 1}));
    let grace = UserId::parse(ADMIN).unwrap();
    assert!(matches!(
        app.store.get_profile(&grace).await,
        Err(user_service::StoreError::NotFound)
    ));
    for address in ["grace@example.com", "grace.pending@example.com"] {
        let email = user_service::domain::EmailAddress::parse(address).unwrap();
        assert!(
            app.store.is_available(&email, app.clock.now()).await.unwrap(),
            "{address}"
        );
    }
    assert_eq!(
        app.store
            .get_profile(&UserId::parse(ADA).unwrap())
            .await
            .unwrap()
            .status,
        user_service::domain::UserStatus::Active
    );
    app.assert_invariants().await;
    // Nothing left to do on the next run.
    assert_eq!(app.reconcile_users().await.unwrap(), json!({"checked": 1, "erased": 0}));
}

#[tokio::test]
async fn a_sweep_that_cannot_ask_cognito_erases_nothing_and_fails() {
    let moto = Moto::start();
    let (cognito, _) = moto.pool_of_subs(&[]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::new(cognito, "us-east-1_NoSuchPool"));
    app.sign_up(ADA, "ada@example.com").await;
    let before = app.item_count().await;
    let err = app.reconcile_users().await.unwrap_err();
    assert_eq!(err.error_type, "SWEEP_FAILED");
    assert_eq!(app.item_count().await, before);
    assert!(app.store.get_profile(&UserId::parse(ADA).unwrap()).await.is_ok());
}
