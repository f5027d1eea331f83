//! What one invocation of each function needs in the tuning runs: its event,
//! after the untimed set-up the event refers to, and what its success looks
//! like. Every scenario is a real success path that can be repeated any number
//! of times: each invocation gets users, addresses and keys of its own, so no
//! daily limit, version or earlier invocation ever turns it into a refusal.
//!
//! Nothing is faked: the table is DynamoDB Local's; Cognito, SES, EventBridge
//! and the SQS queue behind the bus are moto's. By trigger: `http` (the
//! routes), `triggers` (Cognito's), `streams` (the stream consumers and the
//! scheduled reconcile, which has a small table and pool of its own).

mod http;
mod scim;
mod streams;
mod triggers;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use integration_tests::events;
use integration_tests::moto::{self, Moto};
use local_api::events::LocalEvents;
use serde_json::{Value, json};
use user_service::Store;
use user_service::api::routes::route_of;
use user_service::catalog::{self, Function};
use user_service::config::{self, setting::Need};
use user_service::domain::{
    AdditionalEmail, EmailAddress, EmailId, NewAccount, NewUser, PENDING_USER_PREFIX, Timestamp, UserId,
};
use user_service::import::{HashAlgorithm, PasswordHash};

use self::streams::Reconcile;

/// The pending users' legacy hash: events/migrate-user.json's password in
/// bcrypt at cost 10, a common default (PHP's `password_hash`, Go's
/// `bcrypt.DefaultCost`) and OWASP's minimum, made by `hash-probe`. Realistic
/// but moderate; the hashes section times the dearer formats.
const LEGACY_BCRYPT: &str = "$2b$10$ONwPZuPmQy1rxBuMMpjkHu4QbgI7rx1rtEdk0H0CQQFkdzv7mL4ZS";

/// Adds a user with this address to the world's pool and gives its sub. A
/// closure holds the SDK's client: the bench does not name Cognito's crate.
type AddToPool = Box<dyn Fn(String) -> BoxFuture<'static, String> + Send + Sync>;

/// The users the world's pool keeps, the latest: moto scans the pool for an
/// address on each change of one, so a growing pool would slow the timed calls.
const POOL_KEPT: usize = 32;

/// What the functions run against: the table (through `store`), moto
/// (Cognito, SES, EventBridge, SQS), a user pool, an admin and a reader.
pub(crate) struct World {
    store: Store,
    moto: Moto,
    /// A pool shaped like the template's: sync-cognito-email's users, and the
    /// `userPoolId` of the triggers' events.
    pool_id: String,
    add_to_pool: AddToPool,
    /// The bus's watcher: a rule sends every event put on the bus to its
    /// queue. Only the test reads it; the bus, rule and queue stay in moto.
    #[cfg_attr(not(test), allow(dead_code))]
    bus: LocalEvents,
    reconcile: Reconcile,
    /// An active member of the admin group the admin events' claims name.
    admin: Account,
    /// A user who only reads: the GET routes' caller and the everyday sign-in.
    reader: Account,
    legacy: PasswordHash,
    /// events/<name>.json of every function.
    samples: HashMap<&'static str, Value>,
    names: Names,
    /// The Cognito triggers' events, by function and user: a trigger answers
    /// with its event unchanged.
    issued: Mutex<HashMap<String, Value>>,
}

/// A user in the table: the sub, the primary address, and the id of a
/// verified second address if it has one.
struct Account {
    user: UserId,
    email: EmailAddress,
    second: Option<EmailId>,
}

/// Fresh names: this world's tag keeps two worlds on one table apart.
struct Names {
    tag: String,
    next: AtomicU64,
}

impl Names {
    fn address(&self, what: &str) -> String {
        format!(
            "{what}-{}-{}@example.com",
            self.tag,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// A domain nobody holds.
    fn domain(&self) -> String {
        format!("d-{}-{}.example", self.tag, self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// A stream record's sequence number, growing as a shard's do.
    /// A slug nobody holds.
    fn slug(&self) -> String {
        format!("b-{}-{}", self.tag, self.next.fetch_add(1, Ordering::Relaxed))
    }

    fn sequence(&self) -> String {
        format!("4421584600000000{:012}", self.next.fetch_add(1, Ordering::Relaxed))
    }
}

impl World {
    /// Sets up what every scenario shares: moto with SES's identity, the bus
    /// and a pool; the reconcile's table and pool; an admin and a reader.
    pub(crate) async fn new(store: &Store) -> World {
        // Moto::start waits for the server by blocking; its panic (how to
        // install moto) is the one to show.
        let moto = tokio::task::spawn_blocking(Moto::start)
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        moto.ses_sender().await;
        let (_, bus) = moto.event_bus(user_service::events::Personal::None).await;
        let (cognito, pool_id, _) = moto.user_pool(&[]).await;
        let (pool, kept) = (pool_id.clone(), Arc::new(Mutex::new(VecDeque::new())));
        let add_to_pool: AddToPool = Box::new(move |email: String| -> BoxFuture<'static, String> {
            let (cognito, pool, kept) = (cognito.clone(), pool.clone(), kept.clone());
            Box::pin(async move {
                let sub = moto::add_users(&cognito, &pool, &[email.as_str()]).await.remove(0);
                let oldest = {
                    let mut kept = kept.lock().expect("the pool's users");
                    kept.push_back(sub.clone());
                    if kept.len() > POOL_KEPT { kept.pop_front() } else { None }
                };
                if let Some(oldest) = oldest {
                    cognito
                        .admin_delete_user()
                        .user_pool_id(&pool)
                        .username(oldest)
                        .send()
                        .await
                        .unwrap_or_else(|e| panic!("a synced user gone: {}", user_service::error::chain(&e)));
                }
                sub
            })
        });
        let names = Names {
            tag: fresh_sub()[..8].to_owned(),
            next: AtomicU64::new(0),
        };
        let reconcile = Reconcile::set_up(store, &moto, &names).await;
        let admin = account(store, &names, false).await;
        let reader = account(store, &names, true).await;
        World {
            store: store.clone(),
            moto,
            pool_id,
            add_to_pool,
            bus,
            reconcile,
            admin,
            reader,
            legacy: PasswordHash::parse(HashAlgorithm::Bcrypt, LEGACY_BCRYPT).expect("a bcrypt hash"),
            samples: catalog::FUNCTIONS
                .iter()
                .map(|f| (f.name, events::load(f.name)))
                .collect(),
            names,
            issued: Mutex::new(HashMap::new()),
        }
    }

    /// The environment `function` needs on top of `Plan::launch`'s: moto's
    /// endpoints for what it calls, the pool, the sender, the bus; the
    /// reconcile's own table.
    pub(crate) fn env(&self, function: &str) -> Vec<(String, String)> {
        let f = entry(function);
        let mut env = Vec::new();
        let mut set = |name: &str, value: &str| env.push((name.to_owned(), value.to_owned()));
        if !f.cognito_actions.is_empty() {
            set("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", &self.moto.endpoint);
        }
        if f.runs_the_reconcile() {
            set(config::TABLE_NAME.name(), self.reconcile.table());
            set(config::USER_POOL_ID.name(), self.reconcile.pool_id());
        } else if f.needs(Need::Pool) {
            set(config::USER_POOL_ID.name(), &self.pool_id);
        }
        if f.sends_email {
            // Mail through SES, as deployed, rather than into the log.
            set("AWS_ENDPOINT_URL_SESV2", &self.moto.endpoint);
            set(config::VERIFICATION_SENDER.name(), "ses");
            set(config::SENDER_ADDRESS.name(), moto::SENDER);
            set(config::SES_CONFIGURATION_SET.name(), moto::CONFIGURATION_SET);
        }
        if f.publishes_events {
            set("AWS_ENDPOINT_URL_EVENTBRIDGE", &self.moto.endpoint);
            set(config::EVENT_BUS_NAME.name(), moto::EVENT_BUS);
            set(config::EVENT_SOURCE.name(), moto::EVENT_SOURCE);
        }
        env
    }

    /// The event for the next invocation of `function`, after the untimed
    /// set-up it needs.
    pub(crate) async fn event(&self, function: &str) -> Value {
        let f = entry(function);
        if route_of(f).is_some() {
            self.http_event(f).await
        } else if f.is_scim() {
            self.scim_event(f).await
        } else if f.is_cognito_trigger() {
            self.trigger_event(f).await
        } else {
            self.stream_event(f).await
        }
    }

    /// Ok when `answer` is the function's success for its event; else what came back.
    pub(crate) fn check(&self, function: &str, answer: &Value) -> Result<(), String> {
        let f = entry(function);
        let ok = if let Some(route) = route_of(f) {
            let success = route.example().status;
            if answer["statusCode"] != success {
                return Err(format!(
                    "{function}: status {} where success is {success}: {}",
                    answer["statusCode"],
                    redacted(&answer["body"])
                ));
            }
            true
        } else if f.is_scim() {
            let success = scim::success(f);
            if answer["statusCode"] != success {
                return Err(format!(
                    "{function}: status {} where success is {success}: {}",
                    answer["statusCode"],
                    redacted(&answer["body"])
                ));
            }
            true
        } else if f.is_cognito_trigger() {
            self.trigger_succeeded(f, answer)
        } else {
            streams::succeeded(f, answer)
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{function}: not its success: {}", redacted(answer)))
        }
    }

    fn sample(&self, name: &str) -> Value {
        self.samples[name].clone()
    }

    async fn account(&self, second: bool) -> Account {
        account(&self.store, &self.names, second).await
    }
}

/// The catalog's entry for `function`.
fn entry(function: &str) -> &'static Function {
    catalog::by_name(function).unwrap_or_else(|| panic!("{function}: not a function of the catalog"))
}

/// What a function of the catalog without a scenario gets.
fn no_scenario(f: &Function) -> ! {
    panic!("{}: a function of the catalog with no tuning scenario", f.name)
}

/// A random sub, as Cognito makes them (a v4 UUID): a provisional id's own.
fn fresh_sub() -> String {
    UserId::new_pending().as_str()[PENDING_USER_PREFIX.len()..].to_owned()
}

fn new_user(user_id: UserId, address: &str) -> NewUser {
    NewUser {
        user_id,
        email: EmailAddress::parse(address).expect("an address"),
        first_name: None,
        last_name: None,
        phone: None,
    }
}

/// A fresh active user with a verified primary and, if `second`, a verified second address.
async fn account(store: &Store, names: &Names, second: bool) -> Account {
    let user = UserId::parse_sub(&fresh_sub()).expect("a sub");
    let new = new_user(user.clone(), &names.address("user"));
    let email = new.email.clone();
    let now = Timestamp::now();
    let more = second.then(|| AdditionalEmail {
        email: EmailAddress::parse(&names.address("second")).expect("an address"),
        verified: true,
    });
    let account = NewAccount {
        more: more.into_iter().collect(),
        ..NewAccount::signed_up(new, now)
    };
    store
        .create_account(&account, now)
        .await
        .unwrap_or_else(|e| panic!("a fresh user: {e}"));
    let second = if second {
        store
            .list_emails(&user)
            .await
            .unwrap_or_else(|e| panic!("a fresh user's addresses: {e}"))
            .into_iter()
            .find(|e| !e.is_primary)
            .map(|e| e.email_id)
    } else {
        None
    };
    Account { user, email, second }
}

/// `sample` with each pair's first text replaced by its second, everywhere
/// (keys, images, index keys): plain values, so the JSON stays whole.
fn replaced(sample: &Value, pairs: &[(&str, &str)]) -> Value {
    let mut text = sample.to_string();
    for (from, to) in pairs {
        text = text.replace(from, to);
    }
    serde_json::from_str(&text).expect("the sample, still JSON")
}

/// `answer` with no address or password in it (migrate-user's answer is its
/// event, password and all), for a message that may reach a log; a string
/// holding JSON (an HTTP body) is redacted inside.
fn redacted(answer: &Value) -> Value {
    match answer {
        Value::String(text) if text.contains('@') => match serde_json::from_str::<Value>(text) {
            Ok(inner @ (Value::Object(_) | Value::Array(_))) => json!(redacted(&inner).to_string()),
            _ => json!("<redacted>"),
        },
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| match k.as_str() {
                    "password" => (k.clone(), json!("<redacted>")),
                    _ => (k.clone(), redacted(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use integration_tests::ddb;
    use user_service::catalog::FUNCTIONS;

    use crate::plan::{BENCH_CODES_PER_USER, Plan};
    use crate::runtime::Environment;

    /// Every function's debug binary (`cargo build --workspace`) in an
    /// execution environment of its own, three events in a row, each its
    /// success; and what the answer cannot show (a mail SES accepted,
    /// Cognito's new email, the events on the bus) checked in moto.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_functions_scenario_succeeds_three_times_in_a_row() {
        let store = ddb::store_with(|c| c.max_codes_per_user = BENCH_CODES_PER_USER).await;
        let table = store.config().table_name.clone();
        let world = World::new(&store).await;
        let plan = Plan {
            smoke: true,
            spawns: 1,
            warm: 3,
            users: 1,
            bin_dir: integration_tests::workspace_root().join("target/debug"),
            out: std::env::temp_dir(),
            only: Vec::new(),
        };
        let endpoint = ddb::endpoint();
        let mut failed = Vec::new();
        let mut published = Vec::new();
        for function in FUNCTIONS {
            let mut launch = plan.launch(function.name, &table, &endpoint, None);
            for (name, value) in world.env(function.name) {
                launch = launch.env(&name, value);
            }
            // DynamoDB Local on a loaded CI machine is no DynamoDB: this test
            // checks that each scenario works, not how fast, so its calls get
            // the time the e2e walk gives them (tests/e2e/functions.rs).
            launch = launch
                .env("DYNAMODB_OPERATION_TIMEOUT_MS", "10000".to_owned())
                .env("DYNAMODB_ATTEMPT_TIMEOUT_MS", "5000".to_owned());
            let env = Environment::start(&launch).await.unwrap_or_else(|e| panic!("{e}"));
            for round in 1..=3 {
                let event = world.event(function.name).await;
                let outcome = match env.invoke(&event).await {
                    Ok((_, answer)) => world.check(function.name, &answer),
                    Err(err) => Err(err),
                };
                let outcome = match outcome {
                    Ok(()) => did_its_work(&world, function.name, &event).await,
                    err => err,
                };
                if let Err(why) = outcome {
                    failed.push(format!(
                        "{} #{round}: {why}\n{}",
                        function.name,
                        env.output().join("\n")
                    ));
                }
                if function.name == "publish-events" {
                    published.push(event["Records"][0]["dynamodb"]["NewImage"]["userId"]["S"].clone());
                }
            }
            env.terminate().await;
        }
        assert!(failed.is_empty(), "{}", failed.join("\n\n"));

        // Each verification became its event on the bus.
        let arrived = world.bus.collect(published.len()).await;
        let subjects: Vec<&Value> = arrived
            .iter()
            .filter(|e| e["type"] == "email.verified")
            .map(|e| &e["subject"])
            .collect();
        for sub in &published {
            assert!(
                subjects.contains(&sub),
                "no email.verified for {sub} on the bus: {arrived:?}"
            );
        }
    }

    /// What an invocation did beside its answer, where the answer cannot
    /// tell: a code's delivery failure is only logged, and a Cognito user
    /// that is missing is only warned about.
    async fn did_its_work(world: &World, function: &str, event: &Value) -> Result<(), String> {
        let caller = || UserId::parse_sub(event["requestContext"]["authorizer"]["jwt"]["claims"]["sub"].as_str()?).ok();
        let email_id = || EmailId::parse(event["pathParameters"]["emailId"].as_str()?).ok();
        let record =
            |user: Option<UserId>, id: Option<EmailId>| async move { world.store.get_email(&user?, id?).await.ok() };
        match function {
            "add-email" => {
                let body: Value = serde_json::from_str(event["body"].as_str().unwrap_or_default()).unwrap_or_default();
                mailed(world, body["email"].as_str().unwrap_or_default()).await
            }
            "send-verification" => match record(caller(), email_id()).await {
                Some(email) => mailed(world, email.email.as_str()).await,
                None => Err("the address is gone".to_owned()),
            },
            "verify-email" => match record(caller(), email_id()).await {
                Some(email) if email.is_verified => Ok(()),
                _ => Err("the address is not verified".to_owned()),
            },
            "sync-cognito-email" => {
                let image = &event["Records"][0]["dynamodb"]["NewImage"];
                let sub = image["userId"]["S"].as_str().unwrap_or_default();
                let (cognito, _, _) = world.moto.user_pool(&[]).await;
                let user = moto::cognito_user(&cognito, &world.pool_id, sub).await;
                match user.and_then(|u| u.email) {
                    Some(email) if email == image["email"]["S"] => Ok(()),
                    _ => Err("Cognito's email did not follow the primary".to_owned()),
                }
            }
            // The last pass's snapshot alone is left: each set-up drops the one before.
            "reconcile-users" => {
                let reconcile = &world.reconcile;
                let items = reconcile
                    .store()
                    .client()
                    .scan()
                    .table_name(reconcile.table())
                    .send()
                    .await
                    .map_err(|e| user_service::error::chain(&e))?;
                let mut passes: Vec<&str> = items
                    .items()
                    .iter()
                    .filter_map(|item| item[user_service::store::keys::PK].as_s().ok())
                    .filter(|pk| pk.starts_with(&user_service::store::keys::snapshot_pk("")))
                    .map(String::as_str)
                    .collect();
                passes.sort_unstable();
                passes.dedup();
                match passes.len() {
                    1 => Ok(()),
                    n => Err(format!("{n} passes' snapshots in the reconcile's table, not one")),
                }
            }
            _ => Ok(()),
        }
    }

    /// SES accepted exactly one message to `address` (every scenario's address is its own).
    async fn mailed(world: &World, address: &str) -> Result<(), String> {
        match world.moto.mail_to(address).await.len() {
            1 => Ok(()),
            n => Err(format!("{n} messages in SES to the address, not one")),
        }
    }
}
