//! DynamoDB Local for tests: one client per test, one fresh table per test, or
//! a [`TablePool`] for a test that runs many cases.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use user_service::Store;
use user_service::config::StoreConfig;
use user_service::store::keys;
use user_service::store::schema;
use user_service::verification_key::VerificationKey;

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
/// generous: on a busy machine DynamoDB Local can pause (one BatchWriteItem
/// emptying a table outlasted 30 s while the model, the workload and make dev
/// ran beside it), and a test must not fail for the machine's speed.
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
                .operation_timeout(Duration::from_secs(120))
                .build(),
        )
}

/// A shared SDK configuration for DynamoDB Local (its stream API too), for
/// clients of other crates than DynamoDB's, such as DynamoDB Streams.
pub fn shared_sdk_config() -> aws_config::SdkConfig {
    crate::logs::capture();
    aws_config::SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(crate::local_aws::region()))
        .credentials_provider(aws_credential_types::provider::SharedCredentialsProvider::new(
            crate::local_aws::credentials(),
        ))
        .endpoint_url(endpoint())
        .build()
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
            user_service::error::chain(&err)
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

/// A store on `table` (an existing one) with the default configuration and the
/// tests' verification key.
pub fn store_on(client: Client, table: &str) -> Store {
    Store::new(client, StoreConfig::new(table.to_owned())).with_key(test_key())
}

/// Deletes every item of `table`, read with a consistent scan, and fails the test
/// unless a second consistent scan finds none. Returns how many it deleted.
pub async fn empty_table(client: &Client, table: &str) -> usize {
    let items = crate::invariants::scan(client, table).await;
    let deleted = items.len();
    let requests: Vec<WriteRequest> = items
        .into_iter()
        .map(|mut item| {
            let key = [keys::PK, keys::SK].map(|name| (name.to_owned(), item.remove(name).expect("a key")));
            let delete = DeleteRequest::builder()
                .set_key(Some(key.into()))
                .build()
                .expect("a key");
            WriteRequest::builder().delete_request(delete).build()
        })
        .collect();
    batch_write(client, table, requests).await;
    let left = crate::invariants::scan(client, table).await.len();
    assert_eq!(left, 0, "{table} still has {left} items after emptying it");
    deleted
}

/// Puts a copy of every item of `from` (read with a consistent scan) into
/// `to`, a table of the same schema, possibly on another instance; returns how
/// many. A fixture built once through the store is copied into each case's
/// table this way: a scan and a few batch writes, where building it costs a
/// transaction per step.
pub async fn copy_table(from: &Client, from_table: &str, to: &Client, to_table: &str) -> usize {
    let items = crate::invariants::scan(from, from_table).await;
    let copied = items.len();
    put_items(to, to_table, items).await;
    copied
}

/// Puts every item into `table` as it is, by BatchWriteItem.
pub async fn put_items(client: &Client, table: &str, items: impl IntoIterator<Item = keys::Item>) {
    let requests = items
        .into_iter()
        .map(|item| {
            let put = PutRequest::builder().set_item(Some(item)).build().expect("an item");
            WriteRequest::builder().put_request(put).build()
        })
        .collect();
    batch_write(client, table, requests).await;
}

/// Carries out every request, 25 to a BatchWriteItem (its limit), eight at
/// once; what DynamoDB leaves unprocessed goes again.
async fn batch_write(client: &Client, table: &str, requests: Vec<WriteRequest>) {
    use futures::StreamExt;
    let batches: Vec<Vec<WriteRequest>> = requests.chunks(25).map(<[WriteRequest]>::to_vec).collect();
    futures::stream::iter(batches)
        .for_each_concurrent(8, |mut batch| async move {
            while !batch.is_empty() {
                let out = client
                    .batch_write_item()
                    .request_items(table, batch)
                    .send()
                    .await
                    .unwrap_or_else(|err| panic!("writing to {table}: {}", user_service::error::chain(&err)));
                batch = out
                    .unprocessed_items
                    .and_then(|mut left| left.remove(table))
                    .unwrap_or_default();
            }
        })
        .await;
}

/// Tables that one test's many cases share instead of creating one each: a
/// CreateTable costs DynamoDB Local more than emptying a table of a case's few
/// items. [`TablePool::take`] hands out a table with no items, a fresh one when
/// none has rested long enough; dropping the [`PooledTable`] gives it back.
#[derive(Debug, Clone)]
pub struct TablePool(Arc<PoolState>);

#[derive(Debug)]
struct PoolState {
    client: Client,
    /// Given back, oldest first, with when.
    free: Mutex<VecDeque<(String, Instant)>>,
    rest: Duration,
    created: AtomicUsize,
    reused: AtomicUsize,
}

impl TablePool {
    /// A pool whose tables rest `rest` between two cases: a request a case gave up
    /// on (its attempt timed out) can still reach DynamoDB Local after the case
    /// ends, and must land before the table is emptied for the next one.
    pub fn new(client: Client, rest: Duration) -> Self {
        Self(Arc::new(PoolState {
            client,
            free: Mutex::new(VecDeque::new()),
            rest,
            created: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
        }))
    }

    /// A table without items: one given back at least `rest` ago, emptied now, or
    /// a fresh one.
    pub async fn take(&self) -> PooledTable {
        let rested = {
            let mut free = self.0.free.lock().expect("pool lock");
            match free.front() {
                Some((_, since)) if since.elapsed() >= self.0.rest => free.pop_front().map(|(name, _)| name),
                _ => None,
            }
        };
        let name = match rested {
            Some(name) => {
                empty_table(&self.0.client, &name).await;
                self.0.reused.fetch_add(1, Ordering::Relaxed);
                name
            }
            None => {
                self.0.created.fetch_add(1, Ordering::Relaxed);
                fresh_table(&self.0.client).await
            }
        };
        PooledTable {
            name,
            pool: self.clone(),
        }
    }

    /// Tables created, and takes served by an emptied table.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.0.created.load(Ordering::Relaxed),
            self.0.reused.load(Ordering::Relaxed),
        )
    }
}

/// A table of a [`TablePool`], given back when dropped (also when a case panics:
/// the next taker empties it first).
#[derive(Debug)]
pub struct PooledTable {
    name: String,
    pool: TablePool,
}

impl PooledTable {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for PooledTable {
    fn drop(&mut self) {
        if let Ok(mut free) = self.pool.0.free.lock() {
            free.push_back((std::mem::take(&mut self.name), Instant::now()));
        }
    }
}
