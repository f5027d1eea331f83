//! The checker must see every kind of violation, or its silence proves nothing.

use aws_sdk_dynamodb::types::AttributeValue;
use integration_tests::{ddb, invariants};

use crate::common::*;

async fn put(store: &user_service::Store, pk: &str, sk: &str, fields: &[(&str, AttributeValue)]) {
    let mut req = store
        .client()
        .put_item()
        .table_name(&store.config().table_name)
        .item("PK", AttributeValue::S(pk.into()))
        .item("SK", AttributeValue::S(sk.into()));
    for (k, v) in fields {
        req = req.item(*k, v.clone());
    }
    req.send().await.unwrap();
}

async fn update(store: &user_service::Store, pk: &str, sk: &str, expression: &str, values: &[(&str, AttributeValue)]) {
    let mut req = store
        .client()
        .update_item()
        .table_name(&store.config().table_name)
        .key("PK", AttributeValue::S(pk.into()))
        .key("SK", AttributeValue::S(sk.into()))
        .update_expression(expression);
    for (k, v) in values {
        req = req.expression_attribute_values(*k, v.clone());
    }
    req.send().await.unwrap();
}

#[tokio::test]
async fn a_clean_table_has_no_violations() {
    let store = ddb::store().await;
    let user = signed_up(&store, "ada", "ada@example.com").await;
    with_verified(&store, &user, "work@example.com").await;
    assert!(
        invariants::violations(store.client(), &store.config().table_name)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn the_checker_reports_each_kind_of_violation() {
    let store = ddb::store().await;
    let ada = signed_up(&store, "ada", "ada@example.com").await;
    let grace = signed_up(&store, "grace", "grace@example.com").await;
    let ada_pk = format!("USER#{ada}");
    let grace_pk = format!("USER#{grace}");
    let emails = store.list_emails(&ada).await.unwrap();
    let ada_sk = format!("EMAIL#{}", emails[0].email_id);

    // A second record of Ada's address under Grace, with no claim of its own.
    let dup_id = uuid::Uuid::new_v4().to_string();
    put(
        &store,
        &grace_pk,
        &format!("EMAIL#{dup_id}"),
        &[
            ("entityType", AttributeValue::S("Email".into())),
            ("emailId", AttributeValue::S(dup_id.clone())),
            ("userId", AttributeValue::S(grace.to_string())),
            ("email", AttributeValue::S("ada@example.com".into())),
            ("isPrimary", AttributeValue::Bool(true)),
            ("isVerified", AttributeValue::Bool(true)),
            ("createdAt", AttributeValue::S("2026-11-21T10:00:00.000Z".into())),
        ],
    )
    .await;
    // A claim without a record.
    put(
        &store,
        "EMAIL#orphan@example.com",
        "UNIQUE",
        &[
            ("entityType", AttributeValue::S("EmailClaim".into())),
            ("userId", AttributeValue::S(ada.to_string())),
            ("emailId", AttributeValue::S(uuid::Uuid::new_v4().to_string())),
        ],
    )
    .await;
    // Ada's primary unverified and her profile pointing elsewhere.
    update(
        &store,
        &ada_pk,
        &ada_sk,
        "SET isVerified = :f",
        &[(":f", AttributeValue::Bool(false))],
    )
    .await;
    update(
        &store,
        &ada_pk,
        "PROFILE",
        "SET email = :e",
        &[(":e", AttributeValue::S("other@example.com".into()))],
    )
    .await;

    let found = invariants::violations(store.client(), &store.config().table_name).await;
    let expect = [
        "address ada@example.com is held by 2 records",
        "has a claim of",
        "claim of orphan@example.com has no record",
        "primary address is unverified",
        "profile email is not the primary address",
        "2 primary addresses",
        "emailCount 1 but 2 records",
        "code fields do not match isVerified",
    ];
    for e in expect {
        assert!(found.iter().any(|f| f.contains(e)), "missing {e:?} in {found:#?}");
    }
}
