//! One line of an import: a user as JSON, read straight into the domain's
//! types, then held to the table's rules; and the account it becomes.

use serde::{Deserialize, Serialize};

use super::line_error::{LineCode, LineError};
use super::password::PasswordHash;
use crate::address_policy::{AddressPolicy, CanonicalEmail};
use crate::domain::{AdditionalEmail, EmailAddress, Invalid, NewAccount, NewUser, PersonName, Phone, Timestamp};
use crate::domain::{UserId, UserStatus};

/// One user of an import or an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserLine {
    /// The user's id in the system the users come from, for the operator's own mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<ExternalId>,
    /// Active or suspended: a deleted user is not imported.
    pub status: LineStatus,
    /// When the user signed up there; the import's time when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    /// The given name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<PersonName>,
    /// The family name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<PersonName>,
    /// A contact number in E.164.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
    /// Every address, exactly one of them primary (and verified).
    pub emails: Vec<LineEmail>,
    /// The hash of the user's password there. Checked, counted, and not used
    /// yet (a migration trigger will); never exported.
    #[serde(default, skip_serializing)]
    pub password: Option<PasswordHash>,
}

/// A user's status in a line: a deleted user has nothing to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineStatus {
    /// May sign in.
    Active,
    /// Imported disabled in Cognito.
    Suspended,
}

impl From<LineStatus> for UserStatus {
    fn from(status: LineStatus) -> Self {
        match status {
            LineStatus::Active => Self::Active,
            LineStatus::Suspended => Self::Suspended,
        }
    }
}

/// One address of a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LineEmail {
    /// The address, normalised as every address of the service.
    pub address: EmailAddress,
    /// Whether the user proved they receive mail there.
    pub verified: bool,
    /// Whether it is the address the user signs in with.
    pub primary: bool,
}

/// The other system's id of a user: 1 to 256 characters, none a control character.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ExternalId(String);

impl ExternalId {
    /// The longest id accepted, in characters.
    pub const MAX_CHARS: usize = 256;

    /// Checks an id as given.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let chars = raw.chars().count();
        if chars == 0 || chars > Self::MAX_CHARS {
            return Err(Invalid("must be 1 to 256 characters"));
        }
        if raw.chars().any(char::is_control) {
            return Err(Invalid("must not contain control characters"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The id as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ExternalId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ExternalId> for String {
    fn from(value: ExternalId) -> Self {
        value.0
    }
}

/// Reads one line; a failure names the field (`.` for the line itself) and
/// never quotes the value.
pub fn parse_line(raw: &str) -> Result<UserLine, LineError> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let line: UserLine = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        LineError::at(LineCode::InvalidLine, path)
    })?;
    de.end().map_err(|_| LineError::at(LineCode::InvalidLine, "."))?;
    Ok(line)
}

impl UserLine {
    /// Holds the line to the table's rules and `policy`: exactly one primary,
    /// verified; at most `max_emails` addresses, none twice; every address
    /// admitted.
    pub fn check(&self, policy: &AddressPolicy, max_emails: u32) -> Result<(), LineError> {
        let primaries: Vec<usize> = (0..self.emails.len()).filter(|&i| self.emails[i].primary).collect();
        match primaries.as_slice() {
            [] => return Err(LineError::at(LineCode::NoPrimary, "emails")),
            [one] if !self.emails[*one].verified => {
                return Err(LineError::at(LineCode::PrimaryNotVerified, format!("emails[{one}]")));
            }
            [_] => {}
            [_, second, ..] => return Err(LineError::at(LineCode::ManyPrimaries, format!("emails[{second}]"))),
        }
        if self.emails.len() > max_emails as usize {
            return Err(LineError::at(LineCode::TooManyEmails, "emails"));
        }
        let forms = self.forms(policy);
        for (i, form) in forms.iter().enumerate() {
            if forms[..i].contains(form) {
                return Err(LineError::at_email(LineCode::DuplicateInLine, i));
            }
        }
        for (i, email) in self.emails.iter().enumerate() {
            policy
                .admit(&email.address)
                .map_err(|_| LineError::at_email(LineCode::AddressNotAllowed, i))?;
        }
        Ok(())
    }

    /// The canonical form of each address under `policy`, in order.
    pub fn forms(&self, policy: &AddressPolicy) -> Vec<CanonicalEmail> {
        self.emails.iter().map(|e| policy.canonical(&e.address)).collect()
    }

    /// The primary address, once [`UserLine::check`] passed.
    pub fn primary(&self) -> Option<&LineEmail> {
        self.emails.iter().find(|e| e.primary)
    }

    /// The account to write for the user Cognito knows as `user_id`; `None`
    /// without a primary (a line that did not pass [`UserLine::check`]).
    pub fn account(&self, user_id: UserId, now: Timestamp) -> Option<NewAccount> {
        let primary = self.primary()?;
        Some(NewAccount {
            user: NewUser {
                user_id,
                email: primary.address.clone(),
                first_name: self.first_name.clone(),
                last_name: self.last_name.clone(),
                phone: self.phone.clone(),
            },
            status: self.status.into(),
            created_at: self.created_at.unwrap_or(now),
            more: self
                .emails
                .iter()
                .filter(|e| !e.primary)
                .map(|e| AdditionalEmail {
                    email: e.address.clone(),
                    verified: e.verified,
                })
                .collect(),
            // Keyed by the service's secret, which the import adds.
            import_key: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::HashAlgorithm;
    use crate::import::password::tests::BCRYPT;

    fn good() -> serde_json::Value {
        serde_json::json!({
            "externalId": "legacy-1",
            "status": "active",
            "createdAt": "2020-01-02T03:04:05.000Z",
            "firstName": "Ada",
            "emails": [
                {"address": "Ada@Example.com", "verified": true, "primary": true},
                {"address": "ada.work@example.com", "verified": false, "primary": false}
            ],
            "password": {"algorithm": "bcrypt", "hash": BCRYPT}
        })
    }

    fn parse(v: &serde_json::Value) -> Result<UserLine, LineError> {
        parse_line(&v.to_string())
    }

    fn checked(v: &serde_json::Value) -> Result<UserLine, LineError> {
        let line = parse(v)?;
        line.check(&AddressPolicy::default(), 10)?;
        Ok(line)
    }

    #[test]
    fn a_good_line_parses_into_domain_types_and_its_account() {
        let line = checked(&good()).unwrap();
        assert_eq!(line.emails[0].address.as_str(), "ada@example.com");
        assert_eq!(line.password.as_ref().unwrap().algorithm(), HashAlgorithm::Bcrypt);
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let account = line.account(UserId::parse("u").unwrap(), now).unwrap();
        assert_eq!(account.user.email.as_str(), "ada@example.com");
        assert_eq!(account.created_at, Timestamp::parse("2020-01-02T03:04:05Z").unwrap());
        assert_eq!(account.more.len(), 1);
        assert!(!account.more[0].verified);
        // Exported again, the password is never written.
        let out = serde_json::to_value(&line).unwrap();
        assert!(out.get("password").is_none());
        assert_eq!(out["emails"][0]["address"], "ada@example.com");
    }

    #[test]
    fn every_malformed_field_is_named_and_its_value_never_quoted() {
        let cases: &[(&str, serde_json::Value, &str)] = &[
            ("status", serde_json::json!("deleted"), "status"),
            ("createdAt", serde_json::json!("yesterday"), "createdAt"),
            ("phone", serde_json::json!("12"), "phone"),
            ("firstName", serde_json::json!(""), "firstName"),
            ("externalId", serde_json::json!(""), "externalId"),
            (
                "emails",
                serde_json::json!([{"address": "nope", "verified": true, "primary": true}]),
                "emails[0].address",
            ),
            (
                "emails",
                serde_json::json!([{"address": "a@example.com", "verified": true}]),
                "emails[0]",
            ),
            (
                "password",
                serde_json::json!({"algorithm": "md5", "hash": "x"}),
                "password.algorithm",
            ),
            (
                "password",
                serde_json::json!({"algorithm": "bcrypt", "hash": "$2b$99$short"}),
                "password",
            ),
            ("unknown", serde_json::json!(1), "unknown"),
        ];
        for (field, value, path) in cases {
            let mut line = good();
            line[*field] = value.clone();
            let err = parse(&line).unwrap_err();
            assert_eq!(err.code, LineCode::InvalidLine, "{field}");
            assert_eq!(err.field.as_deref(), Some(*path), "{field}");
        }
        assert_eq!(parse_line("not json").unwrap_err().code, LineCode::InvalidLine);
        assert_eq!(parse_line("{} {}").unwrap_err().code, LineCode::InvalidLine);
    }

    #[test]
    fn the_tables_rules_give_their_codes() {
        let with_emails = |emails: serde_json::Value| {
            let mut line = good();
            line["emails"] = emails;
            checked(&line).unwrap_err()
        };
        let e = |a: &str, v: bool, p: bool| serde_json::json!({"address": a, "verified": v, "primary": p});
        assert_eq!(with_emails(serde_json::json!([])).code, LineCode::NoPrimary);
        assert_eq!(
            with_emails(serde_json::json!([e("a@x.com", true, false)])).code,
            LineCode::NoPrimary
        );
        assert_eq!(
            with_emails(serde_json::json!([e("a@x.com", true, true), e("b@x.com", true, true)])),
            LineError::at(LineCode::ManyPrimaries, "emails[1]")
        );
        assert_eq!(
            with_emails(serde_json::json!([e("a@x.com", false, true)])).code,
            LineCode::PrimaryNotVerified
        );
        assert_eq!(
            with_emails(serde_json::json!([
                e("a@x.com", true, true),
                e("A@X.com", false, false)
            ])),
            LineError::at_email(LineCode::DuplicateInLine, 1)
        );
        let many: Vec<_> = (0..11).map(|i| e(&format!("a{i}@x.com"), true, i == 0)).collect();
        assert_eq!(with_emails(serde_json::json!(many)).code, LineCode::TooManyEmails);
        let policy = AddressPolicy::default().blocking_subaddresses();
        let line = parse(&serde_json::json!({"status": "active", "emails": [e("a+b@x.com", true, true)]})).unwrap();
        assert_eq!(
            line.check(&policy, 10).unwrap_err(),
            LineError::at_email(LineCode::AddressNotAllowed, 0)
        );
    }
}
