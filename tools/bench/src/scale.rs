//! Reads at scale: get-profile and get-account with a hundred users, and with a
//! hundred thousand, loaded with BatchWriteItem.
//!
//! The large table holds real items: one user is created by the store's own
//! transaction, and every other user's items are that user's items with the
//! user id, address and address hash of its own.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use integration_tests::{ddb, events};
use user_service::Store;
use user_service::domain::{EmailAddress, UserId};

use crate::plan::Plan;
use crate::proxy::Proxy;
use crate::runtime::Environment;
use crate::stats::Sample;
use crate::user::{seed_user, with_sub};

pub(crate) struct ScaleRow {
    pub(crate) function: &'static str,
    pub(crate) users: usize,
    pub(crate) p50: Sample,
}

const SMALL: usize = 100;

fn user(i: usize) -> String {
    // A fixed, valid UUID per index, so the reads are repeatable.
    format!("00000000-0000-4000-8000-{i:012x}")
}

fn address(i: usize) -> String {
    format!("scale{i}@example.com")
}

/// Loads users `0..n` into the store's table.
async fn load(store: &Store, n: usize) {
    seed_user(store, &user(0), &address(0)).await;
    let client = store.client();
    let table = store.config().table_name.clone();
    let template = integration_tests::invariants::scan(client, &table).await;
    let key = ddb::test_key();
    let hash = |i: usize| key.address_hash(&store.policy().canonical(&EmailAddress::parse(&address(i)).unwrap()));
    let (user0, address0, hash0) = (user(0), address(0), hash(0));
    let items: Vec<HashMap<String, AttributeValue>> = (1..n)
        .flat_map(|i| {
            let (u, a, h) = (user(i), address(i), hash(i));
            template
                .iter()
                .map(|item| {
                    item.iter()
                        .map(|(name, value)| {
                            let value = match value {
                                AttributeValue::S(s) => {
                                    AttributeValue::S(s.replace(&user0, &u).replace(&address0, &a).replace(&hash0, &h))
                                }
                                other => other.clone(),
                            };
                            (name.clone(), value)
                        })
                        .collect()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    ddb::put_items(client, &table, items).await;
}

pub(crate) async fn run(plan: &Plan, proxy: &Proxy) -> Vec<ScaleRow> {
    let mut rows = Vec::new();
    let rounds = (plan.warm / 5).max(10);
    for users in [SMALL, plan.users] {
        let store = ddb::store().await;
        let started = std::time::Instant::now();
        load(&store, users).await;
        println!(
            "bench: scale: {users} users loaded in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        let table = store.config().table_name.clone();
        // A user in the middle of the table.
        let reader = user(users / 2);
        UserId::parse(&reader).unwrap();
        for function in ["get-profile", "get-account"] {
            let env = Environment::start(&plan.launch(function, &table, &proxy.url, None))
                .await
                .unwrap();
            let event = with_sub(events::load(function), &reader);
            let mut times = Vec::new();
            for i in 0..=rounds {
                let (took, answer) = env.invoke(&event).await.unwrap();
                assert_eq!(answer["statusCode"], 200, "{function} at {users} users: {answer}");
                if i > 0 {
                    times.push(took);
                }
            }
            env.terminate().await;
            rows.push(ScaleRow {
                function,
                users,
                p50: Sample::new(times),
            });
        }
    }
    rows
}
