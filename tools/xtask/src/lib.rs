//! The tasks of `cargo xtask` that tests drive directly: `backfill`, which
//! files profiles written before GSI2 existed (`backfill-user-index`); `canonicalize`, the
//! move of a live table to another `EMAIL_CANONICALIZATION`, and
//! `replay-events`, which publishes again what publish-events gave up on.

pub mod backfill;
pub mod canonicalize;
pub mod replay;
