//! Stored item shapes (the non-key attributes) and their mapping to domain types.
//! Keys come from `keys`; attribute names used in expressions come from `attr`.

use serde::{Deserialize, Serialize};

use crate::address_policy::{CanonicalEmail, Canonicalization};
use crate::domain::{
    Email, EmailAddress, EmailId, PersonName, Phone, Profile, Timestamp, UserId, UserStatus, UserSummary,
};
use crate::store::keys::{self, Item};

use super::error::StoreError;

mod organizations;
mod partition;
mod recovery;
mod scim;
pub use organizations::{
    DomainClaimItem, InvitationItem, MemberItem, OrgDomainItem, OrgStatus, OrganizationItem, PurgeItem, SlugItem,
};
pub use partition::{UserItems, sort_oldest_first};
pub use recovery::{PrimaryChangeItem, Recovery, SignInHoldItem, change_item};
pub use scim::{DirectoryClaimItem, DirectoryIdentity, OrgCountsItem, ScimCursorItem, ScimTokenItem};

/// Attribute names that appear in condition and update expressions.
pub(crate) use super::keys::attr;

/// What an item is, stored as `entityType` so a reader of the table can tell items apart without the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EntityType {
    /// A user's profile (`USER#…`, `PROFILE`).
    User,
    /// One email record of a user (`USER#…`, `EMAIL#…`).
    Email,
    /// A switch of the primary its former address can still undo (`USER#…`, `CHANGE#…`).
    PrimaryChange,
    /// An address's uniqueness claim (`EMAIL#…`, `UNIQUE`).
    EmailClaim,
    /// A rate-limit counter (`LIMIT#…`).
    RateLimit,
    /// A pending user's legacy password hash (`PASSWORD#…`, `LEGACY`).
    LegacyPassword,
    /// An imported account erased since (`ERASED#…`, `IMPORT`): its import
    /// key alone, so no re-run of the import brings the person back.
    ErasedImport,
    /// The reconcile's own: its checkpoint and lease (`RECONCILE`), and each
    /// pass's snapshot chunks and partitions' progress (`RECONCILE#PASS#…`).
    Reconcile,
    /// An organization (`ORG#…`, `ORG`).
    Organization,
    /// A member under their organization (`ORG#…`, `MEMBER#…`).
    Member,
    /// A membership under its member (`USER#…`, `MEMBERSHIP#…`).
    Membership,
    /// A slug's claim (`SLUG#…`, `UNIQUE`).
    SlugClaim,
    /// A deleted organization whose members are being removed (`PURGES`, `ORG#…`).
    OrganizationPurge,
    /// A pending invitation (`ORG#…`, `INVITATION#…`).
    Invitation,
    /// A domain of an organization (`ORG#…`, `DOMAIN#…`).
    OrgDomain,
    /// A domain's claim (`DOMAIN#…`, `UNIQUE`).
    DomainClaim,
    /// A SCIM token of an organization (`ORG#…`, `CREDENTIAL#SCIM#…`).
    ScimToken,
    /// A directory's `userName` or `externalId` for a member (`ORG#…`, `DIRECTORY#…`).
    DirectoryClaim,
    /// An organization's counts: its members, those its directory holds, and
    /// those suspended among them (`ORG#…`, `COUNTS`).
    OrgCounts,
    /// Where a directory's list resumes at an index (`ORG#…`, `CURSOR#…`).
    ScimCursor,
}

/// What an erasure keeps of an imported account (`ERASED#<importKey>`,
/// `IMPORT`): the keyed name of the line's person, in its key, and when. No
/// address, name, phone or id: only the import can match it, with the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErasedImportItem {
    /// Always `ErasedImport`.
    pub entity_type: EntityType,
    /// When the account was erased.
    pub erased_at: Timestamp,
}

/// A pending user's legacy password hash, apart from the profile: written by
/// the import, read by the migration trigger alone, deleted in the write that
/// migrates or erases the user. It never leaves the table, and its `Debug`
/// (the hash's) hides it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyPasswordItem {
    /// Always `LegacyPassword`.
    pub entity_type: EntityType,
    /// The pending user it belongs to.
    pub user_id: UserId,
    /// The hash as the other system kept it, with its algorithm.
    pub password_hash: crate::import::PasswordHash,
    /// Wrong passwords given at sign-in in the last 24 hours (epoch seconds).
    #[serde(default)]
    pub wrong_passwords: Vec<i64>,
    /// Every count of a wrong password adds one; the count is pinned to it.
    pub version: u64,
}

/// A user's profile item (`USER#<sub>`, `PROFILE`): the account, its version and its count of email records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileItem {
    /// Always `User`.
    pub entity_type: EntityType,
    /// The owner's Cognito `sub`, which names the user's partition.
    pub user_id: UserId,
    /// The primary address; gone, with the names and phone, once the user is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<EmailAddress>,
    /// The given name, if the user gave one; erased on delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<PersonName>,
    /// The family name, if the user gave one; erased on delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<PersonName>,
    /// An optional contact number; erased on delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<Phone>,
    /// Active, suspended or deleted: whether the owner may sign in and change the account.
    pub status: UserStatus,
    /// The profile's version: every change to its fields (not `emailCount`) adds one; If-Match names it.
    pub version: u64,
    /// How many email records the user has; an add is conditioned on it staying under the per-user maximum.
    pub email_count: u32,
    /// When the confirmed sign-up created the profile.
    pub created_at: Timestamp,
    /// When the profile last changed.
    pub updated_at: Timestamp,
    /// Set on a user erased because Cognito no longer has them (they deleted
    /// themselves there): the stream consumer has nothing to delete in Cognito.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone_from_cognito: bool,
    /// The address Cognito signs the user in with, as last confirmed: the
    /// sign-up's, then each primary once the stream consumer (or the reconcile's
    /// repair) has set it there. While it is not the primary, Cognito's password
    /// reset still mails it, so it cannot be removed. Erased on delete; absent on
    /// profiles written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cognito_email: Option<EmailAddress>,
    /// When the reconcile's pass found Cognito's address is not the primary and
    /// asked the stream consumer, Cognito's one writer, to apply the primary again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_requested_at: Option<Timestamp>,
    /// An imported user's import key: their erasure keeps it (and nothing
    /// else) as an `ErasedImport` item, so no re-run of the import recreates
    /// them. Removed from the profile by the erasure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_key: Option<crate::domain::ImportKey>,
    /// Written by a recovery (epoch seconds): every access token issued before
    /// it (its `iat`) is refused, since the HTTP API's authorizer cannot see
    /// Cognito's revocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_valid_after: Option<i64>,
    /// The recoveries of the last recovery window, newest last: which switches
    /// each undid. Erased on delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recoveries: Vec<Recovery>,
    /// Set by a recovery, removed by the stream consumer once Cognito has the
    /// restored address, has signed every session out and requires a new
    /// password (or by the reconcile doing the same, when the consumer has
    /// not within its share: `SignInHoldItem`). Until then the password is
    /// one the taker may know, so post-authentication refuses every sign-in.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sign_in_held: bool,
    /// How many organizations the user belongs to: a join is conditioned on
    /// it staying under `MAX_ORGANIZATIONS_PER_USER`, and an erasure on it
    /// being zero (every membership removed first).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub organizations: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One email record of a user (`USER#<sub>`, `EMAIL#<emailId>`), found by address through GSI1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailItem {
    /// Always `Email`.
    pub entity_type: EntityType,
    /// Names the record: its sort key and the `/me/emails/{emailId}` routes.
    pub email_id: EmailId,
    /// The owner's Cognito `sub`; GSI1 projects it so the look-up by address finds the owner.
    pub user_id: UserId,
    /// The normalised address, as typed: what is shown and mailed.
    pub email: EmailAddress,
    /// The address's canonical form under the policy it was claimed with,
    /// when that is not `email` itself: its claim and GSI1 key are made from
    /// it, so a later change of policy never loses the way to its claim
    /// (`cargo xtask canonicalize` moves both together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_email: Option<CanonicalEmail>,
    /// Whether this is the profile's address, the one Cognito's `email` follows.
    pub is_primary: bool,
    /// The profile's version that the switch making this the primary wrote:
    /// `email.primary_changed` carries it, so a consumer orders switches.
    /// Absent on a sign-up's first address (primary from version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_version: Option<u64>,
    /// Whether the user proved they receive mail here; until then the claim on it can expire.
    pub is_verified: bool,
    /// When the address was verified; absent while it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<Timestamp>,
    /// When the address was added; records are listed oldest first by it.
    pub created_at: Timestamp,
    /// Keyed hash (HMAC-SHA-256) of the current code, never the code itself; removed on verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_code_hash: Option<String>,
    /// When the current code stops being accepted; removed on verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_expires_at: Option<Timestamp>,
    /// Wrong codes sent against the current code; a resend resets it to 0, and it is capped per code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_attempts: Option<u32>,
    /// When the current code was sent; a resend must wait until it is old enough.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_sent_at: Option<Timestamp>,
    /// Until when a switch away from this address can be undone from it: its
    /// removal until then keeps its claim, reserved to the account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_until: Option<Timestamp>,
}

/// An address's uniqueness claim (`EMAIL#<address>`, `UNIQUE`): names the one record that holds the address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimItem {
    /// Always `EmailClaim`.
    pub entity_type: EntityType,
    /// The user whose record holds the address.
    pub user_id: UserId,
    /// The holder's email record (its `emailId`).
    pub email_id: EmailId,
    /// Present while the address is unverified: after it, another user may take the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// Present while a switch away from the address can be undone from it:
    /// until then no one else may take it, a confirmed sign-up included. With
    /// no `expires_at`, the address was removed from the account and the claim
    /// only reserves it (`emailId` names the removed record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_until: Option<Timestamp>,
    /// On a claim that only reserves its address: when DynamoDB may delete it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<i64>,
}

impl ClaimItem {
    /// A claim that still holds its address: verified, or unverified and not
    /// yet expired, or reserved and not yet released.
    pub fn is_live(&self, now: Timestamp) -> bool {
        if self.is_reserved(now) {
            return true;
        }
        match (self.expires_at, self.reserved_until) {
            (None, Some(_)) => false,
            (expires, _) => expires.is_none_or(|expires| expires > now),
        }
    }

    /// Reserved to its user for a recovery: no one else may take it.
    pub fn is_reserved(&self, now: Timestamp) -> bool {
        self.reserved_until.is_some_and(|until| until > now)
    }

    /// The address was removed from its user's list: the claim has no record.
    pub fn is_reservation_only(&self) -> bool {
        self.reserved_until.is_some() && self.expires_at.is_none()
    }

    /// Whether the address is its user's against everyone else, a confirmed
    /// sign-up included: verified, or reserved for a recovery (removed, or
    /// added back unverified: `expiresAt` alone does not tell) until the
    /// reservation lapses. What no take-over can move.
    pub fn is_owned(&self, now: Timestamp) -> bool {
        self.is_reserved(now) || (self.expires_at.is_none() && self.reserved_until.is_none())
    }
}

impl ProfileItem {
    /// The profile a confirmed sign-up creates: active, at version 1, with `email_count` records.
    pub fn new(user: &crate::domain::NewUser, email_count: u32, now: Timestamp) -> Self {
        Self {
            entity_type: EntityType::User,
            user_id: user.user_id.clone(),
            email: Some(user.email.clone()),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            phone: user.phone.clone(),
            status: UserStatus::Active,
            version: 1,
            email_count,
            created_at: now,
            updated_at: now,
            gone_from_cognito: false,
            // The confirmed sign-up's address is Cognito's own.
            cognito_email: Some(user.email.clone()),
            sync_requested_at: None,
            import_key: None,
            tokens_valid_after: None,
            sign_in_held: false,
            recoveries: Vec::new(),
            organizations: 0,
        }
    }

    /// The profile as the domain and the API see it.
    pub fn into_domain(self) -> Profile {
        Profile {
            user_id: self.user_id,
            email: self.email,
            first_name: self.first_name,
            last_name: self.last_name,
            phone: self.phone,
            status: self.status,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
            email_count: self.email_count,
        }
    }
}

impl EmailItem {
    /// The primary record of a new user, verified already: the confirmed sign-up proved the address.
    pub fn verified_primary(user: &UserId, email: &EmailAddress, policy: Canonicalization, now: Timestamp) -> Self {
        Self {
            entity_type: EntityType::Email,
            email_id: EmailId::new(),
            user_id: user.clone(),
            email: email.clone(),
            canonical_email: stored_canonical(email, policy),
            is_primary: true,
            primary_version: None,
            is_verified: true,
            verified_at: Some(now),
            created_at: now,
            verification_code_hash: None,
            verification_expires_at: None,
            verification_attempts: None,
            verification_sent_at: None,
            reserved_until: None,
        }
    }

    /// An added address awaiting its code: not primary, with the code's hash and expiry, no attempts yet.
    pub fn unverified(
        user: &UserId,
        email_id: EmailId,
        email: &EmailAddress,
        policy: Canonicalization,
        code_hash: String,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Self {
        Self {
            entity_type: EntityType::Email,
            email_id,
            user_id: user.clone(),
            email: email.clone(),
            canonical_email: stored_canonical(email, policy),
            is_primary: false,
            primary_version: None,
            is_verified: false,
            verified_at: None,
            created_at: now,
            verification_code_hash: Some(code_hash),
            verification_expires_at: Some(expires_at),
            verification_attempts: Some(0),
            verification_sent_at: Some(now),
            reserved_until: None,
        }
    }

    /// An address an import brings beside the primary, verified or not as the
    /// other system had it. An unverified one carries `unknown_code_hash`, the
    /// hash of no code anyone was sent, expired at `at`: its owner asks for a code.
    pub fn imported(
        user: &UserId,
        email: &EmailAddress,
        policy: Canonicalization,
        verified: bool,
        unknown_code_hash: String,
        at: Timestamp,
    ) -> Self {
        let mut record = Self::verified_primary(user, email, policy, at);
        record.is_primary = false;
        if !verified {
            record.is_verified = false;
            record.verified_at = None;
            record.verification_code_hash = Some(unknown_code_hash);
            record.verification_expires_at = Some(at);
            record.verification_attempts = Some(0);
        }
        record
    }

    /// The canonical form its claim and GSI1 key are made from.
    pub fn canonical(&self) -> CanonicalEmail {
        self.canonical_email
            .clone()
            .unwrap_or_else(|| Canonicalization::NONE.canonical(&self.email))
    }

    /// The claim of this record: permanent once verified, else held until `expires_at`.
    pub fn claim(&self, expires_at: Option<Timestamp>) -> ClaimItem {
        ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: self.user_id.clone(),
            email_id: self.email_id,
            expires_at: if self.is_verified { None } else { expires_at },
            reserved_until: self.reserved_until.filter(|_| !self.is_verified),
            ttl: None,
        }
    }

    /// The record as the API shows it, without the verification data.
    pub fn into_domain(self) -> Email {
        Email {
            email_id: self.email_id,
            email: self.email,
            is_primary: self.is_primary,
            is_verified: self.is_verified,
            verified_at: self.verified_at,
            created_at: self.created_at,
        }
    }
}

/// What GSI1 holds of an email record (projection INCLUDE: `keys::GSI1_PROJECTED`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedEmail {
    /// The record's owner, whose account the look-up by address returns.
    pub user_id: UserId,
    /// Whether the owner verified the address: during a take-over the verified holder owns it.
    pub is_verified: bool,
    /// When the address was added; among equally verified holders the newest wins.
    pub created_at: Timestamp,
}

/// What GSI2 holds of a profile (projection INCLUDE: `keys::GSI2_PROJECTED`):
/// one line of the admin list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedUser {
    /// The user's Cognito `sub`.
    pub user_id: UserId,
    /// The primary address; absent once the user is deleted.
    #[serde(default)]
    pub email: Option<EmailAddress>,
    /// The given name, if any; erased on delete.
    #[serde(default)]
    pub first_name: Option<PersonName>,
    /// The family name, if any; erased on delete.
    #[serde(default)]
    pub last_name: Option<PersonName>,
    /// Active, suspended or deleted.
    pub status: UserStatus,
    /// When the confirmed sign-up created the profile: the list's order.
    pub created_at: Timestamp,
}

impl IndexedUser {
    /// The line as the API shows it.
    pub fn into_domain(self) -> UserSummary {
        UserSummary {
            user_id: self.user_id,
            email: self.email,
            first_name: self.first_name,
            last_name: self.last_name,
            status: self.status,
            created_at: self.created_at,
        }
    }
}

/// Which counter an item of a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Codes issued for one address, by anyone (adds and resends).
    CodesIssued,
    /// Codes one user had sent to one address.
    CodesRequested,
    /// Codes one user had sent, to any address.
    CodesSent,
    /// Wrong codes one user sent, for any address.
    WrongCodes,
    /// One user and one address: wrong codes, and when the user first added it.
    UserAddress,
    /// Availability checks one user made, for any address.
    AvailabilityChecks,
    /// Exports of their own account one user made.
    Exports,
    /// Recovery links from one network source that undid nothing.
    RecoveryGuesses,
    /// SCIM requests from one network source whose token proved nothing.
    ScimGuesses,
    /// Invitations sent to one address, by any organization.
    InvitationsTo,
    /// Invitations one organization sent.
    InvitationsBy,
    /// Invitations one organization sent to one address.
    InvitationsPair,
}

/// A rate-limit counter (`LIMIT#…`): its events within the last 24 hours and a version that writes pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitItem {
    /// Always `RateLimit`.
    pub entity_type: EntityType,
    /// Epoch seconds of the counted events, oldest first.
    pub events: Vec<i64>,
    /// The counter's version: every put adds one, conditioned on the version it read.
    pub version: u64,
    /// For `UserAddress`: when the current 24-hour window of holding the address began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_added_at: Option<Timestamp>,
    /// Epoch seconds after which DynamoDB may delete the item; nothing relies on it.
    pub ttl: i64,
}

/// The whole stored item: keys from `keys`, attributes from the struct.
pub fn to_item<T: Serialize>(keys: Item, value: &T) -> Result<Item, StoreError> {
    let mut item: Item = serde_dynamo::to_item(value).map_err(StoreError::Corrupt)?;
    item.extend(keys);
    Ok(item)
}

/// A stored item read as `T`, ignoring keys and attributes it does not name; a misfit is `Corrupt`.
pub fn from_item<T: for<'de> Deserialize<'de>>(item: Item) -> Result<T, StoreError> {
    serde_dynamo::from_item(item).map_err(StoreError::Corrupt)
}

/// The whole stored profile item, with its key and its GSI2 keys (status, creation time).
pub fn profile_item(item: &ProfileItem) -> Result<Item, StoreError> {
    to_item(keys::profile_keys(&item.user_id, item.status, item.created_at), item)
}

/// The canonical form a record stores: none when it is the address itself
/// (every record under the default policy), so the default writes what it always did.
pub fn stored_canonical(email: &EmailAddress, policy: Canonicalization) -> Option<CanonicalEmail> {
    Some(policy.canonical(email)).filter(|canonical| !canonical.is_spelled(email))
}

/// The whole stored email record, with its table and GSI1 keys.
pub fn email_item(item: &EmailItem) -> Result<Item, StoreError> {
    to_item(
        keys::email_record_keys(&item.user_id, item.email_id, &item.canonical()),
        item,
    )
}

/// The whole stored claim on `email`, with its key.
pub fn claim_item(email: &CanonicalEmail, item: &ClaimItem) -> Result<Item, StoreError> {
    to_item(keys::claim_key(email), item)
}

#[cfg(test)]
mod tests;
