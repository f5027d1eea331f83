//! The bulk import's line format (`user-admin import`, docs/import-export.md,
//! schemas/import/user.json): one user a line as JSON, parsed straight into the
//! domain's types, then held to the table's rules (exactly one primary, and it
//! verified; the per-user maximum; the address policy). A line that fails
//! gets a stable code and the field it names. Pure: no AWS, so the password
//! migration trigger can reuse [`PasswordHash`] later.
//!
//! The line and the rules it is held to, its password hash, and why a line
//! is refused, each in a file of its own.

mod line;
mod line_error;
mod password;

pub use line::{ExternalId, LineEmail, LineStatus, UserLine, parse_line};
pub use line_error::{LineCode, LineError};
pub use password::{HashAlgorithm, PasswordHash};
