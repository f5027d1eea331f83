//! Hostile clients: bad input through every HTTP function, and the
//! authorization matrix. Both walk `catalog::FUNCTIONS`, so a new route is
//! covered (or the suite fails asking for its valid request).

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod authorization;
mod hostile;
mod support;
