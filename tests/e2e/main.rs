//! End-to-end suites: real binaries, real DynamoDB Local, real processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod browser;
mod dev;
mod functions;
mod schemathesis;
