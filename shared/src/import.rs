//! The bulk import's line format (`user-admin import`, docs/import-export.md,
//! schemas/import/user.json): one user a line as JSON, parsed straight into the
//! domain's types, then held to the table's rules (exactly one primary, and it
//! verified; the per-user maximum; the address policy). A line that fails
//! gets a stable code and the field it names. Pure: no AWS, so the password
//! migration trigger can reuse [`PasswordHash`] later.

use std::fmt;

use serde::{Deserialize, Serialize};

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

/// How a password hash was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashAlgorithm {
    /// Modular crypt format: `$2b$12$` and 53 characters.
    Bcrypt,
    /// PHC string: `$argon2id$v=19$m=…,t=…,p=…$salt$hash`.
    Argon2id,
    /// PHC string: `$scrypt$ln=…,r=…,p=…$salt$hash`.
    Scrypt,
    /// PHC string: `$pbkdf2-sha256$i=…[,l=…]$salt$hash`.
    #[serde(rename = "pbkdf2-sha256")]
    Pbkdf2Sha256,
}

/// A password hash in its algorithm's standard format. Its `Debug` hides the hash.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawPassword", into = "RawPassword")]
pub struct PasswordHash {
    algorithm: HashAlgorithm,
    hash: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPassword {
    algorithm: HashAlgorithm,
    hash: String,
}

impl PasswordHash {
    /// A hash, checked against its algorithm's format.
    pub fn parse(algorithm: HashAlgorithm, hash: &str) -> Result<Self, Invalid> {
        let well_formed = match algorithm {
            HashAlgorithm::Bcrypt => is_bcrypt(hash),
            HashAlgorithm::Argon2id => is_phc(hash, "argon2id", &["m", "t", "p"], &[]),
            HashAlgorithm::Scrypt => is_phc(hash, "scrypt", &["ln", "r", "p"], &[]),
            HashAlgorithm::Pbkdf2Sha256 => is_phc(hash, "pbkdf2-sha256", &["i"], &["l"]),
        };
        if !well_formed {
            return Err(Invalid("hash is not in the algorithm's standard format"));
        }
        Ok(Self {
            algorithm,
            hash: hash.to_owned(),
        })
    }

    /// How it was made.
    pub fn algorithm(&self) -> HashAlgorithm {
        self.algorithm
    }

    /// The hash as given.
    pub fn hash(&self) -> &str {
        &self.hash
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordHash")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl TryFrom<RawPassword> for PasswordHash {
    type Error = Invalid;
    fn try_from(raw: RawPassword) -> Result<Self, Self::Error> {
        Self::parse(raw.algorithm, &raw.hash)
    }
}

impl From<PasswordHash> for RawPassword {
    fn from(value: PasswordHash) -> Self {
        Self {
            algorithm: value.algorithm,
            hash: value.hash,
        }
    }
}

/// `$2a$`, `$2b$` or `$2y$`, a cost of 04 to 31, then 22 characters of salt
/// and 31 of hash in bcrypt's base64.
fn is_bcrypt(hash: &str) -> bool {
    let bytes = hash.as_bytes();
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'.' || *b == b'/';
    let cost = hash.get(4..6).and_then(|c| c.parse::<u8>().ok());
    bytes.len() == 60
        && matches!(&bytes[..4], b"$2a$" | b"$2b$" | b"$2y$")
        && bytes[4..6].iter().all(u8::is_ascii_digit)
        && cost.is_some_and(|c| (4..=31).contains(&c))
        && bytes[6] == b'$'
        && bytes[7..].iter().all(alphabet)
}

/// A PHC string: `$id[$v=19]$k=n,…$salt$hash`, with every `required`
/// parameter, no others than `required` and `optional`, each a number; salt
/// and hash in base64 without padding (passlib's `.` for `+` admitted).
fn is_phc(hash: &str, id: &str, required: &[&str], optional: &[&str]) -> bool {
    let mut parts = hash.split('$');
    if parts.next() != Some("") || parts.next() != Some(id) {
        return false;
    }
    let mut rest: Vec<&str> = parts.collect();
    if rest.first().is_some_and(|v| v.starts_with("v=")) {
        let version = rest.remove(0);
        if version[2..].parse::<u32>().is_err() {
            return false;
        }
    }
    let [params, salt, digest] = rest.as_slice() else {
        return false;
    };
    let mut seen = Vec::new();
    for param in params.split(',') {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        let known = required.contains(&name) || optional.contains(&name);
        if !known || seen.contains(&name) || value.parse::<u64>().is_err() {
            return false;
        }
        seen.push(name);
    }
    let b64 = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/.".contains(&b));
    required.iter().all(|name| seen.contains(name)) && b64(salt) && b64(digest)
}

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

    const BCRYPT: &str = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";

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

    #[test]
    fn password_hashes_are_held_to_their_formats() {
        use HashAlgorithm::*;
        let good = [
            (Bcrypt, BCRYPT),
            (
                Argon2id,
                "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
            ),
            (
                Scrypt,
                "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E",
            ),
            (
                Pbkdf2Sha256,
                "$pbkdf2-sha256$i=600000,l=32$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
            ),
            (
                Pbkdf2Sha256,
                "$pbkdf2-sha256$i=29000$N2YuJ8l5M2bsfWwPYQyxbg$Hh7sjS.R8ex4b2Q6d8WyfxsK1g3w2C4G6FQZ3s8mJNo",
            ),
        ];
        for (algorithm, hash) in good {
            assert!(PasswordHash::parse(algorithm, hash).is_ok(), "{algorithm:?} {hash}");
        }
        let bad = [
            (Bcrypt, "$2b$03$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
            (Bcrypt, "$2x$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
            (Bcrypt, "$2b$12$R9h/cIPz0gi"),
            (Argon2id, "$argon2i$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub"),
            (Argon2id, "$argon2id$v=19$m=65536,t=3$c29tZXNhbHQ$RdescudvJCsgt3ub"),
            (
                Argon2id,
                "$argon2id$v=19$m=65536,t=3,p=4,x=1$c29tZXNhbHQ$RdescudvJCsgt3ub",
            ),
            (Scrypt, "$scrypt$ln=16,r=8,p=1$$hash"),
            (Pbkdf2Sha256, "$pbkdf2-sha256$i=many$c2FsdA$aGFzaA"),
            (Pbkdf2Sha256, BCRYPT),
        ];
        for (algorithm, hash) in bad {
            assert!(PasswordHash::parse(algorithm, hash).is_err(), "{algorithm:?} {hash}");
        }
        let debug = format!("{:?}", PasswordHash::parse(Bcrypt, BCRYPT).unwrap());
        assert!(!debug.contains("$2b$"), "{debug}");
    }

    #[test]
    fn codes_are_spelled_as_the_report_writes_them() {
        for code in LineCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }
}
