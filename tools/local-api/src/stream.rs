//! The table's stream, read from DynamoDB Local exactly as it emits it.
//!
//! The records are read over DynamoDB Streams' JSON API rather than through an
//! SDK client: the SDK would parse them into its own types, and the consumers
//! must get the JSON DynamoDB emits, which is what Lambda hands them (each
//! record plus `eventSourceARN`). DynamoDB Local checks no signature.

use std::collections::BTreeMap;

use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("DynamoDB Local's stream API could not be reached: {0}")]
    Transport(#[from] reqwest::Error),
    #[error("{operation} answered {status}: {body}")]
    Refused {
        operation: &'static str,
        status: u16,
        body: String,
    },
    #[error("the table has no stream")]
    NoStream,
}

/// A record as Lambda delivers it, with the shard it came from.
#[derive(Debug, Clone)]
pub struct Record {
    pub shard: String,
    pub json: Value,
}

impl Record {
    pub fn sequence_number(&self) -> &str {
        self.json["dynamodb"]["SequenceNumber"].as_str().unwrap_or_default()
    }
}

pub struct StreamReader {
    http: reqwest::Client,
    endpoint: String,
    arn: String,
    /// The next iterator of every shard seen so far.
    iterators: BTreeMap<String, Option<String>>,
}

impl StreamReader {
    /// Reads `table`'s stream, at DynamoDB Local's `endpoint`, from its first record.
    pub async fn open(endpoint: &str, table: &str) -> Result<Self, StreamError> {
        let http = reqwest::Client::new();
        let described = call(
            &http,
            endpoint,
            "DynamoDB_20120810",
            "DescribeTable",
            json!({ "TableName": table }),
        )
        .await?;
        let arn = described["Table"]["LatestStreamArn"]
            .as_str()
            .ok_or(StreamError::NoStream)?
            .to_owned();
        Ok(Self {
            http,
            endpoint: endpoint.to_owned(),
            arn,
            iterators: BTreeMap::new(),
        })
    }

    pub fn arn(&self) -> &str {
        &self.arn
    }

    async fn streams(&self, operation: &'static str, body: Value) -> Result<Value, StreamError> {
        call(&self.http, &self.endpoint, "DynamoDBStreams_20120810", operation, body).await
    }

    /// Every record written since the last call, in stream order per shard, as
    /// Lambda delivers them.
    pub async fn read_new(&mut self) -> Result<Vec<Record>, StreamError> {
        let described = self.streams("DescribeStream", json!({ "StreamArn": self.arn })).await?;
        let shards = described["StreamDescription"]["Shards"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for shard in shards {
            let id = shard["ShardId"].as_str().unwrap_or_default().to_owned();
            if !self.iterators.contains_key(&id) {
                let iterator = self
                    .streams(
                        "GetShardIterator",
                        json!({ "StreamArn": self.arn, "ShardId": id, "ShardIteratorType": "TRIM_HORIZON" }),
                    )
                    .await?["ShardIterator"]
                    .as_str()
                    .map(str::to_owned);
                self.iterators.insert(id, iterator);
            }
        }
        let mut records = Vec::new();
        let shards: Vec<String> = self.iterators.keys().cloned().collect();
        for shard in shards {
            // Reads until the shard has nothing more now (an empty page).
            while let Some(iterator) = self.iterators[&shard].clone() {
                let page = self.streams("GetRecords", json!({ "ShardIterator": iterator })).await?;
                let batch = page["Records"].as_array().cloned().unwrap_or_default();
                let next = page["NextShardIterator"].as_str().map(str::to_owned);
                self.iterators.insert(shard.clone(), next);
                if batch.is_empty() {
                    break;
                }
                for mut record in batch {
                    record["eventSourceARN"] = json!(self.arn);
                    records.push(Record {
                        shard: shard.clone(),
                        json: record,
                    });
                }
            }
        }
        Ok(records)
    }
}

async fn call(
    http: &reqwest::Client,
    endpoint: &str,
    service: &str,
    operation: &'static str,
    body: Value,
) -> Result<Value, StreamError> {
    let response = http
        .post(endpoint)
        .header("X-Amz-Target", format!("{service}.{operation}"))
        .header("Content-Type", "application/x-amz-json-1.0")
        // DynamoDB Local reads the credential's key id and checks no signature.
        .header(
            "Authorization",
            "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, \
             SignedHeaders=host, Signature=0",
        )
        .body(body.to_string())
        .send()
        .await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(StreamError::Refused {
            operation,
            status: status.as_u16(),
            body: text,
        });
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A Lambda event of `records`.
pub fn event(records: &[Value]) -> Value {
    json!({ "Records": records })
}
