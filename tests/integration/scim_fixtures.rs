//! The published request sequences of Entra ID (both shapes) and Okta (its
//! catalogue and its custom integrations), `tests/fixtures/scim/`, replayed
//! over the SCIM routes against DynamoDB Local and moto's Cognito, in order,
//! each answer checked as the fixture expects; then the table's invariants.
//! The stream's Cognito sync is played as it would run: once Cognito holds
//! a new primary, the former one may leave.

use serde_json::{Value, json};
use user_service::domain::UserId;

use crate::scim_users::Directory;
use integration_tests::test_app::ScimRequest;

const FIXTURES: [&str; 4] = ["entra-id", "entra-id-aadoptscim062020", "okta-oin", "okta-custom"];

fn fixture(name: &str, domain: &str) -> Value {
    let path = integration_tests::workspace_root().join(format!("tests/fixtures/scim/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The fixtures' addresses are at acme.example: here, at this organization's verified domain.
    serde_json::from_str(&text.replace("acme.example", domain)).unwrap()
}

fn query_string(query: &Value) -> String {
    let encode = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    query
        .as_object()
        .map(|q| {
            q.iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v.as_str().unwrap())))
                .collect::<Vec<_>>()
                .join("&")
        })
        .unwrap_or_default()
}

fn check(user: &Value, expect: &Value, at: &str) {
    for (name, pointer) in [
        ("active", "/active"),
        ("givenName", "/name/givenName"),
        ("familyName", "/name/familyName"),
    ] {
        if let Some(want) = expect.get(name) {
            assert_eq!(user.pointer(pointer), Some(want), "{at}: {name}: {user}");
        }
    }
    if let Some(want) = expect.get("primary") {
        let primary = user["emails"]
            .as_array()
            .and_then(|emails| emails.iter().find(|e| e["primary"] == json!(true)))
            .map(|e| &e["value"]);
        assert_eq!(primary, Some(want), "{at}: primary: {user}");
    }
}

async fn replay(dir: &Directory, name: &str) {
    let fixture = fixture(name, &dir.domain);
    let mut id: Option<String> = None;
    let mut consumer: Option<tokio::task::JoinHandle<()>> = None;
    for step in fixture["steps"].as_array().unwrap() {
        let at = format!("{name}: {}", step["step"]);
        let method = step["method"].as_str().unwrap();
        let mut path = step["path"].as_str().unwrap().trim_start_matches('/').to_owned();
        if let Some(id) = &id {
            path = path.replace("{id}", id);
        }
        let query = query_string(&step["query"]);
        if !query.is_empty() {
            path = format!("{path}?{query}");
        }
        let body = step.get("body").filter(|b| !b.is_null());
        let mut request = ScimRequest::new(method, &path, Some(&dir.token));
        if let Some(body) = body {
            request = request.body(body);
        }
        let reply = dir.app.scim(request).await;
        let expect = &step["expect"];
        assert_eq!(
            u64::from(reply.status),
            expect["status"].as_u64().unwrap(),
            "{at}: {}",
            reply.body
        );
        if let Some(total) = expect.get("totalResults") {
            assert_eq!(&reply.body["totalResults"], total, "{at}");
        }
        if method == "POST" {
            let made = reply.body["id"].as_str().unwrap().to_owned();
            consumer = Some(dir.follow_sign_in(&UserId::parse_sub(&made).unwrap()));
            id = Some(made);
        }
        if matches!(method, "POST" | "PUT" | "PATCH") || (method == "GET" && step["path"] != "/Users") {
            check(&reply.body, expect, &at);
        }
    }
    if let Some(consumer) = consumer {
        consumer.abort();
    }
}

#[tokio::test]
async fn entra_ids_and_oktas_published_sequences_replay_as_documented() {
    let dir = Box::pin(Directory::start()).await;
    for name in FIXTURES {
        Box::pin(replay(&dir, name)).await;
    }
    dir.app.assert_invariants().await;
}
