//! Nothing to see: this crate's manifest is the point (see its Cargo.toml).
