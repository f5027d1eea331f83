//! Test support for user-service: DynamoDB Local tables, the invariant checker,
//! and events loaded from `events/`.
// Test support may panic: a failed setup must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod ddb;
pub mod events;
pub mod http;
pub mod invariants;
pub mod lambda;
pub mod template;
