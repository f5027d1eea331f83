//! What both tests share: the users, a valid request for every HTTP route,
//! table snapshots, a panic-catching send, the problem check and the figures file.

use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::FinalizerInterceptorContextRef;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use futures::FutureExt;
use integration_tests::ddb;
use integration_tests::http::{Event, Reply};
use integration_tests::test_app::TestApp;
use serde_json::{Value, json};
use user_service::Store;
use user_service::api::routes;
use user_service::catalog::{self, Access, Function, Trigger};
use user_service::domain::{EmailAddress, NewUser, PersonName, UserId, UserStatus};
use user_service::verification::VerificationCode;

/// The one code every fixture address is issued: tests send it to verify.
pub(crate) const CODE: &str = "111111";

/// The HTTP routes of the catalog that answer this API's problems, in
/// catalog order. The SCIM routes speak RFC 7644 to a directory's token, not
/// a caller's: tests/integration/scim_http.rs attacks them.
pub(crate) fn routes() -> Vec<&'static Function> {
    catalog::FUNCTIONS
        .iter()
        .filter(|f| matches!(f.trigger, Trigger::Http { .. }) && !f.is_scim())
        .collect()
}

pub(crate) fn method_of(f: &Function) -> &'static str {
    match f.trigger {
        Trigger::Http { method, .. } => method,
        _ => unreachable!("{} is not an HTTP route", f.name),
    }
}

/// The DynamoDB calls a request made, from an interceptor on the App's client:
/// every call, and the writes DynamoDB carried out. A refused request must
/// carry out none (a conditional write DynamoDB refused wrote nothing), and
/// the calls show how many inputs were refused before any.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calls(Arc<Mutex<(usize, Vec<String>)>>);

const WRITES: &[&str] = &[
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "TransactWriteItems",
    "BatchWriteItem",
];

impl Intercept for Calls {
    fn name(&self) -> &'static str {
        "Calls"
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = cfg.load::<Metadata>().map(|m| m.name().to_owned()).unwrap_or_default();
        let written = WRITES.contains(&operation.as_str()) && matches!(context.output_or_error(), Some(Ok(_)));
        let mut calls = self.0.lock().unwrap();
        calls.0 += 1;
        if written {
            calls.1.push(operation);
        }
        Ok(())
    }
}

impl Calls {
    /// The calls and the writes carried out since the last `take`.
    pub(crate) fn take(&self) -> (usize, Vec<String>) {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A TestApp on a fresh table whose client reports its calls to the returned [`Calls`].
pub(crate) async fn spawn_recorded() -> (TestApp, Calls) {
    // Each table on the next DynamoDB Local in turn: the suites attack every
    // route at once, a table each, and one instance serves one request at a
    // time, so the load spreads over all that `scripts/ddb-local` started.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let pool = ddb::endpoints();
    let turn = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let client = ddb::client_at(&pool[turn % pool.len()]);
    let table = ddb::fresh_table(&client).await;
    let calls = Calls::default();
    let config = client.config().to_builder().interceptor(calls.clone()).build();
    let store = Store::new(
        aws_sdk_dynamodb::Client::from_conf(config),
        user_service::config::StoreConfig::new(table),
    )
    .with_key(ddb::test_key());
    (TestApp::on(store), calls)
}

/// The accounts every route's table starts with. Both suites give each route
/// a table of its own (a route's requests must meet its fixture intact), and
/// building a full [`account`] costs DynamoDB Local about fifteen
/// transactions: built once here, through the store, and copied into each
/// route's fresh table (a scan and a few batch writes), the suites spend
/// DynamoDB Local's time on the routes under test.
pub(crate) struct Fixture<T> {
    app: TestApp,
    accounts: T,
}

impl<T: Clone> Fixture<T> {
    /// Builds the accounts with `make` on a table of their own.
    pub(crate) async fn build<F: std::future::Future<Output = T>>(make: impl FnOnce(TestApp) -> F) -> Self {
        let app = TestApp::spawn().await;
        let accounts = make(app.clone()).await;
        Self { app, accounts }
    }

    /// A recorded app on a fresh table holding a copy of the fixture's items,
    /// its clock where the fixture's stands; nothing recorded yet.
    pub(crate) async fn copy(&self) -> (TestApp, Calls, T) {
        let (mut app, calls) = spawn_recorded().await;
        let copied = ddb::copy_table(
            self.app.store.client(),
            &self.app.store.config().table_name,
            app.store.client(),
            &app.store.config().table_name,
        )
        .await;
        assert!(copied > 0, "the fixture's table is empty");
        app.clock = user_service::clock::Clock::manual(self.app.clock.now());
        calls.take();
        (app, calls, self.accounts.clone())
    }
}

/// A user with a profile and nothing else (primary `{label}@example.com`).
pub(crate) async fn profile_only(app: &TestApp, label: &'static str) -> Account {
    let sub = uuid::Uuid::new_v4().to_string();
    let primary = format!("{label}@example.com");
    app.store
        .create_user(
            &NewUser {
                user_id: UserId::parse(&sub).unwrap(),
                email: EmailAddress::parse(&primary).unwrap(),
                first_name: Some(PersonName::parse("Ada").unwrap()),
                last_name: Some(PersonName::parse("Lovelace").unwrap()),
                phone: None,
            },
            app.clock.now(),
        )
        .await
        .unwrap();
    // Ids nobody has: a request naming them finds nothing.
    Account {
        sub,
        label,
        primary,
        unverified: uuid::Uuid::new_v4().to_string(),
        secondary: uuid::Uuid::new_v4().to_string(),
        email_of_secondary: format!("{label}.old@example.com"),
        recovery: String::new(),
        org: uuid::Uuid::new_v4().to_string(),
        member: uuid::Uuid::new_v4().to_string(),
        invitation: uuid::Uuid::new_v4().to_string(),
        invitation_token: user_service::invitation::InvitationToken::generate(
            user_service::domain::OrgId::new(),
            user_service::domain::InvitationId::from_bytes(*uuid::Uuid::new_v4().as_bytes()),
        )
        .unwrap()
        .encode(),
        domain: format!("nobody-{}.example", &uuid::Uuid::new_v4().simple().to_string()[..8]),
        domain_address: uuid::Uuid::new_v4().to_string(),
        scim_token: uuid::Uuid::new_v4().to_string(),
    }
}

/// One user's account as the fixtures build it: a verified primary address
/// (`primary`), an unverified one issued [`CODE`] (`unverified`) and a
/// verified secondary (`secondary`).
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub(crate) sub: String,
    pub(crate) label: &'static str,
    pub(crate) primary: String,
    pub(crate) unverified: String,
    pub(crate) secondary: String,
    pub(crate) email_of_secondary: String,
    /// A recovery link's token for the account, once [`with_recovery`] made one.
    pub(crate) recovery: String,
    /// The organization the account owns (with a second owner, `member`, so
    /// that the account can close); an id nobody has on a profile alone.
    pub(crate) org: String,
    /// The organization's other owner, by sub.
    pub(crate) member: String,
    /// A pending invitation of the organization, by id.
    pub(crate) invitation: String,
    /// The token of an invitation to the account's verified secondary (by
    /// the organization it owns already: accepting uses it up).
    pub(crate) invitation_token: String,
    /// The organization's verified domain, which invites its users.
    pub(crate) domain: String,
    /// The account's verified address at that domain, by id.
    pub(crate) domain_address: String,
    /// A live SCIM token of the organization, by id.
    pub(crate) scim_token: String,
}

/// `account` after a switch of its primary to its secondary, with a token
/// for the link that undoes it: what the recovery route's valid request sends.
pub(crate) async fn with_recovery(app: &TestApp, mut account: Account) -> Account {
    let user = UserId::parse(&account.sub).unwrap();
    let secondary = user_service::domain::EmailId::parse(&account.secondary).unwrap();
    let now = app.clock.now();
    let profile = app.store.set_primary(&user, secondary, now).await.unwrap();
    let (token, _) = app
        .store
        .issue_recovery_token(&user, profile.version, now)
        .await
        .unwrap()
        .expect("a fresh switch takes a token");
    account.recovery = token.encode();
    account
}

/// A user with the full fixture shape, built through the store (fixtures are
/// not what is under test; the handlers are).
pub(crate) async fn account(app: &TestApp, label: &'static str) -> Account {
    // A suite attacks every route at once, each on its own table: building
    // all their accounts at once starves DynamoDB Local, and a fixture's write
    // that loses a race retries within a request's 10 s budget. A fixture is
    // not what is under test: a few are built at once, each with time to
    // finish.
    static BUILDING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(8);
    let _turn = BUILDING.acquire().await.expect("the semaphore stays open");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    user_service::deadline::within(Some(deadline), Box::pin(build_account(app, label))).await
}

async fn build_account(app: &TestApp, label: &'static str) -> Account {
    let mut account = profile_only(app, label).await;
    let user = UserId::parse(&account.sub).unwrap();
    let now = app.clock.now();
    let code = VerificationCode::parse(CODE).unwrap();
    let addr = |s: &str| EmailAddress::parse(s).unwrap();
    let secondary = app
        .store
        .add_email(&user, &addr(&account.email_of_secondary), &code, now)
        .await
        .unwrap()
        .email_id;
    app.store.verify_email(&user, secondary, &code, now).await.unwrap();
    let unverified = app
        .store
        .add_email(&user, &addr(&format!("{label}.new@example.com")), &code, now)
        .await
        .unwrap()
        .email_id;
    account.secondary = secondary.to_string();
    account.unverified = unverified.to_string();
    // An organization it owns, with a second owner.
    let new = user_service::domain::NewOrganization {
        name: user_service::domain::OrgName::parse("Acme").unwrap(),
        slug: user_service::domain::Slug::parse(&format!("{label}-{}", &account.sub[..8])).unwrap(),
    };
    let org = app.store.create_organization(&user, &new, now).await.unwrap().org_id;
    let co_owner = UserId::parse(&uuid::Uuid::new_v4().to_string()).unwrap();
    let co_owner_email = EmailAddress::parse(&format!("{label}.co-owner@example.com")).unwrap();
    app.store
        .create_user(
            &NewUser {
                user_id: co_owner.clone(),
                email: co_owner_email,
                first_name: None,
                last_name: None,
                phone: None,
            },
            now,
        )
        .await
        .unwrap();
    app.store
        .join_organization(org, &co_owner, user_service::domain::Role::Owner, now)
        .await
        .unwrap();
    account.org = org.to_string();
    account.member = co_owner.to_string();
    let invite = |by: UserId, email: EmailAddress| {
        let store = app.store.clone();
        async move {
            store
                .invite(
                    &user_service::domain::Actor::Member(by),
                    org,
                    &email,
                    user_service::domain::Role::Member,
                    now,
                )
                .await
                .unwrap()
        }
    };
    let pending = invite(user.clone(), addr(&format!("{label}.invited@example.com"))).await;
    account.invitation = pending.invitation.invitation_id.to_string();
    let to_secondary = invite(co_owner, addr(&account.email_of_secondary)).await;
    account.invitation_token = to_secondary.token.encode();
    // A verified domain of its own that invites its users, proved by the
    // account's verified address there.
    let domain = user_service::domain::OrgDomain::parse(&format!("{label}-{}.example", &account.sub[..8])).unwrap();
    let owner = user_service::domain::Actor::Member(user.clone());
    app.store.claim_domain(&owner, org, &domain, now).await.unwrap();
    let at = app
        .store
        .add_email(&user, &addr(&format!("it@{domain}")), &code, now)
        .await
        .unwrap()
        .email_id;
    app.store.verify_email(&user, at, &code, now).await.unwrap();
    app.store.verify_domain(&owner, org, &domain, at, now).await.unwrap();
    app.store
        .set_enrollment(&owner, org, &domain, user_service::domain::Enrollment::Invite)
        .await
        .unwrap();
    account.domain = domain.to_string();
    account.domain_address = at.to_string();
    let name = user_service::domain::ScimTokenName::parse("Okta").unwrap();
    let made = app.store.create_scim_token(&owner, org, &name, now).await.unwrap();
    account.scim_token = made.info.token_id.to_string();
    account
}

pub(crate) async fn set_status(app: &TestApp, account: &Account, status: UserStatus) {
    let user = UserId::parse(&account.sub).unwrap();
    if status == UserStatus::Deleted {
        app.store
            .delete_user(&user, user_service::store::Deleter::System, app.clock.now())
            .await
            .unwrap();
    } else {
        app.store.set_status(&user, status, app.clock.now()).await.unwrap();
    }
}

/// Ends every session of `account` signed in up to now, as a recovery does
/// (its `tokensValidAfter`), and nothing else; gives that time.
pub(crate) async fn end_sessions(app: &TestApp, account: &Account) -> i64 {
    let user = UserId::parse(&account.sub).unwrap();
    let now = app.clock.now().unix_seconds();
    app.store
        .client()
        .update_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(user_service::store::keys::profile_key(&user)))
        .update_expression("SET tokensValidAfter = :now")
        .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
        .send()
        .await
        .unwrap();
    now
}

/// The profile's current version as an `If-Match` value; `"1"` when it is gone.
pub(crate) async fn if_match(app: &TestApp, sub: &str) -> String {
    let user = UserId::parse(sub).unwrap();
    let version = app.store.get_profile(&user).await.map(|p| p.version).unwrap_or(1);
    format!("\"{version}\"")
}

/// The `If-Match` a valid request for `route` sends: the organization's
/// current version on the routes that name `account`'s organization, the
/// profile's elsewhere.
pub(crate) async fn if_match_for(app: &TestApp, route: &Function, account: &Account) -> String {
    if !names_an_organization(route) {
        return if_match(app, &account.sub).await;
    }
    let Ok(org) = user_service::domain::OrgId::parse(&account.org) else {
        return "\"1\"".to_owned();
    };
    let item = app
        .store
        .client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(user_service::store::keys::org_key(org)))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item;
    let version = item
        .and_then(|i| i.get("version").and_then(|v| v.as_n().ok()).cloned())
        .unwrap_or_else(|| "1".to_owned());
    format!("\"{version}\"")
}

/// Whose request and on what: `caller` sends it, `owner` is the account whose
/// ids and addresses it names (another's, for a cross-user attempt), and the
/// admin routes name `owner` as their target user.
pub(crate) struct Target<'a> {
    pub(crate) caller: &'a Account,
    pub(crate) owner: &'a Account,
    pub(crate) admin_groups: bool,
    pub(crate) if_match: String,
}

/// A valid request for `route`, with the route's normal success status: the
/// route module's own example (`Route::example`), its placeholders filled from
/// `t`. A route without a module fails every suite that asks.
pub(crate) fn valid_request(route: &Function, t: &Target<'_>) -> (Event, u16) {
    let example = routes::route_of(route)
        .unwrap_or_else(|| panic!("{}: an HTTP function no route module describes", route.name))
        .example();
    let mut event = Event::of(route).caller(&t.caller.sub);
    event = if t.admin_groups {
        event.groups("[admin]")
    } else {
        event.no_groups()
    };
    let owner = t.owner;
    let extra = format!("{}.extra@example.com", t.caller.label);
    // A slug of its own for each request: a creation never meets another's.
    let slug = format!("s-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let free_domain = format!("d-{}.example", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let fill = |value: &str| -> String {
        [
            ("{unverified}", owner.unverified.as_str()),
            ("{secondary}", owner.secondary.as_str()),
            ("{primary}", owner.primary.as_str()),
            ("{owner}", owner.sub.as_str()),
            ("{code}", CODE),
            ("{extra}", extra.as_str()),
            ("{free}", "free@example.com"),
            ("{recovery}", owner.recovery.as_str()),
            ("{org}", owner.org.as_str()),
            ("{member}", owner.member.as_str()),
            ("{slug}", slug.as_str()),
            ("{invitationToken}", owner.invitation_token.as_str()),
            ("{invitation}", owner.invitation.as_str()),
            ("{domainAddress}", owner.domain_address.as_str()),
            ("{domain}", owner.domain.as_str()),
            ("{freeDomain}", free_domain.as_str()),
            ("{scimToken}", owner.scim_token.as_str()),
        ]
        .iter()
        .fold(value.to_owned(), |value, (placeholder, filled)| {
            value.replace(placeholder, filled)
        })
    };
    for (name, value) in example.path {
        event = event.path_param(name, &fill(value));
    }
    for (name, value) in example.query {
        event = event.query(name, &fill(value));
    }
    if let Some(body) = example.body {
        event = event.body(serde_json::from_str(&fill(body)).expect("an example body is JSON"));
    }
    if example.if_match {
        event = event.header("if-match", &t.if_match);
    }
    (event, example.status)
}

/// Whether every query parameter of `route` has a default (the admin list's
/// filter, page size and cursor), so a request without them is valid.
pub(crate) fn query_is_optional(route: &Function) -> bool {
    routes::route_of(route).is_some_and(|r| r.reads().query_defaults)
}

/// Whether a valid request for `route` carries the owner's invitation token,
/// which only the holder of its address (the owner) may use.
pub(crate) fn carries_an_invitation_token(route: &Function) -> bool {
    routes::route_of(route)
        .and_then(|r| r.example().body)
        .is_some_and(|body| body.contains("{invitationToken}"))
}

/// Whether a valid request for `route` joins an organization by the owner's
/// address at its domain: that address is no one else's proof.
pub(crate) fn joins_by_the_owners_address(route: &Function) -> bool {
    routes::route_of(route).is_some_and(|r| {
        let example = r.example();
        example.body.is_some_and(|body| body.contains("{domainAddress}"))
            && !example.path.iter().any(|(name, _)| *name == "domain")
    })
}

/// Whether a valid request for `route` names one of the owner's addresses by id.
pub(crate) fn names_an_email_id(route: &Function) -> bool {
    let dummy = Account {
        sub: "00000000-0000-4000-8000-000000000000".into(),
        label: "x",
        primary: "x@example.com".into(),
        unverified: "00000000-0000-4000-8000-0000000000aa".into(),
        secondary: "00000000-0000-4000-8000-0000000000bb".into(),
        email_of_secondary: "x.old@example.com".into(),
        recovery: String::new(),
        org: "00000000-0000-4000-8000-0000000000cc".into(),
        member: "00000000-0000-4000-8000-0000000000dd".into(),
        invitation: "00000000-0000-4000-8000-0000000000ee".into(),
        invitation_token: String::new(),
        domain: "x.example".into(),
        domain_address: "00000000-0000-4000-8000-0000000000ff".into(),
        scim_token: "00000000-0000-4000-8000-000000000100".into(),
    };
    let target = Target {
        caller: &dummy,
        owner: &dummy,
        admin_groups: false,
        if_match: "\"1\"".into(),
    };
    let (event, _) = valid_request(route, &target);
    route.access() == Access::User && {
        let text = event.0.to_string();
        text.contains(&dummy.unverified) || text.contains(&dummy.secondary)
    }
}

/// Whether a valid request for `route` names an organization by id.
pub(crate) fn names_an_organization(route: &Function) -> bool {
    routes::route_of(route).is_some_and(|r| r.example().path.iter().any(|(name, _)| *name == "orgId"))
}

pub(crate) type Snapshot = BTreeMap<(String, String), BTreeMap<String, String>>;

/// Every item of the table, keyed by PK and SK, attributes as debug text
/// (AttributeValue has no order).
pub(crate) async fn snapshot(app: &TestApp) -> Snapshot {
    let items = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let s = |item: &std::collections::HashMap<String, AttributeValue>, k: &str| {
        item.get(k).and_then(|v| v.as_s().ok()).cloned().unwrap_or_default()
    };
    items
        .into_iter()
        .map(|item| {
            let key = (s(&item, "PK"), s(&item, "SK"));
            let attrs = item.into_iter().map(|(k, v)| (k, canonical(&v))).collect();
            (key, attrs)
        })
        .collect()
}

/// The items that name a user: their partition, the claims on their
/// addresses and their counters (each holds the `sub` in its key or an attribute).
pub(crate) fn items_naming(snapshot: &Snapshot, sub: &str) -> Snapshot {
    snapshot
        .iter()
        .filter(|((pk, _), attrs)| pk.contains(sub) || attrs.values().any(|v| v.contains(sub)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// An attribute value as text, a map's entries in key order (a HashMap's
/// Debug order differs between two reads of one item).
fn canonical(value: &AttributeValue) -> String {
    match value {
        AttributeValue::M(map) => {
            let entries: BTreeMap<&String, String> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
            format!("M({entries:?})")
        }
        AttributeValue::L(list) => format!("L({:?})", list.iter().map(canonical).collect::<Vec<_>>()),
        other => format!("{other:?}"),
    }
}

/// What changed between two snapshots, one line per item; empty when nothing did.
pub(crate) fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (key, item) in before {
        match after.get(key) {
            None => out.push(format!("removed {key:?}")),
            Some(now) if now != item => out.push(format!("changed {key:?}")),
            Some(_) => {}
        }
    }
    for key in after.keys() {
        if !before.contains_key(key) {
            out.push(format!("added {key:?}"));
        }
    }
    out
}

/// `event` to `route`'s handler; a panic anywhere (building the request
/// included) is an `Err` naming it, so one bad case does not hide the others.
pub(crate) async fn send(app: &TestApp, route: &'static Function, event: Event) -> Result<Reply, String> {
    std::panic::AssertUnwindSafe(app.send(route, event))
        .catch_unwind()
        .await
        .map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            format!("panicked: {message}")
        })
}

/// A 4xx RFC 9457 problem with a documented code: the one answer to bad input.
pub(crate) fn check_problem(reply: &Reply) -> Result<&str, String> {
    let code = reply.body["code"].as_str().unwrap_or_default();
    let problems = [
        (!(400..500).contains(&reply.status)).then(|| format!("status {}", reply.status)),
        (reply.header("content-type") != Some("application/problem+json"))
            .then(|| format!("content-type {:?}", reply.header("content-type"))),
        (!user_service::http::problem::CODES.contains(&code)).then(|| format!("code {code:?}")),
        (reply.body["status"] != json!(reply.status)).then(|| "body status differs".to_owned()),
        ["type", "title", "detail"]
            .iter()
            .find(|k| !reply.body[**k].is_string())
            .map(|k| format!("no {k}")),
    ];
    let found: Vec<String> = problems.into_iter().flatten().collect();
    if found.is_empty() {
        Ok(code)
    } else {
        Err(format!("{}: {}", found.join(", "), reply.body))
    }
}

/// Merges `section` into target/reliability/hostile.json under a file lock:
/// both tests of this suite run at once, in separate processes.
pub(crate) fn write_figures(section: &str, figures: Value) {
    let dir = integration_tests::workspace_root().join("target/reliability");
    std::fs::create_dir_all(&dir).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("hostile.json"))
        .unwrap();
    file.lock().unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    let mut all: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({}));
    if !all.is_object() {
        all = json!({});
    }
    all[section] = figures;
    file.set_len(0).unwrap();
    file.rewind().unwrap();
    file.write_all(serde_json::to_string_pretty(&all).unwrap().as_bytes())
        .unwrap();
    file.unlock().unwrap();
}
