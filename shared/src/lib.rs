//! user-service core: the single-table key schema, domain rules, the DynamoDB
//! store with every access pattern and transaction, and the HTTP mapping.
//!
#![doc = include_str!("../../docs/architecture.md")]
#![warn(missing_docs)]

pub mod address_policy;
pub mod api;
#[cfg(feature = "aws")]
pub mod app;
#[cfg(feature = "aws")]
pub mod audit;
#[cfg(feature = "aws")]
pub mod bus;
pub mod catalog;
pub mod clock;
pub mod config;
#[cfg(feature = "aws")]
pub mod deadline;
pub mod domain;
#[cfg(feature = "aws")]
pub mod error;
pub mod events;
pub mod http;
#[cfg(feature = "aws")]
pub mod identity;
pub mod import;
pub mod invitation;
#[cfg(feature = "legacy-passwords")]
pub mod legacy_password;
#[cfg(feature = "aws")]
pub mod mail;
pub mod metrics;
pub mod org_policy;
#[cfg(feature = "aws")]
pub mod provisioning;
#[cfg(feature = "aws")]
pub mod reconcile;
#[cfg(feature = "aws")]
pub mod reconciler;
pub mod recovery;
pub mod scim;
pub mod scim_token;
#[cfg(feature = "aws")]
pub mod secrets;
#[cfg(feature = "aws")]
pub mod store;
pub mod verification;
#[cfg(feature = "aws")]
pub mod verification_key;

#[cfg(feature = "aws")]
pub use app::{App, Clients};
#[cfg(feature = "aws")]
pub use store::{Store, StoreError};
