//! The table's stream, read from DynamoDB Local exactly as it emits it.
//!
//! The records are read over DynamoDB Streams' JSON API rather than through an
//! SDK client: the SDK would parse them into its own types, and the consumer
//! must be tested on the JSON DynamoDB emits, which is what Lambda hands it
//! (each record plus `eventSourceARN`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::ddb;

pub struct StreamReader {
    http: reqwest::Client,
    endpoint: String,
    arn: String,
    /// The next iterator of every shard seen so far.
    iterators: BTreeMap<String, Option<String>>,
}

impl StreamReader {
    /// Reads `table`'s stream from its first record.
    pub async fn open(client: &aws_sdk_dynamodb::Client, table: &str) -> Self {
        let described = client.describe_table().table_name(table).send().await.unwrap();
        let arn = described
            .table
            .and_then(|t| t.latest_stream_arn)
            .expect("the table has a stream");
        Self {
            http: reqwest::Client::new(),
            endpoint: ddb::endpoint(),
            arn,
            iterators: BTreeMap::new(),
        }
    }

    pub fn arn(&self) -> &str {
        &self.arn
    }

    async fn call(&self, operation: &str, body: Value) -> Value {
        let response = self
            .http
            .post(&self.endpoint)
            .header("X-Amz-Target", format!("DynamoDBStreams_20120810.{operation}"))
            .header("Content-Type", "application/x-amz-json-1.0")
            // DynamoDB Local reads the credential's key id and checks no signature.
            .header(
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, \
                 SignedHeaders=host, Signature=0",
            )
            .body(body.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("DynamoDB Local's stream API: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap();
        assert!(status.is_success(), "{operation}: {status} {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Every record written since the last call, in stream order per shard, as
    /// Lambda delivers them.
    pub async fn read_new(&mut self) -> Vec<Value> {
        let described = self.call("DescribeStream", json!({ "StreamArn": self.arn })).await;
        for shard in described["StreamDescription"]["Shards"].as_array().unwrap() {
            let id = shard["ShardId"].as_str().unwrap().to_owned();
            if !self.iterators.contains_key(&id) {
                let iterator = self
                    .call(
                        "GetShardIterator",
                        json!({ "StreamArn": self.arn, "ShardId": id, "ShardIteratorType": "TRIM_HORIZON" }),
                    )
                    .await["ShardIterator"]
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
                let page = self.call("GetRecords", json!({ "ShardIterator": iterator })).await;
                let batch = page["Records"].as_array().cloned().unwrap_or_default();
                let next = page["NextShardIterator"].as_str().map(str::to_owned);
                self.iterators.insert(shard.clone(), next);
                if batch.is_empty() {
                    break;
                }
                for mut record in batch {
                    record["eventSourceARN"] = json!(self.arn);
                    records.push(record);
                }
            }
        }
        records
    }
}

/// A Lambda event of `records`.
pub fn event(records: &[Value]) -> Value {
    json!({ "Records": records })
}
