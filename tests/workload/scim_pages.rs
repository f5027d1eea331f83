//! A directory's list of a large organization costs what it returns (issue
//! 56, item 3): `SCIM_PAGE_MEMBERS` members (300 in `make test`; 1,000 and
//! 100,000 in `make scim-pages-at-scale`), the first 50 made by the store's
//! own write for a directory's new account and the rest copies of their
//! items, then the first page, a page reached out of
//! order (a walk from the first, which leaves its cursor), and the last
//! page, reached by that cursor as a sequential walk reaches it. The
//! memberships each page evaluates are asserted: the last page's as the
//! first's. Read units (DynamoDB's formula, on the membership items'
//! size) and times against DynamoDB Local are figures, printed, never
//! asserted.

use std::time::Instant;

use futures::StreamExt;
use integration_tests::test_app::TestApp;
use serde_json::json;
use user_service::domain::{EmailAddress, UserId};
use user_service::scim::ScimUser;
use user_service::store::DirectoryAccount;

use crate::number;

const PAGE: u32 = 100;
/// Members made by the store's own write; the rest are copies of the first's items.
const MADE: usize = 50;

/// Writes the items of member `m0` (`sample`) again for each member of
/// `range`: its partition, its claim, both halves of its membership and its
/// directory name, under an id, an address and a userName of its own; then
/// moves the organization's counts by as many.
async fn copies(app: &TestApp, sample: &UserId, range: std::ops::Range<usize>, domain: &str) {
    use aws_sdk_dynamodb::types::AttributeValue;
    if range.is_empty() {
        return;
    }
    let client = app.store.client();
    let table = app.store.config().table_name.clone();
    let all = integration_tests::invariants::scan(client, &table).await;
    let address = format!("m0@{domain}");
    let template: Vec<_> = all
        .into_iter()
        .filter(|item| {
            item.values().any(|v| {
                v.as_s()
                    .is_ok_and(|s| s.contains(sample.as_str()) || s.contains(&address))
            })
        })
        .collect();
    let added = range.len() as i64;
    let items = range.flat_map(|n| {
        let user = uuid::Uuid::new_v4().to_string();
        let own = |s: &str| {
            let s = s
                .replace(sample.as_str(), &user)
                .replace(&address, &format!("m{n}@{domain}"));
            match s.as_str() {
                "m0" => format!("m{n}"),
                _ => s.replace("#m0", &format!("#m{n}")),
            }
        };
        template
            .iter()
            .map(|item| {
                item.iter()
                    .map(|(k, v)| {
                        let v = match v {
                            AttributeValue::S(s) => AttributeValue::S(own(s)),
                            AttributeValue::M(m) => AttributeValue::M(
                                m.iter()
                                    .map(|(k, v)| match v {
                                        AttributeValue::S(s) => (k.clone(), AttributeValue::S(own(s))),
                                        other => (k.clone(), other.clone()),
                                    })
                                    .collect(),
                            ),
                            other => other.clone(),
                        };
                        (k.clone(), v)
                    })
                    .collect::<std::collections::HashMap<_, _>>()
            })
            .collect::<Vec<_>>()
    });
    integration_tests::ddb::put_items(client, &table, items).await;
    let org = app.store.my_organizations(sample).await.unwrap()[0].organization.org_id;
    let key = user_service::store::keys::org_counts_key(org);
    client
        .update_item()
        .table_name(&table)
        .set_key(Some(key))
        .update_expression("ADD #members :n, #directoryMembers :n")
        .expression_attribute_names("#members", "members")
        .expression_attribute_names("#directoryMembers", "directoryMembers")
        .expression_attribute_values(":n", AttributeValue::N(added.to_string()))
        .send()
        .await
        .unwrap();
}

/// An item's size by DynamoDB's formula: each name, and each value (strings
/// by length, numbers a byte per two digits and one, booleans one, maps
/// three and their entries).
fn item_size(item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>) -> u64 {
    use aws_sdk_dynamodb::types::AttributeValue as V;
    fn value(v: &V) -> u64 {
        match v {
            V::S(s) => s.len() as u64,
            V::N(n) => n.len().div_ceil(2) as u64 + 1,
            V::Bool(_) | V::Null(_) => 1,
            V::M(m) => 3 + m.iter().map(|(k, v)| k.len() as u64 + value(v) + 1).sum::<u64>(),
            V::L(l) => 3 + l.iter().map(|v| value(v) + 1).sum::<u64>(),
            _ => 0,
        }
    }
    item.iter().map(|(k, v)| k.len() as u64 + value(v)).sum()
}

/// An eventually consistent read's units for `bytes` read by one Query.
fn read_units(bytes: u64) -> f64 {
    bytes.div_ceil(4096) as f64 / 2.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_a_large_organization_costs_what_it_returns() {
    let members = usize::try_from(number("SCIM_PAGE_MEMBERS", 300)).unwrap();
    let app = TestApp::spawn_with(|c| c.max_members_per_organization = 10_000_000).await;
    let now = app.clock.now();
    let domain = "pages.example";
    let owner = uuid::Uuid::new_v4().to_string();
    let (client, _) = app.directory_organization(&owner, domain, "pages").await;
    let org = client.org;
    // The first members as a directory's creates write them (Cognito's part
    // aside); the rest their items again under ids, addresses and names of
    // their own (BatchWriteItem: 100,000 creates one by one take hours here),
    // and the organization's counts moved as their joins would have.
    let made = members.min(MADE);
    let make = |n: usize| {
        let (app, client) = (&app, &client);
        async move {
            let user = UserId::parse_sub(&uuid::Uuid::new_v4().to_string()).unwrap();
            let address = EmailAddress::parse(&format!("m{n}@{domain}")).unwrap();
            let scim = ScimUser::from_json(&json!({ "userName": format!("m{n}") })).unwrap();
            let account = DirectoryAccount {
                user: &user,
                scim: &scim,
                primary: &address,
                addresses: std::slice::from_ref(&address),
                provisioned: true,
            };
            app.store.scim_create_account(client, &account, now).await.unwrap();
            user
        }
    };
    let started = Instant::now();
    let sample = make(0).await;
    futures::stream::iter(1..made)
        .map(make)
        .buffer_unordered(16)
        .collect::<Vec<UserId>>()
        .await;
    copies(&app, &sample, made..members, domain).await;
    let made_in = started.elapsed().as_secs_f64();
    // A membership item as stored, for the read units of what a page evaluates.
    let member_bytes = {
        let key = user_service::store::keys::member_key(org, &sample);
        let got = app
            .store
            .client()
            .get_item()
            .table_name(&app.store.config().table_name)
            .set_key(Some(key))
            .send()
            .await
            .unwrap();
        item_size(&got.item.expect("the sample's membership"))
    };

    let page = |start: u64| {
        let store = app.store.clone();
        async move {
            let started = Instant::now();
            let page = store.scim_list(org, start, PAGE, None, now).await.unwrap();
            (page, started.elapsed().as_secs_f64() * 1000.0)
        }
    };
    let total = members as u64;
    let last = total.saturating_sub(u64::from(PAGE)) + 1;
    let before_last = last.saturating_sub(u64::from(PAGE)).max(2);
    assert!(members > 2 * PAGE as usize, "SCIM_PAGE_MEMBERS: more than two pages");
    // Out of order (asked first: nothing remembered there), so a walk from
    // the first; it leaves the cursor the next page starts at.
    let (jump, jump_ms) = Box::pin(page(before_last)).await;
    let (end, end_ms) = Box::pin(page(last)).await;
    let (first, first_ms) = Box::pin(page(1)).await;
    for p in [&first, &jump, &end] {
        assert_eq!(p.total, total, "totalResults is the kept count");
    }
    assert_eq!(first.members.len(), PAGE.min(members as u32) as usize);
    assert_eq!(end.members.len(), (total - last + 1) as usize);
    // The last page, reached as a sequential walk reaches it, evaluates what
    // the first does (the owner, not the directory's, at most once more).
    assert!(
        end.evaluated <= first.evaluated + 1 && end.evaluated <= u64::from(PAGE) + 1,
        "first {}, last {}",
        first.evaluated,
        end.evaluated
    );
    assert!(
        jump.evaluated >= before_last - 1,
        "an out-of-order page walks from the first: {}",
        jump.evaluated
    );
    eprintln!(
        "scim pages: {members} members made and loaded in {made_in:.1} s; a membership item {member_bytes} bytes; \
         page 1: {} evaluated, {:.1} read units, {first_ms:.0} ms; \
         page at {last} by its cursor: {} evaluated, {:.1} read units, {end_ms:.0} ms; \
         out of order at {before_last}: {} evaluated, {:.1} read units, {jump_ms:.0} ms \
         (each page also reads the counts and the cursor, 1 read unit each, and writes the next cursor, 1 write unit)",
        first.evaluated,
        read_units(first.evaluated * member_bytes),
        end.evaluated,
        read_units(end.evaluated * member_bytes),
        jump.evaluated,
        read_units(jump.evaluated * member_bytes),
    );
}
