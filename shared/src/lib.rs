//! user-service core: the single-table key schema, domain rules, the DynamoDB
//! store with every access pattern and transaction, and the HTTP mapping.

pub mod config;
pub mod domain;
pub mod keys;
pub mod store;
pub mod verification;

pub use store::{Store, StoreError};
