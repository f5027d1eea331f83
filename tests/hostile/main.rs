//! hostile suite.

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
