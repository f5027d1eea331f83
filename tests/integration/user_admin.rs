//! `user-admin import` and `export` against DynamoDB Local and moto's Cognito:
//! a dry run with every kind of bad line; a real run; a run killed half-way
//! and run again; the same file twice; Cognito throttling injected at the
//! SDK level; the export and a re-import round-trip. After each, the
//! invariant checker passes and Cognito and the table agree. The line
//! format's JSON Schema and parser agree on a corpus, and every exported
//! line validates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_cognitoidentityprovider::Client as Cognito;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use indicatif::ProgressBar;
use integration_tests::moto::Moto;
use integration_tests::{ddb, invariants, lambda, process, wait};
use serde_json::{Value, json};
use user_admin::cognito::Pool;
use user_admin::export::{Cursor, SegmentAt};
use user_admin::import::{Entry, Options, Outcome, Summary, Target};
use user_service::address_policy::AddressPolicy;
use user_service::import::LineCode;
use user_service::store::items::ProfileItem;
use user_service::store::keys::{self, ItemKind};

use crate::handler_support::*;

const BCRYPT: &str = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";

/// An ordinary user `i`: a verified primary, a second address verified on
/// even `i`, every fifth suspended, every third with a password hash.
fn user(i: usize) -> Value {
    let mut line = json!({
        "externalId": format!("legacy-{i}"),
        "status": if i % 5 == 4 { "suspended" } else { "active" },
        "createdAt": "2021-03-04T05:06:07.000Z",
        "firstName": "Imported",
        "lastName": format!("User{i}"),
        "emails": [
            {"address": format!("user{i}@example.com"), "verified": true, "primary": true},
            {"address": format!("user{i}.old@example.org"), "verified": i.is_multiple_of(2), "primary": false}
        ]
    });
    if i.is_multiple_of(3) {
        line["password"] = json!({"algorithm": "bcrypt", "hash": BCRYPT});
    }
    if i % 4 == 1 {
        line["phone"] = json!(format!("+1415555{:04}", i % 10_000));
    }
    line
}

fn write_lines(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn users(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| user(i).to_string()).collect()
}

/// A pool shaped like the template's, in a fresh moto.
async fn new_pool(moto: &Moto) -> (Cognito, String) {
    let (cognito, pool_id, _) = moto.user_pool(&[]).await;
    (cognito, pool_id)
}

fn options(app: &TestApp) -> Options {
    Options {
        dry_run: false,
        resume: false,
        pending: false,
        now: app.clock.now(),
    }
}

async fn run(app: &TestApp, pool: &Pool, input: &Path, options: Options) -> (Summary, Vec<Entry>) {
    let report = input.with_extension("report.jsonl");
    let target = Target {
        store: &app.store,
        pool,
    };
    let summary = user_admin::import::import(&target, input, &report, options, &ProgressBar::hidden())
        .await
        .unwrap();
    (summary, read_report(&report))
}

fn read_report(report: &Path) -> Vec<Entry> {
    let mut entries: Vec<Entry> = std::fs::read_to_string(report)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    entries.sort_by_key(|e| e.line);
    entries
}

/// Every Cognito user of the pool: sub → (email, enabled).
async fn cognito_users(cognito: &Cognito, pool: &str) -> BTreeMap<String, (String, bool)> {
    let users: Vec<_> = cognito
        .list_users()
        .user_pool_id(pool)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    users
        .iter()
        .map(|u| {
            let attribute = |name: &str| {
                u.attributes()
                    .iter()
                    .find(|a| a.name() == name)
                    .and_then(|a| a.value())
                    .unwrap_or_default()
                    .to_owned()
            };
            (attribute("sub"), (attribute("email"), u.enabled()))
        })
        .collect()
}

/// The table's profiles: sub → (email, active).
async fn table_users(app: &TestApp) -> BTreeMap<String, (String, bool)> {
    invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .into_iter()
        .filter(|item| {
            keys::classify(
                keys::key_string(item, keys::PK).unwrap_or_default(),
                keys::key_string(item, keys::SK).unwrap_or_default(),
            ) == ItemKind::Profile
        })
        .map(|item| {
            let p: ProfileItem = serde_dynamo::from_item(item).unwrap();
            let email = p.email.map(|e| e.as_str().to_owned()).unwrap_or_default();
            (
                p.user_id.to_string(),
                (email, p.status == user_service::domain::UserStatus::Active),
            )
        })
        .collect()
}

/// The invariants hold, and Cognito and the table have the same users, with
/// the same address, enabled exactly when active. Returns how many.
async fn assert_agree(app: &TestApp, cognito: &Cognito, pool: &str) -> usize {
    app.assert_invariants().await;
    let (in_cognito, in_table) = (cognito_users(cognito, pool).await, table_users(app).await);
    assert_eq!(in_cognito, in_table, "Cognito and the table disagree");
    in_table.len()
}

fn codes(entries: &[Entry]) -> BTreeMap<u64, &'static str> {
    entries
        .iter()
        .filter_map(|e| Some((e.line, e.error.as_ref()?.code.as_str())))
        .collect()
}

#[tokio::test]
async fn a_dry_run_reports_every_kind_of_bad_line_and_writes_nothing() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn_with_policy(AddressPolicy::default().blocking_subaddresses()).await;
    app.sign_up(ADA, "ada@example.com").await;
    let before = app.item_count().await;
    let e = |a: &str, v: bool, p: bool| json!({"address": a, "verified": v, "primary": p});
    let line = |emails: Value| json!({"status": "active", "emails": emails}).to_string();
    let many: Vec<Value> = (0..11)
        .map(|i| e(&format!("many{i}@example.com"), true, i == 0))
        .collect();
    let mut lines = vec![
        user(1).to_string(),                                                                  // 1 valid
        "{not json".to_owned(),                                                               // 2
        json!({"status": "active", "emails": [], "age": 3}).to_string(),                      // 3 unknown field
        line(json!([e("p@example.com", true, false)])),                                       // 4
        line(json!([e("q@example.com", true, true), e("r@example.com", true, true)])),        // 5
        line(json!([e("s@example.com", false, true)])),                                       // 6
        line(json!([e("t@example.com", true, true), e("T@Example.com", true, false)])),       // 7
        line(json!(many)),                                                                    // 8
        line(json!([e("u+news@example.com", true, true)])),                                   // 9
        line(json!([e("user1.old@example.org", true, true)])),                                // 10 duplicate of line 1
        line(json!([e("ada@example.com", true, true)])),                                      // 11 owned
        json!({"status": "deleted", "emails": [e("v@example.com", true, true)]}).to_string(), // 12
        json!({"status": "active", "emails": [e("w@example.com", true, true)],
               "password": {"algorithm": "bcrypt", "hash": "$2b$12$short"}})
        .to_string(), // 13
    ];
    lines.insert(13, String::new()); // a blank line is no line
    lines.push(user(2).to_string()); // 15 valid
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &lines);
    let pool = Pool::new(cognito.clone(), &pool_id, 1_000.0);
    let (summary, entries) = run(
        &app,
        &pool,
        &input,
        Options {
            dry_run: true,
            ..options(&app)
        },
    )
    .await;

    let expected: BTreeMap<u64, &str> = [
        (2, "INVALID_LINE"),
        (3, "INVALID_LINE"),
        (4, "NO_PRIMARY"),
        (5, "MANY_PRIMARIES"),
        (6, "PRIMARY_NOT_VERIFIED"),
        (7, "DUPLICATE_IN_LINE"),
        (8, "TOO_MANY_EMAILS"),
        (9, "ADDRESS_NOT_ALLOWED"),
        (10, "DUPLICATE_IN_FILE"),
        (11, "ADDRESS_OWNED"),
        (12, "INVALID_LINE"),
        (13, "INVALID_LINE"),
    ]
    .into();
    assert_eq!(codes(&entries), expected);
    let fields: BTreeMap<u64, Option<String>> = entries
        .iter()
        .map(|e| (e.line, e.error.as_ref().and_then(|e| e.field.clone())))
        .collect();
    assert_eq!(fields[&3].as_deref(), Some("age"));
    assert_eq!(fields[&12].as_deref(), Some("status"));
    assert_eq!(fields[&13].as_deref(), Some("password"));
    assert_eq!(fields[&7].as_deref(), Some("emails[1].address"));
    let valid: Vec<u64> = entries
        .iter()
        .filter(|e| e.outcome == Outcome::Valid)
        .map(|e| e.line)
        .collect();
    assert_eq!(valid, [1, 15]);
    assert_eq!((summary.lines, summary.valid, summary.failures()), (14, 2, 12));
    // The report names fields, never values.
    let report = std::fs::read_to_string(input.with_extension("report.jsonl")).unwrap();
    assert!(!report.contains('@'), "{report}");

    assert_eq!(app.item_count().await, before, "a dry run writes nothing");
    assert!(cognito_users(&cognito, &pool_id).await.is_empty(), "nor creates anyone");
}

#[tokio::test]
async fn an_import_creates_each_user_in_cognito_and_the_table_and_the_same_file_twice_creates_nobody_twice() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    // Someone who signed up already (in the table alone) holds an address a line has.
    app.sign_up(ADA, "ada@example.com").await;
    let mut lines = users(0..20);
    lines.push(
        json!({"status": "active", "emails": [
            {"address": "new@example.com", "verified": true, "primary": true},
            {"address": "ada@example.com", "verified": true, "primary": false}
        ]})
        .to_string(),
    );
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &lines);
    let pool = Pool::new(cognito.clone(), &pool_id, 1_000.0);

    let started = Instant::now();
    let (summary, entries) = run(&app, &pool, &input, options(&app)).await;
    let rate = 20.0 / started.elapsed().as_secs_f64();
    eprintln!("import against DynamoDB Local and moto: {rate:.1} users/s");
    assert_eq!((summary.created, summary.existing, summary.failures()), (20, 0, 1));
    assert_eq!(summary.with_password, 7);
    assert_eq!(codes(&entries), BTreeMap::from([(21, "ADDRESS_OWNED")]));
    // The refused line's Cognito user was deleted again.
    let in_cognito = cognito_users(&cognito, &pool_id).await;
    assert!(!in_cognito.values().any(|(email, _)| email == "new@example.com"));
    let subs: BTreeSet<String> = entries
        .iter()
        .filter_map(|e| Some(e.sub.as_ref()?.to_string()))
        .collect();
    assert_eq!(subs.len(), 20);

    // The table and Cognito agree, apart from Ada, whom the test made in the table alone.
    app.assert_invariants().await;
    let mut in_table = table_users(&app).await;
    assert!(in_table.remove(ADA).is_some());
    assert_eq!(in_table, cognito_users(&cognito, &pool_id).await);
    assert_eq!(in_table.len(), 20);
    assert_eq!(
        in_table.values().filter(|(_, active)| !active).count(),
        4,
        "users 4, 9, 14, 19 suspended"
    );
    let first = entries
        .iter()
        .find(|e| e.line == 2)
        .and_then(|e| e.sub.clone())
        .unwrap();
    let account = app.store.get_account(&first).await.unwrap();
    assert_eq!(account.emails.len(), 2);
    assert_eq!(
        account.profile.phone.map(|p| p.as_str().to_owned()).as_deref(),
        Some("+14155550001")
    );
    assert_eq!(account.profile.created_at.to_string(), "2021-03-04T05:06:07.000Z");

    // The same file again: everyone exists, nobody is created twice.
    let items = app.item_count().await;
    let (again, entries_again) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!((again.created, again.existing, again.failures()), (0, 20, 1));
    let subs_again: BTreeSet<String> = entries_again
        .iter()
        .filter_map(|e| Some(e.sub.as_ref()?.to_string()))
        .collect();
    assert_eq!(subs_again, subs);
    assert_eq!(app.item_count().await, items);
    assert_eq!(cognito_users(&cognito, &pool_id).await.len(), 20);
}

#[tokio::test]
async fn a_pending_import_keeps_hashes_for_migration_and_creates_no_cognito_user_for_them() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    // Users 0, 3, 6 and 9 have a password hash (user 9 is suspended too).
    let mut lines = users(0..10);
    // A hash the trigger could not check within Cognito's 5 s.
    let mut costly = user(10);
    costly["password"] = json!({"algorithm": "bcrypt", "hash": BCRYPT.replacen("$12$", "$15$", 1)});
    lines.push(costly.to_string());
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &lines);
    let pool = Pool::new(cognito.clone(), &pool_id, 1_000.0);
    let pending = Options {
        pending: true,
        ..options(&app)
    };

    // The dry run sees the costly hash; without --pending a hash is only checked for its format.
    let (checked, entries) = run(
        &app,
        &pool,
        &input,
        Options {
            dry_run: true,
            ..pending
        },
    )
    .await;
    assert_eq!((checked.valid, checked.failures()), (10, 1));
    assert_eq!(codes(&entries), BTreeMap::from([(11, "PASSWORD_TOO_COSTLY")]));
    let (plain, _) = run(
        &app,
        &pool,
        &input,
        Options {
            dry_run: true,
            ..options(&app)
        },
    )
    .await;
    assert_eq!((plain.valid, plain.failures()), (11, 0));
    assert_eq!(app.item_count().await, 0);

    let started = Instant::now();
    let (summary, entries) = run(&app, &pool, &input, pending).await;
    let rate = 10.0 / started.elapsed().as_secs_f64();
    eprintln!(
        "import with --pending (4 pending, 6 through Cognito) against DynamoDB Local and moto: {rate:.1} users/s"
    );
    assert_eq!((summary.created, summary.failures()), (10, 1));
    let pending_lines: BTreeSet<u64> = entries
        .iter()
        .filter(|e| e.sub.as_ref().is_some_and(|s| s.is_pending()))
        .map(|e| e.line)
        .collect();
    assert_eq!(pending_lines, BTreeSet::from([1, 4, 7, 10]));
    // Cognito has the others alone; the table has both, and the pending
    // users' hashes apart, each under its pending user.
    app.assert_invariants().await;
    let mut in_table = table_users(&app).await;
    let pending_users: Vec<String> = in_table.keys().filter(|s| s.starts_with("pending-")).cloned().collect();
    assert_eq!(pending_users.len(), 4);
    for user in &pending_users {
        in_table.remove(user);
    }
    assert_eq!(in_table, cognito_users(&cognito, &pool_id).await);
    assert_eq!(in_table.len(), 6);
    let hashes = invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .into_iter()
        .filter(|item| {
            keys::classify(
                keys::key_string(item, keys::PK).unwrap_or_default(),
                keys::key_string(item, keys::SK).unwrap_or_default(),
            ) == ItemKind::LegacyPassword
        })
        .count();
    assert_eq!(hashes, 4);
    // The migration trigger finds user 3 by her primary address.
    let found = app
        .store
        .pending_user(&user_service::domain::EmailAddress::parse("user3@example.com").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        found.profile.user_id.as_str(),
        pending_users
            .iter()
            .find(|u| {
                entries
                    .iter()
                    .any(|e| e.line == 4 && e.sub.as_ref().is_some_and(|s| s.as_str() == u.as_str()))
            })
            .unwrap()
    );
    assert!(found.password.is_some());

    // Again: nobody twice, the same pending ids.
    let items = app.item_count().await;
    let (again, entries_again) = run(&app, &pool, &input, pending).await;
    assert_eq!((again.created, again.existing, again.failures()), (0, 10, 1));
    assert_eq!(
        entries_again.iter().map(|e| e.sub.clone()).collect::<Vec<_>>(),
        entries.iter().map(|e| e.sub.clone()).collect::<Vec<_>>()
    );
    assert_eq!(app.item_count().await, items);
}

/// A re-run of an import never brings back a person whose account was erased
/// since their line was first imported: who deleted their account, who
/// migrated and then deleted it, or a pending user an admin erased. Neither
/// mode recreates them; the report says `ERASED`. What the erasure keeps is
/// the line's import key (a keyed hash), which the invariant checker holds
/// to no more than that.
#[tokio::test]
async fn a_rerun_never_brings_back_a_person_erased_since_their_line_was_imported() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "admin@example.com").await;
    // Users 0 and 3 have a password hash: pending with --pending; 1 and 2 do not.
    let lines = users(0..4);
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &lines);
    let pool = Pool::new(cognito.clone(), &pool_id, 1_000.0);
    let pending = Options {
        pending: true,
        ..options(&app)
    };
    let (first, entries) = run(&app, &pool, &input, pending).await;
    assert_eq!((first.created, first.failures()), (4, 0));
    let sub_of = |line: u64| entries.iter().find(|e| e.line == line).unwrap().sub.clone().unwrap();
    let (user0, user1, user3) = (sub_of(1), sub_of(2), sub_of(4));
    assert!(user0.is_pending() && user3.is_pending() && !user1.is_pending());

    // User 1 deletes their account; the stream's consumer deletes them in Cognito.
    app.delete_account(user1.as_str(), "*").await.assert_status(204);
    cognito
        .admin_delete_user()
        .user_pool_id(&pool_id)
        .username(user1.as_str())
        .send()
        .await
        .unwrap();
    // An admin erases pending user 0.
    app.set_user_status(ADMIN, user0.as_str(), "deleted")
        .await
        .assert_status(200);
    // Pending user 3 migrates (by a forgot-password: the import's hash is of
    // another password) and signs in, then deletes their account.
    let migrated = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
    let mut reset = integration_tests::events::load("migrate-user-forgot-password");
    reset["userName"] = json!("user3@example.com");
    app.invoke(&MIGRATE_USER, reset).await.unwrap();
    app.post_authentication(migrated, "user3@example.com", true)
        .await
        .unwrap();
    assert_eq!(
        app.store.profile_status(&user3).await.unwrap(),
        None,
        "moved to the sub"
    );
    app.delete_account(migrated, "*").await.assert_status(204);

    let items = app.item_count().await;
    for mode in [pending, options(&app)] {
        for dry_run in [true, false] {
            let (summary, entries) = run(&app, &pool, &input, Options { dry_run, ..mode }).await;
            assert_eq!(
                codes(&entries),
                BTreeMap::from([(1, "ERASED"), (2, "ERASED"), (4, "ERASED")]),
                "pending {}, dry run {dry_run}",
                mode.pending
            );
            assert_eq!(summary.failures(), 3);
        }
    }
    assert_eq!(app.item_count().await, items, "nothing written");
    for address in ["user0@example.com", "user1@example.com", "user3@example.com"] {
        let email = user_service::domain::EmailAddress::parse(address).unwrap();
        assert_eq!(
            app.store.verified_holder(&email, app.clock.now()).await.unwrap(),
            None,
            "{address}"
        );
        assert!(
            !cognito_users(&cognito, &pool_id)
                .await
                .values()
                .any(|(e, _)| e == address),
            "{address} is not in Cognito"
        );
    }
    // The one left, user 2, is found as before; then they delete themselves
    // in Cognito, and the reconcile's pass erases them: that erasure keeps
    // their import key too.
    let (again, _) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!((again.existing, again.failures()), (1, 3));
    let user2 = sub_of(3);
    cognito
        .admin_delete_user()
        .user_pool_id(&pool_id)
        .username(user2.as_str())
        .send()
        .await
        .unwrap();
    let mut app = app;
    app.users = Some(user_service::identity::UserPool::new(cognito.clone(), pool_id.clone()));
    app.clock.advance(60);
    let pass = app.reconcile_users().await.unwrap();
    // User 2, and the admin, whom the test made in the table alone.
    assert_eq!(pass["tally"]["erased"], 2, "{pass}");
    assert!(app.store.get_profile(&user2).await.is_err(), "user 2 is erased");
    let (last, entries) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!(
        (last.created, codes(&entries)),
        (
            0,
            BTreeMap::from([(1, "ERASED"), (2, "ERASED"), (3, "ERASED"), (4, "ERASED")])
        )
    );
    app.assert_invariants().await;
}

/// A profile imported before import keys were kept gets its key when a re-run
/// finds it, so its erasure is remembered from then on.
#[tokio::test]
async fn a_rerun_records_the_import_key_of_an_account_imported_before_keys_were_kept() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &users(1..2));
    let pool = Pool::new(cognito.clone(), &pool_id, 1_000.0);
    let (_, entries) = run(&app, &pool, &input, options(&app)).await;
    let user = entries[0].sub.clone().unwrap();
    ddb::client()
        .update_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(keys::profile_key(&user)))
        .update_expression("REMOVE importKey")
        .send()
        .await
        .unwrap();
    let (again, _) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!(again.existing, 1);
    app.delete_account(user.as_str(), "*").await.assert_status(204);
    cognito
        .admin_delete_user()
        .user_pool_id(&pool_id)
        .username(user.as_str())
        .send()
        .await
        .unwrap();
    let (after, entries) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!((after.created, codes(&entries)), (0, BTreeMap::from([(1, "ERASED")])));
    app.assert_invariants().await;
}

/// Answers two AdminCreateUser calls of every three as Cognito over its quota
/// does, without reaching moto (which gets a harmless ListUserPools instead).
#[derive(Debug, Clone)]
struct ThrottleCreations {
    calls: Arc<AtomicUsize>,
    throttled: Arc<AtomicUsize>,
}

#[derive(Debug, Clone, Copy)]
struct Throttled(bool);

impl Storable for Throttled {
    type Storer = StoreReplace<Self>;
}

impl Intercept for ThrottleCreations {
    fn name(&self) -> &'static str {
        "ThrottleCreations"
    }

    fn modify_before_signing(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request_mut();
        let creation = request
            .headers()
            .get("x-amz-target")
            .is_some_and(|t| t.ends_with("AdminCreateUser"));
        // Two of every three creations are throttled: more than the SDK's own
        // three attempts absorb for some users.
        let throttle = creation && self.calls.fetch_add(1, Ordering::SeqCst) % 3 != 2;
        cfg.interceptor_state().store_put(Throttled(throttle));
        if throttle {
            self.throttled.fetch_add(1, Ordering::SeqCst);
            *request.body_mut() = SdkBody::from(r#"{"MaxResults":1}"#);
            request.headers_mut().insert("content-length", "16");
            request
                .headers_mut()
                .insert("x-amz-target", "AWSCognitoIdentityProviderService.ListUserPools");
        }
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if !cfg.load::<Throttled>().is_some_and(|t| t.0) {
            return Ok(());
        }
        let response = context.response_mut();
        *response.status_mut() = 400.try_into()?;
        response.headers_mut().remove("content-length");
        *response.body_mut() =
            SdkBody::from(json!({"__type": "TooManyRequestsException", "message": "Rate exceeded"}).to_string());
        Ok(())
    }
}

#[tokio::test]
async fn throttled_creations_are_retried_with_backoff_and_the_import_completes() {
    let moto = Moto::start();
    let (plain, pool_id) = new_pool(&moto).await;
    let throttle = ThrottleCreations {
        calls: Arc::default(),
        throttled: Arc::default(),
    };
    let config = aws_sdk_cognitoidentityprovider::config::Builder::from(&moto.sdk_config())
        .retry_config(
            aws_sdk_cognitoidentityprovider::config::retry::RetryConfig::standard()
                .with_initial_backoff(Duration::from_millis(5)),
        )
        .interceptor(throttle.clone())
        .build();
    let cognito = Cognito::from_conf(config);
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &users(0..10));
    let pool = Pool::new(cognito, &pool_id, 1_000.0);
    let (summary, _) = run(&app, &pool, &input, options(&app)).await;
    assert_eq!((summary.created, summary.failures()), (10, 0), "{}", summary.render());
    assert!(throttle.throttled.load(Ordering::SeqCst) >= 20);
    assert!(summary.throttled > 0, "the tool's own retries were needed");
    assert_eq!(assert_agree(&app, &plain, &pool_id).await, 10);
}

fn binary() -> PathBuf {
    let path = lambda::Build::Debug.binary("user-admin");
    if !path.exists() {
        lambda::Build::Debug.ensure_built();
    }
    path
}

fn command(app: &TestApp, moto: &Moto, pool_id: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args(args)
        .env_clear()
        .envs(integration_tests::local_aws::vars())
        .env("TABLE_NAME", &app.store.config().table_name)
        .env("USER_POOL_ID", pool_id)
        .env(user_service::config::VERIFICATION_KEY.name(), ddb::TEST_KEY)
        .env("AWS_ENDPOINT_URL_DYNAMODB", ddb::endpoint())
        .env("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", &moto.endpoint)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_half_way_is_completed_by_a_rerun_and_nobody_is_created_twice() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &users(0..40));
    let report = dir.path().join("report.jsonl");
    let report_arg = report.to_str().unwrap();
    let input_arg = input.to_str().unwrap();

    let mut child = command(
        &app,
        &moto,
        &pool_id,
        &["import", input_arg, "--rate", "10", "--report", report_arg],
    )
    .spawn()
    .unwrap();
    wait::until("ten lines reported", wait::GENEROUS, || {
        let done = std::fs::read_to_string(&report).ok()?.lines().count();
        (done >= 10).then_some(())
    });
    process::signal_group(child.id(), "KILL");
    let _ = child.wait();
    let cut = read_report(&report).len();
    assert!((10..40).contains(&cut), "killed half-way: {cut} lines done");

    let resumed = command(
        &app,
        &moto,
        &pool_id,
        &[
            "import", input_arg, "--rate", "1000", "--report", report_arg, "--resume",
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("skipped (done before): {cut}")), "{stderr}");
    let entries = read_report(&report);
    let lines: BTreeSet<u64> = entries.iter().map(|e| e.line).collect();
    assert_eq!(lines, (1..=40).collect());
    assert_eq!(assert_agree(&app, &cognito, &pool_id).await, 40);

    // Without the report, a third run checks every line and creates nobody.
    let fresh = dir.path().join("fresh.jsonl");
    let third = command(
        &app,
        &moto,
        &pool_id,
        &[
            "import",
            input_arg,
            "--report",
            fresh.to_str().unwrap(),
            "--rate",
            "1000",
        ],
    )
    .output()
    .unwrap();
    assert!(third.status.success());
    let third = read_report(&fresh);
    assert_eq!(third.iter().filter(|e| e.outcome == Outcome::Existing).count(), 40);
    assert_eq!(assert_agree(&app, &cognito, &pool_id).await, 40);

    // A file with a bad line: the exit status says so.
    let bad = write_lines(dir.path(), "bad.jsonl", &["{}".to_owned()]);
    let status = command(&app, &moto, &pool_id, &["import", bad.to_str().unwrap(), "--dry-run"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

async fn export(app: &TestApp, out: &Path) -> Vec<Value> {
    let cursor = out.with_extension("cursor");
    user_admin::export::export(&app.store, out, &cursor, 3, &ProgressBar::hidden())
        .await
        .unwrap();
    assert!(!cursor.exists(), "a complete export leaves no cursor");
    let mut lines: Vec<Value> = std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines.sort_by_key(|l| l["emails"][0]["address"].as_str().unwrap_or_default().to_owned());
    lines
}

#[tokio::test]
async fn an_export_reimported_elsewhere_exports_the_same_lines() {
    let moto = Moto::start();
    let (cognito, pool_id) = new_pool(&moto).await;
    let app = TestApp::spawn().await;
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), "users.jsonl", &users(0..12));
    let pool = Pool::new(cognito, &pool_id, 1_000.0);
    run(&app, &pool, &input, options(&app)).await;
    // Users of the service's own sign-up, with an address added, and a deleted one.
    app.sign_up(ADA, "ada@example.com").await;
    app.add_address(ADA, "ada.second@example.net").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    app.delete_account(ADMIN, "\"1\"").await.assert_status(204);

    let first = export(&app, &dir.path().join("first.jsonl")).await;
    assert_eq!(first.len(), 13, "the deleted user is not exported");

    // An export cut short after its cursor was written, mid-way through a
    // line: run again, it cuts what is past the cursor and goes on.
    let again = dir.path().join("again.jsonl");
    let full = std::fs::read(dir.path().join("first.jsonl")).unwrap();
    std::fs::write(&again, [full.as_slice(), b"{\"status\": \"act"].concat()).unwrap();
    let cursor = Cursor {
        written: full.len() as u64,
        segments: vec![
            SegmentAt {
                done: true,
                after: None
            };
            3
        ],
    };
    std::fs::write(again.with_extension("cursor"), serde_json::to_vec(&cursor).unwrap()).unwrap();
    assert_eq!(export(&app, &again).await, first);
    let schema = schema();
    for line in &first {
        assert!(schema.is_valid(line), "{line}");
        assert!(line.get("password").is_none());
        assert!(!line.to_string().contains("verification"));
    }

    // Into a fresh table and a fresh pool.
    let other_moto = Moto::start();
    let (other_cognito, other_pool_id) = new_pool(&other_moto).await;
    let other = TestApp::spawn().await;
    let other_pool = Pool::new(other_cognito.clone(), &other_pool_id, 1_000.0);
    let (summary, _) = run(&other, &other_pool, &dir.path().join("first.jsonl"), options(&other)).await;
    assert_eq!((summary.created, summary.failures()), (13, 0));
    assert_eq!(assert_agree(&other, &other_cognito, &other_pool_id).await, 13);
    let second = export(&other, &dir.path().join("second.jsonl")).await;
    assert_eq!(second, first);
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(integration_tests::workspace_root().join("schemas/import/user.json")).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&serde_json::from_str(&text).unwrap())
        .unwrap()
}

#[test]
fn the_schema_and_the_parser_agree_on_a_corpus_of_lines() {
    let schema = schema();
    let e = |a: &str| json!([{"address": a, "verified": true, "primary": true}]);
    let base = json!({"status": "active", "emails": e("a@example.com")});
    let with = |field: &str, value: Value| {
        let mut line = base.clone();
        line[field] = value;
        line
    };
    let password = |algorithm: &str, hash: &str| with("password", json!({"algorithm": algorithm, "hash": hash}));
    let good = [
        base.clone(),
        user(3),
        user(5),
        with("createdAt", json!("2020-02-29T23:59:59+02:00")),
        with("phone", json!("+14155550100")),
        with("externalId", json!("x")),
        password(
            "argon2id",
            "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub",
        ),
        password("scrypt", "$scrypt$ln=16,r=8,p=1$aM15713r3X$nFNh2CVHVjNldFVK"),
        password(
            "pbkdf2-sha256",
            "$pbkdf2-sha256$i=29000$N2YuJ8l5M2bsfWwPYQyxbg$Hh7sjS.R8ex4b2Q6",
        ),
    ];
    let bad = [
        json!({"emails": e("a@example.com")}),
        json!({"status": "active"}),
        with("status", json!("deleted")),
        with("status", json!(1)),
        with("createdAt", json!("yesterday")),
        with("phone", json!("0123")),
        with("phone", json!("+0123456")),
        with("firstName", json!("")),
        with("externalId", json!("")),
        with("extra", json!(true)),
        with("emails", json!([{"address": "a@example.com", "verified": true}])),
        with(
            "emails",
            json!([{"address": "no-at-sign", "verified": true, "primary": true}]),
        ),
        with(
            "emails",
            json!([{"address": "a@example.com", "verified": "yes", "primary": true}]),
        ),
        with(
            "emails",
            json!([{"address": "a@example.com", "verified": true, "primary": true, "x": 1}]),
        ),
        password("md5", "abc"),
        password("bcrypt", "$2b$12$short"),
        password("bcrypt", "$2b$03$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
        password("argon2id", "$argon2i$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub"),
        password("scrypt", "$scrypt$ln=16,r=8$aM15713r3X$nFNh2CVHVjNldFVK"),
        password("pbkdf2-sha256", "$pbkdf2-sha256$i=many$c2FsdA$aGFzaA"),
        with("password", json!({"algorithm": "bcrypt"})),
    ];
    for line in &good {
        assert!(schema.is_valid(line), "the schema refuses {line}");
        assert!(
            user_service::import::parse_line(&line.to_string()).is_ok(),
            "the parser refuses {line}"
        );
    }
    for line in &bad {
        assert!(!schema.is_valid(line), "the schema admits {line}");
        let err = user_service::import::parse_line(&line.to_string()).unwrap_err();
        assert_eq!(err.code, LineCode::InvalidLine, "{line}");
    }
}
