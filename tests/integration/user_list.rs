//! list-users (GET /admin/user-list): every user once, in creation order,
//! page after page through GSI2's shards; forged cursors, bad parameters and
//! callers who are not active admins are refused, and nothing is written.

use futures::stream::{self, StreamExt, TryStreamExt};
use integration_tests::invariants;
use serde_json::Value;
use user_service::domain::{EmailAddress, NewUser, PersonName, Timestamp, UserId, UserStatus};

use crate::handler_support::*;

/// Signs the admin of the events up; returns when their profile was created.
async fn admin_signed_up(app: &TestApp) -> Timestamp {
    app.sign_up(ADMIN, "grace@example.com").await;
    let admin = UserId::parse_sub(ADMIN).unwrap();
    app.store.get_profile(&admin).await.unwrap().created_at
}

fn later(at: Timestamp, millis: i64) -> Timestamp {
    Timestamp::from_unix_millis(at.unix_millis() + millis)
}

/// Users created straight through the store's create path, `parallel` at a
/// time: user `n` at `base + n / 3` ms, so three share each millisecond and
/// the sub orders them. Returns their subs.
async fn create_users(app: &TestApp, count: u32, base: Timestamp) -> Vec<UserId> {
    let users: Vec<(UserId, Timestamp)> = (0..count)
        .map(|n| {
            let user = UserId::parse_sub(&format!(
                "{:08x}-0000-4000-8000-{n:012x}",
                n.wrapping_mul(2_654_435_761)
            ))
            .unwrap();
            (user, later(base, i64::from(n / 3)))
        })
        .collect();
    stream::iter(users.clone())
        .map(|(user_id, at)| async move {
            let new = NewUser {
                email: EmailAddress::parse(&format!("u{}@example.com", &user_id.as_str()[..8])).unwrap(),
                first_name: Some(PersonName::parse("Ada").unwrap()),
                last_name: None,
                phone: None,
                user_id,
            };
            // Set-up, not the subject: a DynamoDB Local busy with the tests
            // beside this one (its lock waits answer 500) gets more tries.
            let mut tries = 0;
            loop {
                match app.store.create_user(&new, at).await {
                    Err(user_service::StoreError::Unavailable(_) | user_service::StoreError::Contended)
                        if tries < 5 =>
                    {
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(500 * tries)).await;
                    }
                    done => return done.map(|_| ()),
                }
            }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await
        .expect("users created");
    users.into_iter().map(|(user, _)| user).collect()
}

/// Every page of the listing with `params`, following nextCursor: the subs
/// in the order given, and the pages' sizes.
async fn every_page(app: &TestApp, params: &[(&str, &str)], limit: usize) -> (Vec<String>, Vec<usize>) {
    let (mut seen, mut sizes) = (Vec::new(), Vec::new());
    let limit_text = limit.to_string();
    let mut cursor: Option<String> = None;
    // Bounded: a listing that never ends fails here, not by hanging.
    for _ in 0..10_000 {
        let mut query: Vec<(&str, &str)> = params.to_vec();
        query.push(("limit", &limit_text));
        if let Some(c) = &cursor {
            query.push(("cursor", c));
        }
        let reply = app.list_users(ADMIN, &query).await;
        reply.assert_status(200);
        let users = reply.body["users"].as_array().expect("users").clone();
        assert!(users.len() <= limit, "a page of {} over {limit}", users.len());
        sizes.push(users.len());
        seen.extend(users.iter().map(|u| u["userId"].as_str().unwrap().to_owned()));
        match &reply.body["nextCursor"] {
            Value::String(next) => cursor = Some(next.clone()),
            Value::Null => return (seen, sizes),
            other => panic!("nextCursor: {other}"),
        }
    }
    panic!("the listing did not end");
}

#[tokio::test]
async fn pages_visit_every_user_once_in_creation_order_whatever_the_filter() {
    let app = TestApp::spawn().await;
    let admin_created = admin_signed_up(&app).await;
    // All of them after the admin, who signed up at the clock's start.
    let base = later(admin_created, 1);
    // Four pages of 100 and more: enough for every shard to hold users of
    // each status, and for a rare status's walk to cross many shards' ends.
    let users = create_users(&app, 420, base).await;
    let now = later(base, 10_000);
    // Every 20th suspended, every 50th deleted (some of those suspended first).
    let mut status = std::collections::HashMap::new();
    for (n, user) in users.iter().enumerate() {
        let wanted = match n {
            n if n % 50 == 0 => UserStatus::Deleted,
            n if n % 20 == 0 => UserStatus::Suspended,
            _ => UserStatus::Active,
        };
        if n % 100 == 0 {
            app.store.set_status(user, UserStatus::Suspended, now).await.unwrap();
        }
        if wanted != UserStatus::Active {
            app.store.set_status(user, wanted, now).await.unwrap();
        }
        status.insert(user.as_str().to_owned(), wanted);
    }
    // Creation order: time, then sub; the admin first.
    let in_order = |wanted: &[UserStatus]| -> Vec<String> {
        let mut subs: Vec<(Timestamp, String)> = users
            .iter()
            .enumerate()
            .filter(|(_, u)| wanted.contains(&status[u.as_str()]))
            .map(|(n, u)| (later(base, n as i64 / 3), u.as_str().to_owned()))
            .collect();
        subs.sort();
        let mut out = Vec::new();
        if wanted.contains(&UserStatus::Active) {
            out.push(ADMIN.to_owned());
        }
        out.extend(subs.into_iter().map(|(_, sub)| sub));
        out
    };
    let listed = in_order(&[UserStatus::Active, UserStatus::Suspended]);
    assert!(listed.len() > 400, "{} users listed", listed.len());

    // The default listing (active and suspended), in pages of 100: each user once, in order.
    let (seen, sizes) = every_page(&app, &[], 100).await;
    assert_eq!(seen, listed);
    assert!(sizes[..sizes.len() - 1].iter().all(|s| *s == 100), "{sizes:?}");
    // An odd page size, and each status on its own.
    let (seen, _) = every_page(&app, &[], 37).await;
    assert_eq!(seen, listed);
    // Small pages where a status is rare, so its walk crosses many shards'
    // ends; the 380 active users in pages of 61 (7 pages, not 44).
    for (name, wanted, limit) in [
        ("active", UserStatus::Active, 61),
        ("suspended", UserStatus::Suspended, 7),
        ("deleted", UserStatus::Deleted, 4),
    ] {
        let (seen, _) = every_page(&app, &[("status", name)], limit).await;
        assert_eq!(seen, in_order(&[wanted]), "{name}");
    }
    // A deleted user's line is erased: no address, no names.
    let deleted = app.list_users(ADMIN, &[("status", "deleted"), ("limit", "1")]).await;
    let line = &deleted.body["users"][0];
    assert_eq!(line["status"], "deleted");
    assert!(line["email"].is_null() && line["firstName"].is_null(), "{line}");
    // An active user's line: what GSI2 projects.
    let first = app.list_users(ADMIN, &[("limit", "2")]).await;
    let line = &first.body["users"][1];
    assert_eq!(line["userId"], listed[1]);
    assert_eq!(line["firstName"], "Ada");
    assert!(line["email"].as_str().unwrap().ends_with("@example.com"));
    assert_eq!(line["createdAt"], base.to_string());
    // The default page size is 50.
    let page = app.list_users(ADMIN, &[]).await;
    assert_eq!(page.body["users"].as_array().unwrap().len(), 50);
    invariants::assert_store_holds(&app.store).await;
}

#[tokio::test]
async fn a_status_change_between_pages_neither_repeats_nor_skips_a_user() {
    let app = TestApp::spawn().await;
    let admin_created = admin_signed_up(&app).await;
    let users = create_users(&app, 30, later(admin_created, 1)).await;
    let first = app.list_users(ADMIN, &[("limit", "10")]).await;
    let cursor = first.body["nextCursor"].as_str().unwrap().to_owned();
    // One already listed and one not yet move between the listed statuses.
    let now = later(admin_created, 1_000);
    app.store
        .set_status(&users[3], UserStatus::Suspended, now)
        .await
        .unwrap();
    app.store
        .set_status(&users[20], UserStatus::Suspended, now)
        .await
        .unwrap();
    let rest = app.list_users(ADMIN, &[("limit", "100"), ("cursor", &cursor)]).await;
    let mut seen: Vec<Value> = first.body["users"].as_array().unwrap().clone();
    seen.extend(rest.body["users"].as_array().unwrap().iter().cloned());
    let subs: Vec<&str> = seen.iter().map(|u| u["userId"].as_str().unwrap()).collect();
    assert_eq!(subs.len(), 31, "{subs:?}");
    let mut unique = subs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 31);
    let moved = seen.iter().find(|u| u["userId"] == users[20].as_str()).unwrap();
    assert_eq!(moved["status"], "suspended");
    assert!(rest.body.get("nextCursor").is_none());
}

#[tokio::test]
async fn forged_cursors_bad_parameters_and_callers_who_are_no_active_admin_are_refused() {
    let app = TestApp::spawn().await;
    let admin_created = admin_signed_up(&app).await;
    app.sign_up(ADA, "ada@example.com").await;
    create_users(&app, 12, later(admin_created, 1)).await;
    let page = app.list_users(ADMIN, &[("limit", "5")]).await;
    let cursor = page.body["nextCursor"].as_str().unwrap().to_owned();
    // A cursor of the active users' listing.
    let active = app.list_users(ADMIN, &[("status", "active"), ("limit", "1")]).await;
    let active_cursor = active.body["nextCursor"].as_str().unwrap().to_owned();
    let before = invariants::item_count(&app.store).await;
    let raw = |text: &str| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    };
    // The same position, spelled by hand with another time format, filter or
    // a raw table key; garbage; a cursor of another filter's listing.
    let forged = [
        format!("{cursor}x"),
        cursor[1..].to_owned(),
        "garbage".to_owned(),
        raw(&format!("1|notDeleted|2026-01-01T00:00:00Z|{ADA}")),
        raw(&format!("1|everyone|2026-01-01T00:00:00.000Z|{ADA}")),
        raw(r#"{"GSI2PK":{"S":"USERS#active#00"},"GSI2SK":{"S":"0"}}"#),
        raw("1|notDeleted|2026-01-01T00:00:00.000Z|PROFILE"),
        active_cursor.clone(),
    ];
    for text in &forged {
        let reply = app.list_users(ADMIN, &[("cursor", text)]).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "cursor", "{text}");
        assert!(reply.body.get("users").is_none());
    }
    // The active listing's cursor is the active listing's alone.
    app.list_users(ADMIN, &[("status", "active"), ("cursor", &active_cursor)])
        .await
        .assert_status(200);
    app.list_users(ADMIN, &[("status", "suspended"), ("cursor", &active_cursor)])
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    app.list_users(ADMIN, &[("status", "active"), ("cursor", &cursor)])
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    for (name, value) in [
        ("limit", "0"),
        ("limit", "101"),
        ("limit", "ten"),
        ("limit", "-1"),
        ("status", "Active"),
        ("status", "all"),
        ("status", "active,suspended"),
    ] {
        let reply = app.list_users(ADMIN, &[(name, value)]).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], name, "{name}={value}");
    }
    // Not in the admin group, or not signed in at all.
    let ask = || Event::of(&LIST_USERS).caller(ADA).no_query();
    for event in [ask().groups("[editors]"), ask().no_groups()] {
        app.send(&LIST_USERS, event).await.assert_problem(403, "FORBIDDEN");
    }
    app.send(&LIST_USERS, ask().anonymous())
        .await
        .assert_problem(401, "UNAUTHENTICATED");
    // An admin suspended since the token was issued: refused, as on every admin route.
    let admin = UserId::parse_sub(ADMIN).unwrap();
    app.store
        .set_status(&admin, UserStatus::Suspended, admin_created)
        .await
        .unwrap();
    app.list_users(ADMIN, &[]).await.assert_problem(403, "FORBIDDEN");
    app.store
        .set_status(&admin, UserStatus::Active, admin_created)
        .await
        .unwrap();
    // Refusals wrote nothing (reads only: the two status changes above are the test's).
    assert_eq!(invariants::item_count(&app.store).await, before);
    invariants::assert_store_holds(&app.store).await;
}
