//! user-service core: the single-table key schema, domain rules, the DynamoDB
//! store with every access pattern and transaction, and the HTTP mapping.

pub mod api;
pub mod app;
pub mod catalog;
pub mod clock;
pub mod config;
pub mod domain;
pub mod http;
pub mod identity;
pub mod keys;
pub mod notify;
pub mod secrets;
pub mod store;
pub mod verification;

pub use app::App;
pub use store::{Store, StoreError};

/// An error and its sources, one line: for logs.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
