//! `cargo xtask canonicalize` against DynamoDB Local: a table written under
//! the default policy moved to `gmail`, with and without collisions, and a
//! migration cut short then run again. After each, the invariant checker
//! passes and the service under the new policy finds every spelling.

use std::time::Duration;

use indicatif::ProgressBar;
use integration_tests::logs::LogCapture;
use user_service::address_policy::{AddressPolicy, Canonicalization};
use xtask::canonicalize::{self, Tally};

use crate::handler_support::*;

const BOB: &str = "5d2c7a91-3e4f-4a6b-9c8d-7e6f5a4b3c2d";

fn gmail() -> Canonicalization {
    Canonicalization::parse("gmail").unwrap()
}

fn quiet() -> ProgressBar {
    ProgressBar::hidden()
}

/// The same table, served under the `gmail` policy: the deploy after the migration.
fn under_gmail(app: &TestApp) -> TestApp {
    TestApp::on(
        app.store
            .clone()
            .with_policy(AddressPolicy::default().canonicalizing(gmail())),
    )
}

fn sub(i: usize) -> String {
    format!("{i:08x}-2b7d-4b0e-9a57-0e0f0b1c2d3e")
}

#[tokio::test]
async fn a_table_without_collisions_moves_every_claim_and_the_new_policy_finds_every_spelling() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "A.Da@Gmail.com").await;
    app.sign_up(BOB, "bob@example.com").await;
    // An unverified address moves too, its claim still expiring.
    app.add_address(BOB, "b.o.b+news@googlemail.com").await;
    let verified = app.add_address(BOB, "bo.b.work@gmail.com").await;
    app.verify_email(BOB, &verified, &logs.code_for(&verified))
        .await
        .assert_status(200);

    let survey = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!(
        (survey.records, survey.moving.len(), survey.collisions.len()),
        (4, 3, 0)
    );
    let tally = canonicalize::migrate(&app.store, &survey.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    assert_eq!(
        tally,
        Tally {
            moved: 3,
            ..Tally::default()
        }
    );
    app.assert_invariants().await;

    // Deployed with the new policy: every spelling is the one address.
    let served = under_gmail(&app);
    served.sign_up(ADMIN, "grace@example.com").await;
    served
        .add_email(ADMIN, "ada@googlemail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    served
        .add_email(ADMIN, "bob@gmail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    served
        .add_email(BOB, "bobwork@gmail.com")
        .await
        .assert_problem(409, "EMAIL_ALREADY_ADDED");
    let found = served.find_user_by_email(ADMIN, "a.d.a+x@gmail.com").await;
    found.assert_status(200);
    assert_eq!(found.body["profile"]["userId"], ADA);
    // Shown as typed.
    let listed = served.list_emails(ADA).await;
    assert_eq!(listed.body["emails"][0]["email"], "a.da@gmail.com");
    // The unverified one still verifies, and is still released by its removal.
    let unverified = served.email_id_of(BOB, "b.o.b+news@googlemail.com").await;
    served.remove_email(BOB, &unverified).await.assert_status(204);
    served.add_address(ADMIN, "bob+again@gmail.com").await;
    served.assert_invariants().await;

    // Run again: nothing left to move.
    let again = canonicalize::survey(&app.store, gmail(), 1, &quiet()).await.unwrap();
    assert_eq!((again.moving.len(), again.collisions.len()), (0, 0));
}

#[tokio::test]
async fn collisions_are_listed_by_sub_and_email_id_and_nothing_is_written() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@gmail.com").await;
    app.sign_up(BOB, "a.da@googlemail.com").await;
    // One account holding two spellings is a collision too.
    app.sign_up(ADMIN, "grace@gmail.com").await;
    app.add_address(ADMIN, "g.race@gmail.com").await;
    app.add_address(ADMIN, "lovelace@example.com").await;
    let before = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;

    let survey = canonicalize::survey(&app.store, gmail(), 3, &quiet()).await.unwrap();
    assert_eq!(survey.collisions.len(), 2, "{survey:?}");
    let ada = &survey.collisions[0];
    assert_eq!(ada.form.as_str(), "ada@gmail.com");
    let subs: Vec<&str> = ada.holders.iter().map(|h| h.user_id.as_str()).collect();
    let mut expected = [ADA, BOB];
    expected.sort_unstable();
    assert_eq!(subs, expected);
    let grace = &survey.collisions[1];
    assert!(grace.holders.iter().all(|h| h.user_id.as_str() == ADMIN));
    assert_eq!(grace.holders.len(), 2);
    let report = canonicalize::report(&survey, false);
    assert!(!report.contains('@'), "no address unless asked: {report}");
    assert!(report.contains(&format!("sub={ADA}")), "{report}");
    // The survey writes nothing.
    let after = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;
    assert_eq!(before.len(), after.len());
    assert!(before.iter().all(|item| after.contains(item)));

    // Resolved by their users, the table moves.
    let id = app.email_id_of(ADMIN, "g.race@gmail.com").await;
    app.remove_email(ADMIN, &id).await.assert_status(204);
    let etag = app.get_profile(BOB).await.header("etag").unwrap().to_owned();
    app.delete_account(BOB, &etag).await.assert_status(204);
    let survey = canonicalize::survey(&app.store, gmail(), 3, &quiet()).await.unwrap();
    assert!(survey.collisions.is_empty(), "{survey:?}");
    let tally = canonicalize::migrate(&app.store, &survey.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    assert!(tally.is_complete(), "{tally:?}");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_migration_cut_short_leaves_a_consistent_table_and_a_rerun_finishes_it() {
    let app = TestApp::spawn().await;
    let n = 40;
    for i in 0..n {
        app.sign_up(&sub(i), &format!("user.{i}@gmail.com")).await;
    }
    let survey = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!(survey.moving.len(), n);
    // 20 moves a second, stopped after one second: a process killed mid-run.
    let cut = tokio::time::timeout(
        Duration::from_secs(1),
        canonicalize::migrate(&app.store, &survey.moving, 20.0, &quiet()),
    )
    .await;
    assert!(cut.is_err(), "the run was cut short");
    // Moves sent just before the cut may still land (dropping a request's
    // future does not stop DynamoDB): survey until the table stops changing.
    let mut rest = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let next = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
        let settled = next.moving.len() == rest.moving.len();
        rest = next;
        if settled {
            break;
        }
    }
    app.assert_invariants().await;
    assert!(
        !rest.moving.is_empty() && rest.moving.len() < n,
        "{} of {n} left",
        rest.moving.len()
    );

    // Meanwhile the service, still under the old policy, goes on.
    app.add_address(&sub(0), "extra.0@gmail.com").await;
    // The re-run surveys again and moves what is left, the new record too.
    let again = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!(again.moving.len(), rest.moving.len() + 1);
    let tally = canonicalize::migrate(&app.store, &again.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    assert!(tally.is_complete(), "{tally:?}");
    // Records moved by the first run are Already on a stale list: a second migrate of it changes nothing.
    let stale = canonicalize::migrate(&app.store, &survey.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    assert_eq!((stale.moved, stale.already), (0, n as u64), "{stale:?}");
    app.assert_invariants().await;
    let done = canonicalize::survey(&app.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!(done.moving.len(), 0);
    let served = under_gmail(&app);
    served.sign_up(ADA, "ada@example.com").await;
    served
        .add_email(ADA, "user0@googlemail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
}

#[tokio::test]
async fn while_the_table_moves_every_address_keeps_its_one_owner_on_every_path() {
    let app = TestApp::spawn().await;
    let n = 10;
    for i in 0..n {
        app.sign_up(&sub(i), &format!("user.{i}@gmail.com")).await;
    }
    // Deployed for the move: EMAIL_CANONICALIZATION=gmail, EMAIL_CANONICALIZATION_FROM=none.
    let moving = TestApp::on(
        app.store.clone().with_policy(
            AddressPolicy::default()
                .canonicalizing(gmail())
                .moving_from(Canonicalization::NONE),
        ),
    );
    moving.sign_up(ADA, "ada@example.com").await;
    moving.sign_up(ADMIN, "grace@example.com").await;
    let survey = canonicalize::survey(&moving.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!(survey.moving.len(), n);
    // Half of the table moved (the survey lists them by sub: users 0 to 4).
    let half = canonicalize::migrate(&moving.store, &survey.moving[..n / 2], 1_000.0, &quiet())
        .await
        .unwrap();
    assert_eq!(half.moved, n as u64 / 2);

    for (i, moved) in [(0, true), (n - 1, false)] {
        let exact = format!("user.{i}@gmail.com");
        // The very address, moved or not: taken, by add, sign-up and check; found by an admin.
        moving.add_email(ADA, &exact).await.assert_problem(409, "EMAIL_TAKEN");
        let err = moving.pre_sign_up(NOBODY, &exact).await.unwrap_err();
        assert_eq!(err.error_type, "EMAIL_TAKEN", "{i}: {err:?}");
        assert_eq!(moving.check_email(ADA, &exact).await.body["available"], false);
        let found = moving.find_user_by_email(ADMIN, &exact).await;
        found.assert_status(200);
        assert_eq!(found.body["profile"]["userId"], sub(i));
        // Its owner cannot add it twice either.
        moving
            .add_email(&sub(i), &exact)
            .await
            .assert_problem(409, "EMAIL_ALREADY_ADDED");
        if moved {
            // Every spelling of a moved address is its own already.
            moving
                .add_email(ADA, &format!("user{i}+x@googlemail.com"))
                .await
                .assert_problem(409, "EMAIL_TAKEN");
        }
    }
    moving.assert_invariants().await;

    // A spelling of an address not yet moved can still be claimed on the new
    // form: the migration then meets it as a collision, never overwrites it.
    moving.add_address(ADA, "user9@googlemail.com").await;
    let rest = canonicalize::survey(&moving.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!((rest.moving.len(), rest.collisions.len()), (n / 2 - 1, 1));
    let tally = canonicalize::migrate(&moving.store, &rest.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    assert!(tally.is_complete(), "{tally:?}");
    moving.assert_invariants().await;
    // Resolved (Ada removes hers), the last record moves.
    let id = moving.email_id_of(ADA, "user9@googlemail.com").await;
    moving.remove_email(ADA, &id).await.assert_status(204);
    let last = canonicalize::survey(&moving.store, gmail(), 2, &quiet()).await.unwrap();
    assert_eq!((last.moving.len(), last.collisions.len()), (1, 0));
    canonicalize::migrate(&moving.store, &last.moving, 1_000.0, &quiet())
        .await
        .unwrap();
    // Then deployed without EMAIL_CANONICALIZATION_FROM: one form, every address found.
    let after = under_gmail(&moving);
    after
        .add_email(ADA, "user.9@gmail.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    after.assert_invariants().await;
}
