//! The domain events of `make dev`: publish-events puts them on a bus in moto's
//! EventBridge; a rule there sends every one to an SQS queue in moto, which
//! this drains into a list that `GET /local/events` serves and the terminal
//! shows, one line per event. Development only: a deployed stack has its own
//! bus, and its consumers their own rules.

use std::sync::Mutex;
use std::time::Duration;

use aws_config::SdkConfig;
use serde_json::{Value, json};

/// Events kept for `GET /local/events`; older ones are dropped.
const KEPT: usize = 1000;

#[derive(Debug, thiserror::Error)]
#[error("moto's {service} refused {operation}: {message}")]
pub struct SetupError {
    service: &'static str,
    operation: &'static str,
    message: String,
}

fn setup_error<E: std::error::Error>(service: &'static str, operation: &'static str) -> impl FnOnce(E) -> SetupError {
    move |err| SetupError {
        service,
        operation,
        message: format!("{}", aws_sdk_sqs::error::DisplayErrorContext(err)),
    }
}

/// The bus's events, as they arrive.
pub struct LocalEvents {
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    seen: Mutex<Vec<Value>>,
    /// Whether each event is printed as it arrives (`make dev`'s terminal).
    echo: bool,
}

impl LocalEvents {
    /// Makes the bus, the queue and the rule between them (each kept if it exists).
    pub async fn set_up(sdk: &SdkConfig, bus: &str, source: &str, echo: bool) -> Result<Self, SetupError> {
        let eventbridge = aws_sdk_eventbridge::Client::new(sdk);
        let sqs = aws_sdk_sqs::Client::new(sdk);
        let buses = eventbridge
            .list_event_buses()
            .name_prefix(bus)
            .send()
            .await
            .map_err(setup_error("EventBridge", "ListEventBuses"))?;
        if !buses.event_buses().iter().any(|b| b.name() == Some(bus)) {
            eventbridge
                .create_event_bus()
                .name(bus)
                .send()
                .await
                .map_err(setup_error("EventBridge", "CreateEventBus"))?;
        }
        let queue_url = create_queue(&sqs, &format!("{bus}-watch")).await?;
        let queue_arn = sqs
            .get_queue_attributes()
            .queue_url(&queue_url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
            .send()
            .await
            .map_err(setup_error("SQS", "GetQueueAttributes"))?
            .attributes()
            .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn).cloned())
            .unwrap_or_default();
        eventbridge
            .put_rule()
            .name("local-events")
            .event_bus_name(bus)
            .event_pattern(json!({ "source": [source] }).to_string())
            .send()
            .await
            .map_err(setup_error("EventBridge", "PutRule"))?;
        let target = aws_sdk_eventbridge::types::Target::builder()
            .id("watch")
            .arn(queue_arn)
            .build()
            .map_err(setup_error("EventBridge", "PutTargets"))?;
        eventbridge
            .put_targets()
            .rule("local-events")
            .event_bus_name(bus)
            .targets(target)
            .send()
            .await
            .map_err(setup_error("EventBridge", "PutTargets"))?;
        Ok(Self {
            sqs,
            queue_url,
            seen: Mutex::new(Vec::new()),
            echo,
        })
    }

    /// Every event so far (the last thousand), oldest first.
    pub fn all(&self) -> Vec<Value> {
        self.seen.lock().map(|seen| seen.clone()).unwrap_or_default()
    }

    /// The events that arrive from now: at least `expected` of them (waiting
    /// up to 30 s for them: EventBridge delivers after PutEvents answers),
    /// and any more that arrive within a second after.
    pub async fn collect(&self, expected: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let mut arrived = Vec::new();
        let mut quiet = 0;
        while quiet < 5 {
            let received = self.receive().await;
            if !received.is_empty() {
                arrived.extend(received);
                quiet = 0;
                continue;
            }
            if arrived.len() >= expected || tokio::time::Instant::now() > deadline {
                quiet += 1;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        arrived
    }

    /// Drains the queue into the list, printing each event, until the process ends.
    pub async fn run(&self) {
        loop {
            if self.receive().await.is_empty() {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    /// One receive: the events it brought, now also in the list.
    // `make dev`'s terminal shows each event as it comes.
    #[allow(clippy::print_stdout)]
    pub async fn receive(&self) -> Vec<Value> {
        let received = match self
            .sqs
            .receive_message()
            .queue_url(&self.queue_url)
            .max_number_of_messages(10)
            .send()
            .await
        {
            Ok(received) => received,
            Err(err) => {
                tracing::warn!(error = %aws_sdk_sqs::error::DisplayErrorContext(&err), "moto's SQS did not answer");
                return Vec::new();
            }
        };
        let mut events = Vec::new();
        for message in received.messages() {
            let entry: Value = serde_json::from_str(message.body().unwrap_or_default()).unwrap_or(Value::Null);
            let event = entry["detail"].clone();
            // The terminal of `make dev`: the type, the user and what changed.
            if self.echo {
                println!(
                    "event  {:<22} subject {}  {}",
                    event["type"].as_str().unwrap_or("?"),
                    event["subject"].as_str().unwrap_or("?"),
                    event["data"]
                );
            }
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(event.clone());
                let excess = seen.len().saturating_sub(KEPT);
                seen.drain(..excess);
            }
            if let Some(handle) = message.receipt_handle() {
                let _ = self
                    .sqs
                    .delete_message()
                    .queue_url(&self.queue_url)
                    .receipt_handle(handle)
                    .send()
                    .await;
            }
            events.push(event);
        }
        events
    }
}

/// A queue's URL, made if it does not exist.
pub async fn create_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> Result<String, SetupError> {
    Ok(sqs
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .map_err(setup_error("SQS", "CreateQueue"))?
        .queue_url()
        .unwrap_or_default()
        .to_owned())
}
