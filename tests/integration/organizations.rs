//! Organizations through their routes, against DynamoDB Local: creation and
//! its slug, reading, renaming under If-Match, roles and the last-owner rule,
//! leaving and removal, deletion and its purge, and what a user's own
//! lifecycle (suspension, export, erasure) does to their memberships. The
//! races are forced where they can be: each runs many times at once.

use std::time::Duration;

use futures::future::join_all;
use serde_json::{Value, json};
use tokio::time::Instant;
use user_service::domain::{OrgId, Role, UserId, UserStatus};

use crate::handler_support::*;

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

/// A signed-up user with a fresh sub and a verified primary.
async fn person(app: &TestApp, label: &str) -> String {
    let s = sub();
    app.sign_up(&s, &format!("{label}.{s}@example.com")).await;
    s
}

/// An organization created by `owner`, by its id.
async fn organization(app: &TestApp, owner: &str, slug: &str) -> String {
    let reply = app.create_organization(owner, "Acme", slug).await;
    reply.assert_status(201);
    reply.body["orgId"].as_str().unwrap().to_owned()
}

/// `member` joins `org` in `role`, as an accepted invitation makes them.
async fn join(app: &TestApp, org: &str, member: &str, role: Role) {
    let joined = app
        .store
        .join_organization(OrgId::parse(org).unwrap(), &user(member), role, app.clock.now())
        .await
        .unwrap();
    assert!(joined);
}

fn roles(page: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = page["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["userId"].as_str().unwrap().to_owned(),
                m["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn a_user_creates_an_organization_and_owns_it() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let reply = app.create_organization(&ada, "  Acme  ", "acme").await;
    reply.assert_status(201);
    let org = reply.body["orgId"].as_str().unwrap().to_owned();
    assert_eq!(reply.header("location"), Some(format!("/organizations/{org}").as_str()));
    assert_eq!(reply.header("etag"), Some("\"1\""));
    assert_eq!(reply.body["name"], "Acme", "trimmed as a name is");
    assert_eq!(reply.body["slug"], "acme");
    assert_eq!(
        (reply.body["role"].clone(), reply.body["owners"].clone()),
        (json!("owner"), json!(1))
    );

    let read = app.get_organization(&ada, &org).await;
    read.assert_status(200);
    assert_eq!(read.body["orgId"], org.as_str());
    assert_eq!(read.header("etag"), Some("\"1\""));
    let mine = app.list_my_organizations(&ada).await;
    mine.assert_status(200);
    assert_eq!(mine.body["organizations"][0]["orgId"], org.as_str());
    assert_eq!(mine.body["organizations"][0]["role"], "owner");

    // The slug is the deployment's: nobody else takes it, in any case.
    let bob = person(&app, "bob").await;
    let before = app.item_count().await;
    app.create_organization(&bob, "Other", "acme")
        .await
        .assert_problem(409, "SLUG_TAKEN");
    for (name, slug) in [
        ("Acme", "Acme"),
        ("Acme", "ac"),
        ("Acme", "-acme"),
        ("", "acme-2"),
        ("Acme", "a--b"),
    ] {
        app.create_organization(&bob, name, slug)
            .await
            .assert_problem(400, "VALIDATION_FAILED");
    }
    assert_eq!(app.item_count().await, before, "nothing written on a refusal");
    assert_eq!(app.list_my_organizations(&bob).await.body["organizations"], json!([]));
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_stranger_learns_nothing_and_a_member_cannot_manage() {
    let app = TestApp::spawn().await;
    let (ada, bob, eve) = (
        person(&app, "ada").await,
        person(&app, "bob").await,
        person(&app, "eve").await,
    );
    let org = organization(&app, &ada, "acme").await;
    let other = organization(&app, &eve, "evil").await;
    join(&app, &org, &bob, Role::Member).await;

    // Eve owns another organization: she reads, lists and changes nothing of this one.
    app.get_organization(&eve, &org)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.list_members(&eve, &org, &[])
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.update_organization(&eve, &org, "\"1\"", json!({ "name": "Mine" }))
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.set_member_role(&eve, &org, &eve, "owner")
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.remove_member(&eve, &org, &bob)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.delete_organization(&eve, &org, "*")
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    // Nor does an id that names nothing tell itself apart from one she is not in.
    let nothing = OrgId::new().to_string();
    app.get_organization(&eve, &nothing)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.get_organization(&eve, "acme")
        .await
        .assert_problem(400, "VALIDATION_FAILED");

    // Bob, a plain member, reads it and nothing more.
    app.get_organization(&bob, &org).await.assert_status(200);
    app.list_members(&bob, &org, &[])
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.update_organization(&bob, &org, "\"1\"", json!({ "name": "Bob's" }))
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.set_member_role(&bob, &org, &bob, "admin")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.remove_member(&bob, &org, &ada)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.delete_organization(&bob, &org, "*")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.get_organization(&bob, &other)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");

    let read = app.get_organization(&ada, &org).await;
    assert_eq!(
        (read.body["name"].clone(), read.body["version"].clone()),
        (json!("Acme"), json!(1))
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn owners_and_admins_rename_under_if_match() {
    let app = TestApp::spawn().await;
    let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
    let org = organization(&app, &ada, "acme").await;
    join(&app, &org, &bob, Role::Admin).await;

    let renamed = app
        .update_organization(&bob, &org, "\"1\"", json!({ "name": "Acme EU" }))
        .await;
    renamed.assert_status(200);
    assert_eq!(renamed.header("etag"), Some("\"2\""));
    assert_eq!(renamed.body["name"], "Acme EU");
    // The version Ada read is gone: her edit is refused, not lost over Bob's.
    app.update_organization(&ada, &org, "\"1\"", json!({ "name": "Acme Ltd" }))
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.update_organization(&ada, &org, "\"2\"", json!({ "name": "Acme Ltd" }))
        .await
        .assert_status(200);
    let event = Event::of(&UPDATE_ORGANIZATION)
        .caller(&ada)
        .path_param("orgId", &org)
        .body(json!({ "name": "No If-Match" }))
        .without_header("if-match");
    app.send(&UPDATE_ORGANIZATION, event)
        .await
        .assert_problem(428, "PRECONDITION_REQUIRED");
    app.update_organization(&ada, &org, "\"3\"", json!({ "name": "x", "slug": "other" }))
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let read = app.get_organization(&ada, &org).await;
    assert_eq!(
        (read.body["name"].clone(), read.body["version"].clone()),
        (json!("Acme Ltd"), json!(3))
    );
}

#[tokio::test]
async fn owners_alone_touch_owners_and_the_last_owner_stays() {
    let app = TestApp::spawn().await;
    let (ada, bob, cy) = (
        person(&app, "ada").await,
        person(&app, "bob").await,
        person(&app, "cy").await,
    );
    let org = organization(&app, &ada, "acme").await;
    join(&app, &org, &bob, Role::Admin).await;
    join(&app, &org, &cy, Role::Member).await;

    // An admin manages members below owner, not owners.
    app.set_member_role(&bob, &org, &cy, "admin").await.assert_status(200);
    app.set_member_role(&bob, &org, &cy, "member").await.assert_status(200);
    app.set_member_role(&bob, &org, &cy, "owner")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.set_member_role(&bob, &org, &bob, "owner")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.set_member_role(&bob, &org, &ada, "admin")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.remove_member(&bob, &org, &ada)
        .await
        .assert_problem(403, "ROLE_REQUIRED");

    // The last owner cannot leave, step down or be removed.
    app.remove_member(&ada, &org, &ada)
        .await
        .assert_problem(409, "LAST_OWNER");
    app.set_member_role(&ada, &org, &ada, "admin")
        .await
        .assert_problem(409, "LAST_OWNER");
    let before = app.list_members(&ada, &org, &[]).await;
    // With a second owner, the first may step down.
    let promoted = app.set_member_role(&ada, &org, &bob, "owner").await;
    promoted.assert_status(200);
    assert_eq!(promoted.body["role"], "owner");
    app.set_member_role(&ada, &org, &ada, "member").await.assert_status(200);
    assert_eq!(app.get_organization(&bob, &org).await.body["owners"], 1);
    let after = roles(&app.list_members(&bob, &org, &[]).await.body);
    assert_eq!(
        after,
        {
            let mut expected = vec![
                (ada.clone(), "member".to_owned()),
                (bob.clone(), "owner".to_owned()),
                (cy.clone(), "member".to_owned()),
            ];
            expected.sort();
            expected
        },
        "from {before:?}"
    );
    // A member leaves; an owner removes another; nobody is removed twice.
    app.remove_member(&cy, &org, &cy).await.assert_status(204);
    app.remove_member(&cy, &org, &cy)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.remove_member(&bob, &org, &ada).await.assert_status(204);
    app.get_organization(&ada, &org)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    assert_eq!(app.list_my_organizations(&ada).await.body["organizations"], json!([]));
    app.assert_invariants().await;
}

#[tokio::test]
async fn two_owners_demoting_each_other_at_once_leave_one_owner() {
    let app = TestApp::spawn().await;
    for round in 0..8 {
        let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
        let org = organization(&app, &ada, &format!("race-{round}")).await;
        join(&app, &org, &bob, Role::Owner).await;
        let (a, b) = tokio::join!(
            app.set_member_role(&ada, &org, &bob, "member"),
            app.set_member_role(&bob, &org, &ada, "member"),
        );
        let mut statuses = [a.status, b.status];
        statuses.sort_unstable();
        assert_eq!(statuses[0], 200, "one demotion lands: {} / {}", a.body, b.body);
        assert!(
            [403, 409].contains(&statuses[1]),
            "the other is refused, its actor no longer an owner or the last: {} / {}",
            a.body,
            b.body
        );
        let page = app.list_members(&ada, &org, &[]).await;
        let page = if page.status == 200 {
            page
        } else {
            app.list_members(&bob, &org, &[]).await
        };
        let owners = roles(&page.body).iter().filter(|(_, r)| r == "owner").count();
        assert_eq!(owners, 1, "round {round}");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn concurrent_joins_give_one_membership() {
    let app = TestApp::spawn().await;
    let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
    let org = organization(&app, &ada, "acme").await;
    let id = OrgId::parse(&org).unwrap();
    let bob_id = user(&bob);
    let joins =
        join_all((0..20).map(|_| app.store.join_organization(id, &bob_id, Role::Member, app.clock.now()))).await;
    let joined = joins.into_iter().map(Result::unwrap).filter(|j| *j).count();
    assert_eq!(joined, 1);
    let page = app.list_members(&ada, &org, &[]).await;
    assert_eq!(roles(&page.body).len(), 2);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_user_belongs_to_at_most_the_maximum() {
    let app = TestApp::spawn_with(|c| c.max_organizations_per_user = 2).await;
    let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
    organization(&app, &ada, "one").await;
    let two = organization(&app, &ada, "two").await;
    app.create_organization(&ada, "Three", "three")
        .await
        .assert_problem(409, "ORGANIZATION_LIMIT_REACHED");
    // The refused creation wrote nothing: its slug is free.
    organization(&app, &bob, "three").await;
    let theirs = organization(&app, &bob, "bobs").await;
    let joined = app
        .store
        .join_organization(
            OrgId::parse(&theirs).unwrap(),
            &user(&ada),
            Role::Member,
            app.clock.now(),
        )
        .await;
    assert!(
        matches!(joined, Err(user_service::StoreError::OrganizationLimitReached)),
        "{joined:?}"
    );
    // Leaving makes room (another owner first: Ada is the last).
    let cy = person(&app, "cy").await;
    join(&app, &two, &cy, Role::Owner).await;
    app.remove_member(&ada, &two, &ada).await.assert_status(204);
    join(&app, &theirs, &ada, Role::Member).await;
    app.assert_invariants().await;
}

#[tokio::test]
async fn members_are_listed_a_page_at_a_time() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    let mut everyone = vec![ada.clone()];
    for i in 0..6 {
        let m = person(&app, &format!("m{i}")).await;
        join(&app, &org, &m, Role::Member).await;
        everyone.push(m);
    }
    everyone.sort();
    let mut seen = Vec::new();
    let mut params: Vec<(String, String)> = vec![("limit".into(), "3".into())];
    for _ in 0..4 {
        let query: Vec<(&str, &str)> = params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let page = app.list_members(&ada, &org, &query).await;
        page.assert_status(200);
        seen.extend(roles(&page.body).into_iter().map(|(u, _)| u));
        match page.body["nextAfter"].as_str() {
            Some(after) => params = vec![("limit".into(), "3".into()), ("after".into(), after.to_owned())],
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, everyone);
    for bad in [[("limit", "0")], [("limit", "101")], [("after", "nobody")]] {
        app.list_members(&ada, &org, &bad)
            .await
            .assert_problem(400, "VALIDATION_FAILED");
    }
}

#[tokio::test]
async fn a_suspended_owner_keeps_the_membership_but_cannot_act() {
    let app = TestApp::spawn().await;
    let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
    let org = organization(&app, &ada, "acme").await;
    join(&app, &org, &bob, Role::Member).await;
    app.store
        .set_status(&user(&ada), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.update_organization(&ada, &org, "*", json!({ "name": "Mine" }))
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.set_member_role(&ada, &org, &bob, "owner")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.remove_member(&ada, &org, &bob)
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.delete_organization(&ada, &org, "*")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&user(&ada), UserStatus::Active, app.clock.now())
        .await
        .unwrap();
    assert_eq!(app.get_organization(&ada, &org).await.body["role"], "owner");
}

#[tokio::test]
async fn a_deployment_admin_acts_on_any_organization() {
    let app = TestApp::spawn().await;
    let (ada, root) = (person(&app, "ada").await, person(&app, "root").await);
    let org = organization(&app, &ada, "acme").await;
    let f = &UPDATE_ORGANIZATION;
    let event = app
        .as_deployment_admin(f, &root)
        .path_param("orgId", &org)
        .header("if-match", "*")
        .body(json!({ "name": "Renamed by support" }));
    app.send(f, event).await.assert_status(200);
    let f = &GET_ORGANIZATION;
    let read = app
        .send(f, app.as_deployment_admin(f, &root).path_param("orgId", &org))
        .await;
    read.assert_status(200);
    assert_eq!(
        (read.body["name"].clone(), read.body["role"].clone()),
        (json!("Renamed by support"), Value::Null)
    );
    // The group alone outlives a suspension: the write checks the admin's profile.
    app.store
        .set_status(&user(&root), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    let f = &DELETE_ORGANIZATION;
    let event = app
        .as_deployment_admin(f, &root)
        .path_param("orgId", &org)
        .header("if-match", "*");
    app.send(f, event).await.assert_problem(403, "ACCOUNT_INACTIVE");
}

#[tokio::test]
async fn the_last_owner_cannot_close_their_account() {
    let app = TestApp::spawn().await;
    let (ada, bob) = (person(&app, "ada").await, person(&app, "bob").await);
    let org = organization(&app, &ada, "acme").await;
    let kept = organization(&app, &bob, "kept").await;
    join(&app, &org, &bob, Role::Member).await;
    join(&app, &kept, &ada, Role::Admin).await;
    let before = app.item_count().await;
    app.delete_account(&ada, "*").await.assert_problem(409, "LAST_OWNER");
    assert_eq!(app.item_count().await, before, "refused before anything was removed");
    app.set_member_role(&ada, &org, &bob, "owner").await.assert_status(200);
    app.delete_account(&ada, "*").await.assert_status(204);
    // Both halves of both memberships are gone; the organizations live on.
    assert_eq!(
        roles(&app.list_members(&bob, &org, &[]).await.body),
        vec![(bob.clone(), "owner".to_owned())]
    );
    assert_eq!(
        roles(&app.list_members(&bob, &kept, &[]).await.body),
        vec![(bob.clone(), "owner".to_owned())]
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn the_last_owner_of_an_organization_being_deleted_may_close_their_account() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    app.delete_organization(&ada, &org, "*").await.assert_status(202);
    // Before the purge has removed her: the organization keeps no owner now.
    app.delete_account(&ada, "*").await.assert_status(204);
    app.purge_organizations().await.unwrap();
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_user_gone_from_cognito_leaves_even_as_the_last_owner() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    app.store
        .delete_user(
            &user(&ada),
            user_service::store::Deleter::GoneFromCognito,
            app.clock.now(),
        )
        .await
        .unwrap();
    let violations =
        integration_tests::invariants::violations(app.store.client(), &app.store.config().table_name).await;
    assert_eq!(
        violations,
        vec![format!("organization {org} has no owner")],
        "erased everywhere; the organization waits for a deployment admin"
    );
}

#[tokio::test]
async fn the_export_lists_memberships() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    let export = app.export_account(&ada).await;
    export.assert_status(200);
    assert_eq!(
        export.body["memberships"],
        json!([{
            "orgId": org,
            "role": "owner",
            "joinedAt": export.body["memberships"][0]["joinedAt"],
            // No directory made or linked Ada: nothing of one, and no suspension.
            "suspended": false,
            "directory": null,
        }])
    );
}

#[tokio::test]
async fn a_deleted_organization_is_gone_at_once_and_purged_in_rounds() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    let mut members = Vec::new();
    for i in 0..40 {
        let m = person(&app, &format!("m{i}")).await;
        join(&app, &org, &m, Role::Member).await;
        members.push(m);
    }
    app.delete_organization(&ada, &org, "\"2\"")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_organization(&ada, &org, "\"1\"").await.assert_status(202);
    // Gone to every reader, closed to joins, and its slug free, before any purge.
    app.get_organization(&ada, &org)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    assert_eq!(
        app.list_my_organizations(&members[0]).await.body["organizations"],
        json!([])
    );
    let late = person(&app, "late").await;
    let joined = app
        .store
        .join_organization(OrgId::parse(&org).unwrap(), &user(&late), Role::Member, app.clock.now())
        .await;
    assert!(
        matches!(joined, Err(user_service::StoreError::OrganizationNotFound)),
        "{joined:?}"
    );
    organization(&app, &late, "acme").await;

    // A run out of time leaves the rest for the next, writing nothing.
    let id = OrgId::parse(&org).unwrap();
    let before = app.item_count().await;
    let first = app.store.purge_organization(id, Instant::now()).await.unwrap();
    assert_eq!((first.removed, first.finished), (0, false));
    assert_eq!(app.item_count().await, before);
    assert_eq!(app.store.pending_purges().await.unwrap(), vec![id]);
    let rest = app
        .store
        .purge_organization(id, Instant::now() + Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!((rest.removed, rest.finished), (41, true));
    let again = app
        .store
        .purge_organization(id, Instant::now() + Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (again.removed, again.finished),
        (0, true),
        "a repeated run finds nothing"
    );
    assert!(app.store.pending_purges().await.unwrap().is_empty());
    for m in &members {
        let export = app.export_account(m).await;
        assert_eq!(export.body["memberships"], json!([]), "both halves and the count go");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_organization_deleted_while_members_join_keeps_none() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    let id = OrgId::parse(&org).unwrap();
    let mut joiners = Vec::new();
    for i in 0..20 {
        joiners.push(user(&person(&app, &format!("j{i}")).await));
    }
    let joins = join_all(
        joiners
            .iter()
            .map(|u| app.store.join_organization(id, u, Role::Member, app.clock.now())),
    );
    let (joins, deleted) = tokio::join!(joins, app.delete_organization(&ada, &org, "*"));
    deleted.assert_status(202);
    for joined in joins {
        assert!(
            matches!(joined, Ok(true) | Err(user_service::StoreError::OrganizationNotFound)),
            "{joined:?}"
        );
    }
    let purged = app
        .store
        .purge_organization(id, Instant::now() + Duration::from_secs(60))
        .await
        .unwrap();
    assert!(purged.finished);
    app.assert_invariants().await;
    let count = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .iter()
        .filter(|item| {
            user_service::store::keys::key_string(item, "SK").is_some_and(|sk| sk.starts_with("MEMBERSHIP#"))
        })
        .count();
    assert_eq!(count, 0);
}

#[tokio::test]
async fn the_schedule_finishes_what_a_run_leaves() {
    let app = TestApp::spawn().await;
    let ada = person(&app, "ada").await;
    let org = organization(&app, &ada, "acme").await;
    join(&app, &org, &person(&app, "bob").await, Role::Member).await;
    let idle = app.purge_organizations().await.unwrap();
    assert_eq!(idle, json!({ "pending": 0, "finished": 0, "removed": 0 }));
    app.delete_organization(&ada, &org, "*").await.assert_status(202);
    let run = app.purge_organizations().await.unwrap();
    assert_eq!(run, json!({ "pending": 1, "finished": 1, "removed": 2 }));
    assert_eq!(
        app.purge_organizations().await.unwrap()["pending"],
        0,
        "nothing left behind"
    );
    assert_eq!(app.export_account(&ada).await.body["memberships"], json!([]));
    app.assert_invariants().await;
}

/// Every item of the table by its key; compared as items, whatever order
/// their attributes (and their maps') come in.
async fn every_item(app: &TestApp) -> std::collections::BTreeMap<(String, String), user_service::store::keys::Item> {
    use user_service::store::keys;
    integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .into_iter()
        .map(|item| {
            let key = |k| keys::key_string(&item, k).unwrap_or_default().to_owned();
            ((key(keys::PK), key(keys::SK)), item)
        })
        .collect()
}

/// A member the organization's directory suspended is made neither admin nor
/// owner (issue: delegated power stays bounded, item 7): promoted, they would
/// be an admin or owner with no power who still counted toward the
/// last-owner rule. The promotion's own write refuses it (`409
/// MEMBER_SUSPENDED`) and writes nothing; the role they hold is no promotion,
/// and once the directory reactivates them they can be promoted.
#[tokio::test]
async fn a_member_the_directory_suspended_is_not_promoted() {
    use user_service::provisioning;
    use user_service::scim::{Patch, ScimUser};

    let dir = Box::pin(crate::scim_users::Directory::start()).await;
    let app = &dir.app;
    let active = |value: bool| {
        let operations = json!({ "Operations": [{ "op": "replace", "path": "active", "value": value }] });
        provisioning::Change::Patch(Patch::parse(&operations).unwrap())
    };
    let made = provisioning::create(
        &app.store,
        app.users.as_ref().unwrap(),
        &dir.client,
        &ScimUser::from_json(&json!({ "userName": "ada", "emails": [{ "value": dir.at("ada"), "primary": true }] }))
            .unwrap(),
        app.clock.now(),
    )
    .await
    .unwrap();
    let ada = made.id.as_str().to_owned();
    let suspended = provisioning::update(&app.store, &dir.client, &made.id, &active(false), None, app.clock.now())
        .await
        .unwrap();
    assert!(!suspended.user.active);
    let org = dir.org.to_string();
    let before = every_item(app).await;

    for role in ["admin", "owner"] {
        app.set_member_role(&dir.owner, &org, &ada, role)
            .await
            .assert_problem(409, "MEMBER_SUSPENDED");
    }
    assert_eq!(every_item(app).await, before, "a refused promotion writes nothing");
    assert_eq!(app.get_organization(&dir.owner, &org).await.body["owners"], 1);
    // The role they hold already is no promotion.
    let same = app.set_member_role(&dir.owner, &org, &ada, "member").await;
    same.assert_status(200);
    assert_eq!(same.body["role"], "member");

    provisioning::update(&app.store, &dir.client, &made.id, &active(true), None, app.clock.now())
        .await
        .unwrap();
    let promoted = app.set_member_role(&dir.owner, &org, &ada, "admin").await;
    promoted.assert_status(200);
    assert_eq!(promoted.body["role"], "admin");
    app.assert_invariants().await;
}
