//! Test support for user-service: DynamoDB Local tables, the invariant checker,
//! and events loaded from `events/`.
// Test support may panic: a failed setup must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod ddb;
pub mod events;

pub mod http;
pub mod invariants;
pub mod lambda;
pub mod local_aws;
pub mod log_check;
pub mod logs;
pub mod moto;
pub mod process;
pub mod sdk;
pub mod stream;
pub mod test_app;
pub mod wait;

/// The workspace's root folder.
pub fn workspace_root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One instant per test process: every test's "now". Tests that need time to
/// pass add seconds to it (or move an App's manual clock), so no outcome depends
/// on how long the machine takes between two steps.
pub fn start_time() -> user_service::domain::Timestamp {
    static START: std::sync::LazyLock<user_service::domain::Timestamp> =
        std::sync::LazyLock::new(user_service::domain::Timestamp::now);
    *START
}

/// template.yaml as the local API reads it.
pub mod template {
    pub use local_api::template::*;

    pub fn load() -> serde_norway::Value {
        local_api::template::load(&crate::workspace_root().join("template.yaml")).expect("template.yaml parses")
    }
}
