//! workload suite: many users at once on overlapping addresses through every
//! route, and the faults DynamoDB Local cannot produce, through the handlers.

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod codes;
mod faults;
mod figures;
mod purge;
mod workload;
