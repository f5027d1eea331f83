//! The table's stream, read from DynamoDB Local exactly as it emits it (the
//! local API's reader, which `make dev`'s stream consumers use too).

use serde_json::Value;

pub use local_api::stream::event;

use crate::ddb;

pub struct StreamReader(local_api::stream::StreamReader);

impl StreamReader {
    /// Reads `table`'s stream from its first record.
    pub async fn open(_client: &aws_sdk_dynamodb::Client, table: &str) -> Self {
        Self(
            local_api::stream::StreamReader::open(&ddb::endpoint(), table)
                .await
                .unwrap_or_else(|e| panic!("{e}: {}", ddb::HOW_TO_START)),
        )
    }

    pub fn arn(&self) -> &str {
        self.0.arn()
    }

    /// Every record written since the last call, in stream order per shard, as
    /// Lambda delivers them.
    pub async fn read_new(&mut self) -> Vec<Value> {
        self.0
            .read_new()
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", ddb::HOW_TO_START))
            .into_iter()
            .map(|record| record.json)
            .collect()
    }
}
