//! The stack's EventBridge bus: domain events go on it in their CloudEvents
//! envelope (derived from a change's images and wrapped with the stack's
//! source and personal-data setting, [`Bus::envelopes`]), as the `detail` of
//! an entry whose `detail-type` is the event's type. PutEvents takes ten
//! entries a call and answers per entry; an entry that failed on its own
//! (throttled, an internal failure) is sent again alone, with backoff, for as
//! long as the invocation's deadline allows.

use std::time::Duration;

use aws_sdk_eventbridge::types::{PutEventsRequestEntry, PutEventsResultEntry};
use serde_json::Value;

use crate::config::{ConfigError, EVENT_BUS_NAME, EVENT_SOURCE, EVENTS_INCLUDE_ADDRESSES, optional, required};
use crate::deadline;
use crate::events::{Change, Personal};

/// PutEvents' limit of entries per call.
pub const ENTRIES_PER_CALL: usize = 10;
/// Sends of one entry before it is given up on in this invocation.
const ATTEMPTS: u32 = 6;
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// One PutEvents call's limit, cut to what is left of the invocation.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);
/// No call starts with less than this left: it could not answer in time.
const LEAST_LEFT: Duration = Duration::from_millis(200);

/// Where the publisher puts events, and what they carry.
#[derive(Debug, Clone)]
pub struct Bus {
    client: aws_sdk_eventbridge::Client,
    name: String,
    source: String,
    personal: Personal,
}

/// Why some events were not put. Names no event's content.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// An event could not be serialised (never for the catalogue's events).
    #[error("an event could not be serialised")]
    Serialise(#[source] serde_json::Error),
    /// Entries kept failing until their attempts or the deadline ran out.
    #[error("{failed} of the events were not put on the bus (last: {last})")]
    NotPut {
        /// How many.
        failed: usize,
        /// The last error code EventBridge or the SDK gave.
        last: String,
    },
}

/// The outcome of putting a batch: which of its events were put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Put {
    /// One flag per event, in the order given.
    pub put: Vec<bool>,
    /// The last error code of an event not put.
    pub last_error: Option<String>,
}

impl Put {
    /// The index of the first event not put.
    pub fn first_failed(&self) -> Option<usize> {
        self.put.iter().position(|put| !put)
    }

    /// `Ok` when every event was put.
    pub fn into_result(self) -> Result<(), PublishError> {
        let failed = self.put.iter().filter(|put| !**put).count();
        if failed == 0 {
            return Ok(());
        }
        Err(PublishError::NotPut {
            failed,
            last: self.last_error.unwrap_or_default(),
        })
    }
}

impl Bus {
    /// A bus named `name`, for events from `source`.
    pub fn new(client: aws_sdk_eventbridge::Client, name: &str, source: &str, personal: Personal) -> Self {
        Self {
            client,
            name: name.to_owned(),
            source: source.to_owned(),
            personal,
        }
    }

    /// The bus, source and personal-data setting of the environment.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Self, ConfigError> {
        let name = required(&lookup, EVENT_BUS_NAME, "the name of the stack's event bus")?;
        let source = required(
            &lookup,
            EVENT_SOURCE,
            "the events' source, such as urn:user-service:prod",
        )?;
        // EventBridge refuses every entry whose source starts with `aws.`.
        if source.starts_with("aws.") {
            return Err(ConfigError::Invalid {
                name: EVENT_SOURCE.name(),
                reason: "a source starting with aws. is AWS's own; EventBridge refuses it".to_owned(),
            });
        }
        let personal = match optional(&lookup, EVENTS_INCLUDE_ADDRESSES).as_deref() {
            None | Some("false") => Personal::None,
            Some("true") => Personal::Addresses,
            Some(_) => {
                return Err(ConfigError::Invalid {
                    name: EVENTS_INCLUDE_ADDRESSES.name(),
                    reason: "must be true or false".to_owned(),
                });
            }
        };
        Ok(Self::new(
            aws_sdk_eventbridge::Client::new(sdk),
            &name,
            &source,
            personal,
        ))
    }

    /// The events' `source`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What the events carry of personal data.
    pub fn personal(&self) -> Personal {
        self.personal
    }

    /// The events of `change`, each in its CloudEvents envelope, as this bus
    /// publishes them: from its source, carrying what its setting allows.
    pub fn envelopes(&self, change: &Change) -> Vec<Value> {
        crate::events::envelopes(change, &self.source, self.personal)
    }

    /// Puts `events` (CloudEvents envelopes), ten a call. Entries that fail
    /// are sent again, alone with the others that failed, with backoff,
    /// until each is put, has had its attempts, or the deadline is near.
    pub async fn put(&self, events: &[Value]) -> Result<Put, PublishError> {
        let entries = events
            .iter()
            .map(|event| self.entry(event))
            .collect::<Result<Vec<_>, _>>()?;
        let mut put = vec![false; entries.len()];
        let mut last_error = None;
        let mut backoff = FIRST_BACKOFF;
        for attempt in 1..=ATTEMPTS {
            let waiting: Vec<usize> = (0..entries.len()).filter(|i| !put[*i]).collect();
            if waiting.is_empty() {
                break;
            }
            if attempt > 1 {
                if deadline::left(deadline::deadline_from_now()) < backoff + LEAST_LEFT {
                    break;
                }
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
            for chunk in waiting.chunks(ENTRIES_PER_CALL) {
                // Checked per call: the entries not sent stay not put, and the
                // handler reports their record for Lambda to retry.
                if deadline::left(deadline::deadline_from_now()) < LEAST_LEFT {
                    last_error = Some("DeadlineNear".to_owned());
                    break;
                }
                let sent: Vec<PutEventsRequestEntry> = chunk.iter().map(|i| entries[*i].clone()).collect();
                let timeout = deadline::call_timeout(Some(CALL_TIMEOUT)).unwrap_or(CALL_TIMEOUT);
                let call = self
                    .client
                    .put_events()
                    .set_entries(Some(sent))
                    .customize()
                    .config_override(
                        aws_sdk_eventbridge::config::Builder::default().timeout_config(
                            aws_smithy_types::timeout::TimeoutConfig::builder()
                                .operation_timeout(timeout)
                                .operation_attempt_timeout(timeout)
                                .build(),
                        ),
                    );
                match call.send().await {
                    // An answer with fewer results than entries leaves the rest not put.
                    Ok(output) => {
                        for (i, result) in chunk.iter().zip(output.entries()) {
                            match failure(result) {
                                None => put[*i] = true,
                                Some(code) => last_error = Some(code),
                            }
                        }
                    }
                    // The whole call failed after the SDK's own retries: every
                    // entry of it waits for the next attempt.
                    Err(err) => {
                        last_error = Some(
                            aws_sdk_eventbridge::error::ProvideErrorMetadata::code(&err)
                                .unwrap_or("Unreachable")
                                .to_owned(),
                        );
                    }
                }
            }
        }
        Ok(Put { put, last_error })
    }

    fn entry(&self, event: &Value) -> Result<PutEventsRequestEntry, PublishError> {
        Ok(PutEventsRequestEntry::builder()
            .event_bus_name(&self.name)
            .source(&self.source)
            .detail_type(event["type"].as_str().unwrap_or_default())
            .detail(serde_json::to_string(event).map_err(PublishError::Serialise)?)
            .build())
    }
}

/// An entry's error code, when it was not put.
fn failure(result: &PutEventsResultEntry) -> Option<String> {
    match (result.event_id(), result.error_code()) {
        (Some(_), None) => None,
        (_, Some(code)) => Some(code.to_owned()),
        (None, None) => Some("NoEventId".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sdk() -> aws_config::SdkConfig {
        aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build()
    }

    use crate::config::tests::lookup;

    #[test]
    fn addresses_only_when_asked_and_nothing_else_is_read_as_yes() {
        let bus = Bus::from_lookup(
            lookup(&[(EVENT_BUS_NAME.name(), "b"), (EVENT_SOURCE.name(), "urn:s")]),
            &sdk(),
        )
        .unwrap();
        assert_eq!((bus.personal(), bus.source()), (Personal::None, "urn:s"));
        let bus = Bus::from_lookup(
            lookup(&[
                (EVENT_BUS_NAME.name(), "b"),
                (EVENT_SOURCE.name(), "urn:s"),
                (EVENTS_INCLUDE_ADDRESSES.name(), "true"),
            ]),
            &sdk(),
        )
        .unwrap();
        assert_eq!(bus.personal(), Personal::Addresses);
        let refused = Bus::from_lookup(
            lookup(&[
                (EVENT_BUS_NAME.name(), "b"),
                (EVENT_SOURCE.name(), "urn:s"),
                (EVENTS_INCLUDE_ADDRESSES.name(), "yes"),
            ]),
            &sdk(),
        );
        assert!(matches!(
            refused,
            Err(ConfigError::Invalid { name, .. }) if name == EVENTS_INCLUDE_ADDRESSES.name()
        ));
        assert!(matches!(
            Bus::from_lookup(lookup(&[(EVENT_SOURCE.name(), "urn:s")]), &sdk()),
            Err(ConfigError::Missing { name, .. }) if name == EVENT_BUS_NAME.name()
        ));
        assert!(matches!(
            Bus::from_lookup(lookup(&[(EVENT_BUS_NAME.name(), "b"), (EVENT_SOURCE.name(), "aws.users")]), &sdk()),
            Err(ConfigError::Invalid { name, .. }) if name == EVENT_SOURCE.name()
        ));
    }

    #[test]
    fn a_put_reports_the_first_event_not_put() {
        let put = Put {
            put: vec![true, false, true, false],
            last_error: Some("ThrottlingException".to_owned()),
        };
        assert_eq!(put.first_failed(), Some(1));
        let err = put.into_result().unwrap_err().to_string();
        assert!(
            err.contains("2 of the events") && err.contains("ThrottlingException"),
            "{err}"
        );
        assert!(
            Put {
                put: vec![true],
                last_error: None
            }
            .into_result()
            .is_ok()
        );
    }
}
