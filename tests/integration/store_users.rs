//! Create user, profile edits, status, and reads.

use integration_tests::ddb;
use user_service::StoreError;
use user_service::domain::{IfMatch, PersonName, Phone, ProfilePatch, UserStatus};
use user_service::store::Created;

use crate::common::*;

#[tokio::test]
async fn create_user_writes_profile_primary_and_claim() {
    let store = ddb::store().await;
    let user = uid("ada");
    let created = store
        .create_user(&new_user(&user, " Ada@Example.com "), now())
        .await
        .unwrap();
    assert_eq!(created, Created::New);

    let account = store.get_account(&user).await.unwrap();
    assert_eq!(account.profile.email.as_ref().unwrap().as_str(), "ada@example.com");
    assert_eq!(account.profile.version, 1);
    assert_eq!(account.profile.status, UserStatus::Active);
    assert_eq!(account.profile.email_count, 1);
    assert_eq!(account.profile.phone.as_ref().map(|p| p.as_str()), Some("+14155550100"));
    assert_eq!(account.emails.len(), 1);
    let primary = &account.emails[0];
    assert!(primary.is_primary && primary.is_verified && primary.verified_at.is_some());
    assert!(!store.is_available(&addr("ada@example.com"), now()).await.unwrap());
    assert_eq!(item_count(&store).await, 3);
    assert_invariants(&store).await;
}

#[tokio::test]
async fn create_user_is_idempotent() {
    let store = ddb::store().await;
    let user = uid("ada");
    store
        .create_user(&new_user(&user, "ada@example.com"), now())
        .await
        .unwrap();
    let before = store.get_account(&user).await.unwrap();
    for _ in 0..3 {
        let again = store
            .create_user(&new_user(&user, "ada@example.com"), now())
            .await
            .unwrap();
        assert_eq!(again, Created::Existing);
    }
    assert_eq!(store.get_account(&user).await.unwrap(), before);
    assert_eq!(item_count(&store).await, 3);
    assert_invariants(&store).await;
}

#[tokio::test]
async fn create_user_with_a_verified_address_of_another_user_is_refused() {
    let store = ddb::store().await;
    signed_up(&store, "first", "taken@example.com").await;
    let second = uid("second");
    let err = store
        .create_user(&new_user(&second, "taken@example.com"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::EmailTaken), "{err:?}");
    assert!(matches!(store.get_profile(&second).await, Err(StoreError::NotFound)));
    assert_eq!(item_count(&store).await, 3);
    assert_invariants(&store).await;
}

#[tokio::test]
async fn confirmed_sign_up_takes_over_an_unverified_claim() {
    let store = ddb::store().await;
    let squatter = signed_up(&store, "squatter", "squatter@example.com").await;
    store
        .add_email(&squatter, &addr("ada@example.com"), &code("123456"), now())
        .await
        .unwrap();

    let ada = uid("ada");
    assert_eq!(
        store
            .create_user(&new_user(&ada, "ada@example.com"), now())
            .await
            .unwrap(),
        Created::New
    );

    let squatter_account = store.get_account(&squatter).await.unwrap();
    assert_eq!(
        squatter_account.emails.len(),
        1,
        "the unverified record went with the claim"
    );
    assert_eq!(squatter_account.profile.email_count, 1);
    let found = store.find_by_email(&addr("ada@example.com")).await.unwrap();
    assert_eq!(found.profile.user_id, ada);
    assert_invariants(&store).await;
}

#[tokio::test]
async fn update_profile_with_optimistic_locking() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let patch = ProfilePatch {
        first_name: Some(PersonName::parse("Augusta").unwrap()),
        last_name: None,
        phone: Some(Some(Phone::parse("+442071234567").unwrap())),
    };
    let updated = store
        .update_profile(&user, &IfMatch::Versions(vec![1]), &patch, now())
        .await
        .unwrap();
    assert_eq!(updated.version, 2);
    assert_eq!(updated.first_name.as_ref().unwrap().as_str(), "Augusta");
    assert_eq!(updated.last_name.as_ref().unwrap().as_str(), "Lovelace");
    assert_eq!(updated.phone.as_ref().unwrap().as_str(), "+442071234567");

    let stale = store
        .update_profile(&user, &IfMatch::Versions(vec![1]), &patch, now())
        .await
        .unwrap_err();
    assert!(matches!(stale, StoreError::VersionMismatch { current: 2 }), "{stale:?}");

    let remove_phone = ProfilePatch {
        phone: Some(None),
        ..Default::default()
    };
    let updated = store
        .update_profile(&user, &IfMatch::Versions(vec![2]), &remove_phone, now())
        .await
        .unwrap();
    assert_eq!(updated.version, 3);
    assert!(updated.phone.is_none());
    assert_eq!(store.get_profile(&user).await.unwrap(), updated);
}

#[tokio::test]
async fn update_profile_tells_missing_suspended_and_deleted_apart() {
    let store = ddb::store().await;
    let patch = ProfilePatch {
        first_name: Some(PersonName::parse("X").unwrap()),
        ..Default::default()
    };
    let nobody = uid("nobody");
    assert!(matches!(
        store
            .update_profile(&nobody, &IfMatch::Versions(vec![1]), &patch, now())
            .await,
        Err(StoreError::NotFound)
    ));

    let user = signed_up(&store, "ada", "ada@example.com").await;
    let suspended = store.set_status(&user, UserStatus::Suspended, now()).await.unwrap();
    assert_eq!(suspended.version, 2);
    let err = store
        .update_profile(&user, &IfMatch::Versions(vec![2]), &patch, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AccountInactive), "{err:?}");

    store.set_status(&user, UserStatus::Deleted, now()).await.unwrap();
    let err = store
        .update_profile(&user, &IfMatch::Versions(vec![3]), &patch, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
}

#[tokio::test]
async fn status_changes_bump_the_version_once() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let s = store.set_status(&user, UserStatus::Suspended, now()).await.unwrap();
    assert_eq!((s.status, s.version), (UserStatus::Suspended, 2));
    let again = store.set_status(&user, UserStatus::Suspended, now()).await.unwrap();
    assert_eq!(
        (again.status, again.version),
        (UserStatus::Suspended, 2),
        "no change, no bump"
    );
    let active = store.set_status(&user, UserStatus::Active, now()).await.unwrap();
    assert_eq!((active.status, active.version), (UserStatus::Active, 3));
    assert!(matches!(
        store.set_status(&uid("nobody"), UserStatus::Suspended, now()).await,
        Err(StoreError::NotFound)
    ));
    assert_invariants(&store).await;
}

#[tokio::test]
async fn deleting_a_user_releases_every_address() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    with_verified(&store, &user, "ada.work@example.com").await;
    store
        .add_email(&user, &addr("ada.pending@example.com"), &code("222222"), now())
        .await
        .unwrap();

    let deleted = store.set_status(&user, UserStatus::Deleted, now()).await.unwrap();
    assert_eq!(deleted.status, UserStatus::Deleted);
    assert!(matches!(store.get_profile(&user).await, Err(StoreError::NotFound)));
    assert!(matches!(store.get_account(&user).await, Err(StoreError::NotFound)));
    for a in ["ada@example.com", "ada.work@example.com", "ada.pending@example.com"] {
        assert!(store.is_available(&addr(a), now()).await.unwrap(), "{a} released");
    }
    let left: Vec<_> = integration_tests::invariants::scan(store.client(), &store.config().table_name)
        .await
        .into_iter()
        .map(|i| {
            let key = |k| {
                user_service::store::keys::key_string(&i, k)
                    .unwrap_or_default()
                    .to_owned()
            };
            user_service::store::keys::classify(&key("PK"), &key("SK"))
        })
        .filter(|kind| *kind != user_service::store::keys::ItemKind::Limit)
        .collect();
    // Rate-limit counters outlive the account (by keyed hash, no address in them).
    assert_eq!(
        left,
        vec![user_service::store::keys::ItemKind::Profile],
        "only the deleted profile stays"
    );
    // Deleted stays deleted.
    assert!(matches!(
        store.set_status(&user, UserStatus::Active, now()).await,
        Err(StoreError::NotFound)
    ));
    // Someone else can now sign up with the address.
    signed_up(&store, "grace", "ada@example.com").await;
    assert_invariants(&store).await;
}

#[tokio::test]
async fn reads_of_missing_users_are_not_found() {
    let store = ddb::store().await;
    let nobody = uid("nobody");
    assert!(matches!(store.get_profile(&nobody).await, Err(StoreError::NotFound)));
    assert!(matches!(store.get_account(&nobody).await, Err(StoreError::NotFound)));
    // No address at all means no account (an active user always has a primary).
    assert!(matches!(store.list_emails(&nobody).await, Err(StoreError::NotFound)));
    assert!(matches!(
        store.find_by_email(&addr("none@example.com")).await,
        Err(StoreError::NotFound)
    ));
}

#[tokio::test]
async fn one_user_signed_up_into_two_tables_exists_in_both() {
    // DynamoDB remembers an idempotency token for ten minutes per account and
    // region: a token of the user alone made the second sign-up a silent no-op.
    let first = ddb::store().await;
    let second = ddb::store().await;
    let user = uid("ada");
    for store in [&first, &second] {
        store
            .create_user(&new_user(&user, "ada@example.com"), now())
            .await
            .unwrap();
    }
    for store in [&first, &second] {
        assert_eq!(store.get_profile(&user).await.unwrap().user_id, user);
        assert_invariants(store).await;
    }
}
