//! `user-admin`, the operators' tool (never deployed): the bulk import of
//! users from JSON Lines and the export of every user in the same format
//! (docs/import-export.md). The library is what the binary runs, with the
//! clients given, so tests point it at DynamoDB Local and moto.

pub mod cognito;
pub mod export;
pub mod import;

/// The progress bar xtask's canonicalize draws (stderr, on a terminal only):
/// steps with rate and time left, or a counter with its rate.
pub use xtask::canonicalize::progress;
