//! The SCIM User (RFC 7643 section 4.1) as this service keeps it: a
//! `userName` and an `externalId` for the directory, a given and a family
//! name, the user's addresses (one primary), one phone number, and whether
//! the user is active in the organization. Read leniently, as directories
//! write it (any case of attribute names, `"False"` for false), and
//! written in the schema's own spelling.

use serde_json::{Map, Value, json};

use super::error::ScimError;
use super::path::{ENTERPRISE_SCHEMA, USER_SCHEMA, canonical};
use crate::domain::{EmailAddress, PersonName, Phone};

/// A directory's name for the user, unique in the organization without regard
/// to case (RFC 7643: `userName` is `caseExact` false, `uniqueness` server).
#[derive(Clone, PartialEq, Eq)]
pub struct UserName(String);

/// The most characters a `userName` or an `externalId` may have.
pub const MAX_IDENTIFIER_CHARS: usize = 256;

impl UserName {
    /// Trims and checks a `userName`: 1 to 256 characters, none a control character.
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        identifier(raw).map(Self)
    }

    /// The name as the directory wrote it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form uniqueness is decided on: lower-cased.
    pub fn key(&self) -> String {
        self.0.to_lowercase()
    }
}

impl std::fmt::Debug for UserName {
    // Often an address: personal data.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserName(..)")
    }
}

/// The directory's own id for the user (RFC 7643 section 3.1): compared exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalId(String);

impl ExternalId {
    /// Trims and checks an `externalId`: 1 to 256 characters, none a control character.
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        identifier(raw).map(Self)
    }

    /// The id as the directory wrote it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn identifier(raw: &str) -> Result<String, &'static str> {
    let trimmed = raw.trim();
    let chars = trimmed.chars().count();
    // A key holds it (DynamoDB's sort keys take 1,024 bytes): 256 characters of up to two bytes.
    if chars == 0 || chars > MAX_IDENTIFIER_CHARS || trimmed.len() > 2 * MAX_IDENTIFIER_CHARS {
        return Err("must be 1 to 256 characters, at most 512 bytes");
    }
    if trimmed.chars().any(char::is_control) {
        return Err("must not contain control characters");
    }
    Ok(trimmed.to_owned())
}

/// One of the user's addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimEmail {
    /// The address, normalised as every address here is.
    pub value: EmailAddress,
    /// Whether it is the user's primary address.
    pub primary: bool,
}

/// A digest of `emails` (each address and whether it is primary), in any
/// order: FNV-1a, 32 bits, enough to tell one shown set from the next.
pub fn addresses_digest(emails: &[ScimEmail]) -> u32 {
    let mut shown: Vec<(&str, bool)> = emails.iter().map(|e| (e.value.as_str(), e.primary)).collect();
    shown.sort_unstable();
    let mut hash: u32 = 0x811c_9dc5;
    for (address, primary) in shown {
        for byte in address.bytes().chain([u8::from(primary), b';']) {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    }
    hash
}

/// A User as a directory sends it and as it is shown back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimUser {
    /// The directory's name for the user.
    pub user_name: UserName,
    /// The directory's id for the user.
    pub external_id: Option<ExternalId>,
    /// `name.givenName`.
    pub given_name: Option<PersonName>,
    /// `name.familyName`.
    pub family_name: Option<PersonName>,
    /// `emails`: at most one primary; no address twice.
    pub emails: Vec<ScimEmail>,
    /// The one phone number kept: the primary of `phoneNumbers`, else the first.
    pub phone: Option<Phone>,
    /// Whether the user is active in the organization.
    pub active: bool,
}

impl ScimUser {
    /// Reads a User from a request's body (a POST, a PUT, or the result of a
    /// PATCH). Attributes this service does not keep, the enterprise
    /// extension's among them, are accepted and not kept; `/Schemas` lists
    /// what is kept. `id` and `meta` are read-only and ignored.
    pub fn from_json(body: &Value) -> Result<Self, ScimError> {
        let body = canonical_keys(body);
        let Value::Object(attributes) = &body else {
            return Err(ScimError::invalid_syntax("a User is a JSON object"));
        };
        if let Some(schemas) = attributes.get("schemas") {
            let listed = |urn: &str| {
                schemas.as_array().is_some_and(|s| {
                    s.iter()
                        .any(|v| v.as_str().is_some_and(|v| v.eq_ignore_ascii_case(urn)))
                })
            };
            if !listed(USER_SCHEMA) {
                return Err(ScimError::invalid_syntax(format!("`schemas` must list {USER_SCHEMA}")));
            }
        }
        let user_name = match attributes.get("userName") {
            Some(Value::String(raw)) => {
                UserName::parse(raw).map_err(|why| ScimError::invalid_value("userName", why))?
            }
            None | Some(Value::Null) => return Err(ScimError::invalid_value("userName", "is required")),
            Some(_) => return Err(ScimError::invalid_value("userName", "must be a string")),
        };
        let external_id = optional_string(attributes, "externalId")?
            .map(|raw| ExternalId::parse(raw).map_err(|why| ScimError::invalid_value("externalId", why)))
            .transpose()?;
        let (given_name, family_name) = match attributes.get("name") {
            None | Some(Value::Null) => (None, None),
            Some(Value::Object(name)) => (person_name(name, "givenName")?, person_name(name, "familyName")?),
            Some(_) => return Err(ScimError::invalid_value("name", "must be an object")),
        };
        Ok(Self {
            user_name,
            external_id,
            given_name,
            family_name,
            emails: emails(attributes.get("emails"))?,
            phone: phone(attributes.get("phoneNumbers"))?,
            active: match attributes.get("active") {
                None | Some(Value::Null) => true,
                Some(value) => {
                    boolean(value).ok_or_else(|| ScimError::invalid_value("active", "must be true or false"))?
                }
            },
        })
    }

    /// The primary address: the one marked, else the only one.
    pub fn primary_email(&self) -> Option<&EmailAddress> {
        match self.emails.iter().find(|e| e.primary) {
            Some(primary) => Some(&primary.value),
            None if self.emails.len() == 1 => Some(&self.emails[0].value),
            None => None,
        }
    }

    /// The User's attributes in the schema's spelling (RFC 7643 section 4.1),
    /// without `id` and `meta`, which the resource adds. Every address is
    /// of type `work`: this service keeps no types.
    pub fn attributes(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("schemas".into(), json!([USER_SCHEMA]));
        if let Some(external_id) = &self.external_id {
            out.insert("externalId".into(), json!(external_id.as_str()));
        }
        out.insert("userName".into(), json!(self.user_name.as_str()));
        let mut name = Map::new();
        if let Some(given) = &self.given_name {
            name.insert("givenName".into(), json!(given.as_str()));
        }
        if let Some(family) = &self.family_name {
            name.insert("familyName".into(), json!(family.as_str()));
        }
        if !name.is_empty() {
            out.insert("name".into(), Value::Object(name));
        }
        if !self.emails.is_empty() {
            let emails = self
                .emails
                .iter()
                .map(|e| json!({ "value": e.value.as_str(), "type": "work", "primary": e.primary }))
                .collect();
            out.insert("emails".into(), Value::Array(emails));
        }
        if let Some(phone) = &self.phone {
            out.insert(
                "phoneNumbers".into(),
                json!([{ "value": phone.as_str(), "type": "work", "primary": true }]),
            );
        }
        out.insert("active".into(), json!(self.active));
        out
    }
}

/// `value` with every object key in the schema's spelling, recursively.
pub(crate) fn canonical_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (canonical_key(key), canonical_keys(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(canonical_keys).collect()),
        other => other.clone(),
    }
}

fn canonical_key(key: &str) -> String {
    // A core attribute may be written after the core schema's URN.
    match key.rsplit_once(':') {
        Some((urn, name)) if urn.eq_ignore_ascii_case(USER_SCHEMA) => canonical(name),
        Some((urn, _)) if urn.eq_ignore_ascii_case(ENTERPRISE_SCHEMA) => key.to_owned(),
        _ if key.eq_ignore_ascii_case(ENTERPRISE_SCHEMA) => ENTERPRISE_SCHEMA.to_owned(),
        _ => canonical(key),
    }
}

/// A boolean, or Entra ID's `"True"` and `"False"` (any case).
pub(crate) fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

fn optional_string<'a>(attributes: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ScimError> {
    match attributes.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ScimError::invalid_value(key, "must be a string")),
    }
}

fn person_name(name: &Map<String, Value>, key: &str) -> Result<Option<PersonName>, ScimError> {
    let attribute = format!("name.{key}");
    optional_string(name, key)
        .map_err(|_| ScimError::invalid_value(&attribute, "must be a string"))?
        .map(|raw| PersonName::parse(raw).map_err(|why| ScimError::invalid_value(&attribute, why.0)))
        .transpose()
}

/// The most addresses a User may list; the deployment's own maximum applies after.
pub const MAX_EMAILS: usize = 20;

fn emails(value: Option<&Value>) -> Result<Vec<ScimEmail>, ScimError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ScimError::invalid_value("emails", "must be an array")),
    };
    if items.len() > MAX_EMAILS {
        return Err(ScimError::invalid_value("emails", "lists at most 20 addresses"));
    }
    let mut emails: Vec<ScimEmail> = Vec::new();
    for item in items {
        let Value::Object(item) = item else {
            return Err(ScimError::invalid_value("emails", "each must be an object"));
        };
        let raw = match item.get("value") {
            Some(Value::String(raw)) => raw,
            _ => return Err(ScimError::invalid_value("emails.value", "is required, a string")),
        };
        let value = EmailAddress::parse(raw).map_err(|why| ScimError::invalid_value("emails.value", why.0))?;
        let primary = match item.get("primary") {
            None | Some(Value::Null) => false,
            Some(flag) => {
                boolean(flag).ok_or_else(|| ScimError::invalid_value("emails.primary", "must be a boolean"))?
            }
        };
        // The same address twice is one address; primary if either says so.
        match emails.iter_mut().find(|e| e.value == value) {
            Some(known) => known.primary |= primary,
            None => emails.push(ScimEmail { value, primary }),
        }
    }
    if emails.iter().filter(|e| e.primary).count() > 1 {
        return Err(ScimError::invalid_value(
            "emails.primary",
            "at most one address is primary",
        ));
    }
    Ok(emails)
}

fn phone(value: Option<&Value>) -> Result<Option<Phone>, ScimError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ScimError::invalid_value("phoneNumbers", "must be an array")),
    };
    let chosen = items
        .iter()
        .find(|item| item.get("primary").and_then(boolean) == Some(true))
        .or_else(|| items.first());
    let Some(item) = chosen else { return Ok(None) };
    let raw = match item.get("value") {
        Some(Value::String(raw)) => raw,
        _ => return Err(ScimError::invalid_value("phoneNumbers.value", "is required, a string")),
    };
    // Directories keep numbers as people type them: separators go, the digits must be E.164.
    let digits: String = raw
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '(' | ')' | '.'))
        .collect();
    Phone::parse(&digits)
        .map(Some)
        .map_err(|why| ScimError::invalid_value("phoneNumbers.value", why.0))
}

/// The version a User's ETag names: the profile's and the membership's, as
/// each write adds one to its own, and a digest of the addresses shown,
/// which the person's own writes change without either version (an address
/// added or removed through the API).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScimVersion {
    /// The profile's version.
    pub profile: u64,
    /// The membership's version.
    pub membership: u64,
    /// [`addresses_digest`] of the addresses shown.
    pub addresses: u32,
}

impl ScimVersion {
    /// The weak ETag (RFC 7232): `W/"3-1-0a1b2c3d"`.
    pub fn etag(self) -> String {
        format!("W/\"{}-{}-{:08x}\"", self.profile, self.membership, self.addresses)
    }

    /// Whether `other` is this version as far as the versions go, whatever
    /// the addresses: what a change's own address writes leave.
    pub fn same_versions(self, other: Self) -> bool {
        self.profile == other.profile && self.membership == other.membership
    }

    /// Whether an `If-Match` header admits this version: `*`, or a list of
    /// ETags compared weakly (RFC 7232 section 3.1). One that is not an
    /// ETag is 400 `invalidVers`.
    pub fn admitted_by(self, if_match: &str) -> Result<bool, ScimError> {
        let mut admitted = false;
        for tag in if_match.split(',').map(str::trim) {
            if tag == "*" {
                admitted = true;
                continue;
            }
            let opaque = tag.strip_prefix("W/").unwrap_or(tag);
            if !(opaque.len() >= 2 && opaque.starts_with('"') && opaque.ends_with('"')) {
                return Err(ScimError::bad_request(
                    super::error::ScimType::InvalidVers,
                    "If-Match must list ETags",
                ));
            }
            admitted |= opaque == &self.etag()[2..];
        }
        Ok(admitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(body: Value) -> Result<ScimUser, ScimError> {
        ScimUser::from_json(&body)
    }

    #[test]
    fn a_user_is_read_whatever_the_case_of_its_attributes() {
        let ada = user(json!({
            "SCHEMAS": [USER_SCHEMA, ENTERPRISE_SCHEMA],
            "username": "Ada@Acme.example",
            "EXTERNALID": "e-1",
            "Name": { "GivenName": "Ada", "familyname": "Lovelace", "formatted": "Ada Lovelace" },
            "emails": [{ "Value": "Ada@Acme.example", "type": "work", "PRIMARY": "True" }],
            "phoneNumbers": [{ "value": "+1 (415) 555-0100", "type": "work" }, { "value": "nope", "type": "fax" }],
            "active": "False",
            "title": "Countess",
            ENTERPRISE_SCHEMA: { "department": "Engines" },
            "password": "never kept",
        }))
        .unwrap();
        assert_eq!(ada.user_name.as_str(), "Ada@Acme.example");
        assert_eq!(ada.user_name.key(), "ada@acme.example");
        assert_eq!(ada.external_id.as_ref().map(ExternalId::as_str), Some("e-1"));
        assert_eq!(ada.given_name.as_ref().map(PersonName::as_str), Some("Ada"));
        assert_eq!(ada.primary_email().map(EmailAddress::as_str), Some("ada@acme.example"));
        assert_eq!(ada.phone.as_ref().map(Phone::as_str), Some("+14155550100"));
        assert!(!ada.active);
        let shown = Value::Object(ada.attributes());
        assert_eq!(
            shown["emails"],
            json!([{ "value": "ada@acme.example", "type": "work", "primary": true }])
        );
        assert!(shown.get("password").is_none() && shown.get("title").is_none());
        assert_eq!(ScimUser::from_json(&shown).unwrap(), ada);
    }

    #[test]
    fn what_is_missing_or_wrong_is_named() {
        let cases = [
            (json!({}), "userName: is required"),
            (json!({ "userName": 3 }), "userName: must be a string"),
            (json!({ "userName": "  " }), "userName: must be 1 to 256 characters"),
            (json!({ "userName": "\u{1F600}".repeat(200) }), "at most 512 bytes"),
            (
                json!({ "userName": "a", "active": "maybe" }),
                "active: must be true or false",
            ),
            (
                json!({ "userName": "a", "emails": [{ "value": "not an address" }] }),
                "emails.value",
            ),
            (
                json!({ "userName": "a", "emails": [{ "value": "a@b.example", "primary": true }, { "value": "c@b.example", "primary": true }] }),
                "emails.primary: at most one address is primary",
            ),
            (
                json!({ "userName": "a", "phoneNumbers": [{ "value": "555-0100" }] }),
                "phoneNumbers.value",
            ),
            (
                json!({ "userName": "a", "name": { "givenName": "\u{7}" } }),
                "name.givenName",
            ),
            (json!({ "schemas": ["urn:x"], "userName": "a" }), "`schemas` must list"),
            (json!([]), "a User is a JSON object"),
        ];
        for (body, detail) in cases {
            let err = user(body.clone()).expect_err(&body.to_string());
            assert_eq!(err.status, 400);
            assert!(err.detail.contains(detail), "{body}: {}", err.detail);
        }
    }

    #[test]
    fn the_same_address_twice_is_one() {
        let u = user(json!({ "userName": "a", "emails": [{ "value": "A@b.example" }, { "value": "a@B.example", "primary": true }] }))
            .unwrap();
        assert_eq!(u.emails.len(), 1);
        assert!(u.emails[0].primary);
    }

    #[test]
    fn if_match_compares_weakly() {
        let version = ScimVersion {
            profile: 3,
            membership: 1,
            addresses: 0xab,
        };
        assert_eq!(version.etag(), "W/\"3-1-000000ab\"");
        for (header, admitted) in [
            ("W/\"3-1-000000ab\"", true),
            ("\"3-1-000000ab\"", true),
            ("*", true),
            ("W/\"2-1-000000ab\", W/\"3-1-000000ab\"", true),
            ("W/\"3-2-000000ab\"", false),
            // The addresses moved, or an ETag from before they were named.
            ("W/\"3-1-000000ac\"", false),
            ("W/\"3-1\"", false),
        ] {
            assert_eq!(version.admitted_by(header).unwrap(), admitted, "{header}");
        }
        assert!(version.admitted_by("3-1").is_err());
        assert!(version.same_versions(ScimVersion {
            addresses: 1,
            ..version
        }));
    }

    #[test]
    fn the_digest_is_of_the_addresses_shown_in_any_order() {
        let email = |value: &str, primary: bool| ScimEmail {
            value: EmailAddress::parse(value).unwrap(),
            primary,
        };
        let ab = [email("a@acme.example", true), email("b@acme.example", false)];
        let ba = [email("b@acme.example", false), email("a@acme.example", true)];
        assert_eq!(addresses_digest(&ab), addresses_digest(&ba));
        let switched = [email("a@acme.example", false), email("b@acme.example", true)];
        assert_ne!(addresses_digest(&ab), addresses_digest(&switched));
        assert_ne!(addresses_digest(&ab), addresses_digest(&ab[..1]));
    }
}
