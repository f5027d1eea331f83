//! DynamoDB requests per invocation: every function of the catalog invoked once
//! on its success path, in a fresh table, through the counting proxy, beside the
//! count the design gives it.
//!
//! The design's rule: one request per read, and one transaction
//! (TransactWriteItems) or one conditional write per write. The exceptions are a
//! read before a transaction whose items need what is stored (an address, a code
//! hash, the current primary, the version a write pins). `expected` is that
//! table, written from the design, not from what the functions make.
//!
//! There is no Cognito here: the functions that call it are pointed at a closed
//! loopback port, so those calls fail fast; their DynamoDB requests are counted
//! all the same.

use std::time::Duration;

use integration_tests::events;
use serde_json::{Value, json};
use user_service::catalog::FUNCTIONS;
use user_service::domain::{EmailAddress, NewAccount, NewUser, Timestamp, UserId, UserStatus};
use user_service::import::{HashAlgorithm, PasswordHash};

use crate::plan::Plan;
use crate::proxy::{Counts, Proxy};
use crate::runtime::{Environment, Launch};
use crate::user::{ADA, ADA_EMAIL, seed_user, with_sub};

/// The admin the admin events are from (their token's `sub`, in the `admin` group).
const ADMIN: &str = "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c";
const ADMIN_EMAIL: &str = "grace@example.com";
/// The user the admin suspends, so that ada stays active for her own delete.
const TARGET: &str = "5c7d9e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f";
const TARGET_EMAIL: &str = "mary@example.com";
/// A user whose address is at the organization's domain: she enrolls by it.
const CAROL: &str = "7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b";
const CAROL_EMAIL: &str = "carol@acme.example";
const DOMAIN: &str = "acme.example";
/// The address ada adds, verifies and makes primary.
const WORK_EMAIL: &str = "ada.work@example.com";
/// The email id the emailId events name.
const EVENT_EMAIL_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
/// A user whose primary was switched (by a stolen session, say), and who takes
/// the account back with the link mailed to the former address.
const TAKEN: &str = "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a";
const TAKEN_EMAIL: &str = "ida@example.com";
const TAKER_EMAIL: &str = "taker@example.com";
/// The address of the user an import left pending, who signs in for the first time.
const PENDING_EMAIL: &str = "charles@example.com";
/// The `sub` Cognito gives the migrated user.
const MIGRATED_SUB: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
/// The pending user's legacy hash: events/migrate-user.json's password in a
/// cheap bcrypt (cost 5), made by Python's `bcrypt`. The requests, not the time,
/// are measured here; the hash section times each format at production costs.
const LEGACY_BCRYPT: &str = "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG";
/// What `expected` says of a name it does not know.
const NOT_IN_DESIGN: &str = "not in the design table";

/// The DynamoDB requests of one invocation of one function.
pub(crate) struct RequestRow {
    /// The catalog name.
    pub(crate) function: &'static str,
    /// DynamoDB requests made by ONE invocation, by operation.
    pub(crate) made: Counts,
    /// What the design says.
    pub(crate) expected: Counts,
    /// One short sentence: the design rule or the documented exception.
    pub(crate) why: &'static str,
    /// Capacity units of the invocation, by the documented formula.
    pub(crate) units: crate::capacity::Units,
    /// The function's answer: an HTTP status ("200"), "ok" for a trigger, or the error.
    pub(crate) status: String,
    /// The path measured, beside the success path of the catalog's row (None there).
    pub(crate) path: Option<&'static str>,
}

/// The paths measured beside the success paths: the migration's, which the
/// cost model prices as a one-off.
pub(crate) const WRONG_LEGACY_PASSWORD: &str = "a wrong legacy password";
pub(crate) const FIRST_SIGN_IN_OF_A_MIGRATED_USER: &str = "a migrated user's first sign-in";

/// Invokes every function once, in the order a user's life goes (sign-up, sign-in,
/// an imported user's first sign-in, profile, addresses, admin, sweeps, closing
/// the account), and counts the DynamoDB requests of each invocation: one row
/// per function of the catalog, and the migration's other paths beside them.
pub(crate) async fn count(plan: &Plan, proxy: &Proxy) -> (Vec<RequestRow>, Vec<RequestRow>) {
    let store = integration_tests::ddb::store().await;
    let table = store.config().table_name.clone();
    let mut run = Run {
        plan,
        proxy,
        table,
        unreachable: closed_port_url(),
        envs: Vec::new(),
        rows: Vec::new(),
        beside: Vec::new(),
        units: crate::capacity::Units::default(),
    };
    proxy.meter(true);
    let ada = UserId::parse(ADA).unwrap();

    // Sign-up: the address is free; the confirmation creates ada.
    let (answer, made) = run.measure("pre-sign-up", &events::load("pre-sign-up")).await;
    run.record("pre-sign-up", made, trigger(&answer));
    let (answer, made) = run
        .measure("post-confirmation", &events::load("post-confirmation"))
        .await;
    run.record("post-confirmation", made, trigger(&answer));
    // Sign-in of a user with a profile: the everyday path.
    let (answer, made) = run
        .measure("post-authentication", &events::load("post-authentication"))
        .await;
    run.record("post-authentication", made, trigger(&answer));

    // An imported user's first sign-in: the migration trigger finds the pending
    // user by address and checks the legacy password (a wrong one is counted on
    // the hash; the right one hands the user to Cognito), then Cognito's new
    // user appears in post-authentication, which moves the pending account to
    // its sub.
    let legacy = PasswordHash::parse(HashAlgorithm::Bcrypt, LEGACY_BCRYPT).unwrap();
    import_pending(&store, PENDING_EMAIL, &legacy).await;
    let mut event = migration_event(PENDING_EMAIL);
    event["request"]["password"] = json!("not the password");
    let (answer, made) = run.measure("migrate-user", &event).await;
    let status = refusal(&answer, "INCORRECT_PASSWORD");
    run.record_beside("migrate-user", WRONG_LEGACY_PASSWORD, made, status);
    let (answer, made) = run.measure("migrate-user", &migration_event(PENDING_EMAIL)).await;
    let response = &answer.as_ref().unwrap_or_else(|e| panic!("migrate-user: {e}"))["response"];
    assert_eq!(response["finalUserStatus"], "CONFIRMED", "migrate-user: {answer:?}");
    assert_eq!(
        response["userAttributes"]["email"], PENDING_EMAIL,
        "migrate-user: {answer:?}"
    );
    run.record("migrate-user", made, trigger(&answer));
    let mut event = events::load("post-authentication");
    event["userName"] = json!(MIGRATED_SUB);
    event["request"]["userAttributes"] = json!({
        "sub": MIGRATED_SUB,
        "email": PENDING_EMAIL,
        "email_verified": "true",
        "cognito:user_status": "CONFIRMED",
    });
    let (answer, made) = run.measure("post-authentication", &event).await;
    run.record_beside(
        "post-authentication",
        FIRST_SIGN_IN_OF_A_MIGRATED_USER,
        made,
        trigger(&answer),
    );
    let migrated = store.get_profile(&UserId::parse(MIGRATED_SUB).unwrap()).await.unwrap();
    assert_eq!(
        migrated.email.as_ref().map(EmailAddress::as_str),
        Some(PENDING_EMAIL),
        "post-authentication: the pending account did not move"
    );

    // The profile.
    let (answer, made) = run.measure("get-profile", &ada_event("get-profile")).await;
    run.record("get-profile", made, http(&answer, 200));
    let mut event = ada_event("update-profile");
    let version = store.get_profile(&ada).await.unwrap().version;
    event["headers"]["if-match"] = json!(format!("\"{version}\""));
    let (answer, made) = run.measure("update-profile", &event).await;
    run.record("update-profile", made, http(&answer, 200));
    let (answer, made) = run.measure("get-account", &ada_event("get-account")).await;
    run.record("get-account", made, http(&answer, 200));
    let (answer, made) = run.measure("export-account", &ada_event("export-account")).await;
    run.record("export-account", made, http(&answer, 200));
    let (answer, made) = run.measure("list-emails", &ada_event("list-emails")).await;
    run.record("list-emails", made, http(&answer, 200));

    // A second address: free, added, fetched, sent a new code, verified, made primary.
    let mut event = ada_event("check-email");
    set_query_email(&mut event, WORK_EMAIL);
    let (answer, made) = run.measure("check-email", &event).await;
    run.record("check-email", made, http(&answer, 200));
    assert_eq!(body(&answer)["available"], true, "check-email: {answer:?}");
    let mut event = ada_event("add-email");
    event["body"] = json!(json!({ "email": WORK_EMAIL }).to_string());
    let (answer, made) = run.measure("add-email", &event).await;
    run.record("add-email", made, http(&answer, 201));
    let added_at = tokio::time::Instant::now();
    let work_id = body(&answer)["emailId"].as_str().unwrap().to_owned();
    let mut event = ada_event("get-email");
    set_email_id(&mut event, &work_id);
    let (answer, made) = run.measure("get-email", &event).await;
    run.record("get-email", made, http(&answer, 200));
    // A resend waits the resend interval (1 s for this function, here).
    tokio::time::sleep_until(added_at + Duration::from_millis(1_200)).await;
    let mut event = ada_event("send-verification");
    set_email_id(&mut event, &work_id);
    let (answer, made) = run.measure("send-verification", &event).await;
    run.record("send-verification", made, http(&answer, 202));
    let code = run.code_for("send-verification", &work_id).await;
    let mut event = ada_event("verify-email");
    set_email_id(&mut event, &work_id);
    event["body"] = json!(json!({ "code": code }).to_string());
    let (answer, made) = run.measure("verify-email", &event).await;
    run.record("verify-email", made, http(&answer, 200));
    assert_eq!(body(&answer)["isVerified"], true, "verify-email: {answer:?}");
    let mut event = ada_event("set-primary-email");
    event["body"] = json!(json!({ "emailId": work_id }).to_string());
    let (answer, made) = run.measure("set-primary-email", &event).await;
    run.record("set-primary-email", made, http(&answer, 200));
    // The former primary, now an ordinary verified address, goes once Cognito
    // holds the new one (what the stream consumer records, made here directly).
    let work = store.get_profile(&ada).await.unwrap().email.unwrap();
    store.confirm_cognito_email(&ada, &work).await.unwrap();
    let old_id = store
        .list_emails(&ada)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.email.as_str() == ADA_EMAIL && !e.is_primary)
        .unwrap()
        .email_id
        .to_string();
    let mut event = ada_event("remove-email");
    set_email_id(&mut event, &old_id);
    let (answer, made) = run.measure("remove-email", &event).await;
    run.record("remove-email", made, http(&answer, 204));

    // An admin, whose own account is active, finds ada and suspends another user.
    seed_user(&store, ADMIN, ADMIN_EMAIL).await;
    seed_user(&store, TARGET, TARGET_EMAIL).await;
    seed_user(&store, CAROL, CAROL_EMAIL).await;
    let mut event = with_sub(events::load("find-user-by-email"), ADMIN);
    set_query_email(&mut event, WORK_EMAIL);
    let (answer, made) = run.measure("find-user-by-email", &event).await;
    run.record("find-user-by-email", made, http(&answer, 200));
    assert_eq!(
        body(&answer)["profile"]["userId"],
        ADA,
        "find-user-by-email: {answer:?}"
    );
    // The first page of active users: one small Query per GSI2 shard.
    let event = with_sub(events::load("list-users"), ADMIN);
    let (answer, made) = run.measure("list-users", &event).await;
    run.record("list-users", made, http(&answer, 200));
    assert!(
        body(&answer)["users"].as_array().is_some_and(|users| !users.is_empty()),
        "list-users: {answer:?}"
    );
    let mut event = with_sub(events::load("set-user-status"), ADMIN);
    set_path_user(&mut event, TARGET);
    event["body"] = json!(json!({ "status": "suspended" }).to_string());
    let (answer, made) = run.measure("set-user-status", &event).await;
    run.record("set-user-status", made, http(&answer, 200));

    // The way back: the page the notice's link opens, then the recovery.
    let token = switched_with_link(&store, TAKEN, TAKEN_EMAIL, TAKER_EMAIL).await;
    let (answer, made) = run.measure("recovery-page", &events::load("recovery-page")).await;
    run.record("recovery-page", made, http(&answer, 200));
    let mut event = events::load("recover-account");
    event["body"] = json!(json!({ "token": token }).to_string());
    let (answer, made) = run.measure("recover-account", &event).await;
    run.record("recover-account", made, http(&answer, 200));
    assert_eq!(body(&answer)["email"], TAKEN_EMAIL, "recover-account: {answer:?}");

    // An organization: ada creates it, lists and reads it, renames it, makes
    // the admin (a member) an admin, lists, removes them, and deletes it; its
    // purge removes her own membership, then the organization.
    let mut event = ada_event("create-organization");
    event["body"] = json!(json!({ "name": "Acme", "slug": "acme" }).to_string());
    let (answer, made) = run.measure("create-organization", &event).await;
    run.record("create-organization", made, http(&answer, 201));
    let org = body(&answer)["orgId"].as_str().unwrap().to_owned();
    let org_id = user_service::domain::OrgId::parse(&org).unwrap();
    let (answer, made) = run
        .measure("list-my-organizations", &ada_event("list-my-organizations"))
        .await;
    run.record("list-my-organizations", made, http(&answer, 200));
    let org_event = |name: &str| {
        let mut event = ada_event(name);
        set_path(&mut event, "orgId", &org);
        event
    };
    let (answer, made) = run.measure("get-organization", &org_event("get-organization")).await;
    run.record("get-organization", made, http(&answer, 200));
    let mut event = org_event("update-organization");
    event["headers"]["if-match"] = json!("\"1\"");
    let (answer, made) = run.measure("update-organization", &event).await;
    run.record("update-organization", made, http(&answer, 200));
    // Grace (the admin) joins by invitation: ada invites her, lists, resends
    // and revokes it, invites again (the token, from the store), and grace
    // accepts.
    let mut event = org_event("create-invitation");
    event["body"] = json!(json!({ "email": ADMIN_EMAIL, "role": "member" }).to_string());
    let (answer, made) = run.measure("create-invitation", &event).await;
    run.record("create-invitation", made, http(&answer, 201));
    let invitation = body(&answer)["invitationId"].as_str().unwrap().to_owned();
    let (answer, made) = run.measure("list-invitations", &org_event("list-invitations")).await;
    run.record("list-invitations", made, http(&answer, 200));
    let invitation_event = |name: &str| {
        let mut event = org_event(name);
        set_path(&mut event, "invitationId", &invitation);
        event
    };
    let (answer, made) = run
        .measure("resend-invitation", &invitation_event("resend-invitation"))
        .await;
    run.record("resend-invitation", made, http(&answer, 200));
    let (answer, made) = run
        .measure("revoke-invitation", &invitation_event("revoke-invitation"))
        .await;
    run.record("revoke-invitation", made, http(&answer, 204));
    let invited = store
        .invite(
            &user_service::domain::Actor::Member(ada.clone()),
            org_id,
            &user_service::domain::EmailAddress::parse(ADMIN_EMAIL).unwrap(),
            user_service::domain::Role::Member,
            Timestamp::now(),
        )
        .await
        .unwrap();
    let mut event = with_sub(events::load("accept-invitation"), ADMIN);
    event["body"] = json!(json!({ "token": invited.token.encode() }).to_string());
    let (answer, made) = run.measure("accept-invitation", &event).await;
    run.record("accept-invitation", made, http(&answer, 200));
    // A domain: ada claims it, lists it, proves it with her own address
    // there, opens it to its users; carol (at it) sees the organization
    // among her suggestions and enrolls; ada removes the domain, and carol
    // leaves (unmeasured) so the purge below stays the one it is.
    let code = user_service::verification::VerificationCode::parse("111111").unwrap();
    let ada_at = store
        .add_email(
            &ada,
            &user_service::domain::EmailAddress::parse("ada@acme.example").unwrap(),
            &code,
            Timestamp::now(),
        )
        .await
        .unwrap()
        .email_id;
    store.verify_email(&ada, ada_at, &code, Timestamp::now()).await.unwrap();
    let mut event = org_event("claim-domain");
    event["body"] = json!(json!({ "domain": DOMAIN }).to_string());
    let (answer, made) = run.measure("claim-domain", &event).await;
    run.record("claim-domain", made, http(&answer, 201));
    let (answer, made) = run.measure("list-domains", &org_event("list-domains")).await;
    run.record("list-domains", made, http(&answer, 200));
    let domain_event = |name: &str| {
        let mut event = org_event(name);
        set_path(&mut event, "domain", DOMAIN);
        event
    };
    let mut event = domain_event("verify-domain");
    event["body"] = json!(json!({ "emailId": ada_at.to_string() }).to_string());
    let (answer, made) = run.measure("verify-domain", &event).await;
    run.record("verify-domain", made, http(&answer, 200));
    let (answer, made) = run.measure("update-domain", &domain_event("update-domain")).await;
    run.record("update-domain", made, http(&answer, 200));
    let carol = UserId::parse(CAROL).unwrap();
    let (answer, made) = run
        .measure(
            "suggest-organizations",
            &with_sub(events::load("suggest-organizations"), CAROL),
        )
        .await;
    run.record("suggest-organizations", made, http(&answer, 200));
    let carol_at = body(&answer)["suggestions"][0]["emailId"].as_str().unwrap().to_owned();
    let mut event = with_sub(events::load("join-by-domain"), CAROL);
    set_path(&mut event, "orgId", &org);
    event["body"] = json!(json!({ "emailId": carol_at }).to_string());
    let (answer, made) = run.measure("join-by-domain", &event).await;
    run.record("join-by-domain", made, http(&answer, 200));
    // A SCIM token, and the three requests a directory's sync leans on
    // (docs/scim.md): Okta's look-up by userName, a create (carol, a member
    // by the domain already, linked by her verified address there: a new
    // account's create stops at Cognito, unreachable here) and a PATCH.
    let (answer, made) = run.measure("create-scim-token", &org_event("create-scim-token")).await;
    run.record("create-scim-token", made, http(&answer, 201));
    let token_id = body(&answer)["tokenId"].as_str().unwrap().to_owned();
    let secret = body(&answer)["token"].as_str().unwrap().to_owned();
    directory(&mut run, &secret).await;
    let (answer, made) = run.measure("remove-domain", &domain_event("remove-domain")).await;
    run.record("remove-domain", made, http(&answer, 204));
    let (answer, made) = run.measure("list-scim-tokens", &org_event("list-scim-tokens")).await;
    run.record("list-scim-tokens", made, http(&answer, 200));
    let mut event = org_event("revoke-scim-token");
    set_path(&mut event, "tokenId", &token_id);
    let (answer, made) = run.measure("revoke-scim-token", &event).await;
    run.record("revoke-scim-token", made, http(&answer, 204));
    store
        .remove_member(&user_service::domain::Actor::Member(carol.clone()), org_id, &carol)
        .await
        .unwrap();
    let (answer, made) = run.measure("list-members", &org_event("list-members")).await;
    run.record("list-members", made, http(&answer, 200));
    let mut event = org_event("set-member-role");
    set_path(&mut event, "userId", ADMIN);
    let (answer, made) = run.measure("set-member-role", &event).await;
    run.record("set-member-role", made, http(&answer, 200));
    let mut event = org_event("remove-member");
    set_path(&mut event, "userId", ADMIN);
    let (answer, made) = run.measure("remove-member", &event).await;
    run.record("remove-member", made, http(&answer, 204));
    let mut event = org_event("delete-organization");
    event["headers"]["if-match"] = json!("\"2\"");
    let (answer, made) = run.measure("delete-organization", &event).await;
    run.record("delete-organization", made, http(&answer, 202));
    let (answer, made) = run
        .measure("purge-organizations", &events::load("purge-organizations"))
        .await;
    let purged = answer.unwrap_or_else(|e| panic!("purge-organizations: {e}"));
    assert_eq!(purged["finished"], 1, "purge-organizations: {purged}");
    run.record("purge-organizations", made, "ok".to_owned());

    // The Cognito side: both fail at Cognito, by design of the bench.
    let (answer, made) = run.measure("reconcile-users", &events::load("reconcile-users")).await;
    let status = match &answer {
        Ok(value) => panic!("reconcile-users: Cognito is unreachable, yet the sweep answered {value}"),
        Err(e) => error_type(e),
    };
    assert_eq!(status, "SWEEP_FAILED", "reconcile-users: {answer:?}");
    run.record("reconcile-users", made, status);
    let (answer, made) = run
        .measure("sync-cognito-email", &events::load("sync-cognito-email"))
        .await;
    let failures = answer.as_ref().unwrap()["batchItemFailures"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(failures, 1, "sync-cognito-email: Cognito is unreachable: {answer:?}");
    run.record("sync-cognito-email", made, format!("{failures} record failed"));
    let (answer, made) = run.measure("publish-events", &events::load("publish-events")).await;
    let failures = answer.as_ref().unwrap()["batchItemFailures"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(failures, 1, "publish-events: EventBridge is unreachable: {answer:?}");
    run.record("publish-events", made, format!("{failures} record failed"));

    // Last: ada closes her account.
    let mut event = ada_event("delete-account");
    let version = store.get_profile(&ada).await.unwrap().version;
    event["headers"]["if-match"] = json!(format!("\"{version}\""));
    let (answer, made) = run.measure("delete-account", &event).await;
    run.record("delete-account", made, http(&answer, 204));

    run.finish().await
}

/// A directory's look-up, create (a link) and PATCH of carol, with `token`.
async fn directory(run: &mut Run<'_>, token: &str) {
    let event = |name: &str| {
        let mut event = events::load(name);
        event["headers"]["authorization"] = json!(format!("Bearer {token}"));
        event
    };
    let mut look_up = event("scim-list-users");
    let filter = format!("userName eq \"{CAROL_EMAIL}\"");
    look_up["queryStringParameters"] = json!({ "filter": filter });
    look_up["rawQueryString"] = json!(format!(
        "filter=userName%20eq%20%22{}%22",
        CAROL_EMAIL.replace('@', "%40")
    ));
    let (answer, made) = run.measure("scim-list-users", &look_up).await;
    assert_eq!(body(&answer)["totalResults"], 0, "scim-list-users: {answer:?}");
    run.record("scim-list-users", made, http(&answer, 200));
    let mut create = event("scim-create-user");
    let user = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": CAROL_EMAIL,
        "name": { "givenName": "Carol", "familyName": "Shaw" },
        "emails": [{ "value": CAROL_EMAIL, "type": "work", "primary": true }],
        "active": true,
    });
    create["body"] = json!(user.to_string());
    let (answer, made) = run.measure("scim-create-user", &create).await;
    run.record("scim-create-user", made, http(&answer, 201));
    let mut patch = event("scim-patch-user");
    set_path(&mut patch, "userId", CAROL);
    let operations = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "replace", "path": "name.givenName", "value": "Caroline" }],
    });
    patch["body"] = json!(operations.to_string());
    let (answer, made) = run.measure("scim-patch-user", &patch).await;
    run.record("scim-patch-user", made, http(&answer, 200));
}

/// What the design says one invocation on the success path makes, and why.
fn expected(function: &str) -> (Counts, &'static str) {
    let (ops, why): (&[(&str, u64)], &'static str) = match function {
        "get-profile" => (&[("GetItem", 1)], "One read: the profile, by key."),
        "get-account" => (
            &[("Query", 1)],
            "One read: a Query of the user's partition (profile and addresses).",
        ),
        "update-profile" => (
            &[("UpdateItem", 1)],
            "One conditional write, pinned to the If-Match version.",
        ),
        "list-emails" => (
            &[("Query", 1)],
            "One read: a Query of the user's partition from EMAIL# on: the addresses and the profile (whether a recovery ended the session), not the switches kept for their undoing.",
        ),
        "add-email" => (
            &[("TransactWriteItems", 1)],
            "One transaction: room on the profile, the record, the claim and the code counters.",
        ),
        "send-verification" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the record is read (its address names the code counters), then the address's, the pair's and the user's counters, concurrently (so the transaction pins their versions), then one transaction.",
        ),
        "verify-email" => (
            &[("GetItem", 3), ("TransactWriteItems", 1)],
            "Exception: the record is read (the code hash is compared in the function), then the user's and the address's wrong-code counters, concurrently, then one transaction.",
        ),
        "set-primary-email" => (
            &[("Query", 1), ("TransactWriteItems", 1)],
            "Exception: the partition is read first (the current primary and the version the write pins), then one transaction.",
        ),
        "remove-email" => (
            &[("GetItem", 1), ("TransactWriteItems", 1)],
            "Exception: the record is read first (its address names the claim to release), then one transaction.",
        ),
        "get-email" => (
            &[("GetItem", 2)],
            "Two reads at once (one round trip): the record, and the profile (whether a recovery ended the session).",
        ),
        "delete-account" => (
            &[("GetItem", 1), ("Query", 3), ("TransactWriteItems", 1)],
            "Exception: the partition is read first (every record and claim to release, and the switches kept for their undoing), then the claim of each former primary removed since its switch (one here: ada switched, then removed her first address), then GSI1 for the invitations to each address (two here: her address at the organization's domain too), then one transaction.",
        ),
        "check-email" => (
            &[("GetItem", 2), ("TransactWriteItems", 1)],
            "Exception: the caller's counter of checks is read first (the write pins its version), then one transaction (the caller's profile is there, the check counted), then the address's claim.",
        ),
        "export-account" => (
            &[("GetItem", 2), ("Query", 3), ("TransactWriteItems", 1)],
            "Exception: the caller's counter of exports is read first (the write pins its version), then one transaction (the caller's profile is there, the export counted), then the user's partition, the claim of each address (one here), GSI1 for the invitations to each verified address (one here) and the user's counters.",
        ),
        "find-user-by-email" => (
            &[("GetItem", 1), ("Query", 2)],
            "Three reads: the admin's own profile, GSI1 for the address, then the owner's partition (GSI1 projects no profile).",
        ),
        "list-users" => (
            &[("GetItem", 1), ("Query", 8)],
            "The admin's own profile, then one Query of each of the status's 8 GSI2 shards (a page of 50 asks each for 8 users; a larger table reads a few shards again).",
        ),
        "set-user-status" => (
            &[("GetItem", 2), ("TransactWriteItems", 1)],
            "Exception: the admin's own profile is read, then the user's (the write pins its version), then one transaction: the change, and the condition that the admin is still active.",
        ),
        "recovery-page" => (&[], "No table request: the page is the function's own text."),
        "create-organization" => (
            &[("TransactWriteItems", 1)],
            "One transaction: the organization, its slug's claim, both halves of the creator's membership, and the creator's count (active, under the maximum).",
        ),
        "list-my-organizations" => (
            &[("Query", 1), ("GetItem", 1)],
            "A Query of the user's partition from MEMBERSHIP# on (their memberships and the profile), then each organization by key, 16 at once (one here).",
        ),
        "get-organization" => (
            &[("GetItem", 3)],
            "Three reads at once (one round trip): the organization, the caller's member item, the caller's profile.",
        ),
        "update-organization" => (
            &[("GetItem", 3), ("TransactWriteItems", 1)],
            "Exception: the organization (the version the write pins), the caller's member item and profile, at once; then one transaction: the rename and the caller's role and active profile.",
        ),
        "list-members" => (
            &[("GetItem", 3), ("Query", 1)],
            "The organization, the caller's member item and profile at once (the caller's power), then one page of the organization's partition.",
        ),
        "set-member-role" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the member (their role decides the power needed), then the organization, the caller's member item and profile at once; then one transaction: both halves, the organization (its owners' count or its state), the caller's role and profile.",
        ),
        "remove-member" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "As a role change: the member, then the organization, the caller's member item and profile; then one transaction: both halves, the member's count, the organization, the caller's role and profile.",
        ),
        "delete-organization" => (
            &[("GetItem", 3), ("Query", 1), ("TransactWriteItems", 1)],
            "Exception: the organization (the version the write pins), the caller's member item and profile; its domains (one Query of its partition, at most 10); then one transaction: the organization marked deleting at the count of domains read, its slug and each domain's claim released, the caller's role and profile.",
        ),
        "claim-domain" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the organization, the caller's member item and profile at once, then the domain's claim (taken, lapsed or free); then one transaction: the caller's role and profile, the organization's count of domains, the record and the claim.",
        ),
        "list-domains" => (
            &[("GetItem", 3), ("Query", 1)],
            "The caller's power (three reads at once), then the organization's domains: one Query of its partition.",
        ),
        "verify-domain" => (
            &[("GetItem", 5), ("TransactWriteItems", 1)],
            "Exception: the caller's power (three reads at once), the domain's record, the caller's address named as proof; then one transaction: the record and the claim verified, the caller's role and profile, the address still verified.",
        ),
        "update-domain" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the caller's power (three reads at once) and the domain's record; then one transaction: the record and the claim, the caller's role and profile.",
        ),
        "remove-domain" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the caller's power (three reads at once) and the domain's record; then one transaction: the record and the claim deleted, the organization's count, the caller's role and profile.",
        ),
        "suggest-organizations" => (
            &[("GetItem", 2), ("Query", 1)],
            "The caller's partition (profile, addresses, memberships), then the claim of each verified address's domain, and the organization of each that enrolls (one here).",
        ),
        "join-by-domain" => (
            &[("GetItem", 5), ("TransactWriteItems", 1)],
            "Exception: the caller's profile, their address named as proof, the domain's claim, their member item, the organization (its address rules); then one transaction: both halves, the count, the organization at the version its rules were read, the domain inviting, the address's claim and record.",
        ),
        "create-scim-token" => (
            &[("GetItem", 3), ("TransactWriteItems", 1)],
            "Exception: the caller's power (three reads at once); then one transaction: the caller's role and profile, the organization's count of tokens, the token.",
        ),
        "list-scim-tokens" => (
            &[("GetItem", 3), ("Query", 1)],
            "The caller's power (three reads at once), then the organization's tokens: one Query of its partition (at most 10).",
        ),
        "revoke-scim-token" => (
            &[("GetItem", 3), ("TransactWriteItems", 1)],
            "Exception: the caller's power (three reads at once); then one transaction: the token deleted while it exists, the organization's count, the caller's role and profile.",
        ),
        "scim-list-users" => (
            &[("GetItem", 3), ("UpdateItem", 1)],
            "Okta's look-up by userName: the token and its organization (two reads at once), the directory name's claim (none: 0 results); the token's last use, written at most once an hour (this is its first request).",
        ),
        "scim-create-user" => (
            &[("GetItem", 7), ("Query", 3), ("TransactWriteItems", 1)],
            "A link (no Cognito call): the token and its organization; the domains (Query) and the address's claim; the claim again and the membership at once, the organization's address rules; one transaction; the member as shown (its half, the account's partition and the domains).",
        ),
        "scim-patch-user" => (
            &[("GetItem", 6), ("Query", 5), ("TransactWriteItems", 1)],
            "The token and its organization; the member as shown (its half, the account's partition, the domains); the domains and the address's claim the plan is made on; the member's half the write pins; one transaction; the member as shown again, for the answer.",
        ),
        "create-invitation" => (
            &[("GetItem", 7), ("TransactWriteItems", 1)],
            "Exception: the three counters (the organization's to the address, the address's, the organization's; at once, so the write pins their versions), the invitation, then the organization, the caller's member item and profile at once; then one transaction: the caller's role and profile, the organization active, the invitation, the three counters.",
        ),
        "list-invitations" => (
            &[("GetItem", 3), ("Query", 1)],
            "The organization, the caller's member item and profile at once (the caller's power), then one page of the organization's invitations.",
        ),
        "resend-invitation" => (
            &[("GetItem", 11), ("TransactWriteItems", 1)],
            "Exception: the caller's power and the invitation (its address and role) first, then the send as create-invitation makes it.",
        ),
        "revoke-invitation" => (
            &[("GetItem", 4), ("TransactWriteItems", 1)],
            "Exception: the organization, the caller's member item and profile at once, then the invitation (its role decides the power, the write pins its version); then one transaction: the deletion and the caller's role and profile.",
        ),
        "accept-invitation" => (
            &[("GetItem", 6), ("TransactWriteItems", 1)],
            "Exception: the caller's profile, the invitation (its token's hash, its address), the address's claim and the caller's record of it (verified), the organization (its address rules), the caller's member item; then one transaction: both halves, the caller's count, the organization at the version its rules were read, the invitation used up, the claim and the record unchanged.",
        ),
        "purge-organizations" => (
            &[
                ("DeleteItem", 1),
                ("GetItem", 2),
                ("Query", 3),
                ("TransactWriteItems", 2),
                ("UpdateItem", 1),
            ],
            "A run: the deletions under way (one Query of PURGES), then for each its turn taken up on its checkpoint (attemptedAt, one write), the organization, a page of its partition: the organization's counts deleted as they come (one DeleteItem), one transaction per member (one here: both halves and the count), the organization and an empty page again, and one transaction deleting the organization's item and its purge's (its checkpoint with it).",
        ),
        "recover-account" => (
            &[
                ("GetItem", 1),
                ("Query", 1),
                ("TransactWriteItems", 1),
                ("UpdateItem", 3),
            ],
            "Exception: the source's counter of refused links is read (full as read: refused, nothing more), then its slot taken in one conditional write before the link is judged; the user's partition (the switch, its token hashes, the addresses to remove, the version the write pins); the hold listed for the reconcile (one write, beside the transaction the largest recovery fills); one transaction; the slot given back (a link that recovers was no guess). A former primary removed since its switch adds a read of its claim (its reservation).",
        ),
        "pre-sign-up" => (
            &[("GetItem", 1)],
            "One read: the address's claim, by key (and its owner's profile when it is verified).",
        ),
        "post-confirmation" => (
            &[("TransactWriteItems", 1)],
            "One transaction: the profile, the verified primary and its claim.",
        ),
        "post-authentication" => (
            &[("GetItem", 1)],
            "One read of the profile; it exists, so nothing is written (the repair path adds one transaction; a migrated user's first sign-in, below the table, moves the pending account).",
        ),
        "migrate-user" => (
            &[("GetItem", 3), ("UpdateItem", 2)],
            "Three reads, the last two concurrent: the address's claim (it names the pending user), then the pending profile and its legacy hash; then one conditional write takes a slot of the day's wrong-password limit before the hash is checked, and one gives it back once the password matched (Cognito's new user moves the account at its first sign-in).",
        ),
        "reconcile-users" => (
            &[("GetItem", 1), ("Query", 3), ("Scan", 4), ("UpdateItem", 6)],
            "The recoveries' holds older than 15 minutes (one Query: none here), then a new pass: the lease taken (one write), one Scan page per segment of the table (4), the live users' snapshot written as chunks (two: the 4 users fall in 2 segments), the checkpoint after the table, then the one partition's snapshot (its live and deleted chunks) and progress read; Cognito is unreachable in the bench, so the partition saves its progress, the run saves the checkpoint, fails, and erases no one.",
        ),
        "sync-cognito-email" => (
            &[],
            "The record carries both images, so nothing is read; once Cognito holds a new primary, one write records it (a recovery's record adds one more, lifting its hold on sign-in). Cognito is unreachable in the bench, so the record fails before that write.",
        ),
        "publish-events" => (
            &[],
            "No table request: the record carries both images, and its events go to EventBridge (unreachable in the bench, so the record fails).",
        ),
        _ => (&[], NOT_IN_DESIGN),
    };
    let counts = ops.iter().map(|(op, n)| ((*op).to_owned(), *n)).collect();
    (counts, why)
}

/// A user at `address`, switched to a verified `taker` as a stolen session
/// would, with the token of the link the notice to `address` carries.
async fn switched_with_link(store: &user_service::Store, user: &str, address: &str, taker: &str) -> String {
    seed_user(store, user, address).await;
    let user = UserId::parse(user).unwrap();
    let now = Timestamp::now();
    let code = user_service::verification::VerificationCode::generate().unwrap();
    let taker = EmailAddress::parse(taker).unwrap();
    let added = store.add_email(&user, &taker, &code, now).await.unwrap();
    store.verify_email(&user, added.email_id, &code, now).await.unwrap();
    let switched = store.set_primary(&user, added.email_id, now).await.unwrap();
    let (token, _) = store
        .issue_recovery_token(&user, switched.version, now)
        .await
        .unwrap()
        .expect("a fresh switch takes a token");
    token.encode()
}

/// What the design says of a path beside the success path.
fn expected_beside(function: &str, path: &str) -> (Counts, &'static str) {
    let (ops, why): (&[(&str, u64)], &'static str) = match (function, path) {
        ("migrate-user", WRONG_LEGACY_PASSWORD) => (
            &[("GetItem", 3), ("UpdateItem", 1)],
            "The same three reads, then the slot taken before the check (one conditional write on the hash's item: room under the day's limit); a wrong password keeps it.",
        ),
        ("post-authentication", FIRST_SIGN_IN_OF_A_MIGRATED_USER) => (
            &[("GetItem", 3), ("Query", 1), ("TransactWriteItems", 2)],
            "Exception: the profile (none yet), the create's transaction (cancelled: the pending user holds the address), then the claim, the pending partition and its hash (concurrently), then one transaction moving the profile, records and claims and deleting the hash.",
        ),
        _ => (&[], NOT_IN_DESIGN),
    };
    let counts = ops.iter().map(|(op, n)| ((*op).to_owned(), *n)).collect();
    (counts, why)
}

/// The environments, started lazily, one per function, and the rows so far.
struct Run<'a> {
    plan: &'a Plan,
    proxy: &'a Proxy,
    table: String,
    /// Where the Cognito and EventBridge clients are sent: a closed loopback port.
    unreachable: String,
    envs: Vec<(&'static str, Environment)>,
    rows: Vec<RequestRow>,
    beside: Vec<RequestRow>,
    /// The capacity units of the last measured invocation.
    units: crate::capacity::Units,
}

impl Run<'_> {
    /// The function's launch, with what the bench needs of it.
    fn launch(&self, name: &'static str) -> Launch {
        let function = user_service::catalog::by_name(name).unwrap_or_else(|| panic!("{name}: not in the catalog"));
        let mut launch = self.plan.launch(name, &self.table, &self.proxy.url, None);
        if matches!(name, "add-email" | "send-verification") {
            // The log sender writes the code at INFO.
            launch = launch.env("AWS_LAMBDA_LOG_LEVEL", "INFO");
        }
        if name == "send-verification" {
            // The smallest interval the configuration allows, so the resend is admitted.
            launch = launch.env("VERIFICATION_RESEND_INTERVAL_SECONDS", "1");
        }
        if !function.cognito_actions.is_empty() {
            launch = launch.env("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", self.unreachable.clone());
        }
        if function.publishes_events {
            // A bus named, and EventBridge as unreachable as Cognito.
            launch = launch
                .env(user_service::config::EVENT_BUS_NAME.name(), "user-service-bench-events")
                .env(user_service::config::EVENT_SOURCE.name(), "urn:user-service:bench")
                .env("AWS_ENDPOINT_URL_EVENTBRIDGE", self.unreachable.clone());
        }
        launch
    }

    async fn env(&mut self, name: &'static str) -> &Environment {
        let at = match self.envs.iter().position(|(n, _)| *n == name) {
            Some(at) => at,
            None => {
                let env = Environment::start(&self.launch(name)).await.unwrap();
                self.envs.push((name, env));
                self.envs.len() - 1
            }
        };
        &self.envs[at].1
    }

    /// One invocation, and the DynamoDB requests made during it.
    async fn measure(&mut self, name: &'static str, event: &Value) -> (Result<Value, String>, Counts) {
        let proxy = self.proxy;
        let env = self.env(name).await;
        let before = proxy.counts();
        let units = proxy.units();
        let answer = env.invoke(event).await.map(|(_, answer)| answer);
        let made = proxy.since(&before);
        self.units = proxy.units() - units;
        (answer, made)
    }

    fn record(&mut self, function: &'static str, made: Counts, status: String) {
        let row = self.row(function, None, made, status);
        self.rows.push(row);
    }

    fn record_beside(&mut self, function: &'static str, path: &'static str, made: Counts, status: String) {
        let row = self.row(function, Some(path), made, status);
        self.beside.push(row);
    }

    /// One measured row against its expected requests (a path beside the
    /// function's main one has its own), printed as it is recorded.
    fn row(&self, function: &'static str, path: Option<&'static str>, made: Counts, status: String) -> RequestRow {
        let (expected, why) = match path {
            None => expected(function),
            Some(path) => expected_beside(function, path),
        };
        let name = path.map_or_else(|| function.to_owned(), |path| format!("{function}, {path}"));
        println!(
            "bench: requests {name}: {} ({status}), expected {}",
            show(&made),
            show(&expected)
        );
        RequestRow {
            units: self.units,
            function,
            made,
            expected,
            why,
            status,
            path,
        }
    }

    /// The last code the log sender of `function` issued for `email_id`.
    async fn code_for(&self, function: &str, email_id: &str) -> String {
        let env = &self.envs.iter().find(|(n, _)| *n == function).unwrap().1;
        // The output is read from the pipe as it comes: the line may lag the answer.
        for _ in 0..100 {
            let lines: Vec<Value> = env
                .output()
                .iter()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if let Some(code) = integration_tests::http::logged_code(&lines, email_id) {
                return code;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "{function}: no code logged for {email_id}:\n{}",
            env.output().join("\n")
        );
    }

    /// Every environment ended, and the rows in catalog order, one per
    /// function; then the paths beside them.
    async fn finish(self) -> (Vec<RequestRow>, Vec<RequestRow>) {
        self.proxy.meter(false);
        for (_, env) in self.envs {
            env.terminate().await;
        }
        let mut rows = self.rows;
        let position = |name: &str| FUNCTIONS.iter().position(|f| f.name == name);
        for row in &rows {
            assert!(position(row.function).is_some(), "{}: not in the catalog", row.function);
        }
        rows.sort_by_key(|row| position(row.function));
        let counted: Vec<&str> = rows.iter().map(|r| r.function).collect();
        let mut once = counted.clone();
        once.dedup();
        assert_eq!(once, counted, "every function is counted once");
        // A function the bench has not been taught yet is said, not failed:
        // adding a function needs no row here.
        for function in FUNCTIONS.iter().filter(|f| !counted.contains(&f.name)) {
            println!(
                "bench: requests {}: not measured (no path in tools/bench/src/requests.rs)",
                function.name
            );
        }
        // The design table is asserted, not only shown: a row that drifts from
        // what the function makes fails the bench (and its smoke in make test).
        let drifted: Vec<String> = rows
            .iter()
            .chain(&self.beside)
            .filter(|row| row.why != NOT_IN_DESIGN && row.made != row.expected)
            .map(|row| {
                format!(
                    "{}{}: made {}, the design says {}",
                    row.function,
                    row.path.map(|p| format!(" ({p})")).unwrap_or_default(),
                    show(&row.made),
                    show(&row.expected)
                )
            })
            .collect();
        assert!(
            drifted.is_empty(),
            "requests off the design table:\n{}",
            drifted.join("\n")
        );
        (rows, self.beside)
    }
}

/// The URL of a loopback port nothing listens on: calls to it are refused at once.
fn closed_port_url() -> String {
    format!("http://127.0.0.1:{}", integration_tests::lambda::free_port())
}

/// The migration trigger's sign-in event (Cognito's documented shape) for `address`,
/// with events/migrate-user.json's password.
fn migration_event(address: &str) -> Value {
    let mut event = events::load("migrate-user");
    event["userName"] = json!(address);
    event
}

/// A trigger's refusal, whose `errorType` must be `want`.
fn refusal(answer: &Result<Value, String>, want: &str) -> String {
    let status = match answer {
        Ok(value) => panic!("expected the refusal {want}, got {value}"),
        Err(e) => error_type(e),
    };
    assert_eq!(status, want, "{answer:?}");
    status
}

/// An HTTP event of ada's.
fn ada_event(name: &str) -> Value {
    with_sub(events::load(name), ADA)
}

/// Points an emailId event at `id` (its path parameter and its paths).
fn set_email_id(event: &mut Value, id: &str) {
    event["pathParameters"]["emailId"] = json!(id);
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        if let Some(path) = event.pointer_mut(pointer) {
            let replaced = path.as_str().unwrap().replace(EVENT_EMAIL_ID, id);
            *path = json!(replaced);
        }
    }
}

/// Points an event's path parameter `name` at `value` (and its paths).
fn set_path(event: &mut Value, name: &str, value: &str) {
    let named = event["pathParameters"][name].as_str().unwrap().to_owned();
    event["pathParameters"][name] = json!(value);
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        if let Some(path) = event.pointer_mut(pointer) {
            let replaced = path.as_str().unwrap().replace(&named, value);
            *path = json!(replaced);
        }
    }
}

/// Points a userId event at `user` (its path parameter and its paths).
fn set_path_user(event: &mut Value, user: &str) {
    let named = event["pathParameters"]["userId"].as_str().unwrap().to_owned();
    event["pathParameters"]["userId"] = json!(user);
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        if let Some(path) = event.pointer_mut(pointer) {
            let replaced = path.as_str().unwrap().replace(&named, user);
            *path = json!(replaced);
        }
    }
}

/// Sets the `email` query parameter.
fn set_query_email(event: &mut Value, email: &str) {
    event["queryStringParameters"]["email"] = json!(email);
    event["rawQueryString"] = json!(format!("email={}", email.replace('@', "%40")));
}

/// An HTTP answer's status, which must be `want`.
fn http(answer: &Result<Value, String>, want: u64) -> String {
    let value = answer.as_ref().unwrap_or_else(|e| panic!("{e}"));
    let status = value["statusCode"].as_u64();
    assert_eq!(status, Some(want), "unexpected answer {value}");
    want.to_string()
}

/// A trigger's answer: the event back, unchanged but for Cognito's response.
fn trigger(answer: &Result<Value, String>) -> String {
    let value = answer.as_ref().unwrap_or_else(|e| panic!("{e}"));
    assert!(value.is_object(), "unexpected answer {value}");
    "ok".to_owned()
}

/// An HTTP answer's JSON body.
fn body(answer: &Result<Value, String>) -> Value {
    let raw = answer.as_ref().unwrap()["body"].as_str().unwrap_or("null");
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// The `errorType` of an invocation error, or the error as it is.
fn error_type(error: &str) -> String {
    error
        .split_once("invocation error: ")
        .and_then(|(_, body)| serde_json::from_str::<Value>(body).ok())
        .and_then(|body| body["errorType"].as_str().map(str::to_owned))
        .unwrap_or_else(|| error.to_owned())
}

/// `GetItem 1, TransactWriteItems 1`, or `none`.
fn show(counts: &Counts) -> String {
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts
        .iter()
        .map(|(op, n)| format!("{op} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A pending user of `address` with the legacy `hash`, as `user-admin import
/// --pending` writes one (a provisional id, no Cognito user).
pub(crate) async fn import_pending(store: &user_service::Store, address: &str, hash: &PasswordHash) {
    let account = NewAccount {
        user: NewUser {
            user_id: UserId::new_pending(),
            email: EmailAddress::parse(address).unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        },
        status: UserStatus::Active,
        created_at: Timestamp::now(),
        more: Vec::new(),
        import_key: None,
    };
    store
        .create_pending_account(&account, hash, Timestamp::now())
        .await
        .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_table_agrees_with_the_catalog() {
        // A function without a row shows as "not in the design table" in the
        // report: adding a function needs no edit here (docs/architecture.md, Adding a function).
        for function in FUNCTIONS {
            let (counts, why) = expected(function.name);
            if why == NOT_IN_DESIGN {
                continue;
            }
            assert!(!why.is_empty(), "{}", function.name);
            // Requests where the catalog grants DynamoDB actions (but for a
            // function whose bench path stops at Cognito, unreachable here,
            // before its one write), and only those (a transaction's items
            // are granted by their item actions).
            if function.dynamodb_actions.is_empty() {
                assert!(counts.is_empty(), "{}: {counts:?}", function.name);
            } else {
                assert!(
                    !counts.is_empty() || !function.cognito_actions.is_empty(),
                    "{}: {counts:?}",
                    function.name
                );
            }
            for op in counts.keys() {
                assert!(
                    op == "TransactWriteItems" || function.dynamodb_actions.contains(&op.as_str()),
                    "{}: {op} is not granted",
                    function.name
                );
            }
            assert!(counts.values().all(|n| *n > 0), "{}", function.name);
        }
        assert_eq!(expected("no-such-function"), (Counts::new(), NOT_IN_DESIGN));
        for (function, path) in [
            ("migrate-user", WRONG_LEGACY_PASSWORD),
            ("post-authentication", FIRST_SIGN_IN_OF_A_MIGRATED_USER),
        ] {
            let (counts, why) = expected_beside(function, path);
            assert_ne!(why, NOT_IN_DESIGN, "{function}, {path}");
            let granted = user_service::catalog::by_name(function).unwrap().dynamodb_actions;
            for op in counts.keys() {
                assert!(
                    op == "TransactWriteItems" || granted.contains(&op.as_str()),
                    "{function}, {path}: {op} is not granted"
                );
            }
        }
    }
}
