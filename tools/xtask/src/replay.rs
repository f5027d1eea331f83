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
use user_service::store::changes::change_of_record;

/// Where the failures are, and the stream to read them back from.
pub struct Sources {
    /// DynamoDB Streams (AWS_ENDPOINT_URL_DYNAMODB_STREAMS for DynamoDB Local).
    pub streams: aws_sdk_dynamodbstreams::Client,
    /// The table's stream: a message naming any other is kept, never read.
    pub stream_arn: String,
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
    /// Messages that are no range of this table's stream (malformed, or another stream's).
    pub foreign: usize,
    /// Messages whose range could not be read to its end (kept, to try again).
    pub incomplete: usize,
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
    size: usize,
}

impl Range {
    fn of(body: &str) -> Option<Self> {
        let message: Value = serde_json::from_str(body).ok()?;
        let info = &message["DDBStreamBatchInfo"];
        let text = |name: &str| info[name].as_str().map(str::to_owned);
        let range = Self {
            stream: text("streamArn")?,
            shard: text("shardId")?,
            start: text("startSequenceNumber")?,
            end: text("endSequenceNumber")?,
            size: usize::try_from(info["batchSize"].as_u64()?).ok()?,
        };
        (!after(&range.start, &range.end) && range.size > 0).then_some(range)
    }
}

/// Sequence numbers are decimal strings of varying length: the longer is later.
fn after(sequence: &str, end: &str) -> bool {
    (sequence.len(), sequence) > (end.len(), end)
}

/// What became of one message.
enum Outcome {
    /// Every record of its range is published: delete it.
    Done,
    /// Keep it on the queue.
    Kept,
}

/// Replays every message on the queue now. `drop_unreadable` deletes a
/// message whose unreadable records were reported, instead of keeping it.
/// Kept messages stay invisible until the run ends, so each is read once.
pub async fn replay(sources: &Sources, bus: &Bus, drop_unreadable: bool) -> Result<Report, ReplayError> {
    let mut report = Report::default();
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    loop {
        let received = sources
            .sqs
            .receive_message()
            .queue_url(&sources.queue_url)
            .max_number_of_messages(10)
            .visibility_timeout(900)
            // Long polling: a short poll of a small queue can answer empty.
            .wait_time_seconds(2)
            .send()
            .await
            .map_err(|e| ReplayError::Queue(aws_sdk_sqs::error::DisplayErrorContext(e).to_string()))?;
        let fresh: Vec<_> = received
            .messages()
            .iter()
            .filter(|m| seen.insert(m.message_id().unwrap_or_default().to_owned()))
            .cloned()
            .collect();
        if fresh.is_empty() {
            break;
        }
        for message in fresh {
            report.messages += 1;
            let handle = message.receipt_handle().unwrap_or_default().to_owned();
            let outcome = match Range::of(message.body().unwrap_or_default()) {
                Some(range) if range.stream == sources.stream_arn => {
                    replay_range(sources, bus, &range, drop_unreadable, &mut report).await?
                }
                _ => {
                    report.foreign += 1;
                    Outcome::Kept
                }
            };
            match outcome {
                Outcome::Done => {
                    let _ = sources
                        .sqs
                        .delete_message()
                        .queue_url(&sources.queue_url)
                        .receipt_handle(&handle)
                        .send()
                        .await;
                }
                Outcome::Kept => {
                    report.kept += 1;
                    kept.push(handle);
                }
            }
        }
    }
    // Visible again for the next run.
    for handle in kept {
        let _ = sources
            .sqs
            .change_message_visibility()
            .queue_url(&sources.queue_url)
            .receipt_handle(handle)
            .visibility_timeout(0)
            .send()
            .await;
    }
    Ok(report)
}

/// Publishes one range's records.
async fn replay_range(
    sources: &Sources,
    bus: &Bus,
    range: &Range,
    drop_unreadable: bool,
    report: &mut Report,
) -> Result<Outcome, ReplayError> {
    let (records, complete) = match read_range(&sources.streams, range).await {
        Ok(read) => read,
        Err(ReplayError::Expired) => {
            report.expired += 1;
            return Ok(Outcome::Kept);
        }
        Err(ReplayError::Stream(_)) => {
            report.incomplete += 1;
            return Ok(Outcome::Kept);
        }
        Err(other) => return Err(other),
    };
    let mut events = Vec::new();
    let mut readable = 0;
    let mut unreadable = 0;
    for record in &records {
        match change_of_record(record) {
            Ok(change) => {
                readable += 1;
                events.extend(change.map(|change| bus.envelopes(&change)).unwrap_or_default());
            }
            Err(_) => unreadable += 1,
        }
    }
    bus.put(&events).await?.into_result()?;
    report.events += events.len();
    report.published_records += readable;
    report.unreadable_records += unreadable;
    if !complete {
        report.incomplete += 1;
        return Ok(Outcome::Kept);
    }
    Ok(if unreadable == 0 || drop_unreadable {
        Outcome::Done
    } else {
        Outcome::Kept
    })
}

/// Pages read before a range is given up on for this run: an open shard's
/// pages can be empty before its records (GetRecords allows 5 calls a second).
const MOST_PAGES: usize = 50;

/// The range's records, as Lambda delivers them, and whether the range was
/// read to its end (its last record, or as many records as it holds).
async fn read_range(
    streams: &aws_sdk_dynamodbstreams::Client,
    range: &Range,
) -> Result<(Vec<EventRecord>, bool), ReplayError> {
    let gone = |e: &aws_sdk_dynamodbstreams::operation::get_shard_iterator::GetShardIteratorError| {
        e.is_trimmed_data_access_exception() || e.is_resource_not_found_exception()
    };
    let mut iterator = streams
        .get_shard_iterator()
        .stream_arn(&range.stream)
        .shard_id(&range.shard)
        .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
        .sequence_number(&range.start)
        .send()
        .await
        .map_err(|e| {
            // A range the stream trimmed (older than 24 hours), or a shard it
            // deleted, cannot be read again.
            if e.as_service_error().is_some_and(gone) {
                ReplayError::Expired
            } else {
                ReplayError::Stream(aws_sdk_dynamodbstreams::error::DisplayErrorContext(e).to_string())
            }
        })?
        .shard_iterator;
    let mut records = Vec::new();
    for page in 0..MOST_PAGES {
        let Some(current) = iterator else {
            // The shard is closed and read to its end.
            return Ok((records, true));
        };
        let read = streams
            .get_records()
            .shard_iterator(current)
            .send()
            .await
            .map_err(|e| ReplayError::Stream(aws_sdk_dynamodbstreams::error::DisplayErrorContext(e).to_string()))?;
        for record in read.records() {
            let Some(change) = record.dynamodb() else { continue };
            let sequence = change.sequence_number().unwrap_or_default();
            if after(sequence, &range.end) {
                return Ok((records, true));
            }
            records.push(lambda_record(record, range)?);
            if sequence == range.end || records.len() >= range.size {
                return Ok((records, true));
            }
        }
        iterator = read.next_shard_iterator.clone();
        if read.records().is_empty() && page + 1 < MOST_PAGES {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok((records, false))
}

/// A stream record as Lambda hands it to publish-events.
fn lambda_record(record: &aws_sdk_dynamodbstreams::types::Record, range: &Range) -> Result<EventRecord, ReplayError> {
    let change = record.dynamodb();
    let image = |item: Option<&std::collections::HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>>| {
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
            "Keys": image(change.and_then(|c| c.keys.as_ref())),
            "NewImage": image(change.and_then(|c| c.new_image.as_ref())),
            "OldImage": image(change.and_then(|c| c.old_image.as_ref())),
            "SequenceNumber": change.and_then(|c| c.sequence_number()),
            "SizeBytes": change.and_then(|c| c.size_bytes()),
            "ApproximateCreationDateTime": change.and_then(|c| c.approximate_creation_date_time()).map(|t| t.secs()),
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
        "eventSourceARN": range.stream,
    });
    serde_json::from_value(strip_nulls(json))
        .map_err(|e| ReplayError::Stream(format!("a record of {} is not Lambda's shape: {e}", range.shard)))
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
