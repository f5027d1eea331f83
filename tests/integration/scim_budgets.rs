//! No organization spends another's budget, and a directory's page costs
//! what it returns (issue 56, items 2 and 3), against DynamoDB Local and
//! moto's Cognito: each organization's directory makes at most its share of
//! the deployment's pace and its day's cap; an organization has at most its
//! members' cap, a condition of each join; `totalResults` is the kept count,
//! and a sequential walk's pages each evaluate about as many members as
//! they show, the last as the first.

use futures::future::join_all;
use serde_json::json;
use user_service::domain::UserId;
use user_service::provisioning;
use user_service::store::ScimClient;

use crate::scim_users::{Directory, refused_with};

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A second organization in the same deployment, with a verified domain of
/// its own and a live token: its client, and its domain.
async fn another_organization(dir: &Directory) -> (ScimClient, String) {
    let domain = format!("globex-{}.example", &sub()[..8]);
    let (client, _) = dir
        .app
        .directory_organization(&sub(), &domain, &format!("g-{}", &sub()[..8]))
        .await;
    (client, domain)
}

fn user_at(local: &str, domain: &str) -> serde_json::Value {
    json!({ "userName": local, "emails": [{ "value": format!("{local}@{domain}"), "primary": true }] })
}

#[tokio::test]
async fn a_looping_directory_keeps_to_its_share_and_the_other_keeps_its_own() {
    let dir = Box::pin(Directory::start_with(|c| {
        c.scim_creates_per_second = 6;
        c.scim_creates_per_organization_per_second = 3;
    }))
    .await;
    let (globex, globex_domain) = another_organization(&dir).await;
    // One second (the clock stands still): Acme's directory sends 12 at
    // once, Globex's 3 beside them.
    let acme = join_all((0..12).map(|i| dir.post(&dir.client, user_at(&format!("a{i}"), &dir.domain))));
    let globex_made = join_all((0..3).map(|i| dir.post(&globex, user_at(&format!("g{i}"), &globex_domain))));
    let (acme, globex_made) = tokio::join!(acme, globex_made);
    let made = |results: &[Result<_, provisioning::Refused>]| results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(made(&acme), 3, "Acme makes its share, no more");
    assert_eq!(made(&globex_made), 3, "Globex keeps its own share");
    for refused in acme.into_iter().filter_map(Result::err) {
        assert_eq!((refused.error.status, refused.retry_after_secs), (429, Some(1)));
    }
    // The next second has room again, for both.
    dir.app.clock.advance(1);
    dir.post(&dir.client, user_at("a-next", &dir.domain)).await.unwrap();
    dir.post(&globex, user_at("g-next", &globex_domain)).await.unwrap();
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_directorys_day_is_capped_until_the_next_day_and_a_link_is_not_counted() {
    let dir = Box::pin(Directory::start_with(|c| c.scim_creates_per_organization_per_day = 2)).await;
    for local in ["a1", "a2"] {
        dir.post(&dir.client, user_at(local, &dir.domain)).await.unwrap();
        dir.app.clock.advance(1);
    }
    let refused = refused_with(dir.post(&dir.client, user_at("a3", &dir.domain)).await, 429);
    let wait = refused.retry_after_secs.unwrap();
    assert!(wait > 1 && wait <= 86_400, "until the next UTC day: {wait}");
    // A person's own account is linked, not made: no Cognito user, not counted.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    dir.post(&dir.client, user_at("grace", &dir.domain)).await.unwrap();
    // Nothing was made for the refused one.
    assert!(
        dir.app
            .store
            .find_by_email(&user_service::domain::EmailAddress::parse(&dir.at("a3")).unwrap())
            .await
            .is_err()
    );
    dir.app.clock.advance(i64::try_from(wait).unwrap());
    dir.post(&dir.client, user_at("a3", &dir.domain)).await.unwrap();
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn an_organization_takes_no_member_past_its_cap_through_its_directory() {
    // The owner and two more.
    let dir = Box::pin(Directory::start_with(|c| c.max_members_per_organization = 3)).await;
    dir.post(&dir.client, user_at("a1", &dir.domain)).await.unwrap();
    let second = dir.post(&dir.client, user_at("a2", &dir.domain)).await.unwrap();
    let full = refused_with(dir.post(&dir.client, user_at("a3", &dir.domain)).await, 409);
    assert!(full.error.detail.contains("most members"), "{}", full.error);
    // Nor by a link.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    refused_with(dir.post(&dir.client, user_at("grace", &dir.domain)).await, 409);
    // One leaves: one may join.
    provisioning::delete(&dir.app.store, &dir.client, &second.id, None, dir.app.clock.now())
        .await
        .unwrap();
    dir.post(&dir.client, user_at("grace", &dir.domain)).await.unwrap();
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_walk_of_pages_reads_each_member_once_and_counts_from_the_kept_total() {
    let dir = Box::pin(Directory::start_with(|c| {
        c.scim_creates_per_second = 1000;
        c.scim_creates_per_organization_per_second = 1000;
    }))
    .await;
    const MEMBERS: usize = 24;
    const PAGE: u32 = 5;
    for i in 0..MEMBERS {
        dir.post(&dir.client, user_at(&format!("m{i:02}"), &dir.domain))
            .await
            .unwrap();
    }
    let list = |start: u64, active: Option<bool>| {
        let store = dir.app.store.clone();
        let (org, now) = (dir.org, dir.app.clock.now());
        async move { Box::pin(store.scim_list(org, start, PAGE, active, now)).await.unwrap() }
    };
    // The walk Okta and Entra ID make: each page from where the last ended.
    let mut seen = Vec::new();
    let mut costs = Vec::new();
    let mut start = 1;
    loop {
        let page = Box::pin(list(start, None)).await;
        assert_eq!(page.total, MEMBERS as u64, "totalResults is the kept count");
        costs.push(page.evaluated);
        if page.members.is_empty() {
            break;
        }
        seen.extend(page.members.iter().map(|m| m.id.clone()));
        start += u64::from(PAGE);
    }
    let mut unique: Vec<&str> = seen.iter().map(UserId::as_str).collect();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (MEMBERS, MEMBERS), "each member once");
    // Each page evaluates what it shows, and the owner (not the directory's) at most once more.
    let first = costs[0];
    assert!(first <= u64::from(PAGE) + 1, "{costs:?}");
    for cost in &costs[1..costs.len() - 1] {
        assert!(
            *cost <= u64::from(PAGE) + 1,
            "a later page costs what the first does: {costs:?}"
        );
    }
    // Out of order (no page ended there): a walk from the first, still right.
    let jump = Box::pin(list(18, None)).await;
    assert!(jump.evaluated >= 17, "{}", jump.evaluated);
    assert_eq!(jump.members.first().map(|m| &m.id), seen.get(17));
    // Suspended and active views count from the same counts.
    let one = seen[3].clone();
    let patch = user_service::scim::Patch::parse(
        &json!({ "Operations": [{ "op": "replace", "path": "active", "value": false }] }),
    )
    .unwrap();
    provisioning::update(
        &dir.app.store,
        &dir.client,
        &one,
        &provisioning::Change::Patch(patch),
        None,
        dir.app.clock.now(),
    )
    .await
    .unwrap();
    assert_eq!(Box::pin(list(1, Some(false))).await.total, 1);
    assert_eq!(Box::pin(list(1, Some(true))).await.total, MEMBERS as u64 - 1);
    provisioning::delete(&dir.app.store, &dir.client, &seen[0], None, dir.app.clock.now())
        .await
        .unwrap();
    assert_eq!(Box::pin(list(1, None)).await.total, MEMBERS as u64 - 1);
    dir.app.assert_invariants().await;
}
