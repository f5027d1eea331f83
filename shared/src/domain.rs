//! Domain types. Parsed once at the edge, trusted everywhere after ("parse, don't validate").
//! No AWS types live here.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;
use uuid::Uuid;

/// Why a value was refused. The HTTP layer adds the field name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub &'static str);

/// The Cognito `sub` of a user. Never taken from a path, query or body for the caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UserId(String);

impl UserId {
    /// An id from a stored item or a Cognito event: 1 to 128 characters, none of them the key delimiter `#`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
        if raw.is_empty() || raw.len() > 128 {
            return Err(Invalid("must be 1 to 128 characters"));
        }
        // `#` is the key delimiter; anything outside this set cannot be a Cognito sub.
        if !raw.chars().all(ok_char) {
            return Err(Invalid("contains characters a user id cannot have"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// A caller's `sub` as Cognito issues it: a UUID in its lower-case
    /// hyphenated form. Anything else never came from the user pool, so it is
    /// refused before any table request (a `sub` of `admin` or `PROFILE` would
    /// otherwise be looked up).
    pub fn parse_sub(raw: &str) -> Result<Self, Invalid> {
        let canonical = Uuid::try_parse(raw)
            .ok()
            .map(|uuid| uuid.hyphenated().to_string())
            .filter(|canonical| canonical == raw)
            .ok_or(Invalid("must be a user pool sub (a lower-case UUID)"))?;
        Ok(Self(canonical))
    }

    /// The id as text, for keys, logs and responses.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A new provisional id for a user imported to migrate at sign-in, until
    /// Cognito gives them a `sub`: `pending-` and a random UUID. Random, not
    /// derived from the address: it is logged and stored as the user's id,
    /// and a hash of an address would name the address to anyone who guesses
    /// it. Never a sub: no token carries it, and the reconcile, the Cognito
    /// sync and the domain events pass it by.
    pub fn new_pending() -> Self {
        Self(format!("{PENDING_USER_PREFIX}{}", Uuid::new_v4()))
    }

    /// A user id a listing may name: a sub, or a pending user's provisional
    /// id exactly as [`UserId::new_pending`] spells it.
    pub fn parse_listed(raw: &str) -> Result<Self, Invalid> {
        if let Some(uuid) = raw.strip_prefix(PENDING_USER_PREFIX) {
            let sub = Self::parse_sub(uuid).map_err(|_| Invalid("must be a user id"))?;
            return Ok(Self(format!("{PENDING_USER_PREFIX}{sub}")));
        }
        Self::parse_sub(raw)
    }

    /// Whether this is a pending user's provisional id (see [`UserId::new_pending`]).
    pub fn is_pending(&self) -> bool {
        self.0.starts_with(PENDING_USER_PREFIX)
    }
}

/// What starts every pending user's provisional id; a Cognito sub (a UUID) never does.
pub const PENDING_USER_PREFIX: &str = "pending-";

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for UserId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<UserId> for String {
    fn from(value: UserId) -> Self {
        value.0
    }
}

/// Identifies one email record of a user. A UUID (v7 for new records: time-ordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailId(Uuid);

impl EmailId {
    /// A fresh id for a new record; v7, so records sort by when they were added.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// An id from a path or a stored item: any UUID, surrounding whitespace ignored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Uuid::parse_str(raw.trim())
            .map(Self)
            .map_err(|_| Invalid("must be a UUID"))
    }
}

impl Default for EmailId {
    fn default() -> Self {
        Self::new()
    }
}

impl TryFrom<String> for EmailId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<EmailId> for String {
    fn from(value: EmailId) -> Self {
        value.to_string()
    }
}

impl fmt::Display for EmailId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A normalized email address: trimmed and lowercased; an internationalised
/// domain is stored in its ASCII (A-label, punycode) form. The local part must be
/// ASCII, because SES cannot deliver to any other. Unicode format characters
/// (zero-width, bidi controls, BOM) are refused, so two addresses that look the
/// same cannot get separate claims.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

impl EmailAddress {
    /// The longest normalised address accepted, in bytes (the SMTP path limit).
    pub const MAX_LEN: usize = 254;
    /// The longest local part (before the `@`) accepted, in bytes.
    pub const MAX_LOCAL_LEN: usize = 64;

    /// Normalises and checks a user-supplied address; claims and look-ups key on the result.
    ///
    /// ```
    /// use user_service::domain::EmailAddress;
    ///
    /// // Trimmed and lower-cased; an internationalised domain is stored as its A-label.
    /// let ada = EmailAddress::parse("  Ada@Bücher.Example ").unwrap();
    /// assert_eq!(ada.as_str(), "ada@xn--bcher-kva.example");
    /// assert!(EmailAddress::parse("ada@localhost").is_err());
    /// ```
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(Invalid("must not be empty"));
        }
        if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Invalid("must not contain whitespace or control characters"));
        }
        if trimmed.chars().any(is_format_character) {
            return Err(Invalid("must not contain invisible formatting characters"));
        }
        let (local, domain) = match trimmed.split_once('@') {
            Some((l, d)) if !d.contains('@') => (l, d),
            _ => return Err(Invalid("must contain exactly one @")),
        };
        if !local.is_ascii() {
            return Err(Invalid("local part must be ASCII"));
        }
        let local = local.to_ascii_lowercase();
        if local.is_empty() || local.len() > Self::MAX_LOCAL_LEN {
            return Err(Invalid("local part must be 1 to 64 characters"));
        }
        if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
            return Err(Invalid("local part has a misplaced dot"));
        }
        let domain = ascii_domain(domain).ok_or(Invalid("domain is not valid"))?;
        let normalized = format!("{local}@{domain}");
        if normalized.len() > Self::MAX_LEN {
            return Err(Invalid("must be at most 254 characters"));
        }
        Ok(Self(normalized))
    }

    /// The normalised address: the stored form, and the one mail is sent to.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The domain in lower-case ASCII: an internationalised one becomes its A-label
/// form (UTS 46), an ASCII one must be letters, digits and inner hyphens.
fn ascii_domain(domain: &str) -> Option<String> {
    let ascii = if domain.is_ascii() {
        domain.to_ascii_lowercase()
    } else {
        idna::domain_to_ascii_strict(domain).ok()?
    };
    is_valid_domain(&ascii).then_some(ascii)
}

/// Unicode general category Cf: zero-width joiners and spaces, bidi overrides and
/// isolates, the BOM, soft hyphens. Invisible, so never part of a name or address.
/// Also the line and paragraph separators (Zl, Zp: U+2028, U+2029): not control
/// characters to Rust, but they break a line in logs, CSV exports and
/// JavaScript string literals, as a newline would.
fn is_format_character(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        GeneralCategory::Format | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator
    )
}

/// Unassigned code points (Cn: a later Unicode may give them any meaning, and
/// nothing renders them today) and private-use ones (Co: a meaning only some
/// font agrees on).
fn is_unassigned_or_private(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        GeneralCategory::Unassigned | GeneralCategory::PrivateUse
    )
}

/// The longest run of combining marks (Mn, Mc, Me) in `text`.
fn most_marks_in_a_row(text: &str) -> usize {
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c.general_category_group() == GeneralCategoryGroup::Mark {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

fn is_valid_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(label_ok)
        && labels
            .last()
            .is_some_and(|tld| !tld.chars().all(|c| c.is_ascii_digit()))
}

/// Addresses are PII: Debug never prints one, so a stray `{:?}` cannot leak it to the log.
impl fmt::Debug for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EmailAddress(<redacted>)")
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<EmailAddress> for String {
    fn from(value: EmailAddress) -> Self {
        value.0
    }
}

/// An E.164 phone number: `+`, a non-zero digit, then 1 to 14 more digits.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    /// Checks a user-supplied number; only surrounding whitespace is removed, nothing is reformatted.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let raw = raw.trim();
        let digits = raw
            .strip_prefix('+')
            .ok_or(Invalid("must be E.164, like +14155550100"))?;
        let well_formed =
            (2..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) && !digits.starts_with('0');
        if !well_formed {
            return Err(Invalid("must be E.164, like +14155550100"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The number as stored and shown in the profile.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Phone(<redacted>)")
    }
}

impl TryFrom<String> for Phone {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Phone> for String {
    fn from(value: Phone) -> Self {
        value.0
    }
}

/// A first or last name: trimmed and NFC-normalised (one stored form for what
/// looks the same), 1 to 100 characters, no control or format characters.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PersonName(String);

impl PersonName {
    /// The most characters (after NFC) a name may have.
    pub const MAX_CHARS: usize = 100;
    /// The most combining marks (after NFC) on one character: enough for
    /// every script's real names (Vietnamese, Hebrew with points, Indic
    /// scripts take two or three), not for a tower of marks drawn over the
    /// lines around it.
    pub const MAX_COMBINING_MARKS: usize = 4;

    /// Trims, NFC-normalises and checks a user-supplied name; the result is what is stored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        use unicode_normalization::UnicodeNormalization;
        let normalized: String = raw.trim().nfc().collect();
        let chars = normalized.chars().count();
        if chars == 0 || chars > Self::MAX_CHARS {
            return Err(Invalid("must be 1 to 100 characters"));
        }
        if normalized.chars().any(char::is_control) {
            return Err(Invalid("must not contain control characters"));
        }
        if normalized.chars().any(is_format_character) {
            return Err(Invalid("must not contain invisible formatting characters"));
        }
        if normalized.chars().any(is_unassigned_or_private) {
            return Err(Invalid("must not contain unassigned or private-use characters"));
        }
        if most_marks_in_a_row(&normalized) > Self::MAX_COMBINING_MARKS {
            return Err(Invalid("must not stack more than 4 combining marks on one character"));
        }
        Ok(Self(normalized))
    }

    /// The normalised name, as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PersonName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PersonName(<redacted>)")
    }
}

impl TryFrom<String> for PersonName {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<PersonName> for String {
    fn from(value: PersonName) -> Self {
        value.0
    }
}

/// Where an account stands, which decides whether its owner may sign in and change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum UserStatus {
    /// In normal use: the user may sign in and change the account.
    Active,
    /// Blocked by an admin: sign-in is refused, and the account can be read but not changed.
    Suspended,
    /// Closed: the profile is erased, its addresses released, and it reads as not found.
    Deleted,
}

impl UserStatus {
    /// The spelling stored in the table and shown in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Suspended => "suspended",
            Self::Deleted => "deleted",
        }
    }
}

impl TryFrom<String> for UserStatus {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<UserStatus> for &'static str {
    fn from(value: UserStatus) -> Self {
        value.as_str()
    }
}

impl FromStr for UserStatus {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "active" => Ok(Self::Active),
            "suspended" => Ok(Self::Suspended),
            "deleted" => Ok(Self::Deleted),
            _ => Err(Invalid("must be one of active, suspended, deleted")),
        }
    }
}

/// A UTC instant stored as RFC 3339 with milliseconds (`2026-11-21T10:00:00.000Z`).
/// That form sorts lexicographically in time order, which conditions such as
/// `expiresAt < :now` rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timestamp(OffsetDateTime);

const TIMESTAMP_FORMAT: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

impl Timestamp {
    /// The current instant, cut to whole milliseconds so it equals its stored form.
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }

    fn from_datetime(dt: OffsetDateTime) -> Self {
        let dt = dt.to_offset(time::UtcOffset::UTC);
        // Stored precision is milliseconds: keep the value equal to what reads back.
        let millis = dt.millisecond();
        Self(dt.replace_millisecond(millis).unwrap_or(dt))
    }

    /// Reads an RFC 3339 instant at any offset, converted to UTC and cut to milliseconds.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339)
            .map(Self::from_datetime)
            .map_err(|_| Invalid("must be an RFC 3339 timestamp"))
    }

    /// The instant `seconds` later (earlier when negative), for expiries and resend windows.
    pub fn plus_seconds(self, seconds: i64) -> Self {
        Self(self.0 + time::Duration::seconds(seconds))
    }

    /// Whole seconds from `self` until `later`, rounded up; zero when `later` has passed.
    pub fn seconds_until(self, later: Timestamp) -> u64 {
        let millis = (later.0 - self.0).whole_milliseconds();
        u64::try_from((millis + 999) / 1000).unwrap_or(0)
    }

    /// Whole seconds since the Unix epoch, as TTL attributes and rate-limit windows count time.
    pub fn unix_seconds(self) -> i64 {
        self.0.unix_timestamp()
    }

    /// Milliseconds since the Unix epoch (saturating), the form a manual clock holds.
    pub fn unix_millis(self) -> i64 {
        i64::try_from(self.0.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
    }

    /// The instant `millis` milliseconds after the Unix epoch (clamped to the representable range).
    pub fn from_unix_millis(millis: i64) -> Self {
        let nanos = i128::from(millis) * 1_000_000;
        Self::from_datetime(OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(OffsetDateTime::UNIX_EPOCH))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.format(TIMESTAMP_FORMAT).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl TryFrom<String> for Timestamp {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Timestamp> for String {
    fn from(value: Timestamp) -> Self {
        value.to_string()
    }
}

/// A user's profile as the API shows it. A deleted user's is erased: no
/// address, names or phone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// The owner's Cognito `sub`; every item of the user is keyed by it.
    pub user_id: UserId,
    /// The primary address; `None` once the user is deleted.
    pub email: Option<EmailAddress>,
    /// The given name, if the user gave one; erased on delete.
    pub first_name: Option<PersonName>,
    /// The family name, if the user gave one; erased on delete.
    pub last_name: Option<PersonName>,
    /// An optional contact number; erased on delete.
    pub phone: Option<Phone>,
    /// Whether the user may sign in and change the account.
    pub status: UserStatus,
    /// The profile's version, for If-Match: each write adds one.
    pub version: u64,
    /// When the confirmed sign-up created the profile.
    pub created_at: Timestamp,
    /// When the profile last changed.
    pub updated_at: Timestamp,
    /// How many email records the user has: not shown, but checked against the per-user maximum.
    #[serde(skip)]
    pub email_count: u32,
}

/// One user in the admin list: what GSI2 projects of the profile. A deleted
/// user's is erased: no address or names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserSummary {
    /// The user's Cognito `sub`: `PUT /admin/users/{userId}/status` takes it.
    pub user_id: UserId,
    /// The primary address; `None` once the user is deleted.
    pub email: Option<EmailAddress>,
    /// The given name, if the user gave one.
    pub first_name: Option<PersonName>,
    /// The family name, if the user gave one.
    pub last_name: Option<PersonName>,
    /// Active, suspended or deleted.
    pub status: UserStatus,
    /// When the confirmed sign-up created the profile: the list's order.
    pub created_at: Timestamp,
}

/// A place in the admin list, which is ordered by creation time, then sub:
/// a page starts after one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPosition {
    /// The creation time of the user the list is past.
    pub created_at: Timestamp,
    /// That user's `sub`, which orders users created in the same millisecond.
    pub user_id: UserId,
}

/// One of a user's email addresses as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Email {
    /// Names the record in the `/me/emails/{emailId}` routes.
    pub email_id: EmailId,
    /// The normalised address.
    pub email: EmailAddress,
    /// Whether this is the profile's address, the one Cognito's `email` follows.
    pub is_primary: bool,
    /// Whether the user proved they receive mail here; until then the claim on it can expire.
    pub is_verified: bool,
    /// When the address was verified; `None` while it is not.
    pub verified_at: Option<Timestamp>,
    /// When the address was added.
    pub created_at: Timestamp,
}

/// A profile and all its addresses, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Account {
    /// The user's profile, as `GET /me` shows it.
    pub profile: Profile,
    /// Every email record of the user, oldest first.
    pub emails: Vec<Email>,
}

/// The version of the export's format, `formatVersion`: a change to it that
/// breaks a reader of `schemas/export/account.json` makes a new version.
pub const EXPORT_FORMAT_VERSION: u32 = 1;

/// Everything the table holds about a user, as `GET /me/export` gives it to
/// them (GDPR articles 15 and 20; `schemas/export/account.json`). No code
/// hash, no keyed address hash: secrets of the service, not the user's data.
/// Every field is always present; `null` says the table holds nothing there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountExport {
    /// [`EXPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// When the export was read.
    pub exported_at: Timestamp,
    /// The user's Cognito `sub`.
    pub user_id: UserId,
    /// The profile item.
    pub profile: ProfileExport,
    /// Every email record, oldest first, with its claim.
    pub emails: Vec<EmailExport>,
    /// The user's own rate-limit counters.
    pub limits: Vec<LimitExport>,
}

/// The profile as stored: what `GET /me` shows, and the internal fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileExport {
    /// The profile as the API shows it.
    #[serde(flatten)]
    pub profile: Profile,
    /// How many email records the user has.
    pub email_count: u32,
    /// The address Cognito signs the user in with, as last confirmed; while it
    /// is not `email`, a change of primary has yet to reach sign-in.
    pub cognito_email: Option<EmailAddress>,
    /// When the service last asked for the primary to be applied to sign-in again.
    pub sync_requested_at: Option<Timestamp>,
}

/// One email record as stored, with the claim that holds its address for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailExport {
    /// The record as the API shows it.
    #[serde(flatten)]
    pub email: Email,
    /// The form uniqueness is decided on, when the deployment's address
    /// policy makes it differ from `email` (dots or `+tags` ignored).
    pub canonical_email: Option<String>,
    /// The profile version whose switch made it primary; `null` for a sign-up's first address.
    pub primary_version: Option<u64>,
    /// The code waiting to be entered, if one was sent and the address is not
    /// verified yet: when, until when, how many tries are left. Never the code.
    pub pending_verification: Option<PendingVerification>,
    /// The user's claim on the address; `null` when the user holds none (an
    /// unverified address whose claim lapsed and another user took).
    pub claim: Option<ClaimExport>,
}

/// A verification code waiting to be entered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingVerification {
    /// When the code was sent.
    pub code_sent_at: Option<Timestamp>,
    /// When the code stops being accepted (it may have passed).
    pub code_expires_at: Option<Timestamp>,
    /// Wrong codes entered against it.
    pub wrong_attempts: u32,
    /// Wrong codes it still allows.
    pub attempts_left: u32,
}

/// The claim that keeps an address the user's alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimExport {
    /// When an unverified address's claim lapses; `null`: verified, held for good.
    pub expires_at: Option<Timestamp>,
    /// Whether it holds the address at the export's time.
    pub held: bool,
}

/// What one of a user's rate-limit counters counts. Those of one address
/// are named by a keyed hash of it, which the export leaves out, so they
/// are not tied to an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LimitKind {
    /// Codes the user had sent, to any address.
    CodesSent,
    /// Codes the user had sent to one address.
    CodesSentToAnAddress,
    /// Wrong codes the user entered, for any address.
    WrongCodes,
    /// The user with one address: wrong codes, and when they first added it.
    AnAddress,
    /// Availability checks (`GET /emails/availability`).
    AvailabilityChecks,
    /// Exports of the account (`GET /me/export`).
    Exports,
}

/// One rate-limit counter of the user, as stored: its events of the last 24
/// hours (a rolling window) and when it empties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitExport {
    /// What it counts.
    pub kind: LimitKind,
    /// The events it holds, oldest first (whole seconds).
    pub events: Vec<Timestamp>,
    /// How many of them are inside the window at the export's time.
    pub in_window: u32,
    /// When the last of them leaves the window; `null` when none is in it.
    pub clears_at: Option<Timestamp>,
    /// For `anAddress`: when the user first added the address in the window.
    pub first_added_at: Option<Timestamp>,
}

/// What a confirmed sign-up knows about the new user.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// The `sub` Cognito gave the user.
    pub user_id: UserId,
    /// The address Cognito verified; it becomes the first record, verified and primary.
    pub email: EmailAddress,
    /// The `given_name` attribute, if present and valid; an invalid one is left out.
    pub first_name: Option<PersonName>,
    /// The `family_name` attribute, if present and valid; an invalid one is left out.
    pub last_name: Option<PersonName>,
    /// The `phone_number` attribute, if present and valid E.164; an invalid one is left out.
    pub phone: Option<Phone>,
}

/// A user written whole at once by the bulk import: the sign-up's user, with
/// the status and creation time the other system had, and more addresses.
#[derive(Debug, Clone)]
pub struct NewAccount {
    /// The user and its primary address, verified.
    pub user: NewUser,
    /// Active or suspended.
    pub status: UserStatus,
    /// When the user signed up (there, for an imported user).
    pub created_at: Timestamp,
    /// The addresses beside the primary.
    pub more: Vec<AdditionalEmail>,
    /// For an imported user, the keyed hash that names the line's person: the
    /// account's erasure records it, and no import creates it again.
    pub import_key: Option<ImportKey>,
}

impl NewAccount {
    /// A confirmed sign-up: active, created `now`, with its one address.
    pub fn signed_up(user: NewUser, now: Timestamp) -> Self {
        Self {
            user,
            status: UserStatus::Active,
            created_at: now,
            more: Vec::new(),
            import_key: None,
        }
    }
}

/// A keyed, non-reversible name of the person an import line describes: an
/// HMAC of their primary address's canonical form under the service's key
/// (`VerificationKey::import_key`), 32 hex digits. It holds no address, and
/// cannot be turned back into one without the key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ImportKey(String);

impl ImportKey {
    /// The key from its hex form.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        if raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid("must be 32 lower-case hex digits"))
        }
    }

    /// Its hex form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ImportKey {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ImportKey> for String {
    fn from(value: ImportKey) -> Self {
        value.0
    }
}

/// An address an imported user has beside the primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdditionalEmail {
    /// The address.
    pub email: EmailAddress,
    /// Whether the other system had it verified: a verified one holds its claim
    /// for good, an unverified one until it expires.
    pub verified: bool,
}

/// A change to what the profile shows. `None` leaves a field as it is;
/// `phone: Some(None)` removes the phone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfilePatch {
    /// A new given name, or `None` to keep the current one.
    pub first_name: Option<PersonName>,
    /// A new family name, or `None` to keep the current one.
    pub last_name: Option<PersonName>,
    /// `Some(Some(_))` sets the phone, `Some(None)` removes it, `None` keeps it.
    pub phone: Option<Option<Phone>>,
}

impl ProfilePatch {
    /// Whether the patch changes nothing; the route refuses such a request.
    pub fn is_empty(&self) -> bool {
        self.first_name.is_none() && self.last_name.is_none() && self.phone.is_none()
    }
}

/// Which versions of a profile a conditional write may change: `If-Match`, as
/// RFC 9110 (section 13.1.1) reads it. The write carries it as its condition.
///
/// ```
/// use user_service::domain::IfMatch;
///
/// let listed = IfMatch::Versions(vec![3, 4]);
/// assert!(listed.matches(4) && !listed.matches(5));
/// assert!(IfMatch::Any.matches(7));
/// // `"0"` is a well-formed tag that names no version: it matches nothing.
/// assert!(!IfMatch::Versions(vec![]).matches(1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: any current profile; none (a deleted or unknown user) fails it.
    Any,
    /// The versions the strong entity tags named. Empty when no listed tag
    /// names a version (`"0"`, `"abc"`, only weak tags): it matches nothing.
    Versions(Vec<u64>),
}

impl IfMatch {
    /// Whether a profile at `version` satisfies the precondition.
    pub fn matches(&self, version: u64) -> bool {
        match self {
            Self::Any => true,
            Self::Versions(versions) => versions.contains(&version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_matches_any_listed_version_or_any_with_a_star() {
        assert!(IfMatch::Any.matches(1));
        assert!(IfMatch::Versions(vec![3, 4]).matches(4));
        assert!(!IfMatch::Versions(vec![3, 4]).matches(5));
        assert!(!IfMatch::Versions(vec![]).matches(1));
    }

    #[test]
    fn a_sub_is_a_lower_case_uuid() {
        let sub = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
        assert_eq!(UserId::parse_sub(sub).unwrap().as_str(), sub);
        for bad in [
            "admin",
            "PROFILE",
            "",
            "3F1C2A7E-2B7D-4B0E-9A57-0E0F0B1C2D3E",
            "3f1c2a7e2b7d4b0e9a570e0f0b1c2d3e",
            "{3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e}",
            "urn:uuid:3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e",
            " 3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e",
        ] {
            assert!(UserId::parse_sub(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_refuse_line_and_paragraph_separators() {
        for bad in ["Ada\u{2028}Lovelace", "Ada\u{2029}Byron", "\u{2028}"] {
            assert!(PersonName::parse(bad).is_err(), "{bad:?}");
        }
        // At either end they are whitespace: trimmed, never stored.
        assert_eq!(PersonName::parse("\u{2029}Ada\u{2028}").unwrap().as_str(), "Ada");
        assert!(PersonName::parse("Mary Ann").is_ok());
    }

    #[test]
    fn email_is_trimmed_and_lowercased_only() {
        let e = EmailAddress::parse("  John.Doe+News@Example.COM ").unwrap();
        assert_eq!(e.as_str(), "john.doe+news@example.com");
    }

    #[test]
    fn email_rejections() {
        let long_local = format!("{}@example.com", "a".repeat(65));
        let long_total = format!("a@{}.com", "b".repeat(250));
        let cases = [
            "",
            "   ",
            "no-at.example.com",
            "two@@example.com",
            "a@b@example.com",
            "with space@example.com",
            "tab\t@example.com",
            "ctl\u{7}@example.com",
            "a@localhost",
            "a@-bad.com",
            "a@bad-.com",
            "a@exa_mple.com",
            "a@example..com",
            "a@123.456",
            "@example.com",
            ".a@example.com",
            "a..b@example.com",
            long_local.as_str(),
            long_total.as_str(),
        ];
        for case in cases {
            assert!(EmailAddress::parse(case).is_err(), "accepted {case:?}");
        }
    }

    #[test]
    fn email_refuses_format_characters_and_non_ascii_local_parts() {
        for case in [
            "ad\u{200b}a@example.com",
            "ada@exa\u{200d}mple.com",
            "\u{feff}ada@example.com",
            "ada\u{202e}@example.com",
            "ada@example.com\u{2066}",
            "a\u{ad}da@example.com",
            "ädä@example.com",
            "аda@example.com",
        ] {
            assert!(EmailAddress::parse(case).is_err(), "accepted {case:?}");
        }
    }

    #[test]
    fn international_domains_are_stored_as_a_labels() {
        let e = EmailAddress::parse("Ada@Bücher.Example").unwrap();
        assert_eq!(e.as_str(), "ada@xn--bcher-kva.example");
        assert_eq!(EmailAddress::parse("ada@xn--bcher-kva.example").unwrap(), e);
        assert!(EmailAddress::parse("ada@xn--.example").is_err());
    }

    #[test]
    fn email_length_limits_are_inclusive() {
        let local = "a".repeat(64);
        assert!(EmailAddress::parse(&format!("{local}@example.com")).is_ok());
        // 254 exactly: 1 + 1 + 63 + 1 + 63 + 1 + 63 + 1 + 60
        let addr = format!(
            "a@{}.{}.{}.{}",
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(63),
            "e".repeat(60)
        );
        assert_eq!(addr.len(), 254);
        assert!(EmailAddress::parse(&addr).is_ok());
    }

    #[test]
    fn email_debug_is_redacted() {
        let e = EmailAddress::parse("secret@example.com").unwrap();
        assert!(!format!("{e:?}").contains("secret"));
    }

    #[test]
    fn phone_is_e164() {
        assert_eq!(Phone::parse("+14155550100").unwrap().as_str(), "+14155550100");
        assert!(Phone::parse("+12").is_ok());
        assert!(Phone::parse("+123456789012345").is_ok());
        for bad in ["14155550100", "+0123", "+1", "+1234567890123456", "+1 415", "+1a", ""] {
            assert!(Phone::parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(PersonName::parse("  Ada ").unwrap().as_str(), "Ada");
        assert!(PersonName::parse(&"é".repeat(100)).is_ok());
        assert!(PersonName::parse(&"é".repeat(101)).is_err());
        assert!(PersonName::parse("   ").is_err());
        assert!(PersonName::parse("A\u{0}da").is_err());
    }

    #[test]
    fn names_are_nfc_and_refuse_format_characters() {
        let decomposed = PersonName::parse("Zoe\u{0308}").unwrap();
        assert_eq!(decomposed.as_str(), "Zo\u{eb}");
        assert_eq!(decomposed, PersonName::parse("Zo\u{eb}").unwrap());
        for bad in ["A\u{200b}da", "\u{202e}adA", "Ada\u{feff}", "A\u{2066}da"] {
            assert!(PersonName::parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn names_refuse_unassigned_private_use_and_towers_of_marks() {
        for bad in [
            "Ada\u{ffff}",
            "\u{e000}Ada",
            "A\u{f8ff}da",
            "Ada\u{10fffd}",
            "\u{50000}",
        ] {
            assert!(PersonName::parse(bad).is_err(), "accepted {bad:?}");
        }
        let tower = format!("Z{}", "\u{0301}".repeat(90));
        assert!(PersonName::parse(&tower).is_err());
        // Real names keep their marks: Vietnamese, Hebrew with points, Devanagari.
        for good in [
            "Nguy\u{1ec5}n",
            "Tr\u{1ea7}n",
            "\u{05e9}\u{05c1}\u{05b8}\u{05dc}\u{05d5}\u{05b9}\u{05dd}",
            "\u{0926}\u{0947}\u{0935}\u{093f}",
        ] {
            assert!(PersonName::parse(good).is_ok(), "refused {good:?}");
        }
        // Four marks on one character pass, five do not (after NFC, which composes what it can).
        assert!(PersonName::parse(&format!("x{}", "\u{0301}\u{0302}\u{0303}\u{0304}")).is_ok());
        assert!(PersonName::parse(&format!("x{}", "\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}")).is_err());
    }

    #[test]
    fn user_id_rejects_key_delimiter() {
        assert!(UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").is_ok());
        assert!(UserId::parse("a#b").is_err());
        assert!(UserId::parse("").is_err());
    }

    #[test]
    fn timestamp_format_is_rfc3339_millis_utc() {
        let t = Timestamp::parse("2026-11-21T10:00:00.123456+01:00").unwrap();
        assert_eq!(t.to_string(), "2026-11-21T09:00:00.123Z");
        let later = t.plus_seconds(60);
        assert_eq!(later.to_string(), "2026-11-21T09:01:00.123Z");
        assert_eq!(t.seconds_until(later), 60);
        assert_eq!(later.seconds_until(t), 0);
        assert_eq!(Timestamp::from_unix_millis(t.unix_millis()), t);
    }

    #[test]
    fn status_round_trips() {
        for s in [UserStatus::Active, UserStatus::Suspended, UserStatus::Deleted] {
            assert_eq!(s.as_str().parse::<UserStatus>().unwrap(), s);
        }
        assert!("gone".parse::<UserStatus>().is_err());
    }
}
