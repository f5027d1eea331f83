//! DynamoDB Local for tests: one client per test, one fresh table per test.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{BehaviorVersion, Region};
use user_service::Store;
use user_service::config::StoreConfig;
use user_service::store::schema;
use user_service::verification::VerificationKey;

pub const ENDPOINT_VAR: &str = "AWS_ENDPOINT_URL_DYNAMODB";
const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:8000";

/// How to get DynamoDB Local running, for every failure message.
pub const HOW_TO_START: &str = "start DynamoDB Local with `make test` (does everything), or \
`scripts/ddb-local start 8000` and `export AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000`";

/// Several instances, when `scripts/ddb-local run` started more than one
/// (`DDB_LOCAL_INSTANCES`): each test process keeps to one of them.
pub const ENDPOINTS_VAR: &str = "DDB_LOCAL_ENDPOINTS";

/// This process's DynamoDB Local. Under nextest every test is a process, so
/// picking by process id spreads the suite over the instances.
pub fn endpoint() -> String {
    let pool = endpoints();
    pool[std::process::id() as usize % pool.len()].clone()
}

/// Every DynamoDB Local this run has (at least one): for a test that spreads
/// its own threads over them.
pub fn endpoints() -> Vec<String> {
    let pool: Vec<String> = std::env::var(ENDPOINTS_VAR)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if pool.is_empty() {
        vec![std::env::var(ENDPOINT_VAR).unwrap_or_else(|_| DEFAULT_ENDPOINT.to_owned())]
    } else {
        pool
    }
}

/// The SDK configuration every test uses: a region, dummy credentials and the
/// local endpoint, so the SDK never looks for instance metadata. Timeouts are
/// generous: on a busy machine DynamoDB Local can pause, and a test must not
/// fail for the machine's speed.
pub fn sdk_config_builder() -> aws_sdk_dynamodb::config::Builder {
    // Every test that reaches DynamoDB passes here: its logs are captured from now on.
    crate::logs::capture();
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(crate::local_aws::region()))
        .credentials_provider(crate::local_aws::credentials())
        .timeout_config(
            aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(10))
                .operation_timeout(Duration::from_secs(30))
                .build(),
        )
}

pub fn client() -> Client {
    client_at(&endpoint())
}

pub fn client_at(endpoint: &str) -> Client {
    Client::from_conf(sdk_config_builder().endpoint_url(endpoint).build())
}

/// A unique table name per test, so tests run in parallel.
pub fn unique_table_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-{}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        uuid::Uuid::new_v4().simple()
    )
}

/// A fresh table in DynamoDB Local; fails the test with instructions if it cannot be reached.
pub async fn fresh_table(client: &Client) -> String {
    let name = unique_table_name();
    match schema::ensure_table(client, &name).await {
        Ok(_) => name,
        Err(err) => panic!(
            "DynamoDB Local is not reachable at {} ({}): {HOW_TO_START}",
            endpoint(),
            user_service::error_chain(&err)
        ),
    }
}

/// A store on a fresh table with the default configuration.
pub async fn store() -> Store {
    store_with(|_| {}).await
}

/// A store on a fresh table with the configuration adjusted by `adjust`, and the
/// tests' verification key.
pub async fn store_with(adjust: impl FnOnce(&mut StoreConfig)) -> Store {
    let client = client();
    let table = fresh_table(&client).await;
    let mut config = StoreConfig::new(table);
    adjust(&mut config);
    Store::new(client, config).with_key(test_key())
}

/// The development key of the tests (what `VERIFICATION_KEY` holds in local runs).
pub const TEST_KEY: &str = "user-service test key: never used outside tests";

pub fn test_key() -> VerificationKey {
    VerificationKey::from_secret(TEST_KEY.as_bytes()).unwrap()
}
