//! Faults DynamoDB Local cannot produce, through the handlers: throttling,
//! transaction conflicts, a 500 after the request committed, and attempts that
//! do not answer in time. The faulty client's HTTP connector injects them into
//! one chosen DynamoDB operation of a route, on its first attempt or on every
//! attempt; everything else reaches DynamoDB Local.
//!
//! Every case must end in the route's success or a 503 SERVICE_UNAVAILABLE with
//! Retry-After, leave the table exactly as before or exactly as a clean run of
//! the same request leaves it, keep every invariant, make a bounded number of
//! attempts, and give every DynamoDB call a timeout that ends by the
//! invocation's deadline.
//!
//! `FAULTS_ONLY=<Route>` (e.g. `UpdateProfile`) runs one route's cases;
//! `FAULTS_DEBUG=1` prints the tables of a case that ends in neither state.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::retry::RetryPartition;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::http::{HttpConnector, HttpConnectorFuture, SharedHttpConnector, http_client_fn};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeSerializationInterceptorContextRef;
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::ConfigBag;
use futures::StreamExt;
use integration_tests::ddb::{self, PooledTable, TablePool};
use integration_tests::http::{Event, Reply};
use integration_tests::invariants;
use integration_tests::test_app::TestApp;
use lambda_http::RequestExt;
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber;
use user_service::catalog::{self, Function};
use user_service::deadline;
use user_service::{App, Store, api};

use crate::codes::CodeBook;

/// What the connector does to the chosen request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Refused before it reaches the table: ThrottlingException or
    /// ProvisionedThroughputExceededException.
    Throttled,
    /// Refused as conflicting with another transaction: TransactionCanceled
    /// with a TransactionConflict reason, or TransactionConflictException.
    Conflict,
    /// Committed by DynamoDB Local, then answered with a 500.
    LostCommit,
    /// No answer within the attempt timeout, the request never sent.
    SlowBeforeSend,
    /// Committed, but the answer comes after the attempt timeout.
    SlowAfterCommit,
}

impl Kind {
    const ALL: [Self; 5] = [
        Self::Throttled,
        Self::Conflict,
        Self::LostCommit,
        Self::SlowBeforeSend,
        Self::SlowAfterCommit,
    ];

    /// Whether the request reaches the table before the client sees the fault.
    fn commits(self) -> bool {
        matches!(self, Self::LostCommit | Self::SlowAfterCommit)
    }
}

/// Which attempts of the chosen operation are hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Which {
    First,
    Every,
}

/// Each attempt's timeout in the faulty client, generous so that only the
/// injected delay (longer) exceeds it on a busy machine.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(3_000);
const SLOW: Duration = Duration::from_millis(4_000);

/// How long a table rests between two cases: longer than any request a case
/// abandoned (at its attempt timeout) needs to land in DynamoDB Local.
const TABLE_REST: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
struct Counters {
    /// DynamoDB operations run, and those whose operation timeout would let
    /// them outlive the invocation's deadline.
    operations: AtomicUsize,
    unbounded: AtomicUsize,
    /// Attempts of the chosen operation, and when each began (epoch ms).
    attempts: Mutex<Vec<u64>>,
    injected: AtomicUsize,
}

/// The connector: the SDK's own, with the fault in front or behind.
#[derive(Debug, Clone)]
struct Faulty {
    inner: SharedHttpConnector,
    operation: &'static str,
    kind: Kind,
    which: Which,
    counters: Arc<Counters>,
}

fn epoch_ms() -> u64 {
    u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

fn error_response(status: u16, body: Value) -> HttpResponse {
    let mut response = HttpResponse::new(status.try_into().unwrap(), SdkBody::from(body.to_string()));
    response
        .headers_mut()
        .insert("content-type", "application/x-amz-json-1.0");
    response
}

fn error_type(name: &str) -> String {
    format!("com.amazonaws.dynamodb.v20120810#{name}")
}

impl Faulty {
    /// The refusal DynamoDB would send for this request.
    fn refusal(&self, request_body: &Value) -> HttpResponse {
        match (self.kind, self.operation) {
            (Kind::Throttled, "TransactWriteItems") => error_response(
                400,
                json!({"__type": error_type("ThrottlingException"), "message": "Rate of requests exceeds the allowed throughput."}),
            ),
            (Kind::Throttled, _) => error_response(
                400,
                json!({"__type": error_type("ProvisionedThroughputExceededException"), "message": "The level of configured provisioned throughput for the table was exceeded."}),
            ),
            (Kind::Conflict, "TransactWriteItems") => {
                // One reason per item: the first item conflicted, the others did not fail.
                let items = request_body["TransactItems"].as_array().map_or(1, Vec::len);
                let reasons: Vec<Value> = (0..items)
                    .map(|i| {
                        if i == 0 {
                            json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"})
                        } else {
                            json!({"Code": "None"})
                        }
                    })
                    .collect();
                error_response(
                    400,
                    json!({"__type": error_type("TransactionCanceledException"), "Message": "Transaction cancelled", "CancellationReasons": reasons}),
                )
            }
            (Kind::Conflict, _) => error_response(
                400,
                json!({"__type": error_type("TransactionConflictException"), "message": "Transaction is ongoing for the item"}),
            ),
            _ => error_response(
                500,
                json!({"__type": error_type("InternalServerError"), "message": "Internal server error"}),
            ),
        }
    }
}

impl HttpConnector for Faulty {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let target = request.headers().get("x-amz-target").unwrap_or_default().to_owned();
        let chosen = target.rsplit('.').next() == Some(self.operation);
        if !chosen {
            return self.inner.call(request);
        }
        let attempt = {
            let mut attempts = self.counters.attempts.lock().unwrap();
            attempts.push(epoch_ms());
            attempts.len()
        };
        let hit = match self.which {
            Which::First => attempt == 1,
            Which::Every => true,
        };
        if !hit {
            return self.inner.call(request);
        }
        self.counters.injected.fetch_add(1, Ordering::SeqCst);
        let this = self.clone();
        HttpConnectorFuture::new(async move {
            match this.kind {
                Kind::Throttled | Kind::Conflict => {
                    let body: Value =
                        serde_json::from_slice(request.body().bytes().unwrap_or_default()).unwrap_or_default();
                    Ok(this.refusal(&body))
                }
                Kind::LostCommit => {
                    let committed = this.inner.call(request).await?;
                    // Whatever DynamoDB answered, the client sees a 500.
                    drop(committed);
                    Ok(this.refusal(&Value::Null))
                }
                Kind::SlowBeforeSend => {
                    tokio::time::sleep(SLOW).await;
                    this.inner.call(request).await
                }
                Kind::SlowAfterCommit => {
                    let committed = this.inner.call(request).await?;
                    tokio::time::sleep(SLOW).await;
                    Ok(committed)
                }
            }
        })
    }
}

/// Sees, as each DynamoDB operation starts, that its operation timeout ends by
/// the invocation's deadline: the check that no call outlives the invocation,
/// without timing anything.
#[derive(Debug, Clone)]
struct DeadlineWitness(Arc<Counters>);

impl Intercept for DeadlineWitness {
    fn name(&self) -> &'static str {
        "DeadlineWitness"
    }

    // Once per operation, after the per-call override is merged in.
    fn read_before_serialization(
        &self,
        _: &BeforeSerializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let left = deadline::current_deadline().map(deadline::left);
        let timeout = cfg.load::<TimeoutConfig>().and_then(TimeoutConfig::operation_timeout);
        // Computed a moment apart: a little slack, far below any attempt's length.
        let bounded = matches!((left, timeout), (Some(left), Some(t)) if t <= left + Duration::from_millis(100));
        self.0.operations.fetch_add(1, Ordering::SeqCst);
        if !bounded {
            self.0.unbounded.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// The plain HTTP connection to DynamoDB Local the faulty connector sends
/// through: reqwest (the SDK's own client is not reachable from its crate).
#[derive(Debug, Clone, Default)]
struct Plain(reqwest::Client);

impl HttpConnector for Plain {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let client = self.0.clone();
        HttpConnectorFuture::new(async move {
            let method = reqwest::Method::from_bytes(request.method().as_bytes())
                .map_err(|e| ConnectorError::other(e.into(), None))?;
            let mut outgoing = client.request(method, request.uri());
            for (name, value) in request.headers().iter() {
                outgoing = outgoing.header(name, value);
            }
            let body = request.body().bytes().unwrap_or_default().to_vec();
            let answer = outgoing
                .body(body)
                .send()
                .await
                .map_err(|e| ConnectorError::io(e.into()))?;
            let status = answer.status().as_u16();
            let headers: Vec<(String, String)> = answer
                .headers()
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect();
            let bytes = answer.bytes().await.map_err(|e| ConnectorError::io(e.into()))?;
            let mut response = HttpResponse::new(status.try_into().unwrap(), SdkBody::from(bytes.to_vec()));
            for (name, value) in headers {
                response.headers_mut().insert(name, value);
            }
            Ok(response)
        })
    }
}

fn faulty_client(base: &Plain, operation: &'static str, kind: Kind, which: Which) -> (Client, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let shared = counters.clone();
    let inner = SharedHttpConnector::new(base.clone());
    let http = http_client_fn(move |_, _| {
        SharedHttpConnector::new(Faulty {
            inner: inner.clone(),
            operation,
            kind,
            which,
            counters: shared.clone(),
        })
    });
    let config = ddb::sdk_config_builder()
        .endpoint_url(ddb::endpoint())
        .http_client(http)
        .interceptor(DeadlineWitness(counters.clone()))
        // A retry quota of its own: the SDK keeps one token bucket per retry
        // partition for the whole process, and the persistent faults of the
        // cases running beside would otherwise drain it, so that a single
        // fault here found no retry left (a 503 that depends on the order the
        // cases ran in). A deployed function runs one invocation at a time.
        .retry_partition(RetryPartition::new(format!("faults-{}", uuid::Uuid::new_v4())))
        // As deployed: attempts time out on their own, inside an operation timeout.
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(10))
                .operation_attempt_timeout(ATTEMPT_TIMEOUT)
                .operation_timeout(Duration::from_secs(10))
                .build(),
        )
        .build();
    (Client::from_conf(config), counters)
}

/// A route under test, and the DynamoDB operation its fault is injected into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Route {
    UpdateProfile,
    AddEmail,
    SendVerification,
    VerifyEmail,
    SetPrimaryEmail,
    RemoveEmail,
    DeleteAccount,
    Suspend,
    AdminDelete,
    GetProfile,
    GetAccount,
    CheckEmail,
    FindUserByEmail,
}

impl Route {
    // check-email counts the check (its daily limit): it writes.
    const WRITES: [Self; 10] = [
        Self::CheckEmail,
        Self::UpdateProfile,
        Self::AddEmail,
        Self::SendVerification,
        Self::VerifyEmail,
        Self::SetPrimaryEmail,
        Self::RemoveEmail,
        Self::DeleteAccount,
        Self::Suspend,
        Self::AdminDelete,
    ];
    const READS: [Self; 3] = [Self::GetProfile, Self::GetAccount, Self::FindUserByEmail];

    fn operation(self) -> &'static str {
        match self {
            Self::UpdateProfile => "UpdateItem",
            Self::GetProfile => "GetItem",
            Self::GetAccount | Self::FindUserByEmail => "Query",
            _ => "TransactWriteItems",
        }
    }

    fn function(self) -> &'static Function {
        match self {
            Self::UpdateProfile => &catalog::UPDATE_PROFILE,
            Self::AddEmail => &catalog::ADD_EMAIL,
            Self::SendVerification => &catalog::SEND_VERIFICATION,
            Self::VerifyEmail => &catalog::VERIFY_EMAIL,
            Self::SetPrimaryEmail => &catalog::SET_PRIMARY_EMAIL,
            Self::RemoveEmail => &catalog::REMOVE_EMAIL,
            Self::DeleteAccount => &catalog::DELETE_ACCOUNT,
            Self::Suspend | Self::AdminDelete => &catalog::SET_USER_STATUS,
            Self::GetProfile => &catalog::GET_PROFILE,
            Self::GetAccount => &catalog::GET_ACCOUNT,
            Self::CheckEmail => &catalog::CHECK_EMAIL,
            Self::FindUserByEmail => &catalog::FIND_USER_BY_EMAIL,
        }
    }

    fn success(self) -> u16 {
        match self {
            Self::AddEmail => 201,
            Self::SendVerification => 202,
            Self::RemoveEmail | Self::DeleteAccount => 204,
            _ => 200,
        }
    }

    /// The request, for the account `setup` left.
    fn event(self, s: &Setup) -> Event {
        let f = self.function();
        let caller = match self {
            Self::Suspend | Self::AdminDelete | Self::FindUserByEmail => ADMIN,
            _ => ADA,
        };
        let event = Event::of(f).caller(caller);
        match self {
            Self::UpdateProfile => event
                .header("if-match", &format!("\"{}\"", s.version))
                .body(json!({"firstName": "Grace"})),
            Self::AddEmail => event.body(json!({"email": "ada.new@example.com"})),
            Self::SendVerification | Self::RemoveEmail => event.path_param("emailId", &s.unverified),
            Self::VerifyEmail => event.path_param("emailId", &s.unverified).body(json!({"code": s.code})),
            Self::SetPrimaryEmail => event.body(json!({"emailId": s.verified})),
            Self::DeleteAccount => event.header("if-match", &format!("\"{}\"", s.version)),
            Self::Suspend => event.path_param("userId", ADA).body(json!({"status": "suspended"})),
            Self::AdminDelete => event.path_param("userId", ADA).body(json!({"status": "deleted"})),
            Self::GetProfile | Self::GetAccount => event,
            Self::CheckEmail => event.query("email", "ada.work@example.com"),
            Self::FindUserByEmail => event.query("email", "ada.work@example.com"),
        }
    }
}

const ADA: &str = "fa000000-0000-4000-8000-00000000ada0";
const ADMIN: &str = "fa000000-0000-4000-8000-0000000ad000";

/// What every case starts from: Ada with a verified primary, a second verified
/// address and an unverified one whose code was sent more than a minute ago;
/// an admin. On a table of the pool, empty until now, given back when the case
/// ends.
struct Setup {
    app: TestApp,
    version: u64,
    unverified: String,
    verified: String,
    code: String,
    _table: PooledTable,
}

async fn set_up(pool: &TablePool) -> Setup {
    let table = pool.take().await;
    let app = TestApp::on(ddb::store_on(ddb::client(), table.name()));
    let codes = CodeBook::default();
    async {
        app.sign_up(ADMIN, "root@example.com").await;
        app.sign_up(ADA, "ada@example.com").await;
        let verified = app.add_address(ADA, "ada.home@example.com").await;
        let unverified = app.add_address(ADA, "ada.work@example.com").await;
        let code = codes.code_for(&verified).expect("a code for ada.home");
        app.verify_email(ADA, &verified, &code).await.assert_status(200);
        // A new code may be asked for once a minute.
        app.clock.advance(61);
        let version = app.get_profile(ADA).await.body["version"].as_u64().unwrap();
        let code = codes.code_for(&unverified).expect("a code for ada.work");
        Setup {
            app: app.clone(),
            version,
            unverified,
            verified,
            code,
            _table: table,
        }
    }
    .with_subscriber(codes.dispatch())
    .await
}

/// The table as a sorted list of items, with what a run draws at random
/// (address ids, code hashes, write ids) replaced by stable names.
async fn snapshot(app: &TestApp) -> Vec<String> {
    let items = invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let mut items: Vec<Value> = items
        .into_iter()
        .map(|item| serde_dynamo::from_item(item).unwrap())
        .collect();
    // Ids named by address, so both runs name them alike.
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for item in &items {
        if let (Some(id), Some(address)) = (item["emailId"].as_str(), item["email"].as_str()) {
            ids.insert(id.to_owned(), format!("<id of {address}>"));
        }
    }
    for item in &mut items {
        // Drawn per run: a code's hash, and the id an update marks the profile with.
        for (attribute, name) in [("verificationCodeHash", "<code hash>"), ("lastWriteId", "<write id>")] {
            if let Some(value) = item.get_mut(attribute) {
                *value = json!(name);
            }
        }
    }
    let mut lines: Vec<String> = items
        .iter()
        .map(|item| {
            let mut line = canonical(item);
            for (id, name) in &ids {
                line = line.replace(id, name);
            }
            line
        })
        .collect();
    lines.sort();
    lines
}

/// `value` as JSON with every object's keys sorted: items come back in any order.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
            let fields: Vec<String> = sorted.iter().map(|(k, v)| format!("{}:{v}", json!(k))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// `event` to the route's handler inside a Lambda invocation ending at `deadline_ms`.
async fn invoke(app: &App, route: Route, event: &Event, deadline_ms: u64) -> Reply {
    let mut context = lambda_runtime::Context::default();
    context.deadline = deadline_ms;
    let req = event.request().with_lambda_context(context);
    let handler = api::routes::route_of(route.function()).expect("an HTTP route");
    let response = handler.handle(app, req).await;
    Reply::from(response.unwrap_or_else(|never| match never {}))
}

/// The invocation's time: long enough for a single fault's retries, short for
/// persistent faults so the deadline, not patience, ends them.
fn invocation_ms(which: Which) -> u64 {
    match which {
        Which::First => 20_000,
        // Short enough that the deadline, not the retry count, ends slow faults
        // (two 3 s attempts do not fit), long enough that the reads before the
        // faulty call finish on a loaded machine, so the fault is always reached.
        Which::Every => 5_000,
    }
}

#[derive(Debug)]
struct CaseResult {
    route: Route,
    kind: Kind,
    which: Which,
    status: u16,
    /// "before", "after" or "neither".
    table: &'static str,
    attempts: usize,
    injected: usize,
    late_attempts: usize,
    operations: usize,
    unbounded: usize,
    violations: Vec<String>,
    body: Value,
    retry_after: bool,
    millis: u128,
}

/// The table after a clean run of `route`, for the cases to compare with.
async fn clean_after(pool: &TablePool, route: Route) -> Vec<String> {
    let s = set_up(pool).await;
    let deadline = epoch_ms() + invocation_ms(Which::First);
    let reply = invoke(&s.app, route, &route.event(&s), deadline).await;
    assert_eq!(
        reply.status,
        route.success(),
        "{route:?} without faults: {}",
        reply.body
    );
    snapshot(&s.app).await
}

async fn case(pool: &TablePool, base: &Plain, route: Route, kind: Kind, which: Which, clean: &[String]) -> CaseResult {
    let s = set_up(pool).await;
    let before = snapshot(&s.app).await;
    let (client, counters) = faulty_client(base, route.operation(), kind, which);
    let store = Store::new(client, s.app.store.config().clone()).with_key(ddb::test_key());
    let app = App {
        store,
        ..(*s.app).clone()
    };
    let deadline_ms = epoch_ms() + invocation_ms(which);
    let started = std::time::Instant::now();
    let reply = invoke(&app, route, &route.event(&s), deadline_ms).await;
    let millis = started.elapsed().as_millis();
    let after = snapshot(&s.app).await;
    let table = if after == before {
        "before"
    } else if after == clean {
        "after"
    } else {
        "neither"
    };
    if table == "neither" && std::env::var("FAULTS_DEBUG").is_ok() {
        eprintln!("{route:?} {kind:?} {which:?}\nbefore {before:#?}\nafter {after:#?}\nclean {clean:#?}");
    }
    let attempts = counters.attempts.lock().unwrap().clone();
    CaseResult {
        route,
        kind,
        which,
        status: reply.status,
        table,
        attempts: attempts.len(),
        injected: counters.injected.load(Ordering::SeqCst),
        late_attempts: attempts.iter().filter(|&&t| t > deadline_ms).count(),
        operations: counters.operations.load(Ordering::SeqCst),
        unbounded: counters.unbounded.load(Ordering::SeqCst),
        violations: invariants::violations(s.app.store.client(), &s.app.store.config().table_name).await,
        retry_after: reply.header("retry-after").is_some(),
        body: reply.body,
        millis,
    }
}

/// Why a case broke the rules, or `None`.
fn judge(r: &CaseResult) -> Option<String> {
    let success = r.route.success();
    let is_read = Route::READS.contains(&r.route);
    let mut wrong = Vec::new();
    match r.status {
        s if s == success => {}
        503 if r.body["code"] == "SERVICE_UNAVAILABLE" && r.retry_after => {}
        _ => wrong.push("neither success nor 503 with Retry-After".to_owned()),
    }
    if r.which == Which::First && r.status != success {
        wrong.push("one transient fault was not absorbed by the retries".to_owned());
    }
    if r.which == Which::Every && r.status != 503 {
        wrong.push("a fault on every attempt did not end in 503".to_owned());
    }
    let table_ok = match (r.status == success, is_read) {
        (_, true) => r.table == "before",
        (true, false) => r.table == "after",
        // Refused: untouched, unless the attempt that committed was the one whose answer was lost.
        (false, false) => r.table == "before" || (r.kind.commits() && r.table == "after"),
    };
    if !table_ok {
        wrong.push(format!("the table is {}", r.table));
    }
    if !r.violations.is_empty() {
        wrong.push(format!("violations: {:?}", r.violations));
    }
    if r.injected == 0 {
        wrong.push(format!("no {} was made: nothing injected", r.route.operation()));
    }
    // The SDK's attempts (3) within each of the store's attempts.
    let bound = user_service::store::retry::MAX_ATTEMPTS as usize * 3;
    if r.attempts > bound {
        wrong.push(format!("{} attempts, over {bound}", r.attempts));
    }
    if r.unbounded > 0 {
        wrong.push(format!(
            "{} of {} DynamoDB calls had a timeout beyond the invocation's deadline",
            r.unbounded, r.operations
        ));
    }
    (!wrong.is_empty()).then(|| {
        format!(
            "{:?} {:?} on {} ({:?}): {} {} -> {}",
            r.route,
            r.kind,
            r.route.operation(),
            r.which,
            r.status,
            r.body,
            wrong.join("; ")
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_under_every_fault_ends_in_success_or_a_clean_503() {
    let started = std::time::Instant::now();
    let base = Plain::default();
    let base = &base;
    let routes: Vec<Route> = Route::WRITES.iter().chain(&Route::READS).copied().collect();
    let pool = TablePool::new(ddb::client(), TABLE_REST);
    let pool = &pool;

    let mut cleans = BTreeMap::new();
    let snapshots = futures::stream::iter(
        routes
            .iter()
            .map(|&r| async move { (r, Box::pin(clean_after(pool, r)).await) }),
    )
    .buffer_unordered(6)
    .collect::<Vec<_>>()
    .await;
    cleans.extend(snapshots);

    let mut cases = Vec::new();
    let only = std::env::var("FAULTS_ONLY").ok();
    for &route in routes
        .iter()
        .filter(|r| only.as_ref().is_none_or(|o| format!("{r:?}") == *o))
    {
        for kind in Kind::ALL {
            // Reads take no part in transactions: nothing to conflict with.
            if Route::READS.contains(&route) && kind == Kind::Conflict {
                continue;
            }
            for which in [Which::First, Which::Every] {
                cases.push((route, kind, which));
            }
        }
    }
    let cleans = &cleans;
    let results: Vec<CaseResult> = futures::stream::iter(
        cases
            .iter()
            .map(|&(route, kind, which)| case(pool, base, route, kind, which, &cleans[&route])),
    )
    .buffer_unordered(12)
    .collect()
    .await;
    // A case that answered 503 before its operation was ever made tested
    // nothing: the invocation's deadline ran out on the steps before it (a
    // machine loaded by other work once took 5 s over an admin delete's
    // reads). Likewise a single fault that ended in 503 while eleven cases and
    // the other suites loaded DynamoDB Local (its retries timed out too: two
    // reads did, at the start of CI's suites). Such a case runs again, alone,
    // up to three times; one that never reaches its operation, or whose single
    // fault is not absorbed alone either, still fails.
    let mut results = results;
    let mut reruns = 0;
    for r in &mut results {
        let mut tries = 0;
        while r.status == 503 && (r.injected == 0 || r.which == Which::First) && tries < 3 {
            tries += 1;
            reruns += 1;
            *r = Box::pin(case(pool, base, r.route, r.kind, r.which, &cleans[&r.route])).await;
        }
    }

    let failures: Vec<String> = results.iter().filter_map(judge).collect();
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut injected: BTreeMap<String, usize> = BTreeMap::new();
    for r in &results {
        *outcomes
            .entry(format!("{:?} -> {} ({})", r.which, r.status, r.table))
            .or_default() += 1;
        *injected.entry(format!("{:?}", r.kind)).or_default() += r.injected;
    }
    let seconds = started.elapsed().as_secs_f64();
    let (tables_created, tables_reused) = pool.counts();
    let late_attempts: usize = results.iter().map(|r| r.late_attempts).sum();
    let operations: usize = results.iter().map(|r| r.operations).sum();
    let max_attempts = results.iter().map(|r| r.attempts).max().unwrap_or(0);
    let slowest_every_ms = results
        .iter()
        .filter(|r| r.which == Which::Every)
        .map(|r| r.millis)
        .max()
        .unwrap_or(0);
    crate::figures::record(
        "faults",
        json!({
            "cases": results.len(),
            "routes": routes.len(),
            "faults_injected": injected,
            "outcomes": outcomes,
            "max_attempts_of_one_operation": max_attempts,
            "dynamodb_operations_under_faults": operations,
            "attempts_begun_after_the_deadline": late_attempts,
            "slowest_persistent_fault_ms": slowest_every_ms,
            "persistent_fault_invocation_ms": invocation_ms(Which::Every),
            "failures": failures.len(),
            "cases_run_again_alone": reruns,
            "violations": results.iter().map(|r| r.violations.len()).sum::<usize>(),
            "tables_created": tables_created,
            "tables_reused": tables_reused,
            "seconds": (seconds * 100.0).round() / 100.0,
        }),
    );
    eprintln!(
        "faults: {} cases over {} routes in {seconds:.1} s; injected {injected:?}; outcomes {outcomes:?}; \
         at most {max_attempts} attempts of one operation; the slowest persistent fault answered in {slowest_every_ms} ms \
         of a {} ms invocation; {tables_created} tables, reused {tables_reused} times; {reruns} cases run again \
         alone (a 503 before their operation, or a single fault's under load); {} failures",
        results.len(),
        routes.len(),
        invocation_ms(Which::Every),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} cases broke the rules:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
