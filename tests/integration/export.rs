//! export-account (`GET /me/export`): the export holds what the table holds
//! about the caller, field by field, and no secret; it fits its schema; it is
//! limited per user inside the write; it never shows another user's data.

use std::collections::BTreeMap;

use integration_tests::invariants;
use integration_tests::workspace_root;
use serde_json::{Value, json};
use user_service::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use user_service::store::items::{self, ClaimItem, EmailItem, ProfileItem};
use user_service::store::keys::{self, Item, ItemKind};
use user_service::store::limits::{self, LimitItem};
use user_service::verification::VerificationCode;

use crate::handler_support::*;

/// Every item of the table, by kind: what the export is compared with.
struct Table {
    items: Vec<Item>,
}

impl Table {
    async fn read(app: &TestApp) -> Self {
        let items = invariants::scan(app.store.client(), &app.store.config().table_name).await;
        Self { items }
    }

    fn of(&self, kind: ItemKind) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(move |item| {
            keys::classify(
                keys::key_string(item, keys::PK).unwrap(),
                keys::key_string(item, keys::SK).unwrap(),
            ) == kind
        })
    }

    fn profile(&self, sub: &str) -> ProfileItem {
        let item = self
            .of(ItemKind::Profile)
            .find(|i| keys::user_of_pk(keys::key_string(i, keys::PK).unwrap()) == Some(sub))
            .unwrap();
        items::from_item(item.clone()).unwrap()
    }

    fn records(&self, sub: &str) -> BTreeMap<String, EmailItem> {
        self.of(ItemKind::Email)
            .filter(|i| keys::user_of_pk(keys::key_string(i, keys::PK).unwrap()) == Some(sub))
            .map(|i| items::from_item::<EmailItem>(i.clone()).unwrap())
            .map(|r| (r.email_id.to_string(), r))
            .collect()
    }

    /// The claims held by `sub`'s records, by emailId.
    fn claims(&self, sub: &str) -> BTreeMap<String, ClaimItem> {
        self.of(ItemKind::Claim)
            .map(|i| items::from_item::<ClaimItem>(i.clone()).unwrap())
            .filter(|c| c.user_id.as_str() == sub)
            .map(|c| (c.email_id.to_string(), c))
            .collect()
    }

    /// `sub`'s own counters (`LIMIT#USER#<sub>`), with their sort keys.
    fn own_limits(&self, sub: &str) -> Vec<(String, LimitItem)> {
        let pk = keys::user_limits_pk(&UserId::parse(sub).unwrap());
        self.of(ItemKind::Limit)
            .filter(|i| keys::key_string(i, keys::PK) == Some(pk.as_str()))
            .map(|i| {
                let sk = keys::key_string(i, keys::SK).unwrap().to_owned();
                (sk, items::from_item(i.clone()).unwrap())
            })
            .collect()
    }

    /// What must never reach an export: every code hash, and every keyed
    /// address hash in a counter's key (`LIMIT#ADDRESS#<hash>`,
    /// `CODES_TO#<hash>`, `ADDRESS#<hash>`); a user's sub is no secret.
    fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .of(ItemKind::Email)
            .filter_map(|i| i.get("verificationCodeHash"))
            .map(|v| v.as_s().unwrap().clone())
            .collect();
        for item in self.of(ItemKind::Limit) {
            for key in [keys::PK, keys::SK] {
                let value = keys::key_string(item, key).unwrap();
                match value.rsplit_once('#') {
                    Some((prefix, _)) if prefix.ends_with("USER") => {}
                    Some((_, hash)) => secrets.push(hash.to_owned()),
                    None => {}
                }
            }
        }
        secrets
    }
}

/// A value of the table as JSON, as the export spells it.
fn j<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap()
}

/// The export's schema, that of its format version
/// (schemas/export/account.v<N>.json), checking formats: as its readers
/// have it, and closed to what it does not declare, since readers ignore
/// unknown properties but the service writes none.
fn assert_fits_the_schema(export: &Value) {
    let version = user_service::domain::EXPORT_FORMAT_VERSION;
    assert_eq!(export["formatVersion"], version);
    let path = workspace_root().join(format!("schemas/export/account.v{version}.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for schema in [closed(&schema), schema] {
        let errors: Vec<String> = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap()
            .iter_errors(export)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{export}: {errors:?}");
    }
}

/// `schema` with every object closed to properties it does not declare.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(fields) => {
            let mut out: serde_json::Map<String, Value> = fields.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if fields.contains_key("properties") {
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// Asserts the export is `sub`'s data exactly as the table holds it.
fn assert_export_is_the_table(export: &Value, table: &Table, sub: &str, now: Timestamp) {
    assert_eq!(export["formatVersion"], user_service::domain::EXPORT_FORMAT_VERSION);
    assert_eq!(export["userId"], sub);
    assert_eq!(export["exportedAt"], j(now));

    let p = table.profile(sub);
    let e = &export["profile"];
    for (field, stored) in [
        ("userId", j(&p.user_id)),
        ("email", j(&p.email)),
        ("firstName", j(&p.first_name)),
        ("lastName", j(&p.last_name)),
        ("phone", j(&p.phone)),
        ("status", j(p.status)),
        ("version", j(p.version)),
        ("emailCount", j(p.email_count)),
        ("createdAt", j(p.created_at)),
        ("updatedAt", j(p.updated_at)),
        ("cognitoEmail", j(&p.cognito_email)),
        ("syncRequestedAt", j(p.sync_requested_at)),
    ] {
        assert_eq!(e[field], stored, "profile.{field}");
    }
    assert_eq!(e.as_object().unwrap().len(), 12, "{e}");

    let records = table.records(sub);
    let claims = table.claims(sub);
    let exported = export["emails"].as_array().unwrap();
    assert_eq!(exported.len(), records.len());
    let ids: Vec<&str> = exported.iter().map(|e| e["emailId"].as_str().unwrap()).collect();
    let mut oldest_first: Vec<&EmailItem> = records.values().collect();
    oldest_first.sort_by_key(|r| (r.created_at, r.email_id));
    let stored_ids: Vec<String> = oldest_first.iter().map(|r| r.email_id.to_string()).collect();
    assert_eq!(ids, stored_ids, "oldest first");
    for e in exported {
        let id = e["emailId"].as_str().unwrap();
        let r = &records[id];
        for (field, stored) in [
            ("email", j(&r.email)),
            ("canonicalEmail", j(r.canonical_email.as_ref().map(|c| c.as_str()))),
            ("isPrimary", j(r.is_primary)),
            ("primaryVersion", j(r.primary_version)),
            ("isVerified", j(r.is_verified)),
            ("verifiedAt", j(r.verified_at)),
            ("createdAt", j(r.created_at)),
        ] {
            assert_eq!(e[field], stored, "{id}.{field}");
        }
        let pending = &e["pendingVerification"];
        if r.is_verified {
            assert!(pending.is_null(), "{e}");
        } else {
            assert_eq!(pending["codeSentAt"], j(r.verification_sent_at));
            assert_eq!(pending["codeExpiresAt"], j(r.verification_expires_at));
            let used = r.verification_attempts.unwrap_or(0);
            assert_eq!(pending["wrongAttempts"], used);
            assert_eq!(pending["attemptsLeft"], app_max_attempts().saturating_sub(used), "{e}");
        }
        match claims.get(id) {
            Some(c) => {
                assert_eq!(e["claim"]["expiresAt"], j(c.expires_at), "{id}");
                assert_eq!(e["claim"]["held"], c.is_live(now), "{id}");
            }
            None => assert!(e["claim"].is_null(), "{e}"),
        }
    }

    let stored = table.own_limits(sub);
    let limits = export["limits"].as_array().unwrap();
    assert_eq!(limits.len(), stored.len(), "{limits:?}");
    // Each counter is exported once: match them by kind and events.
    let mut unmatched: Vec<&Value> = limits.iter().collect();
    for (sk, item) in &stored {
        let kind = j(keys::user_limit_kind(sk).unwrap());
        let events: Vec<Value> = item
            .events
            .iter()
            .map(|s| j(Timestamp::from_unix_millis(s * 1_000)))
            .collect();
        let at = unmatched
            .iter()
            .position(|l| l["kind"] == kind && l["events"] == json!(events))
            .unwrap_or_else(|| panic!("{sk} is not exported: {limits:?}"));
        let l = unmatched.remove(at);
        assert_eq!(l["inWindow"], limits::recent(Some(item), now).len(), "{sk}");
    }
}

fn app_max_attempts() -> u32 {
    user_service::config::StoreConfig::DEFAULT_MAX_ATTEMPTS
}

#[tokio::test]
async fn an_export_holds_what_the_table_holds_and_no_secret() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let edit = json!({"firstName": "Augusta", "phone": "+14155550100"});
    app.update_profile(ADA, "\"1\"", edit).await.assert_status(200);
    // An address verified, one pending with a wrong code against it, one removed.
    let user = UserId::parse(ADA).unwrap();
    let code = VerificationCode::parse("424242").unwrap();
    let work = EmailAddress::parse("work@example.com").unwrap();
    let added = app.store.add_email(&user, &work, &code, app.clock.now()).await.unwrap();
    app.store
        .verify_email(&user, added.email_id, &code, app.clock.now())
        .await
        .unwrap();
    app.clock.advance(5);
    let pending = app.add_address(ADA, "pending@example.com").await;
    let wrong = app.verify_email(ADA, &pending, "000000").await;
    wrong.assert_problem(400, "VERIFICATION_FAILED");
    let removed = app.add_address(ADA, "removed@example.com").await;
    app.remove_email(ADA, &removed).await.assert_status(204);
    app.check_email(ADA, "free@example.com").await.assert_status(200);
    app.clock.advance(5);

    let reply = app.export_account(ADA).await;
    reply.assert_status(200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let export = &reply.body;
    assert_fits_the_schema(export);
    let table = Table::read(&app).await;
    assert_export_is_the_table(export, &table, ADA, app.clock.now());

    // What the steps above left, seen in the export.
    assert_eq!(export["profile"]["firstName"], "Augusta");
    assert_eq!(export["profile"]["version"], 2);
    let emails = export["emails"].as_array().unwrap();
    assert_eq!(emails.len(), 3);
    let pending_export = emails.iter().find(|e| e["emailId"] == pending.as_str()).unwrap();
    assert_eq!(pending_export["pendingVerification"]["wrongAttempts"], 1);
    assert_eq!(pending_export["claim"]["held"], true);
    assert!(pending_export["claim"]["expiresAt"].is_string());
    let text = export.to_string();
    assert!(
        !text.contains("removed@example.com") && !text.contains(&removed),
        "{text}"
    );
    let kinds: Vec<&str> = export["limits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "codesSent",
        "codesSentToAnAddress",
        "wrongCodes",
        "anAddress",
        "availabilityChecks",
        "exports",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }

    // No secret: no code hash, no keyed address hash, no code.
    let secrets = table.secrets();
    assert!(secrets.len() >= 3, "the table has hashes to look for: {secrets:?}");
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "{secret} in the export");
    }
    for word in ["verificationCodeHash", "Hash", "424242", "LIMIT#", "USER#", "ttl"] {
        assert!(!text.contains(word), "{word} in the export: {text}");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn exports_stop_at_the_daily_limit_and_write_nothing_past_it() {
    let app = TestApp::spawn_with(|c| c.max_exports = 2).await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    app.export_account(ADA).await.assert_status(200);
    app.clock.advance(60);
    let second = app.export_account(ADA).await;
    second.assert_status(200);
    let exports = second.body["limits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "exports")
        .cloned()
        .unwrap();
    assert_eq!(exports["inWindow"], 2, "the export counts itself: {exports}");
    let first_at = exports["events"][0].as_str().unwrap();
    let clears = Timestamp::parse(first_at).unwrap().plus_seconds(86_400 + 60);
    assert_eq!(exports["clearsAt"], j(clears));

    let before = Table::read(&app).await.items;
    app.clock.advance(60);
    let refused = app.export_account(ADA).await;
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    let wait: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    // The first export leaves the window a day after it, 120 s ago.
    assert_eq!(wait, 86_400 - 120);
    assert!(refused.body.get("profile").is_none(), "nothing read past the limit");
    let after = Table::read(&app).await.items;
    assert_eq!(sorted(before), sorted(after), "nothing written past the limit");

    // Another user is not held back by Ada's exports.
    app.export_account(ADMIN).await.assert_status(200);
    // Once the first export is a day old, one more fits.
    app.clock.advance(86_400 - 120);
    app.export_account(ADA).await.assert_status(200);
    app.export_account(ADA).await.assert_problem(429, "TOO_MANY_REQUESTS");
}

/// Items in a stable order, to compare two reads of the table.
fn sorted(items: Vec<Item>) -> Vec<String> {
    let mut out: Vec<String> = items
        .into_iter()
        .map(|i| format!("{:?}", i.into_iter().collect::<BTreeMap<_, _>>()))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn a_burst_of_exports_cannot_pass_the_limit() {
    let app = TestApp::spawn_with(|c| c.max_exports = 3).await;
    app.sign_up(ADA, "ada@example.com").await;
    let replies = futures::future::join_all((0..10).map(|_| {
        let app = &app;
        async move { app.export_account(ADA).await.status }
    }))
    .await;
    let answered = replies.iter().filter(|s| **s == 200).count();
    assert!((1..=3).contains(&answered), "{replies:?}");
    assert!(replies.iter().all(|s| [200, 429, 503].contains(s)), "{replies:?}");
    // The counter never passes the cap, and holds every export answered.
    let table = Table::read(&app).await;
    let (_, counter) = table
        .own_limits(ADA)
        .into_iter()
        .find(|(sk, _)| keys::user_limit_kind(sk) == Some(user_service::domain::LimitKind::Exports))
        .unwrap();
    assert!(
        answered <= counter.events.len() && counter.events.len() <= 3,
        "{replies:?}: {counter:?}"
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_export_never_holds_another_users_data() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let grace_pending = app.add_address(ADMIN, "grace.pending@example.com").await;
    app.check_email(ADMIN, "someone@example.com").await.assert_status(200);
    let ada_pending = app.add_address(ADA, "ada.pending@example.com").await;

    let ada = app.export_account(ADA).await;
    ada.assert_status(200);
    let grace = app.export_account(ADMIN).await;
    grace.assert_status(200);
    let table = Table::read(&app).await;
    let now = app.clock.now();
    assert_export_is_the_table(&ada.body, &table, ADA, now);
    assert_export_is_the_table(&grace.body, &table, ADMIN, now);
    let ada_text = ada.body.to_string();
    for other in [
        ADMIN,
        "grace@example.com",
        "grace.pending@example.com",
        grace_pending.as_str(),
    ] {
        assert!(!ada_text.contains(other), "{other} in Ada's export");
    }
    let grace_text = grace.body.to_string();
    for other in [ADA, "ada@example.com", "ada.pending@example.com", ada_pending.as_str()] {
        assert!(!grace_text.contains(other), "{other} in Grace's export");
    }
    // Grace's check is hers alone.
    let kinds = |export: &Value| -> Vec<String> {
        export["limits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(kinds(&grace.body).contains(&"availabilityChecks".to_owned()));
    assert!(!kinds(&ada.body).contains(&"availabilityChecks".to_owned()));
}

#[tokio::test]
async fn a_suspended_user_exports_and_a_deleted_or_unknown_one_is_not_found() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    // A suspended user reads their account; their data is still theirs to have.
    let reply = app.export_account(ADA).await;
    reply.assert_status(200);
    assert_eq!(reply.body["profile"]["status"], "suspended");
    assert_fits_the_schema(&reply.body);
    assert_export_is_the_table(&reply.body, &Table::read(&app).await, ADA, app.clock.now());

    app.store
        .set_status(&ada, UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    let before = app.item_count().await;
    app.export_account(ADA).await.assert_problem(404, "NOT_FOUND");
    app.export_account(NOBODY).await.assert_problem(404, "NOT_FOUND");
    assert_eq!(app.item_count().await, before, "nothing counted for no account");
    let anonymous = app.send(&EXPORT_ACCOUNT, Event::of(&EXPORT_ACCOUNT).anonymous()).await;
    anonymous.assert_problem(401, "UNAUTHENTICATED");
}

/// What an organization's directory holds about a person is theirs too:
/// the organization's half of the membership (the directory's `userName`
/// and `externalId`, whether it made the account, a suspension) and the
/// names it claims for them in the organization. The claims are derived from
/// the membership, not read: here the table's claims are compared with them.
#[tokio::test]
async fn an_export_holds_what_an_organizations_directory_holds_about_the_person() {
    let dir = Box::pin(crate::scim_users::Directory::start()).await;
    let app = &dir.app;
    let body = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": "Ada.Lovelace",
        "externalId": "00u-Ada",
        "name": { "givenName": "Ada", "familyName": "Lovelace" },
        "emails": [{ "value": dir.at("ada"), "primary": true }],
    });
    let made = app
        .scim(integration_tests::test_app::ScimRequest::new("POST", "Users", Some(&dir.token)).body(&body))
        .await;
    made.assert_status(201);
    let ada = made.body["id"].as_str().unwrap().to_owned();
    let suspend = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "replace", "path": "active", "value": false }],
    });
    let path = format!("Users/{ada}");
    let patched = app
        .scim(integration_tests::test_app::ScimRequest::new("PATCH", &path, Some(&dir.token)).body(&suspend))
        .await;
    patched.assert_status(200);

    let reply = app.export_account(&ada).await;
    reply.assert_status(200);
    let export = &reply.body;
    assert_fits_the_schema(export);
    let table = Table::read(app).await;
    assert_export_is_the_table(export, &table, &ada, app.clock.now());
    let org = dir.org.to_string();
    assert_eq!(
        export["memberships"],
        json!([{
            "orgId": org,
            "role": "member",
            "joinedAt": export["memberships"][0]["joinedAt"],
            "suspended": true,
            "directory": {
                "userName": "Ada.Lovelace",
                "externalId": "00u-Ada",
                "provisioned": true,
                "claimedNames": [
                    { "attribute": "userName", "value": "ada.lovelace" },
                    { "attribute": "externalId", "value": "00u-Ada" },
                ],
            },
        }])
    );
    // Every claim the table holds for Ada, and only those, is in her export.
    let mut held: Vec<Value> = table
        .of(ItemKind::DirectoryClaim)
        .filter(|i| i.get("userId").and_then(|v| v.as_s().ok()).map(String::as_str) == Some(ada.as_str()))
        .map(
            |i| match keys::directory_claim_of_sk(keys::key_string(i, keys::SK).unwrap()).unwrap() {
                keys::DirectoryClaimName::UserName(v) => json!({ "attribute": "userName", "value": v }),
                keys::DirectoryClaimName::ExternalId(v) => json!({ "attribute": "externalId", "value": v }),
            },
        )
        .collect();
    held.sort_by_key(Value::to_string);
    let mut exported = export["memberships"][0]["directory"]["claimedNames"]
        .as_array()
        .unwrap()
        .clone();
    exported.sort_by_key(Value::to_string);
    assert_eq!(held, exported);
    let text = export.to_string();
    for word in ["DIRECTORY#", "ORG#", "MEMBER#"] {
        assert!(!text.contains(word), "{word} in the export: {text}");
    }

    // The owner joined by hand: no directory, not suspended.
    let owner = app.export_account(&dir.owner).await;
    owner.assert_status(200);
    assert_fits_the_schema(&owner.body);
    let membership = &owner.body["memberships"][0];
    assert_eq!(membership["orgId"], org);
    assert_eq!(
        (&membership["suspended"], &membership["directory"]),
        (&json!(false), &Value::Null)
    );
    app.assert_invariants().await;
}
