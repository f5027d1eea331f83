//! Concurrent writers against the same items. Every test ends with the invariant checker.

use std::sync::Arc;

use futures::future::join_all;
use integration_tests::ddb;
use user_service::StoreError;
use user_service::domain::{IfMatch, PersonName, ProfilePatch};
use user_service::store::Created;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_users_adding_one_address_leave_exactly_one_owner() {
    let store = Arc::new(ddb::store().await);
    let mut users = Vec::new();
    for i in 0..50 {
        users.push(signed_up(&store, &format!("u{i}"), &format!("u{i}@example.com")).await);
    }
    let results = join_all(users.iter().map(|u| {
        let store = Arc::clone(&store);
        let u = u.clone();
        tokio::spawn(async move {
            store
                .add_email(&u, &addr("contested@example.com"), &code("123456"), now())
                .await
        })
    }))
    .await;
    let results: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    let winners: Vec<_> = results.iter().filter(|r| r.is_ok()).collect();
    let taken = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::EmailTaken)))
        .count();
    let other: Vec<_> = results
        .iter()
        .filter(|r| !matches!(r, Ok(_) | Err(StoreError::EmailTaken)))
        .collect();
    assert_eq!(winners.len(), 1, "exactly one owner; others: {other:?}");
    assert_eq!(taken, 49);

    let items = integration_tests::invariants::scan(store.client(), &store.config().table_name).await;
    let records = items
        .iter()
        .filter(|i| {
            i.get("email")
                .and_then(|v| v.as_s().ok())
                .is_some_and(|e| e == "contested@example.com")
        })
        .filter(|i| {
            i.get("entityType")
                .and_then(|v| v.as_s().ok())
                .is_some_and(|t| t == "Email")
        })
        .count();
    let claims = items
        .iter()
        .filter(|i| {
            i.get("PK")
                .and_then(|v| v.as_s().ok())
                .is_some_and(|pk| pk == "EMAIL#contested@example.com")
        })
        .count();
    assert_eq!((records, claims), (1, 1));
    assert_invariants(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_primary_switches_leave_one_verified_primary() {
    let store = Arc::new(ddb::store_with(|c| c.max_emails_per_user = 10).await);
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(with_verified(&store, &user, &format!("alt{i}@example.com")).await);
    }
    let results = join_all((0..20).map(|i| {
        let store = Arc::clone(&store);
        let user = user.clone();
        let target = ids[i % ids.len()];
        tokio::spawn(async move { store.set_primary(&user, target, now()).await })
    }))
    .await;
    let results: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    // Each switch either happened or lost every retry; none may break the rules.
    assert!(
        results.iter().all(|r| matches!(r, Ok(_) | Err(StoreError::Contended))),
        "{results:?}"
    );
    assert!(results.iter().any(|r| r.is_ok()));

    let account = store.get_account(&user).await.unwrap();
    let primaries: Vec<_> = account.emails.iter().filter(|e| e.is_primary).collect();
    assert_eq!(primaries.len(), 1);
    assert!(primaries[0].is_verified);
    assert_eq!(Some(&primaries[0].email), account.profile.email.as_ref());
    let successes = results.iter().filter(|r| r.is_ok()).count() as u64;
    assert!(
        account.profile.version <= 1 + successes,
        "version counts only real switches"
    );
    assert_invariants(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_updates_with_the_same_version_give_one_success() {
    let store = Arc::new(ddb::store().await);
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let results = join_all((0..20).map(|i| {
        let store = Arc::clone(&store);
        let user = user.clone();
        tokio::spawn(async move {
            let patch = ProfilePatch {
                first_name: Some(PersonName::parse(&format!("Name{i}")).unwrap()),
                ..Default::default()
            };
            store
                .update_profile(&user, &IfMatch::Versions(vec![1]), &patch, now())
                .await
        })
    }))
    .await;
    let results: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    assert_eq!(
        results
            .iter()
            .filter(|r| matches!(r, Err(StoreError::VersionMismatch { current: 2 })))
            .count(),
        19
    );
    let winner = results.into_iter().find_map(Result::ok).unwrap();
    assert_eq!(
        store.get_profile(&user).await.unwrap(),
        winner,
        "the stored profile is the winner's"
    );
    assert_invariants(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_user_delivered_five_times_concurrently_gives_one_user() {
    let store = Arc::new(ddb::store().await);
    let user = uid("ada");
    let results = join_all((0..5).map(|_| {
        let store = Arc::clone(&store);
        let user = user.clone();
        tokio::spawn(async move { store.create_user(&new_user(&user, "ada@example.com"), now()).await })
    }))
    .await;
    let results: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    assert!(
        results.iter().all(Result::is_ok),
        "every delivery succeeds: {results:?}"
    );
    assert_eq!(results.iter().filter(|r| matches!(r, Ok(Created::New))).count(), 1);
    assert_eq!(item_count(&store).await, 3);
    assert_eq!(store.get_account(&user).await.unwrap().emails.len(), 1);
    assert_invariants(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_verify_remove_and_switch_keep_the_rules() {
    let store = Arc::new(ddb::store().await);
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let a = with_verified(&store, &user, "a@example.com").await;
    let b = store
        .add_email(&user, &addr("b@example.com"), &code("123456"), now())
        .await
        .unwrap()
        .email_id;
    let (s, u) = (Arc::clone(&store), user.clone());
    let switch = tokio::spawn(async move { s.set_primary(&u, a, now()).await.map(|_| ()) });
    let (s, u) = (Arc::clone(&store), user.clone());
    let remove = tokio::spawn(async move { s.remove_email(&u, a, user_service::domain::Timestamp::now()).await });
    let (s, u) = (Arc::clone(&store), user.clone());
    let verify = tokio::spawn(async move { s.verify_email(&u, b, &code("123456"), now()).await.map(|_| ()) });
    let (s, u) = (Arc::clone(&store), user.clone());
    let remove_b = tokio::spawn(async move { s.remove_email(&u, b, user_service::domain::Timestamp::now()).await });
    for r in [
        switch.await.unwrap(),
        remove.await.unwrap(),
        verify.await.unwrap(),
        remove_b.await.unwrap(),
    ] {
        assert!(
            matches!(
                r,
                Ok(()) | Err(StoreError::PrimaryEmail | StoreError::NotFound | StoreError::Contended)
            ),
            "{r:?}"
        );
    }
    assert_invariants(&store).await;
}
