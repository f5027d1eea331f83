//! Why a line is refused: a stable code, and the field it names (never its value).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a line is not imported: stable codes, listed in docs/import-export.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LineCode {
    /// Not JSON, or a field missing, unknown or malformed (the field is named).
    InvalidLine,
    /// No address is primary.
    NoPrimary,
    /// More than one address is primary.
    ManyPrimaries,
    /// The primary address is not verified.
    PrimaryNotVerified,
    /// One address twice in the line (under the address policy's canonical form).
    DuplicateInLine,
    /// More addresses than the per-user maximum (`MAX_EMAILS_PER_USER`).
    TooManyEmails,
    /// The address policy refuses the address.
    AddressNotAllowed,
    /// An earlier line has the address.
    DuplicateInFile,
    /// Another user in the table holds the address.
    AddressOwned,
    /// Cognito has a user with the primary address that cannot be this one
    /// (an unconfirmed sign-up, or a refusal of the address).
    CognitoConflict,
    /// DynamoDB or Cognito kept failing (throttled, unavailable) after the
    /// retries: run again.
    Unavailable,
    /// `--pending`: the password hash costs more than the migration trigger
    /// checks within Cognito's 5 s (`legacy_password::CostLimits::TRIGGER`).
    PasswordTooCostly,
    /// The person was imported before and their account erased since (they
    /// deleted it, or an admin did): never created again. Take the line out
    /// of the source.
    Erased,
}

impl LineCode {
    /// Every code, in the order the docs list them.
    pub const ALL: &'static [LineCode] = &[
        Self::InvalidLine,
        Self::NoPrimary,
        Self::ManyPrimaries,
        Self::PrimaryNotVerified,
        Self::DuplicateInLine,
        Self::TooManyEmails,
        Self::AddressNotAllowed,
        Self::DuplicateInFile,
        Self::AddressOwned,
        Self::CognitoConflict,
        Self::Unavailable,
        Self::PasswordTooCostly,
        Self::Erased,
    ];

    /// The code as the report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidLine => "INVALID_LINE",
            Self::NoPrimary => "NO_PRIMARY",
            Self::ManyPrimaries => "MANY_PRIMARIES",
            Self::PrimaryNotVerified => "PRIMARY_NOT_VERIFIED",
            Self::DuplicateInLine => "DUPLICATE_IN_LINE",
            Self::TooManyEmails => "TOO_MANY_EMAILS",
            Self::AddressNotAllowed => "ADDRESS_NOT_ALLOWED",
            Self::DuplicateInFile => "DUPLICATE_IN_FILE",
            Self::AddressOwned => "ADDRESS_OWNED",
            Self::CognitoConflict => "COGNITO_CONFLICT",
            Self::Unavailable => "UNAVAILABLE",
            Self::PasswordTooCostly => "PASSWORD_TOO_COSTLY",
            Self::Erased => "ERASED",
        }
    }
}

impl fmt::Display for LineCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A line refused: its code, and the field it is about when one is. Never
/// the value: a report holds no address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{code}{}", .field.as_deref().map(|f| format!(" at {f}")).unwrap_or_default())]
pub struct LineError {
    /// What is wrong.
    pub code: LineCode,
    /// Where, as a path such as `emails[1].address`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl LineError {
    /// A refusal of the whole line.
    pub fn new(code: LineCode) -> Self {
        Self { code, field: None }
    }

    /// A refusal of one field.
    pub fn at(code: LineCode, field: impl Into<String>) -> Self {
        Self {
            code,
            field: Some(field.into()),
        }
    }

    /// A refusal of the `index`th address.
    pub fn at_email(code: LineCode, index: usize) -> Self {
        Self::at(code, format!("emails[{index}].address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_spelled_as_the_report_writes_them() {
        for code in LineCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }
}
