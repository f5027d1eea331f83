//! Domain events: their source, bus, schemas, publishers and the webhook.

use super::super::setting::{From, Need, Range, Reaches, Setting, Value};

/// The domain events' source (CloudEvents `source`, EventBridge `source`); empty means urn:user-service:<stack name>.
pub const EVENT_SOURCE: Setting = Setting {
    variable: Some("EVENT_SOURCE"),
    parameter: Some("EventSource"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(?!aws\\.)[A-Za-z0-9:/._-]{0,256}$"),
        constraint: None,
    },
    about: "The domain events' source (CloudEvents `source`, EventBridge `source`); empty means urn:user-service:<stack name>.",
    why: &["EventBridge refuses a source starting with aws. (AWS's own)."],
    reaches: Reaches::Functions(
        Need::Bus,
        From::Template("!If [HasEventSource, !Ref EventSource, !Sub \"urn:user-service:${AWS::StackName}\"]"),
    ),
};

/// true adds the address to email.* events.
pub const EVENTS_INCLUDE_ADDRESSES: Setting = Setting {
    variable: Some("EVENTS_INCLUDE_ADDRESSES"),
    parameter: Some("EventsIncludeAddresses"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true adds the address to email.* events. Archived events cannot be erased later: every copy is then yours to erase (docs/events.md).",
    why: &[],
    reaches: Reaches::Functions(Need::Bus, From::Parameter),
};

/// true registers the events' JSON Schemas in an EventBridge schema registry.
pub const REGISTER_EVENT_SCHEMAS: Setting = Setting {
    variable: None,
    parameter: Some("RegisterEventSchemas"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true registers the events' JSON Schemas in an EventBridge schema registry.",
    why: &[],
    reaches: Reaches::Stack,
};

/// IAM roles that may put events on the bus besides the publisher (an operator's, for cargo xtask replay-events), comma-separated ARNs; the bus refuses everyone else.
pub const EVENT_PUBLISHER_ARNS: Setting = Setting {
    variable: None,
    parameter: Some("EventPublisherArns"),
    value: Value::List,
    about: "IAM roles that may put events on the bus besides the publisher (an operator's, for cargo xtask replay-events), comma-separated ARNs; the bus refuses everyone else.",
    why: &[],
    reaches: Reaches::Stack,
};

/// An HTTPS URL that receives every domain event (POST, the CloudEvent as the body); empty creates no webhook.
pub const WEBHOOK_URL: Setting = Setting {
    variable: None,
    parameter: Some("WebhookUrl"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^(https://[^ ]+)?$"),
        constraint: None,
    },
    about: "An HTTPS URL that receives every domain event (POST, the CloudEvent as the body); empty creates no webhook.",
    why: &[],
    reaches: Reaches::Stack,
};

/// Webhook deliveries a second at most; more wait and are retried (for up to 24 hours).
pub const WEBHOOK_RATE_LIMIT_PER_SECOND: Setting = Setting {
    variable: None,
    parameter: Some("WebhookRateLimitPerSecond"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: Some(300),
    }),
    about: "Webhook deliveries a second at most; more wait and are retried (for up to 24 hours).",
    why: &[],
    reaches: Reaches::Stack,
};

/// The stack's event bus.
pub const EVENT_BUS_NAME: Setting = Setting {
    variable: Some("EVENT_BUS_NAME"),
    parameter: None,
    value: Value::Text {
        default: None,
        pattern: None,
        constraint: None,
    },
    about: "The stack's event bus, where the domain events go (`<stack>-events`).",
    why: &[],
    reaches: Reaches::Functions(Need::Bus, From::Template("!Ref EventBus")),
};
