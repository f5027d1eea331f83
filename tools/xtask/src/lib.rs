//! The tasks of `cargo xtask` that tests drive directly: `canonicalize`, the
//! move of a live table to another `EMAIL_CANONICALIZATION`.

pub mod canonicalize;
