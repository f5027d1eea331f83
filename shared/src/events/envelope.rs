//! The CloudEvents 1.0 envelope: an event's id (from its stream record, so a
//! replay gives the same ids), source and time around its `data`.

use serde_json::{Value, json};

use super::catalogue::{EventType, Personal};
use super::change::Change;
use super::derive::{Event, derive};
use crate::domain::Timestamp;

/// The namespace of event ids (UUIDv5): any fixed UUID, this service's own.
const ID_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6f1e_2c0a_5b7d_4e3f_9a1b_2c3d_4e5f_6a7b);

/// The event's id: derived from the stream record's id and the event's type,
/// so a replayed record gives the same ids, and a consumer drops duplicates.
pub fn event_id(record_id: &str, kind: EventType) -> String {
    uuid::Uuid::new_v5(&ID_NAMESPACE, format!("{record_id}/{}", kind.name()).as_bytes()).to_string()
}

/// The CloudEvents 1.0 envelope of `event` (structured mode, JSON), as the
/// EventBridge `detail`: `source` is the stack's, `time` the change's.
pub fn envelope(event: &Event, source: &str, record_id: &str, time: Timestamp) -> Value {
    json!({
        "specversion": "1.0",
        "id": event_id(record_id, event.kind),
        "source": source,
        "type": event.kind.name(),
        "subject": event.subject.as_str(),
        "time": time.to_string(),
        "datacontenttype": "application/json",
        "data": event.data,
    })
}

/// The events of `change`, each in its envelope: derived from its images with
/// `personal`, from `source`, ids from its record's, `time` the change's.
pub fn envelopes(change: &Change, source: &str, personal: Personal) -> Vec<Value> {
    derive(change.old.as_ref(), change.new.as_ref(), personal)
        .iter()
        .map(|event| envelope(event, source, &change.record_id, change.time))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_record_and_the_type_and_nothing_else() {
        let a = event_id("rec-1", EventType::EmailVerified);
        assert_eq!(
            a,
            event_id("rec-1", EventType::EmailVerified),
            "a replay gives the same id"
        );
        assert_ne!(a, event_id("rec-2", EventType::EmailVerified));
        assert_ne!(a, event_id("rec-1", EventType::EmailPrimaryChanged));
        assert!(uuid::Uuid::parse_str(&a).is_ok());
    }
}
