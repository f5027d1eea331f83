//! `cargo xtask backfill-user-index` against DynamoDB Local: profiles written
//! before GSI2 existed (no GSI2 keys) are filed, a run cut short and run again
//! finishes, and a profile whose status changes under the backfill ends under
//! its new status. After each, the invariant checker passes and the admin
//! list shows everyone.

use std::time::Duration;

use indicatif::ProgressBar;
use integration_tests::invariants;
use user_service::domain::{EmailAddress, NewUser, Timestamp, UserId, UserStatus};
use user_service::store::{Filed, keys};
use xtask::backfill;

use crate::handler_support::*;

fn sub(i: usize) -> UserId {
    UserId::parse_sub(&format!("{i:08x}-7c1d-4e2f-8a3b-4c5d6e7f8a9b")).unwrap()
}

/// `count` users, created through the store's create path, then stripped of
/// their GSI2 keys as profiles written before the index were.
async fn old_profiles(app: &TestApp, count: usize) -> Vec<UserId> {
    let base = Timestamp::parse("2026-01-01T00:00:00.000Z").unwrap();
    let mut users = Vec::new();
    for i in 0..count {
        let user = sub(i);
        let new = NewUser {
            user_id: user.clone(),
            email: EmailAddress::parse(&format!("old{i}@example.com")).unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        let at = Timestamp::from_unix_millis(base.unix_millis() + i as i64);
        app.store.create_user(&new, at).await.unwrap();
        app.store
            .client()
            .update_item()
            .table_name(&app.store.config().table_name)
            .set_key(Some(keys::profile_key(&user)))
            .update_expression("REMOVE #pk, #sk")
            .expression_attribute_names("#pk", keys::GSI2PK)
            .expression_attribute_names("#sk", keys::GSI2SK)
            .send()
            .await
            .unwrap();
        users.push(user);
    }
    users
}

/// Every user the admin list shows, all statuses.
async fn listed(app: &TestApp) -> usize {
    let mut total = 0;
    for status in ["active", "suspended", "deleted"] {
        let reply = app.list_users(ADMIN, &[("status", status), ("limit", "100")]).await;
        reply.assert_status(200);
        assert!(reply.body.get("nextCursor").is_none(), "one page holds them");
        total += reply.body["users"].as_array().unwrap().len();
    }
    total
}

#[tokio::test]
async fn old_profiles_are_filed_and_listed() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let users = old_profiles(&app, 60).await;
    // Before: the invariant checker sees them unfiled; the list shows the admin alone.
    assert!(
        !invariants::violations(app.store.client(), &app.store.config().table_name)
            .await
            .is_empty()
    );
    assert_eq!(listed(&app).await, 1);
    // A status change before the backfill reaches a profile sets its GSI2PK alone.
    let now = Timestamp::parse("2026-02-01T00:00:00.000Z").unwrap();
    app.store
        .set_status(&users[0], UserStatus::Suspended, now)
        .await
        .unwrap();

    let tally = backfill::backfill(&app.store, 3, 10_000.0, &ProgressBar::hidden())
        .await
        .unwrap();
    assert_eq!((tally.filed, tally.changed), (60, 0), "{tally:?}");
    assert!(tally.is_complete());
    invariants::assert_store_holds(&app.store).await;
    assert_eq!(listed(&app).await, 61);
    let suspended = app.list_users(ADMIN, &[("status", "suspended")]).await;
    assert_eq!(suspended.body["users"][0]["userId"], users[0].as_str());
    // Run again: nothing left to file, nothing written.
    let again = backfill::backfill(&app.store, 3, 10_000.0, &ProgressBar::hidden())
        .await
        .unwrap();
    assert_eq!(again, backfill::Tally::default());
    assert!(backfill::report(&tally).contains("filed: 60"));
}

#[tokio::test]
async fn a_run_cut_short_then_run_again_files_everyone() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    old_profiles(&app, 80).await;
    // 40 a second: the run is stopped within its first writes, as a killed process is.
    let cut = tokio::time::timeout(
        Duration::from_millis(500),
        backfill::backfill(&app.store, 2, 40.0, &ProgressBar::hidden()),
    )
    .await;
    assert!(cut.is_err(), "the run was cut short");
    let filed_before = listed(&app).await - 1;
    assert!(filed_before < 80, "{filed_before} filed before the cut");
    let rest = backfill::backfill(&app.store, 2, 10_000.0, &ProgressBar::hidden())
        .await
        .unwrap();
    assert!(rest.is_complete(), "{rest:?}");
    // The re-run filed what the cut run had not: at most that (a write the cut
    // run sent just before it stopped may still land after the count above),
    // and never a profile twice.
    assert!(
        rest.filed > 0 && rest.filed as usize <= 80 - filed_before,
        "{rest:?}, {filed_before} before"
    );
    invariants::assert_store_holds(&app.store).await;
    assert_eq!(listed(&app).await, 81);
}

#[tokio::test]
async fn a_status_changed_between_the_scan_and_the_write_is_filed_under_the_new_one() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let users = old_profiles(&app, 3).await;
    let page = app.store.scan_unlisted_profiles(0, 1, 100, None).await.unwrap();
    assert_eq!(page.profiles.len(), 3);
    let read = page.profiles.iter().find(|p| p.user_id == users[1]).unwrap().clone();
    assert_eq!(read.status, UserStatus::Active);
    // The service suspends then deletes the user after the scan read them active.
    let now = Timestamp::parse("2026-02-01T00:00:00.000Z").unwrap();
    app.store
        .set_status(&users[1], UserStatus::Suspended, now)
        .await
        .unwrap();
    app.store.set_status(&users[1], UserStatus::Deleted, now).await.unwrap();
    assert_eq!(app.store.file_in_user_list(&read).await.unwrap(), Filed::Done);
    // Filed already: nothing written again.
    assert_eq!(app.store.file_in_user_list(&read).await.unwrap(), Filed::Already);
    let deleted = app.list_users(ADMIN, &[("status", "deleted")]).await;
    assert_eq!(deleted.body["users"][0]["userId"], users[1].as_str());
    let rest = backfill::backfill(&app.store, 1, 10_000.0, &ProgressBar::hidden())
        .await
        .unwrap();
    assert_eq!(rest.filed, 2);
    invariants::assert_store_holds(&app.store).await;
}
