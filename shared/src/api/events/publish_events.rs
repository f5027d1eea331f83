//! Domain events for the rest of the system. The stream delivers every change
//! of a profile or an email record (the event source mapping's filters pass
//! those alone); the store reads each record back into the change's old and
//! new images ([`crate::store::changes::change_of_record`]), which decide its
//! events ([`crate::events::derive`]); they go on the stack's bus in their
//! CloudEvents envelope ([`Bus::envelopes`]), ids derived from the record, so
//! a record delivered again gives the same ids.
//!
//! A batch's events are put together, ten a call; an entry that fails alone is
//! sent again alone ([`crate::bus::Bus::put`]). The first record whose events
//! were not all put, or whose images cannot be read, is reported: Lambda
//! retries from it (bounded, halving the batch), then hands its range to the
//! on-failure queue, whose alarm fires; `cargo xtask replay-events` publishes
//! it again once the cause is fixed.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use lambda_runtime::LambdaEvent;

use crate::app::App;
use crate::bus::Bus;
use crate::deadline;
use crate::store::changes::{change_of_record, user_of_record};

/// The Lambda entry point of the table stream's profile and address changes:
/// puts their events on the bus, reporting the first record not published.
pub async fn handle(app: &App, event: LambdaEvent<Event>) -> Result<DynamoDbEventResponse, lambda_runtime::Diagnostic> {
    let deadline = deadline::from_lambda(event.context.deadline, None);
    let span = tracing::info_span!("stream", request_id = %event.context.request_id);
    let records = event.payload.records;
    let Some(bus) = &app.bus else {
        tracing::error!("this function is not configured with the event bus");
        return Ok(failed_at(&records, 0));
    };
    Ok(Box::pin(tracing::Instrument::instrument(
        deadline::within(deadline, publish(bus, &records)),
        span,
    ))
    .await)
}

/// Publishes the events of `records`, in order, and reports the first record
/// whose events are not all on the bus (nothing after it is acknowledged).
pub async fn publish(bus: &Bus, records: &[EventRecord]) -> DynamoDbEventResponse {
    let mut events = Vec::new();
    // The record each event came from.
    let mut origin = Vec::new();
    let mut unreadable = None;
    for (index, record) in records.iter().enumerate() {
        match change_of_record(record) {
            Ok(change) => {
                let made = change.map(|change| bus.envelopes(&change)).unwrap_or_default();
                origin.extend(std::iter::repeat_n(index, made.len()));
                events.extend(made);
            }
            Err(err) => {
                tracing::error!(
                    sub = user_of_record(record).unwrap_or_default(),
                    sequence = record.change.sequence_number.as_deref().unwrap_or_default(),
                    cause = %err,
                    "a record's images cannot be read; no event published from it"
                );
                unreadable = Some(index);
                break;
            }
        }
    }
    let not_put = match bus.put(&events).await {
        Ok(put) => {
            let first = put.first_failed().map(|event| origin[event]);
            if let Err(err) = put.into_result() {
                tracing::error!(cause = %err, "events not put on the bus; the record is retried");
            }
            first
        }
        Err(err) => {
            tracing::error!(cause = %err, "events not put on the bus; the record is retried");
            Some(0)
        }
    };
    let published = events.len();
    match not_put.into_iter().chain(unreadable).min() {
        Some(index) => failed_at(records, index),
        None => {
            tracing::info!(records = records.len(), events = published, "published");
            DynamoDbEventResponse::default()
        }
    }
}

/// A response that asks Lambda to retry from `records[index]`.
fn failed_at(records: &[EventRecord], index: usize) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    if let Some(record) = records.get(index) {
        let mut failure = DynamoDbBatchItemFailure::default();
        failure.item_identifier = Some(record.change.sequence_number.clone().unwrap_or_default());
        response.batch_item_failures.push(failure);
    }
    response
}
