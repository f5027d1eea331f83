//! The HTTP edge: one wrapper every API handler runs in, request parsing,
//! responses and problem mapping.

pub mod problem;
pub mod request;
pub mod response;

#[cfg(feature = "aws")]
pub mod lambda;

pub use problem::{Failure, Problem};
pub use request::Caller;
