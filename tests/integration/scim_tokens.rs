//! SCIM tokens through the routes and the store, against DynamoDB Local:
//! made by owners and admins alone, shown once, listed without their
//! secrets, bounded per organization (also when made at once), revoked at
//! once; and the proof of a SCIM request: a token of its own organization,
//! live, whose secret matches, counted against its source when it proves
//! nothing (each refusal's slot taken before it is answered, so concurrent
//! ones never pass the cap).

use futures::StreamExt;
use futures::future::join_all;
use user_service::domain::{Actor, OrgId, Role, ScimTokenName, UserId};
use user_service::scim_token::ScimToken;
use user_service::store::StoreError;

use crate::handler_support::*;

const SOURCE: &str = "198.51.100.7";

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

/// A signed-up owner of a fresh organization.
async fn owner_of_organization(app: &TestApp) -> (String, OrgId) {
    let s = sub();
    app.sign_up(&s, &format!("owner.{s}@example.com")).await;
    let reply = app.create_organization(&s, "Acme", &format!("o-{}", &sub()[..8])).await;
    reply.assert_status(201);
    (s, OrgId::parse(reply.body["orgId"].as_str().unwrap()).unwrap())
}

/// A signed-up member of `org` in `role`.
async fn member_of(app: &TestApp, org: OrgId, role: Role) -> String {
    let s = sub();
    app.sign_up(&s, &format!("member.{s}@example.com")).await;
    app.store
        .join_organization(org, &user(&s), role, app.clock.now())
        .await
        .unwrap();
    s
}

/// A token of `org` made through the store by its owner: its encoding.
async fn made_token(app: &TestApp, owner: &str, org: OrgId) -> String {
    let name = ScimTokenName::parse("Okta").unwrap();
    app.store
        .create_scim_token(&Actor::Member(user(owner)), org, &name, app.clock.now())
        .await
        .unwrap()
        .token
        .encode()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test]
async fn a_token_is_shown_once_listed_without_its_secret_and_revoked_at_once() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let made = app.create_scim_token(&owner, &org.to_string(), "Okta production").await;
    made.assert_status(201);
    assert_eq!(made.header("cache-control"), Some("no-store"));
    let token = made.body["token"].as_str().unwrap().to_owned();
    let token_id = made.body["tokenId"].as_str().unwrap().to_owned();
    assert_eq!(made.body["name"], "Okta production");
    assert_eq!(made.body["createdBy"], owner.as_str());
    assert!(made.body.get("lastUsedAt").is_none());

    // It proves requests on its own organization; the first use is noted.
    let client = app
        .store
        .authenticate_scim(SOURCE, Some(&bearer(&token)), app.clock.now())
        .await
        .unwrap();
    assert_eq!(client.org, org);
    assert_eq!(client.token.to_string(), token_id);
    let listed = app.list_scim_tokens(&owner, &org.to_string()).await;
    listed.assert_status(200);
    let tokens = listed.body["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0]["tokenId"], token_id.as_str());
    assert!(tokens[0].get("token").is_none(), "never the secret again");
    assert!(!listed.body.to_string().contains(&token[5..]), "nor any part of it");
    assert_eq!(tokens[0]["lastUsedAt"], made.body["createdAt"]);

    app.revoke_scim_token(&owner, &org.to_string(), &token_id)
        .await
        .assert_status(204);
    let refused = app
        .store
        .authenticate_scim(SOURCE, Some(&bearer(&token)), app.clock.now())
        .await;
    assert!(matches!(refused, Err(StoreError::ScimTokenInvalid)), "{refused:?}");
    // Revoking again, or another organization's token, finds nothing.
    app.revoke_scim_token(&owner, &org.to_string(), &token_id)
        .await
        .assert_problem(404, "SCIM_TOKEN_NOT_FOUND");
    let listed = app.list_scim_tokens(&owner, &org.to_string()).await;
    assert_eq!(listed.body["tokens"], serde_json::json!([]));
    app.assert_invariants().await;
}

#[tokio::test]
async fn owners_and_admins_alone_manage_tokens_and_only_their_organizations() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let admin = member_of(&app, org, Role::Admin).await;
    let member = member_of(&app, org, Role::Member).await;
    let (stranger, other_org) = owner_of_organization(&app).await;
    let o = org.to_string();

    let by_admin = app.create_scim_token(&admin, &o, "Entra ID").await;
    by_admin.assert_status(201);
    let id = by_admin.body["tokenId"].as_str().unwrap().to_owned();
    app.create_scim_token(&member, &o, "mine")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.list_scim_tokens(&member, &o)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.revoke_scim_token(&member, &o, &id)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    // A stranger learns nothing of the organization.
    app.create_scim_token(&stranger, &o, "theirs")
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.list_scim_tokens(&stranger, &o)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    // Their own organization's path with this organization's token: not theirs.
    app.revoke_scim_token(&stranger, &other_org.to_string(), &id)
        .await
        .assert_problem(404, "SCIM_TOKEN_NOT_FOUND");
    // The owner revokes the admin's token.
    app.revoke_scim_token(&owner, &o, &id).await.assert_status(204);
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_organization_holds_at_most_ten_tokens_even_when_made_at_once() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let actor = Actor::Member(user(&owner));
    let name = ScimTokenName::parse("Okta").unwrap();
    let made = join_all((0..12).map(|_| app.store.create_scim_token(&actor, org, &name, app.clock.now()))).await;
    // Twelve at once: never more than ten kept; those not kept were refused
    // by the cap, or lost their races until the retries ran out (503).
    assert!(
        made.iter()
            .filter_map(|m| m.as_ref().err())
            .all(|e| matches!(e, StoreError::ScimTokenLimitReached | StoreError::Contended)),
        "{made:?}"
    );
    let mut kept: Vec<_> = made.into_iter().filter_map(Result::ok).collect();
    assert!((1..=10).contains(&kept.len()), "{}", kept.len());
    app.assert_invariants().await;
    // Then one at a time until the cap refuses: ten in all.
    loop {
        match app.store.create_scim_token(&actor, org, &name, app.clock.now()).await {
            Ok(more) => kept.push(more),
            Err(StoreError::ScimTokenLimitReached) => break,
            Err(other) => panic!("{other:?}"),
        }
        assert!(kept.len() <= 10);
    }
    assert_eq!(kept.len(), 10);
    app.create_scim_token(&owner, &org.to_string(), "one more")
        .await
        .assert_problem(409, "SCIM_TOKEN_LIMIT_REACHED");
    app.assert_invariants().await;
    // Revoking one makes room for the next.
    let first = kept[0].info.token_id.to_string();
    app.revoke_scim_token(&owner, &org.to_string(), &first)
        .await
        .assert_status(204);
    app.create_scim_token(&owner, &org.to_string(), "the next")
        .await
        .assert_status(201);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_request_proves_nothing_with_a_token_altered_or_of_a_deleted_organization() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let (_, other_org) = owner_of_organization(&app).await;
    let token = made_token(&app, &owner, org).await;
    // The same id and secret, claiming another organization: the hash is bound to both.
    let mut raw = base64_decode(&token[5..]);
    raw[..16].copy_from_slice(other_org.as_bytes());
    let moved = format!("scim_{}", base64_encode(&raw));
    // Another secret under the same ids.
    let mut raw = base64_decode(&token[5..]);
    raw[40] ^= 1;
    let guessed = format!("scim_{}", base64_encode(&raw));
    let unknown = ScimToken::generate(org, user_service::domain::ScimTokenId::new())
        .unwrap()
        .encode();
    for header in [
        None,
        Some(String::new()),
        Some(token.clone()),
        Some(format!("Basic {token}")),
        Some(bearer(&moved)),
        Some(bearer(&guessed)),
        Some(bearer(&unknown)),
        Some(bearer(&token[..90])),
    ] {
        let refused = app
            .store
            .authenticate_scim(SOURCE, header.as_deref(), app.clock.now())
            .await;
        assert!(
            matches!(refused, Err(StoreError::ScimTokenInvalid)),
            "{header:?}: {refused:?}"
        );
    }
    // The organization deleted: its tokens end with it, at once.
    let version = app.get_organization(&owner, &org.to_string()).await.body["version"]
        .as_u64()
        .unwrap();
    app.delete_organization(&owner, &org.to_string(), &format!("\"{version}\""))
        .await
        .assert_status(202);
    let refused = app
        .store
        .authenticate_scim(SOURCE, Some(&bearer(&token)), app.clock.now())
        .await;
    assert!(matches!(refused, Err(StoreError::ScimTokenInvalid)), "{refused:?}");
}

#[tokio::test]
async fn a_source_of_many_bad_tokens_is_slowed_and_a_valid_token_never_is() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let token = made_token(&app, &owner, org).await;
    let source = "203.0.113.99";
    let cap = user_service::config::SCIM_GUESSES_PER_SOURCE;
    for _ in 0..cap {
        let refused = app
            .store
            .authenticate_scim(source, Some("Bearer nope"), app.clock.now())
            .await;
        assert!(matches!(refused, Err(StoreError::ScimTokenInvalid)), "{refused:?}");
    }
    let slowed = app
        .store
        .authenticate_scim(source, Some("Bearer nope"), app.clock.now())
        .await;
    assert!(
        matches!(slowed, Err(StoreError::TooManyScimAttempts { retry_after_secs }) if retry_after_secs > 0),
        "{slowed:?}"
    );
    // No credential guesses nothing: 401, never 429, and nothing written.
    let items = integration_tests::invariants::item_count(&app.store).await;
    for _ in 0..3 {
        let bare = app.store.authenticate_scim(source, None, app.clock.now()).await;
        assert!(matches!(bare, Err(StoreError::ScimTokenInvalid)), "{bare:?}");
    }
    let fresh = app.store.authenticate_scim("203.0.113.7", None, app.clock.now()).await;
    assert!(matches!(fresh, Err(StoreError::ScimTokenInvalid)), "{fresh:?}");
    assert_eq!(integration_tests::invariants::item_count(&app.store).await, items);
    // Identity providers share egress addresses: a valid token from the same source passes.
    let client = app
        .store
        .authenticate_scim(source, Some(&bearer(&token)), app.clock.now())
        .await
        .unwrap();
    assert_eq!(client.org, org);
    // Another source is not slowed by this one's.
    let refused = app
        .store
        .authenticate_scim("203.0.113.100", Some("Bearer nope"), app.clock.now())
        .await;
    assert!(matches!(refused, Err(StoreError::ScimTokenInvalid)), "{refused:?}");
    // A day later the source's count has lapsed.
    app.clock.advance(86_400);
    let refused = app
        .store
        .authenticate_scim(source, Some("Bearer nope"), app.clock.now())
        .await;
    assert!(matches!(refused, Err(StoreError::ScimTokenInvalid)), "{refused:?}");
}

#[tokio::test]
async fn five_hundred_concurrent_bad_tokens_from_one_source_get_at_most_the_cap_of_refusals() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let token = made_token(&app, &owner, org).await;
    let source = "203.0.113.150";
    // Tokens of the organization never made, and the real one's ids with
    // another secret: each proves nothing, each is a guess.
    let bad = (0..500).map(|n| {
        if n % 2 == 0 {
            let id = user_service::domain::ScimTokenId::new();
            bearer(&ScimToken::generate(org, id).unwrap().encode())
        } else {
            let mut raw = base64_decode(&token[5..]);
            raw[40] ^= u8::try_from(n % 255 + 1).unwrap();
            raw[41] ^= u8::try_from(n / 255 + 1).unwrap();
            bearer(&format!("scim_{}", base64_encode(&raw)))
        }
    });
    // The identity provider's own requests from the same egress, amid them.
    let valid = bearer(&token);
    let requests: Vec<String> = bad
        .enumerate()
        .flat_map(|(n, header)| {
            let mut both = vec![header];
            if n % 25 == 0 {
                both.push(valid.clone());
            }
            both
        })
        .collect();
    let now = app.clock.now();
    let (store, valid) = (&app.store, &valid);
    let outcomes: Vec<(bool, Result<_, StoreError>)> = futures::stream::iter(&requests)
        .map(|header| async move {
            // DynamoDB Local serialises writes with locks that can time out
            // under 50 requests at once ("This request will succeed in actual
            // DynamoDB API"): the route answers that 503 with Retry-After, and
            // a directory sends the request again. The timed-out write wrote
            // nothing, so the counts below hold either way.
            let mut tries = 0;
            loop {
                match store.authenticate_scim(source, Some(header), now).await {
                    Err(StoreError::Unavailable(_)) if tries < 5 => {
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(200 * tries)).await;
                    }
                    outcome => break (header == valid, outcome),
                }
            }
        })
        .buffer_unordered(50)
        .collect()
        .await;
    let cap = user_service::config::SCIM_GUESSES_PER_SOURCE as usize;
    let (mut refused, mut slowed) = (0, 0);
    for (is_valid, outcome) in &outcomes {
        match outcome {
            Ok(client) => assert!(*is_valid && client.org == org, "{outcome:?}"),
            Err(StoreError::ScimTokenInvalid) if !is_valid => refused += 1,
            Err(StoreError::TooManyScimAttempts { retry_after_secs }) if !is_valid => {
                assert!(*retry_after_secs > 0);
                slowed += 1;
            }
            Err(err) => panic!("valid: {is_valid}: {err:?}"),
        }
    }
    // A refusal takes its slot before its answer: the cap's number of 401s,
    // counted once each, the rest 429; a valid token is never refused.
    assert_eq!((refused, slowed), (cap, 500 - cap));
    assert_eq!(outcomes.iter().filter(|(v, o)| *v && o.is_ok()).count(), 20);
    assert_eq!(crate::recovery::source_events(&app, "SCIM_GUESSES").await, cap);
}

#[tokio::test]
async fn a_tokens_last_use_is_written_once_an_hour() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let actor = Actor::Member(user(&owner));
    let header = bearer(&made_token(&app, &owner, org).await);
    let first = app.clock.now();
    app.store.authenticate_scim(SOURCE, Some(&header), first).await.unwrap();
    let last_used = || async { app.store.list_scim_tokens(&actor, org).await.unwrap()[0].last_used_at };
    assert_eq!(last_used().await, Some(first));
    app.clock.advance(1_800);
    app.store
        .authenticate_scim(SOURCE, Some(&header), app.clock.now())
        .await
        .unwrap();
    assert_eq!(last_used().await, Some(first), "within the hour: not written again");
    app.clock.advance(1_800);
    let later = app.clock.now();
    app.store.authenticate_scim(SOURCE, Some(&header), later).await.unwrap();
    assert_eq!(last_used().await, Some(later));
}

fn base64_decode(raw: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw).unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
