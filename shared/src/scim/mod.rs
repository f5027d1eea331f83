//! SCIM 2.0 (RFC 7643, the schema; RFC 7644, the protocol) as this service
//! speaks it to an organization's identity provider: the errors, the filters,
//! the attribute paths, the User resource, PATCH and the discovery documents.
//! Pure: nothing here reads or writes the table.

pub mod discovery;
pub mod error;
pub mod filter;
pub mod list;
pub mod patch;
pub mod path;
pub mod provision;
pub mod resource;
pub mod user;

pub use error::{ScimError, ScimType};
pub use filter::{Condition, Filter};
pub use list::ListQuery;
pub use patch::{Op, Operation, Patch};
pub use path::{AttrPath, CompValue};
pub use resource::{Meta, Projection, user_resource};
pub use user::{ExternalId, ScimEmail, ScimUser, ScimVersion, UserName, addresses_digest};

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod fuzz_tests;
