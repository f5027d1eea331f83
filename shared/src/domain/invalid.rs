//! Why a parse refused a value: the one error of the domain's types.

/// Why a value was refused. The HTTP layer adds the field name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub &'static str);
