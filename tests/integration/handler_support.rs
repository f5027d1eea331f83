//! Shared set-up for the handler tests: the callers of the events in `events/`,
//! and the [`TestApp`] that drives every handler.

pub(crate) use integration_tests::http::{Event, Reply};
pub(crate) use integration_tests::test_app::{TestApp, cognito_event};
pub(crate) use user_service::catalog::*;

/// The caller of the events in `events/`.
pub(crate) const ADA: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
/// A well-formed sub (a lower-case UUID) that no user has.
pub(crate) const NOBODY: &str = "0e5c2b1a-4d3f-4a6b-9c8d-7e6f5a4b3c2d";
/// The admin of the admin routes' events.
pub(crate) const ADMIN: &str = "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c";
