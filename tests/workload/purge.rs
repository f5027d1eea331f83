//! Deleting a large organization: its members go in short runs of the
//! purge, each stopping at its deadline and the next going on, until the
//! organization is gone; every rule holds after each run. `ORG_PURGE_MEMBERS`
//! sets the size (120 in `make test`, 10,000 in `make org-purge-at-scale`),
//! `ORG_PURGE_RUN_MS` each run's time (a
//! deployed run has 55 s). The time taken is a figure
//! (target/reliability/workload.json), never asserted.

use std::time::{Duration, Instant};

use futures::StreamExt;
use integration_tests::invariants;
use integration_tests::test_app::TestApp;
use serde_json::json;
use user_service::domain::{Actor, IfMatch, NewOrganization, NewUser, OrgName, Role, Slug, UserId};

use crate::number;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_organization_is_deleted_in_short_runs() {
    let members = usize::try_from(number("ORG_PURGE_MEMBERS", 120)).unwrap();
    let run_for = Duration::from_millis(number("ORG_PURGE_RUN_MS", 250));
    let app = TestApp::spawn().await;
    let now = app.clock.now();
    let owner = UserId::parse_sub(&uuid::Uuid::new_v4().to_string()).unwrap();
    let person = |user: &UserId, n: usize| NewUser {
        user_id: user.clone(),
        email: user_service::domain::EmailAddress::parse(&format!("member{n}@example.com")).unwrap(),
        first_name: None,
        last_name: None,
        phone: None,
    };
    app.store.create_user(&person(&owner, 0), now).await.unwrap();
    let new = NewOrganization {
        name: OrgName::parse("Big").unwrap(),
        slug: Slug::parse("big").unwrap(),
    };
    let org = app.store.create_organization(&owner, &new, now).await.unwrap().org_id;
    let started = Instant::now();
    futures::stream::iter(1..members)
        .map(|n| {
            let app = &app;
            async move {
                let user = UserId::parse_sub(&uuid::Uuid::new_v4().to_string()).unwrap();
                app.store.create_user(&person(&user, n), now).await.unwrap();
                app.store
                    .join_organization(org, &user, Role::Member, now)
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let joined_in = started.elapsed().as_secs_f64();

    app.store
        .delete_organization(&Actor::Member(owner.clone()), org, &IfMatch::Any, now)
        .await
        .unwrap();
    let started = Instant::now();
    let (mut runs, mut removed) = (0, 0);
    loop {
        runs += 1;
        let purged = app
            .store
            .purge_organization(org, tokio::time::Instant::now() + run_for)
            .await
            .unwrap();
        removed += purged.removed;
        if purged.finished {
            break;
        }
        assert!(runs < 10_000, "the purge makes no progress");
    }
    let seconds = started.elapsed().as_secs_f64();
    let violations = invariants::violations(app.store.client(), &app.store.config().table_name).await;
    eprintln!(
        "purge: {members} members removed in {seconds:.1} s over {runs} runs of {} ms ({:.0} members a second; \
         the {} joins took {joined_in:.1} s)",
        run_for.as_millis(),
        members as f64 / seconds,
        members - 1,
    );
    crate::figures::record(
        "organization_purge",
        json!({
            "members": members,
            "seconds": (seconds * 100.0).round() / 100.0,
            "runs": runs,
            "run_ms": u64::try_from(run_for.as_millis()).unwrap_or(u64::MAX),
            "members_per_second": (members as f64 / seconds).round(),
            "join_seconds": (joined_in * 100.0).round() / 100.0,
        }),
    );
    assert_eq!(removed, members, "every member, once");
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    assert!(app.store.pending_purges().await.unwrap().is_empty());
}
