//! workload suite: many users at once on overlapping addresses through every
//! route, and the faults DynamoDB Local cannot produce, through the handlers.

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod codes;
mod faults;
mod figures;
mod purge;
mod scim_pages;
mod workload;

/// A number the environment sets for a run (its size, its seed), or `default`.
fn number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        })
        .unwrap_or(default)
}
