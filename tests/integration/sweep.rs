//! Erasure that reaches everyone, against DynamoDB Local and moto's Cognito:
//! the reconcile's pass (a diff of the table against ListUsers, resumable from
//! its checkpoint, one run at a time) and CloudTrail's DeleteUser records.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use integration_tests::ddb;
use integration_tests::moto::Moto;
use serde_json::Value;
use user_service::StoreError;
use user_service::domain::{EmailAddress, UserId, UserStatus};
use user_service::identity::UserPool;
use user_service::store::keys;

use crate::handler_support::*;

/// Users of the pass at scale: a small size here, `RECONCILE_SCALE_USERS`
/// (20,000 in `make bench`) for the full one.
fn scale_users() -> usize {
    std::env::var("RECONCILE_SCALE_USERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// A pool shaped like the template's (username = sub) with a user per
/// address, and an app on a fresh table that has their profiles. Quotas as
/// moto takes them: the pace is unit-tested apart.
async fn pool_and_table(
    moto: &Moto,
    addresses: &[String],
) -> (TestApp, aws_sdk_cognitoidentityprovider::Client, String, Vec<String>) {
    let refs: Vec<&str> = addresses.iter().map(String::as_str).collect();
    let (cognito, pool_id, subs) = moto.user_pool(&refs).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::new(cognito.clone(), pool_id.clone()));
    // 10 ListUsers a second: 1,000 users take 1.7 s of listing at least,
    // whatever the machine, more than a 3 s run leaves for work.
    // `RECONCILE_SCALE_LIST_RPS` changes it, to measure the emulators' own pace.
    app.reconcile.user_list_rps = std::env::var("RECONCILE_SCALE_LIST_RPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    app.reconcile.scan_segments = 2;
    app.reconcile.user_read_rps = 1_000;
    app.reconcile.quota_share_percent = 100;
    stream::iter(subs.iter().zip(addresses))
        .for_each_concurrent(16, |(sub, address)| {
            let app = &app;
            async move { app.sign_up(sub, address).await }
        })
        .await;
    // Profiles created before the pass starts are the pass's to check.
    app.clock.advance(60);
    (app, cognito, pool_id, subs)
}

fn addresses(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("user{i}@example.com")).collect()
}

async fn delete_in_cognito(cognito: &aws_sdk_cognitoidentityprovider::Client, pool: &str, sub: &str) {
    cognito
        .admin_delete_user()
        .user_pool_id(pool)
        .username(sub)
        .send()
        .await
        .unwrap();
}

async fn status_of(app: &TestApp, sub: &str) -> Option<UserStatus> {
    match app.store.get_profile(&UserId::parse(sub).unwrap()).await {
        Ok(profile) => Some(profile.status),
        Err(StoreError::NotFound) => None,
        Err(err) => panic!("{err}"),
    }
}

async fn is_free(app: &TestApp, address: &str) -> bool {
    let email = EmailAddress::parse(address).unwrap();
    app.store.is_available(&email, app.clock.now()).await.unwrap()
}

/// Runs of `limit` each until a pass completes with no user left unchecked;
/// the answers of every run. A run may fail (on a loaded machine a write can
/// outlast a short run's reserve), and a pass may leave users it could not
/// check: as in production, the next run goes on from the checkpoint, and the
/// next pass (a day later) retries them.
async fn runs_until_complete(app: &TestApp, limit: Duration) -> Vec<Value> {
    let mut answers = Vec::new();
    for _ in 0..500 {
        let answer = match app.reconcile_run(limit).await {
            Ok(answer) => answer,
            Err(err) => {
                assert_eq!(err.error_type, "SWEEP_FAILED", "{err:?}");
                answers.push(serde_json::json!({ "failed": err.error_message }));
                continue;
            }
        };
        let complete = answer["complete"] == true;
        // Each run's answer, shown if the test fails or times out.
        eprintln!("run {}: {answer}", answers.len() + 1);
        if answer["idle"] == true {
            // The pass completed in a run that failed for users it could not
            // check: the next pass, a day later, retries them.
            app.clock.advance(24 * 3600);
        }
        answers.push(answer);
        if complete {
            return answers;
        }
    }
    panic!("the pass did not complete in 500 runs: {:?}", answers.last());
}

/// The tally of the last complete pass of `answers`.
fn last_tally(answers: &[Value]) -> &Value {
    &answers
        .iter()
        .rev()
        .find(|a| a["complete"] == true)
        .expect("a complete pass")["tally"]
}

#[tokio::test]
async fn users_deleted_in_cognito_are_erased_by_the_pass_and_nobody_else() {
    let moto = Moto::start();
    let addresses = addresses(3);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    app.add_address(&subs[1], "second.pending@example.com").await;
    delete_in_cognito(&cognito, &pool, &subs[1]).await;

    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(answer["complete"], true, "{answer}");
    let tally = &answer["tally"];
    assert_eq!(
        (
            &tally["live"],
            &tally["listed"],
            &tally["candidates"],
            &tally["erased"],
            &tally["failed"]
        ),
        (&3.into(), &2.into(), &1.into(), &1.into(), &0.into()),
        "{answer}"
    );
    assert_eq!(status_of(&app, &subs[1]).await, None, "erased");
    for address in [addresses[1].as_str(), "second.pending@example.com"] {
        assert!(is_free(&app, address).await, "{address} released");
    }
    for i in [0, 2] {
        assert_eq!(status_of(&app, &subs[i]).await, Some(UserStatus::Active));
        assert!(!is_free(&app, &addresses[i]).await);
    }
    app.assert_invariants().await;

    // The next run finds the pass done and not yet due: nothing to do.
    let idle = app.reconcile_users().await.unwrap();
    assert_eq!(idle["idle"], true, "{idle}");
    let checkpoint = app.store.reconcile_checkpoint().await.unwrap();
    let last = checkpoint.last_complete.unwrap();
    assert_eq!(last.tally.erased, 1);
    assert!(last.finished_at >= last.started_at);
    assert!(checkpoint.pass.is_none());
    // A day later the next pass runs, and finds nobody to erase.
    app.clock.advance(24 * 3600);
    let next = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&next["complete"], &next["tally"]["erased"]),
        (&true.into(), &0.into()),
        "{next}"
    );
}

/// Runs with `calls` ListUsers calls each (and all the time they want) until
/// a pass completes: the runs stop where the test says, whatever the
/// machine's speed. The answers of every run.
async fn budgeted_runs_until_complete(app: &mut TestApp, calls: u32) -> Vec<Value> {
    app.reconcile.list_calls_per_run = Some(calls);
    let answers = runs_until_complete(app, Duration::from_secs(600)).await;
    let failed: Vec<&Value> = answers.iter().filter(|a| a.get("failed").is_some()).collect();
    assert!(failed.is_empty(), "no run failed: {failed:?}");
    answers
}

#[tokio::test]
async fn a_pass_over_many_users_in_many_short_runs_erases_exactly_the_deleted() {
    let moto = Moto::start();
    let n = scale_users();
    let addresses = addresses(n);
    let (mut app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // 1 % deleted themselves in Cognito.
    let deleted: BTreeSet<&String> = subs.iter().step_by(100).collect();
    for sub in &deleted {
        delete_in_cognito(&cognito, &pool, sub).await;
    }
    let started = std::time::Instant::now();
    // Three ListUsers calls a run: a run lists 180 users, however fast the machine.
    let answers = budgeted_runs_until_complete(&mut app, 3).await;
    let elapsed = started.elapsed();
    let tally = last_tally(&answers);
    // A figure for the closing note, never asserted.
    eprintln!(
        "reconcile: {n} users in {} runs, {:.1} s, {:.0} users/s, {} ListUsers calls",
        answers.len(),
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        tally["listCalls"],
    );
    // Each partition of the pass (by the subs' first hex digits) is its own
    // listing of the users Cognito still has.
    let digits = user_service::reconcile::prefix_digits(n as u64);
    let mut per_partition: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for sub in subs.iter().filter(|sub| !deleted.contains(sub)) {
        *per_partition.entry(&sub[..digits]).or_default() += 1;
    }
    let pages: usize = per_partition.values().map(|users| users.div_ceil(60).max(1)).sum();
    assert!(answers.len() >= pages / 3, "the pass needed several runs: {answers:?}");
    // Every run moved the pass on: a partition cut short goes on where it stopped.
    assert!(
        answers.len() <= pages.div_ceil(3) + pages / 100 + 2,
        "{} runs",
        answers.len()
    );
    assert_eq!(tally["failed"], 0, "{tally}");
    assert_eq!(tally["erased"], deleted.len(), "{tally}");
    assert_eq!(tally["live"], n, "{tally}");
    assert_eq!(tally["listCalls"], pages, "each page listed once: {tally}");
    for (sub, address) in subs.iter().zip(&addresses) {
        let gone = deleted.contains(sub);
        assert_eq!(status_of(&app, sub).await.is_none(), gone, "{sub}");
        assert_eq!(is_free(&app, address).await, gone, "{sub}");
    }
    app.assert_invariants().await;
}

/// A run that can list only part of a partition (a low quota share, Cognito
/// throttling, a slow table) keeps its place in it: the next run goes on
/// from there, so the pass ends, however little each run may call.
#[tokio::test]
async fn a_pass_whose_runs_each_list_one_page_of_a_partition_still_completes() {
    let moto = Moto::start();
    let addresses = addresses(300);
    let (mut app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    let deleted = [&subs[0], &subs[150], &subs[299]];
    for sub in deleted {
        delete_in_cognito(&cognito, &pool, sub).await;
    }
    // One ListUsers call a run: 300 users are five pages of one partition.
    let answers = budgeted_runs_until_complete(&mut app, 1).await;
    let tally = last_tally(&answers);
    assert_eq!(
        (&tally["erased"], &tally["listCalls"], &tally["listed"]),
        (&3.into(), &5.into(), &297.into()),
        "{answers:?}"
    );
    // The table's run, a run a page, and the candidates' run.
    assert!(answers.len() <= 7, "{answers:?}");
    for sub in &subs {
        assert_eq!(status_of(&app, sub).await.is_none(), deleted.contains(&sub), "{sub}");
    }
    app.assert_invariants().await;
}

/// A user who signed up in Cognito before a pass started and confirmed while
/// it ran has a profile younger than the pass, so the pass's snapshot does not
/// list them; Cognito lists them confirmed and older than the pass. Theirs is
/// the address's verified claim: they keep their Cognito user and profile. A
/// real stranded sign-up (its address verified by another account) in the
/// same pass is still closed.
#[tokio::test]
async fn a_sign_up_confirmed_while_a_pass_runs_keeps_its_account() {
    use integration_tests::logs::LogCapture;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let addresses = addresses(120);
    let (mut app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // Signed up in Cognito, not yet confirmed.
    let late = users_added(&cognito, &pool, &["late@example.com".to_owned()])
        .await
        .remove(0);
    // Confirmed after another account verified its address: stranded.
    let stranded = users_added(&cognito, &pool, &["taken@example.com".to_owned()])
        .await
        .remove(0);
    confirm(&cognito, &pool, &stranded).await;
    let id = app.add_address(&subs[0], "taken@example.com").await;
    app.verify_email(&subs[0], &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    // The pass starts after Cognito created both (its dates are the real clock's).
    let behind = app.clock.now().seconds_until(user_service::domain::Timestamp::now());
    app.clock.advance(i64::try_from(behind).unwrap() + 60);
    // The first run reads the table and lists nothing.
    app.reconcile.list_calls_per_run = Some(0);
    let first = app.reconcile_run(Duration::from_secs(600)).await.unwrap();
    assert_eq!(
        (&first["complete"], &first["phase"]),
        (&false.into(), &"cognito".into()),
        "{first}"
    );
    // The user confirms: post-confirmation writes their profile, younger than the pass.
    confirm(&cognito, &pool, &late).await;
    app.clock.advance(1);
    app.sign_up(&late, "late@example.com").await;
    let mut answers = vec![first];
    answers.extend(budgeted_runs_until_complete(&mut app, 1).await);
    let tally = last_tally(&answers);
    assert_eq!(
        (&tally["signUpsClosed"], &tally["erased"], &tally["live"]),
        (&1.into(), &0.into(), &120.into()),
        "{answers:?}"
    );
    let cognito_user = |sub| integration_tests::moto::cognito_user(&cognito, &pool, sub);
    assert!(
        cognito_user(&late).await.is_some(),
        "the late user keeps their Cognito user"
    );
    assert_eq!(status_of(&app, &late).await, Some(UserStatus::Active));
    assert_eq!(cognito_user(&stranded).await, None, "the stranded sign-up is closed");
    // The next pass finds them in the table and in Cognito: nothing to do.
    app.clock.advance(24 * 3600);
    let next = budgeted_runs_until_complete(&mut app, 100).await;
    let next = last_tally(&next);
    assert_eq!(
        (&next["erased"], &next["signUpsClosed"]),
        (&0.into(), &0.into()),
        "{next}"
    );
    assert_eq!(status_of(&app, &late).await, Some(UserStatus::Active));
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_run_killed_between_checkpoints_is_taken_over_once_its_lease_expires() {
    let moto = Moto::start();
    let addresses = addresses(400);
    let (mut app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    let deleted = [&subs[7], &subs[123], &subs[399]];
    for sub in deleted {
        delete_in_cognito(&cognito, &pool, sub).await;
    }
    // 1 ListUsers call a second: listing 400 users takes 6 s, so the run is
    // still listing when it is killed, once it has written the table phase's
    // checkpoint, with no deadline it knew of: no checkpoint of its own at the
    // end, only those it wrote on the way.
    app.reconcile.user_list_rps = 1;
    {
        let run = std::pin::pin!(app.reconcile_event(integration_tests::events::load("reconcile-users"), None));
        let listing = std::pin::pin!(async {
            loop {
                let checkpoint = app.store.reconcile_checkpoint().await.unwrap();
                if checkpoint
                    .pass
                    .is_some_and(|p| matches!(p.phase, user_service::reconcile::Phase::Cognito { .. }))
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        match futures::future::select(run, listing).await {
            futures::future::Either::Left((answer, _)) => panic!("the run ended before it was killed: {answer:?}"),
            // The run is dropped here: killed.
            futures::future::Either::Right(((), _)) => {}
        }
    }
    let checkpoint = app.store.reconcile_checkpoint().await.unwrap();
    let pass = checkpoint.pass.expect("the table phase's checkpoint was written");
    // Mid-pass, the reconcile's items hold no address (the scan's position is a profile's key).
    app.assert_invariants().await;
    // Its lease holds: another run now does nothing.
    let skipped = app.reconcile_run(Duration::from_secs(5)).await.unwrap();
    assert_eq!(skipped["skipped"], "another run holds the lease", "{skipped}");
    // Once the lease has expired, the next runs go on from the last checkpoint.
    app.clock.advance(16 * 60);
    let answers = budgeted_runs_until_complete(&mut app, 3).await;
    assert_eq!(last_tally(&answers)["erased"], 3, "{answers:?}");
    let last = app.store.reconcile_checkpoint().await.unwrap().last_complete.unwrap();
    assert_eq!(last.id, pass.id, "the same pass went on");
    assert!(last.tally.runs >= 2, "{last:?}");
    for sub in &subs {
        assert_eq!(status_of(&app, sub).await.is_none(), deleted.contains(&sub), "{sub}");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn two_runs_at_once_one_moves_the_pass_the_other_refuses() {
    let moto = Moto::start();
    let addresses = addresses(300);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    delete_in_cognito(&cognito, &pool, &subs[42]).await;
    // Deadlines far beyond the pass: the one that holds the lease completes it
    // however slow a loaded machine makes it (30 s once did not).
    let (a, b) = tokio::join!(
        app.reconcile_run(Duration::from_secs(600)),
        app.reconcile_run(Duration::from_secs(600))
    );
    let answers = [a.unwrap(), b.unwrap()];
    let skipped = answers
        .iter()
        .filter(|a| a["skipped"] == "another run holds the lease")
        .count();
    let complete: Vec<_> = answers.iter().filter(|a| a["complete"] == true).collect();
    assert_eq!((skipped, complete.len()), (1, 1), "{answers:?}");
    assert_eq!(complete[0]["tally"]["erased"], 1);
    assert_eq!(status_of(&app, &subs[42]).await, None);
    app.assert_invariants().await;
}

#[tokio::test]
async fn users_who_sign_up_while_a_pass_runs_are_never_erased() {
    let moto = Moto::start();
    let addresses = addresses(200);
    let (mut app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    delete_in_cognito(&cognito, &pool, &subs[3]).await;
    // The pass starts, and its run stops after 2 of the 4 ListUsers calls.
    app.reconcile.list_calls_per_run = Some(2);
    let mut answers = vec![app.reconcile_run(Duration::from_secs(600)).await.unwrap()];
    assert_ne!(answers[0]["complete"], true, "{answers:?}");
    // Meanwhile a user signs up: Cognito first, then the profile.
    let late = users_added(&cognito, &pool, &["late@example.com".to_owned()])
        .await
        .remove(0);
    app.clock.advance(1);
    app.sign_up(&late, "late@example.com").await;
    answers.extend(budgeted_runs_until_complete(&mut app, 2).await);
    let tally = last_tally(&answers);
    assert_eq!(tally["erased"], 1, "{answers:?}");
    // The late user is not the pass's: created after it started.
    assert_eq!(tally["live"], 200, "{answers:?}");
    assert_eq!(status_of(&app, &late).await, Some(UserStatus::Active));
    assert_eq!(status_of(&app, &subs[3]).await, None);
    app.assert_invariants().await;
}

/// A user added with AdminCreateUser made CONFIRMED, as a finished sign-up is.
async fn confirm(cognito: &aws_sdk_cognitoidentityprovider::Client, pool: &str, sub: &str) {
    cognito
        .admin_set_user_password()
        .user_pool_id(pool)
        .username(sub)
        .password("Correct-Horse-9")
        .permanent(true)
        .send()
        .await
        .unwrap();
}

/// Users added to an existing pool, as `Moto::user_pool` adds them: their subs.
async fn users_added(cognito: &aws_sdk_cognitoidentityprovider::Client, pool: &str, emails: &[String]) -> Vec<String> {
    let emails: Vec<&str> = emails.iter().map(String::as_str).collect();
    integration_tests::moto::add_users(cognito, pool, &emails).await
}

#[tokio::test]
async fn a_confirmed_cognito_user_without_a_profile_is_counted_and_left_to_the_repair_path() {
    let moto = Moto::start();
    let addresses = addresses(5);
    let (app, cognito, pool, _) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // Confirmed in Cognito before the pass, with no profile here.
    let orphan = users_added(&cognito, &pool, &["orphan@example.com".to_owned()]).await;
    confirm(&cognito, &pool, &orphan[0]).await;
    // Cognito's creation date is the real clock's; the pass starts after it.
    let behind = app.clock.now().seconds_until(user_service::domain::Timestamp::now());
    app.clock.advance(i64::try_from(behind).unwrap() + 60);
    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(answer["tally"]["withoutProfile"], 1, "{answer}");
    assert_eq!(answer["tally"]["erased"], 0, "{answer}");
    assert_eq!(status_of(&app, &orphan[0]).await, None, "no profile is made here");
}

#[tokio::test]
async fn a_pass_that_cannot_ask_cognito_erases_nothing_and_fails() {
    let moto = Moto::start();
    let (cognito, _) = moto.pool_of_subs(&[]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::new(cognito, "us-east-1_NoSuchPool"));
    app.sign_up(ADA, "ada@example.com").await;
    app.clock.advance(60);
    let err = app.reconcile_users().await.unwrap_err();
    assert_eq!(err.error_type, "SWEEP_FAILED");
    assert_eq!(status_of(&app, ADA).await, Some(UserStatus::Active));
    assert!(!is_free(&app, "ada@example.com").await);
    // The pass stays under way, for the next run to retry.
    assert!(app.store.reconcile_checkpoint().await.unwrap().pass.is_some());
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_user_the_listing_misses_but_the_pool_still_has_is_never_erased() {
    // ListUsers is eventually consistent. Here it misses Ada for good: in a
    // pool whose usernames are not subs, moto lists a `sub` of its own, so
    // the profile is a candidate, and AdminGetUser (by username) finds her.
    let moto = Moto::start();
    let (cognito, pool) = moto.pool_of_subs(&[ADA]).await;
    let mut app = TestApp::spawn().await;
    app.users = Some(UserPool::new(cognito, pool));
    app.sign_up(ADA, "ada@example.com").await;
    app.clock.advance(60);
    let answer = app.reconcile_users().await.unwrap();
    let tally = &answer["tally"];
    assert_eq!(
        (&tally["candidates"], &tally["stillPresent"], &tally["erased"]),
        (&1.into(), &1.into(), &0.into()),
        "{answer}"
    );
    assert_eq!(status_of(&app, ADA).await, Some(UserStatus::Active));
}

#[tokio::test]
async fn a_pool_that_lacks_most_of_the_table_erases_nobody_and_fails() {
    // USER_POOL_ID names the wrong pool, or an emptied one: every profile
    // looks deleted in Cognito. Nobody is erased; the run fails (its alarm).
    let moto = Moto::start();
    let addresses = addresses(30);
    let (mut app, right, right_pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    delete_in_cognito(&right, &right_pool, &subs[4]).await;
    let (cognito, empty, _) = moto.user_pool(&[]).await;
    app.users = Some(UserPool::new(cognito, empty));
    let before = app.item_count().await;
    let err = app.reconcile_users().await.unwrap_err();
    assert_eq!(err.error_type, "SWEEP_FAILED");
    assert!(err.error_message.contains("nothing was erased"), "{err:?}");
    for sub in &subs {
        assert_eq!(status_of(&app, sub).await, Some(UserStatus::Active));
    }
    // The checkpoint and the snapshot are the reconcile's; no user item changed.
    assert!(app.item_count().await > before);
    app.assert_invariants().await;
    // USER_POOL_ID fixed: the partition is listed again, from its start, and
    // the pass ends having erased the one user the right pool lacks.
    app.users = Some(UserPool::new(right, right_pool));
    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&answer["complete"], &answer["tally"]["erased"]),
        (&true.into(), &1.into()),
        "{answer}"
    );
    for (i, sub) in subs.iter().enumerate() {
        assert_eq!(status_of(&app, sub).await.is_none(), i == 4, "{sub}");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_request_for_a_pass_while_a_run_holds_the_lease_is_not_lost() {
    let moto = Moto::start();
    let addresses = addresses(3);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    assert_eq!(app.reconcile_users().await.unwrap()["complete"], true);
    delete_in_cognito(&cognito, &pool, &subs[0]).await;
    app.clock.advance(60);
    // Another run holds the lease when the record without a sub arrives.
    let now = app.clock.now();
    assert!(
        app.store
            .take_reconcile_lease("other", now, now.plus_seconds(300))
            .await
            .unwrap()
            .is_some()
    );
    let busy = app.cognito_delete_user_record(None).await.unwrap();
    assert_eq!(busy["skipped"], "another run holds the lease", "{busy}");
    // The lease lapses; the next scheduled run starts a pass though none is due for a day.
    app.clock.advance(301);
    let next = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&next["complete"], &next["tally"]["erased"]),
        (&true.into(), &1.into()),
        "{next}"
    );
    // Asked once, answered once.
    assert_eq!(app.reconcile_users().await.unwrap()["idle"], true);
}

#[tokio::test]
async fn a_delete_whose_cognito_side_never_happened_is_completed_by_the_pass() {
    let moto = Moto::start();
    let addresses = addresses(3);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // The first closes her account; the stream's record never reaches the sync:
    // Cognito keeps her, enabled, with the address nobody can now sign up with.
    app.delete_account(&subs[0], "*").await.assert_status(204);
    let still = integration_tests::moto::cognito_user(&cognito, &pool, &subs[0]).await;
    assert!(still.is_some(), "Cognito still has her");
    app.clock.advance(60);

    let answer = app.reconcile_users().await.unwrap();
    let tally = &answer["tally"];
    assert_eq!(
        (
            &tally["live"],
            &tally["deleted"],
            &tally["deletedInCognito"],
            &tally["erased"]
        ),
        (&2.into(), &1.into(), &1.into(), &0.into()),
        "{answer}"
    );
    assert_eq!(
        integration_tests::moto::cognito_user(&cognito, &pool, &subs[0]).await,
        None
    );
    for sub in &subs[1..] {
        assert!(
            integration_tests::moto::cognito_user(&cognito, &pool, sub)
                .await
                .is_some()
        );
        assert_eq!(status_of(&app, sub).await, Some(UserStatus::Active));
    }
    // The next pass finds the tombstone, and nothing left to do in Cognito.
    app.clock.advance(24 * 3600);
    let next = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&next["tally"]["deleted"], &next["tally"]["deletedInCognito"]),
        (&1.into(), &0.into()),
        "{next}"
    );
    app.assert_invariants().await;
}

/// Profiles from before the address Cognito holds was recorded get it from
/// the pass, which reads it from ListUsers: from then on their former primary
/// waits for a switch to reach Cognito, as a new profile's does.
#[tokio::test]
async fn the_pass_records_the_address_cognito_holds_on_older_profiles() {
    use integration_tests::logs::LogCapture;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let addresses = addresses(3);
    let (app, _, _, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // An older profile: written before the attribute existed.
    ddb::client()
        .update_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(keys::profile_key(&UserId::parse(&subs[1]).unwrap())))
        .update_expression("REMOVE cognitoEmail")
        .send()
        .await
        .unwrap();
    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&answer["tally"]["signInRecorded"], &answer["tally"]["signInResynced"]),
        (&1.into(), &0.into()),
        "{answer}"
    );
    let id = app.add_address(&subs[1], "user1.new@example.com").await;
    app.verify_email(&subs[1], &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    app.set_primary_email(&subs[1], &id).await.assert_status(200);
    let former = app.email_id_of(&subs[1], &addresses[1]).await;
    app.remove_email(&subs[1], &former)
        .await
        .assert_problem(409, "SIGN_IN_ADDRESS_PENDING");
    app.assert_invariants().await;
}

/// A sign-up confirmed after another account verified its address is closed
/// at its sign-in; a person told so may never sign in again, and their Cognito
/// user would keep the address from its owner there. The pass closes it.
#[tokio::test]
async fn the_pass_closes_a_stranded_sign_up_whose_address_another_account_verified() {
    use integration_tests::logs::LogCapture;
    let logs = LogCapture::default();
    let _guard = logs.install();
    let moto = Moto::start();
    let addresses = addresses(2);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    let stranded = users_added(&cognito, &pool, &["late@example.com".to_owned()]).await;
    let waiting = users_added(&cognito, &pool, &["waiting@example.com".to_owned()]).await;
    for sub in [&stranded[0], &waiting[0]] {
        confirm(&cognito, &pool, sub).await;
    }
    let id = app.add_address(&subs[0], "late@example.com").await;
    app.verify_email(&subs[0], &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    let behind = app.clock.now().seconds_until(user_service::domain::Timestamp::now());
    app.clock.advance(i64::try_from(behind).unwrap() + 60);

    let answer = app.reconcile_users().await.unwrap();
    assert_eq!(
        (&answer["tally"]["withoutProfile"], &answer["tally"]["signUpsClosed"]),
        (&2.into(), &1.into()),
        "{answer}"
    );
    let cognito_user = |sub| integration_tests::moto::cognito_user(&cognito, &pool, sub);
    assert_eq!(cognito_user(&stranded[0]).await, None, "closed");
    // Its address is nobody's here: left to the repair path at its next sign-in.
    assert!(cognito_user(&waiting[0]).await.is_some());
    assert!(cognito_user(&subs[0]).await.is_some());
    app.assert_invariants().await;
}

// ---- CloudTrail's DeleteUser records ----

#[tokio::test]
async fn a_delete_user_record_erases_that_user_once_the_pool_confirms_it() {
    let moto = Moto::start();
    let addresses = addresses(2);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    app.add_address(&subs[0], "zero.pending@example.com").await;
    delete_in_cognito(&cognito, &pool, &subs[0]).await;

    let answer = app.cognito_delete_user_record(Some(&subs[0])).await.unwrap();
    assert_eq!(answer["erased"], 1, "{answer}");
    assert_eq!(status_of(&app, &subs[0]).await, None);
    assert!(is_free(&app, &addresses[0]).await);
    assert!(is_free(&app, "zero.pending@example.com").await);
    // A replay, or a record of a user erased already, changes nothing.
    let items = app.item_count().await;
    let replay = app.cognito_delete_user_record(Some(&subs[0])).await.unwrap();
    assert_eq!(replay["erased"], 0, "{replay}");
    assert_eq!(app.item_count().await, items);
    assert_eq!(status_of(&app, &subs[1]).await, Some(UserStatus::Active));
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_record_for_a_user_the_pool_still_has_or_another_pools_user_changes_nothing() {
    let moto = Moto::start();
    let addresses = addresses(2);
    let (app, _cognito, _pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    let items = app.item_count().await;
    // Still in this pool: a record from another pool with the same sub, or a forged one.
    let still = app.cognito_delete_user_record(Some(&subs[0])).await.unwrap();
    assert_eq!(still["erased"], 0, "{still}");
    // Another pool's user: not in this pool, and no profile here.
    let other = app.cognito_delete_user_record(Some(NOBODY)).await.unwrap();
    assert_eq!(other["erased"], 0, "{other}");
    assert_eq!(app.item_count().await, items);
    for sub in &subs {
        assert_eq!(status_of(&app, sub).await, Some(UserStatus::Active));
    }
}

#[tokio::test]
async fn an_old_record_never_touches_the_user_who_signed_up_again_with_the_address() {
    let moto = Moto::start();
    let addresses = addresses(1);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // Deleted in Cognito, erased by the pass, then signed up again: a new sub.
    delete_in_cognito(&cognito, &pool, &subs[0]).await;
    let pass = app.reconcile_users().await.unwrap();
    assert_eq!(pass["tally"]["erased"], 1, "{pass}");
    let again = users_added(&cognito, &pool, &addresses).await;
    app.sign_up(&again[0], &addresses[0]).await;
    // The first deletion's record arrives late (or is replayed).
    let late = app.cognito_delete_user_record(Some(&subs[0])).await.unwrap();
    assert_eq!(late["erased"], 0, "{late}");
    assert_eq!(status_of(&app, &again[0]).await, Some(UserStatus::Active));
    assert!(!is_free(&app, &addresses[0]).await, "the new owner keeps the address");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_record_that_names_no_user_starts_a_pass_at_once() {
    let moto = Moto::start();
    let addresses = addresses(3);
    let (app, cognito, pool, subs) = Box::pin(pool_and_table(&moto, &addresses)).await;
    // A pass completed a moment ago: none is due for a day.
    let first = app.reconcile_users().await.unwrap();
    assert_eq!(first["complete"], true);
    delete_in_cognito(&cognito, &pool, &subs[2]).await;
    app.clock.advance(60);
    assert_eq!(app.reconcile_users().await.unwrap()["idle"], true);
    let answer = app.cognito_delete_user_record(None).await.unwrap();
    assert_eq!(
        (&answer["complete"], &answer["tally"]["erased"]),
        (&true.into(), &1.into()),
        "{answer}"
    );
    assert_eq!(status_of(&app, &subs[2]).await, None);
}
