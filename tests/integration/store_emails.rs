//! Adding, verifying, switching and removing addresses.

use integration_tests::ddb;
use user_service::StoreError;
use user_service::domain::{EmailId, UserStatus};

use crate::common::*;

#[tokio::test]
async fn add_email_writes_an_unverified_record_and_a_claim() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let added = store
        .add_email(&user, &addr(" Ada.Work@Example.com"), &code("123456"), now())
        .await
        .unwrap();
    assert_eq!(added.email.as_str(), "ada.work@example.com");
    assert!(!added.is_primary && !added.is_verified && added.verified_at.is_none());

    let account = store.get_account(&user).await.unwrap();
    assert_eq!(account.profile.email_count, 2);
    assert_eq!(
        account.profile.version, 1,
        "the count is not part of what the profile shows"
    );
    assert_eq!(account.emails.len(), 2);
    assert_eq!(account.emails[1].email_id, added.email_id, "oldest first");
    assert!(!store.is_available(&addr("ada.work@example.com"), now()).await.unwrap());
    assert_invariants(&store).await;
}

#[tokio::test]
async fn add_email_errors() {
    let store = ddb::store_with(|c| c.max_emails_per_user = 2).await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let c = code("123456");

    let err = store
        .add_email(&ada, &addr("ada@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyAdded), "{err:?}");
    let err = store
        .add_email(&ada, &addr("grace@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::EmailTaken), "{err:?}");

    store
        .add_email(&grace, &addr("pending@example.com"), &c, now())
        .await
        .unwrap();
    let err = store
        .add_email(&ada, &addr("pending@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::EmailTaken),
        "a live unverified claim holds: {err:?}"
    );
    let err = store
        .add_email(&grace, &addr("pending@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyAdded), "{err:?}");

    store
        .add_email(&ada, &addr("second@example.com"), &c, now())
        .await
        .unwrap();
    let err = store
        .add_email(&ada, &addr("third@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::LimitReached), "{err:?}");

    let err = store
        .add_email(&uid("nobody"), &addr("x@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");

    store.set_status(&grace, UserStatus::Suspended, now()).await.unwrap();
    let err = store
        .add_email(&grace, &addr("y@example.com"), &c, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AccountInactive), "{err:?}");
    assert_invariants(&store).await;
}

#[tokio::test]
async fn an_expired_unverified_claim_is_taken_over_atomically() {
    let store = ddb::store_with(|c| c.verification_ttl_seconds = 60).await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    store
        .add_email(&grace, &addr("shared@example.com"), &code("123456"), now())
        .await
        .unwrap();

    let later = now().plus_seconds(120);
    assert!(store.is_available(&addr("shared@example.com"), later).await.unwrap());
    let taken = store
        .add_email(&ada, &addr("shared@example.com"), &code("654321"), later)
        .await
        .unwrap();

    let grace_account = store.get_account(&grace).await.unwrap();
    assert_eq!(grace_account.emails.len(), 1);
    assert_eq!(grace_account.profile.email_count, 1);
    store
        .verify_email(&ada, taken.email_id, &code("654321"), later)
        .await
        .unwrap();
    assert_eq!(
        store
            .find_by_email(&addr("shared@example.com"))
            .await
            .unwrap()
            .profile
            .user_id,
        ada
    );
    assert_invariants(&store).await;
}

#[tokio::test]
async fn verify_with_the_right_code() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let added = store
        .add_email(&user, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();
    let verified = store
        .verify_email(&user, added.email_id, &code("123456"), now())
        .await
        .unwrap();
    assert!(verified.is_verified && verified.verified_at.is_some() && !verified.is_primary);
    // Verifying again is harmless and answers the same.
    let again = store
        .verify_email(&user, added.email_id, &code("000000"), now())
        .await
        .unwrap();
    assert!(again.is_verified);
    assert_eq!(again.verified_at, verified.verified_at);
    // The claim is permanent now: no expiry, not available even much later.
    assert!(
        !store
            .is_available(&addr("work@example.com"), now().plus_seconds(10 * 86_400))
            .await
            .unwrap()
    );
    assert_invariants(&store).await;
}

#[tokio::test]
async fn wrong_codes_count_until_the_limit() {
    let store = ddb::store_with(|c| c.verification_max_attempts = 3).await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let added = store
        .add_email(&user, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();
    for left in [2, 1, 0] {
        let err = store
            .verify_email(&user, added.email_id, &code("999999"), now())
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::VerificationFailed { attempts_left } if attempts_left == left),
            "{err:?}"
        );
    }
    let err = store
        .verify_email(&user, added.email_id, &code("123456"), now())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TooManyAttempts { retry_after_secs: 60 }),
        "even the right code is refused now: {err:?}"
    );

    // A new code resets the count (after the resend interval).
    let later = now().plus_seconds(61);
    store
        .issue_code(&user, added.email_id, &code("777777"), later)
        .await
        .unwrap();
    let err = store
        .verify_email(&user, added.email_id, &code("123456"), later)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::VerificationFailed { attempts_left: 2 }),
        "old code is gone: {err:?}"
    );
    store
        .verify_email(&user, added.email_id, &code("777777"), later)
        .await
        .unwrap();
    assert_invariants(&store).await;
}

#[tokio::test]
async fn expired_codes_are_refused() {
    let store = ddb::store_with(|c| c.code_ttl_seconds = 60).await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let added = store
        .add_email(&user, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();
    let err = store
        .verify_email(&user, added.email_id, &code("123456"), now().plus_seconds(61))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::VerificationExpired), "{err:?}");
}

#[tokio::test]
async fn verify_and_resend_errors() {
    let store = ddb::store().await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let added = store
        .add_email(&ada, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();

    // Another user naming Ada's record finds nothing.
    let err = store
        .verify_email(&grace, added.email_id, &code("123456"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
    let err = store
        .issue_code(&grace, added.email_id, &code("123456"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
    let err = store
        .issue_code(&ada, EmailId::new(), &code("123456"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");

    // A new code at most once a minute, and it says when to retry.
    let err = store
        .issue_code(&ada, added.email_id, &code("222222"), now())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TooManyRequests { retry_after_secs } if (58..=60).contains(&retry_after_secs)),
        "{err:?}"
    );
    let address = store
        .issue_code(&ada, added.email_id, &code("222222"), now().plus_seconds(61))
        .await
        .unwrap();
    assert_eq!(address.as_str(), "work@example.com");

    let primary = store.get_account(&ada).await.unwrap().emails[0].email_id;
    let err = store
        .issue_code(&ada, primary, &code("222222"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyVerified), "{err:?}");

    store.set_status(&ada, UserStatus::Suspended, now()).await.unwrap();
    let err = store
        .verify_email(&ada, added.email_id, &code("222222"), now().plus_seconds(62))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AccountInactive), "{err:?}");
    let err = store
        .issue_code(&ada, added.email_id, &code("333333"), now().plus_seconds(200))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::AccountInactive), "{err:?}");
    assert_invariants(&store).await;
}

#[tokio::test]
async fn resending_never_extends_the_claim() {
    let store = ddb::store_with(|c| c.verification_ttl_seconds = 120).await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let added = store
        .add_email(&ada, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();
    store
        .issue_code(&ada, added.email_id, &code("222222"), now().plus_seconds(100))
        .await
        .unwrap();
    // The claim expires 120 s after the first add, whatever was resent since.
    let work = addr("work@example.com");
    assert!(!store.is_available(&work, now().plus_seconds(119)).await.unwrap());
    assert!(store.is_available(&work, now().plus_seconds(120)).await.unwrap());
    // The new code itself still verifies until someone takes the address.
    store
        .verify_email(&ada, added.email_id, &code("222222"), now().plus_seconds(130))
        .await
        .unwrap();
    assert!(!store.is_available(&work, now().plus_seconds(86_400)).await.unwrap());
    assert_invariants(&store).await;
}

#[tokio::test]
async fn set_primary_switches_atomically() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    let work = with_verified(&store, &user, "work@example.com").await;
    let profile = store.set_primary(&user, work, now()).await.unwrap();
    assert_eq!(profile.email.as_ref().unwrap().as_str(), "work@example.com");
    assert_eq!(profile.version, 2);
    assert_eq!(store.get_profile(&user).await.unwrap(), profile);
    let emails = store.list_emails(&user).await.unwrap();
    assert_eq!(emails.iter().filter(|e| e.is_primary).count(), 1);
    assert!(emails.iter().find(|e| e.email_id == work).unwrap().is_primary);

    let same = store.set_primary(&user, work, now()).await.unwrap();
    assert_eq!(same.version, 2, "already primary: nothing changes");
    assert_invariants(&store).await;
}

#[tokio::test]
async fn set_primary_errors() {
    let store = ddb::store().await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let pending = store
        .add_email(&ada, &addr("pending@example.com"), &code("123456"), now())
        .await
        .unwrap();
    let err = store.set_primary(&ada, pending.email_id, now()).await.unwrap_err();
    assert!(matches!(err, StoreError::NotVerified), "{err:?}");
    let err = store.set_primary(&grace, pending.email_id, now()).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "another user's id: {err:?}");
    let err = store.set_primary(&ada, EmailId::new(), now()).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
    let work = with_verified(&store, &ada, "work@example.com").await;
    store.set_status(&ada, UserStatus::Suspended, now()).await.unwrap();
    let err = store.set_primary(&ada, work, now()).await.unwrap_err();
    assert!(matches!(err, StoreError::AccountInactive), "{err:?}");
    assert_invariants(&store).await;
}

#[tokio::test]
async fn remove_email_releases_the_address() {
    let store = ddb::store().await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let work = with_verified(&store, &ada, "work@example.com").await;

    let primary = store.list_emails(&ada).await.unwrap()[0].email_id;
    let err = store
        .remove_email(&ada, primary, user_service::domain::Timestamp::now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::PrimaryEmail), "{err:?}");
    let err = store
        .remove_email(&grace, work, user_service::domain::Timestamp::now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");

    store
        .remove_email(&ada, work, user_service::domain::Timestamp::now())
        .await
        .unwrap();
    assert_eq!(store.get_account(&ada).await.unwrap().profile.email_count, 1);
    let err = store
        .remove_email(&ada, work, user_service::domain::Timestamp::now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
    assert!(store.is_available(&addr("work@example.com"), now()).await.unwrap());
    store
        .add_email(&grace, &addr("work@example.com"), &code("123456"), now())
        .await
        .unwrap();
    assert_invariants(&store).await;
}

#[tokio::test]
async fn find_by_email_returns_the_owner_with_all_addresses() {
    let store = ddb::store().await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    with_verified(&store, &ada, "work@example.com").await;
    let found = store.find_by_email(&addr("WORK@example.com")).await.unwrap();
    assert_eq!(found.profile.user_id, ada);
    assert_eq!(found.emails.len(), 2);
    assert_eq!(found.emails[0].email.as_str(), "ada@example.com");
}
