//! The table stream's event source mappings, run locally for `make dev` and
//! the tests: each stream consumer of the catalog gets the records its
//! filters pass, in batches, through `cargo lambda watch`, as the template's
//! mapping delivers them: a reported record is retried from, a function error
//! halves the batch, and a record that exhausts its retries has its range put
//! on the consumer's on-failure queue in Lambda's own message shape, then the
//! mapping goes on. Nothing here is deployed: in AWS, Lambda does this.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use user_service::catalog::{Function, Trigger};

use crate::invoke::{InvokeError, Lambda};
use crate::stream::{Record, StreamError, StreamReader};

/// The template's mapping settings (tools/xtask/src/template.rs writes them).
pub const BATCH_SIZE: usize = 10;
/// Retries of a failing record before its range goes to the on-failure queue.
pub const MAXIMUM_RETRY_ATTEMPTS: u32 = 5;
const POLL: Duration = Duration::from_millis(200);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error(transparent)]
    Filter(#[from] crate::filter::Unsupported),
    #[error("{0} does not read the table's stream")]
    NotAStreamConsumer(&'static str),
}

/// Where a consumer's exhausted records go: an SQS queue (moto's, locally).
#[derive(Debug, Clone)]
pub struct FailureQueue {
    pub client: aws_sdk_sqs::Client,
    pub url: String,
}

/// How a mapping hands a batch to its function: through `cargo lambda watch`
/// ([`Lambda::invoker`]) in `make dev`, or the handler in-process in a test.
pub type Invoke =
    Arc<dyn Fn(&'static str, Value) -> Pin<Box<dyn Future<Output = Result<Value, InvokeError>> + Send>> + Send + Sync>;

impl Lambda {
    /// This endpoint as a mapping's way to invoke.
    pub fn invoker(self) -> Invoke {
        Arc::new(move |name, event| {
            let lambda = self.clone();
            Box::pin(async move { lambda.invoke(name, &event).await })
        })
    }
}

/// One stream consumer's mapping.
pub struct Mapping {
    function: &'static Function,
    filters: Vec<Value>,
    reader: StreamReader,
    invoke: Invoke,
    failures: FailureQueue,
    pending: VecDeque<Record>,
    batch_size: usize,
    attempts: u32,
}

/// What one delivery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Nothing was waiting.
    Idle,
    /// The first `n` waiting records were acknowledged.
    Acknowledged(usize),
    /// The batch is retried (from a reported record, or halved).
    Retrying,
    /// `n` records exhausted their retries and went to the on-failure queue.
    GaveUp(usize),
}

impl Mapping {
    /// The mapping of `function` (a `TableStream` consumer) on `table`'s stream.
    pub async fn open(
        function: &'static Function,
        ddb_endpoint: &str,
        table: &str,
        invoke: Invoke,
        failures: FailureQueue,
    ) -> Result<Self, MappingError> {
        let Trigger::TableStream { filters, .. } = function.trigger else {
            return Err(MappingError::NotAStreamConsumer(function.name));
        };
        let filters = filters
            .iter()
            .map(|f| crate::filter::parse(f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            function,
            filters,
            reader: StreamReader::open(ddb_endpoint, table).await?,
            invoke,
            failures,
            pending: VecDeque::new(),
            batch_size: BATCH_SIZE,
            attempts: 0,
        })
    }

    pub fn function(&self) -> &'static Function {
        self.function
    }

    /// Reads what the stream has new, keeping the records the filters pass.
    pub async fn poll(&mut self) -> Result<usize, StreamError> {
        let before = self.pending.len();
        for record in self.reader.read_new().await? {
            if self.filters.iter().any(|f| crate::filter::matches(f, &record.json)) {
                self.pending.push_back(record);
            }
        }
        Ok(self.pending.len() - before)
    }

    /// Hands the next batch to the function once and acts on its answer.
    pub async fn deliver(&mut self) -> Delivered {
        if self.pending.is_empty() {
            return Delivered::Idle;
        }
        // A batch holds one shard's records, as Lambda's do.
        let shard = self.pending.front().map(|r| r.shard.clone()).unwrap_or_default();
        let size = self
            .pending
            .iter()
            .take(self.batch_size)
            .take_while(|r| r.shard == shard)
            .count();
        let batch: Vec<Value> = self.pending.iter().take(size).map(|r| r.json.clone()).collect();
        let failed_from = match (self.invoke)(self.function.name, crate::stream::event(&batch)).await {
            Ok(response) => {
                let first = response["batchItemFailures"]
                    .as_array()
                    .and_then(|f| f.first())
                    .map(|f| f["itemIdentifier"].as_str().unwrap_or_default().to_owned());
                match first {
                    None => {
                        self.pending.drain(..size);
                        self.attempts = 0;
                        self.batch_size = BATCH_SIZE;
                        return Delivered::Acknowledged(size);
                    }
                    // An identifier not in the batch fails the whole batch, as in Lambda.
                    Some(sequence) => batch
                        .iter()
                        .position(|r| r["dynamodb"]["SequenceNumber"] == sequence.as_str())
                        .unwrap_or(0),
                }
            }
            Err(err) => {
                if let InvokeError::Function { error_type, .. } = &err {
                    tracing::warn!(
                        function = self.function.name,
                        error_type,
                        "function error; the batch is halved"
                    );
                } else {
                    tracing::warn!(function = self.function.name, error = %err, "the function could not be invoked");
                }
                if size > 1 {
                    self.batch_size = size.div_ceil(2);
                    return Delivered::Retrying;
                }
                0
            }
        };
        // The records before the reported one are done.
        self.pending.drain(..failed_from);
        let size = size - failed_from;
        self.attempts += 1;
        if self.attempts <= MAXIMUM_RETRY_ATTEMPTS {
            let backoff = FIRST_BACKOFF * 2u32.pow(self.attempts - 1);
            tokio::time::sleep(backoff).await;
            return Delivered::Retrying;
        }
        let gave_up: Vec<Record> = self.pending.drain(..size).collect();
        self.attempts = 0;
        self.batch_size = BATCH_SIZE;
        self.send_to_failures(&gave_up).await;
        Delivered::GaveUp(gave_up.len())
    }

    /// Polls and delivers until nothing is waiting (tests), or for ever (`make dev`).
    pub async fn drain(&mut self) -> Result<Vec<Delivered>, StreamError> {
        let mut outcomes = Vec::new();
        self.poll().await?;
        loop {
            match self.deliver().await {
                Delivered::Idle => return Ok(outcomes),
                other => outcomes.push(other),
            }
        }
    }

    /// Runs the mapping: polls the stream and delivers, until the process ends.
    pub async fn run(mut self) {
        loop {
            if let Err(err) = self.poll().await {
                tracing::warn!(function = self.function.name, error = %err, "the stream could not be read");
            }
            while !matches!(self.deliver().await, Delivered::Idle) {}
            tokio::time::sleep(POLL).await;
        }
    }

    /// Lambda's on-failure message for a range of records (DDBStreamBatchInfo):
    /// where they are, not what they hold.
    async fn send_to_failures(&self, records: &[Record]) {
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return;
        };
        let arrival = |r: &Record| r.json["dynamodb"]["ApproximateCreationDateTime"].clone();
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let message = json!({
            "requestContext": {
                "requestId": uuid::Uuid::new_v4().to_string(),
                "functionArn": format!("arn:aws:lambda:us-east-1:000000000000:function:{}", self.function.name),
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": MAXIMUM_RETRY_ATTEMPTS + 1,
            },
            "responseContext": { "statusCode": 200, "executedVersion": "$LATEST", "functionError": "" },
            "version": "1.0",
            "timestamp": now,
            "DDBStreamBatchInfo": {
                "shardId": first.shard,
                "startSequenceNumber": first.sequence_number(),
                "endSequenceNumber": last.sequence_number(),
                "approximateArrivalOfFirstRecord": arrival(first),
                "approximateArrivalOfLastRecord": arrival(last),
                "batchSize": records.len(),
                "streamArn": self.reader.arn(),
            }
        });
        match self
            .failures
            .client
            .send_message()
            .queue_url(&self.failures.url)
            .message_body(message.to_string())
            .send()
            .await
        {
            Ok(_) => tracing::error!(
                function = self.function.name,
                records = records.len(),
                "records exhausted their retries; their range is on the on-failure queue"
            ),
            Err(err) => tracing::error!(
                function = self.function.name,
                error = %aws_sdk_sqs::error::DisplayErrorContext(&err),
                "records exhausted their retries and the on-failure queue refused them"
            ),
        }
    }
}
