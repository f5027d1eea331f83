//! Domain events: the catalogue, the one source the code, the JSON Schemas
//! (`schemas/events/`) and docs/events.md follow; a change as the events read
//! it (its old and new images, which the store reads the stream into); each
//! event's derivation from those images, pure; and the CloudEvents 1.0
//! envelope the publisher wraps them in.
//!
//! Events name users by `sub` and addresses by email id. They carry no
//! address, name or phone unless the deployment asks for addresses
//! ([`Personal::Addresses`]): an archived event cannot be erased later.

mod catalogue;
mod change;
mod derive;
mod envelope;
mod schema;

pub use catalogue::{EventType, Field, FieldType, PROFILE_FIELDS, Personal};
pub use change::{Change, Image, UserImage};
pub use derive::{Event, derive};
pub use envelope::{envelope, envelopes, event_id};
pub use schema::schema;

#[cfg(test)]
mod fixtures;
