//! `cargo xtask replay-events`: publishes again the records publish-events
//! gave up on. Each message of its on-failure queue names a range of one
//! stream shard (Lambda's `DDBStreamBatchInfo`), not the records; the records
//! are read back from the stream (which keeps them 24 hours), their events
//! derived as the function does, ids included, and put on the bus. A message
//! is deleted once its every record is published; one with a record whose
//! images cannot be read stays (visible again at once) unless told to drop
//! it, and one whose range the stream no longer holds stays too.

use aws_lambda_events::event::dynamodb::EventRecord;
use aws_sdk_dynamodbstreams::types::ShardIteratorType;
use serde_json::{Value, json};
use user_service::bus::Bus;
use user_service::store::changes::record_events;

/// Where the failures are, and the stream to read them back from.
pub struct Sources {
    /// DynamoDB Streams (AWS_ENDPOINT_URL_DYNAMODB_STREAMS for DynamoDB Local).
    pub streams: aws_sdk_dynamodbstreams::Client,
    /// SQS, where the on-failure queue is.
    pub sqs: aws_sdk_sqs::Client,
    /// publish-events' on-failure queue (the stack's EventFailureQueueUrl output).
    pub queue_url: String,
}

/// A DynamoDB Streams client.
pub fn streams_client(sdk: &aws_config::SdkConfig) -> aws_sdk_dynamodbstreams::Client {
    aws_sdk_dynamodbstreams::Client::new(sdk)
}

/// What a replay did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Messages read from the queue.
    pub messages: usize,
    /// Records whose events are now on the bus.
    pub published_records: usize,
    /// Events put on the bus.
    pub events: usize,
    /// Records whose images cannot be read (no event from them).
    pub unreadable_records: usize,
    /// Messages whose range the stream no longer holds (older than 24 hours).
    pub expired: usize,
    /// Messages left on the queue.
    pub kept: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("the on-failure queue could not be read: {0}")]
    Queue(String),
    #[error("the event bus refused events: {0}")]
    Bus(#[from] user_service::bus::PublishError),
    #[error("the stream could not be read: {0}")]
    Stream(String),
    #[error("the stream no longer holds the range (older than 24 hours)")]
    Expired,
}

/// The range a message names.
struct Range {
    stream: String,
    shard: String,
    start: String,
    end: String,
}

impl Range {
    fn of(body: &str) -> Option<Self> {
        let message: Value = serde_json::from_str(body).ok()?;
        let info = &message["DDBStreamBatchInfo"];
        let text = |name: &str| info[name].as_str().map(str::to_owned);
        Some(Self {
            stream: text("streamArn")?,
            shard: text("shardId")?,
            start: text("startSequenceNumber")?,
            end: text("endSequenceNumber")?,
        })
    }
}

/// Sequence numbers are decimal strings of varying length: the longer is later.
fn after(sequence: &str, end: &str) -> bool {
    (sequence.len(), sequence) > (end.len(), end)
}

/// Replays every message on the queue now. `drop_unreadable` deletes a
/// message whose unreadable records were reported, instead of keeping it.
pub async fn replay(sources: &Sources, bus: &Bus, drop_unreadable: bool) -> Result<Report, ReplayError> {
    let mut report = Report::default();
    let mut seen = std::collections::HashSet::new();
    loop {
        let received = sources
            .sqs
            .receive_message()
            .queue_url(&sources.queue_url)
            .max_number_of_messages(10)
            .visibility_timeout(300)
            .send()
            .await
            .map_err(|e| ReplayError::Queue(aws_sdk_sqs::error::DisplayErrorContext(e).to_string()))?;
        let (fresh, again): (Vec<_>, Vec<_>) = received
            .messages()
            .iter()
            .cloned()
            .partition(|m| seen.insert(m.message_id().unwrap_or_default().to_owned()));
        // A message kept in this run came round again: visible again at once
        // for the next run, not after this receive's timeout.
        for message in &again {
            make_visible(sources, message.receipt_handle().unwrap_or_default()).await;
        }
        if fresh.is_empty() {
            return Ok(report);
        }
        for message in fresh {
            report.messages += 1;
            let handle = message.receipt_handle().unwrap_or_default();
            let done = match Range::of(message.body().unwrap_or_default()) {
                Some(range) => replay_range(sources, bus, &range, drop_unreadable, &mut report).await?,
                None => false,
            };
            if done {
                let _ = sources
                    .sqs
                    .delete_message()
                    .queue_url(&sources.queue_url)
                    .receipt_handle(handle)
                    .send()
                    .await;
            } else {
                report.kept += 1;
                make_visible(sources, handle).await;
            }
        }
    }
}

async fn make_visible(sources: &Sources, handle: &str) {
    let _ = sources
        .sqs
        .change_message_visibility()
        .queue_url(&sources.queue_url)
        .receipt_handle(handle)
        .visibility_timeout(0)
        .send()
        .await;
}

/// Publishes one range's records; whether its message may be deleted.
async fn replay_range(
    sources: &Sources,
    bus: &Bus,
    range: &Range,
    drop_unreadable: bool,
    report: &mut Report,
) -> Result<bool, ReplayError> {
    let records = match read_range(&sources.streams, range).await {
        Ok(records) => records,
        Err(ReplayError::Expired) => {
            report.expired += 1;
            return Ok(false);
        }
        Err(other) => return Err(other),
    };
    let mut events = Vec::new();
    let mut readable = 0;
    let mut unreadable = 0;
    for record in &records {
        match record_events(record, bus.source(), bus.personal()) {
            Ok(made) => {
                readable += 1;
                events.extend(made);
            }
            Err(_) => unreadable += 1,
        }
    }
    bus.put(&events).await?.into_result()?;
    report.events += events.len();
    report.published_records += readable;
    report.unreadable_records += unreadable;
    Ok(unreadable == 0 || drop_unreadable)
}

/// The range's records, as Lambda delivers them.
async fn read_range(streams: &aws_sdk_dynamodbstreams::Client, range: &Range) -> Result<Vec<EventRecord>, ReplayError> {
    let mut iterator = streams
        .get_shard_iterator()
        .stream_arn(&range.stream)
        .shard_id(&range.shard)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .sequence_number(&range.start)
        .send()
        .await
        .map_err(|e| {
            // A range the stream trimmed (older than 24 hours) cannot be read again.
            let trimmed = e
                .as_service_error()
                .is_some_and(|e| e.is_trimmed_data_access_exception());
            if trimmed {
                ReplayError::Expired
            } else {
                ReplayError::Stream(aws_sdk_dynamodbstreams::error::DisplayErrorContext(e).to_string())
            }
        })?
        .shard_iterator;
    let mut records = Vec::new();
    while let Some(current) = iterator {
        let page = streams
            .get_records()
            .shard_iterator(current)
            .send()
            .await
            .map_err(|e| ReplayError::Stream(aws_sdk_dynamodbstreams::error::DisplayErrorContext(e).to_string()))?;
        if page.records().is_empty() {
            break;
        }
        for record in page.records() {
            let Some(change) = record.dynamodb() else { continue };
            let sequence = change.sequence_number().unwrap_or_default();
            if after(sequence, &range.end) {
                return Ok(records);
            }
            let image =
                |item: Option<&std::collections::HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>>| {
                    item.map(|i| serde_json::to_value(serde_dynamo::Item::from(i.clone())).unwrap_or(Value::Null))
                };
            let json = json!({
                "eventID": record.event_id(),
                "eventName": record.event_name().map(|n| n.as_str()),
                "eventSource": "aws:dynamodb",
                "eventVersion": record.event_version().unwrap_or("1.1"),
                "awsRegion": record
                    .aws_region()
                    .or_else(|| range.stream.split(':').nth(3))
                    .unwrap_or_default(),
                "dynamodb": {
                    "Keys": image(change.keys.as_ref()),
                    "NewImage": image(change.new_image.as_ref()),
                    "OldImage": image(change.old_image.as_ref()),
                    "SequenceNumber": sequence,
                    "SizeBytes": change.size_bytes(),
                    "ApproximateCreationDateTime": change.approximate_creation_date_time().map(|t| t.secs()),
                    "StreamViewType": "NEW_AND_OLD_IMAGES",
                },
                "eventSourceARN": range.stream,
            });
            let record = serde_json::from_value(strip_nulls(json))
                .map_err(|e| ReplayError::Stream(format!("a record of {} is not Lambda's shape: {e}", range.shard)))?;
            records.push(record);
        }
        iterator = page.next_shard_iterator.clone();
    }
    Ok(records)
}

/// Lambda's records leave out what a change lacks (no OldImage for a new item).
fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_longer_sequence_number_is_later() {
        assert!(after("1000", "999"));
        assert!(!after("999", "1000"));
        assert!(after("4421584600000000017450439121", "4421584600000000017450439120"));
        assert!(!after("4421584600000000017450439120", "4421584600000000017450439120"));
    }

    #[test]
    fn a_message_names_its_range() {
        let body =
            json!({"DDBStreamBatchInfo": {"shardId": "s-1", "startSequenceNumber": "10", "endSequenceNumber": "12",
            "streamArn": "arn:aws:dynamodb:us-east-1:1:table/t/stream/x", "batchSize": 3}})
            .to_string();
        let range = Range::of(&body).unwrap();
        assert_eq!(
            (range.shard.as_str(), range.start.as_str(), range.end.as_str()),
            ("s-1", "10", "12")
        );
        assert!(Range::of("{}").is_none());
    }
}
