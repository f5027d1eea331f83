//! The account's export (`GET /me/export`, `schemas/export/account.v2.json`):
//! everything the table holds about a user, as stored, and the rate-limit
//! counters it names by kind.

use serde::Serialize;

use super::email_address::EmailAddress;
use super::ids::UserId;
use super::profile::{Email, Profile};
use super::timestamp::Timestamp;

/// The version of the export's format, `formatVersion`, and of its schema
/// (`schemas/export/account.v<N>.json`). A change that would break a reader
/// of the version's schema (a field removed, renamed, retyped or newly
/// required) makes a new version; an optional field may be added within one,
/// as readers ignore what they do not know. Version 1 (no `switches`,
/// `recoveries`, `memberships`, `invitations`) stays published as it was.
pub const EXPORT_FORMAT_VERSION: u32 = 2;

/// Everything the table holds about a user, as `GET /me/export` gives it to
/// them (GDPR articles 15 and 20; `schemas/export/account.v2.json`). No code
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
    /// Switches of the primary still undoable from their former address.
    pub switches: Vec<SwitchExport>,
    /// The account's recoveries of the last window.
    pub recoveries: Vec<RecoveryExport>,
    /// The organizations the user belongs to, and their role in each.
    pub memberships: Vec<MembershipExport>,
    /// Invitations to the user's verified addresses, not yet accepted.
    pub invitations: Vec<InvitationExport>,
}

/// An invitation to one of the user's verified addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvitationExport {
    /// The invitation.
    pub invitation_id: super::invitation::InvitationId,
    /// The organization that invites.
    pub org_id: super::organization::OrgId,
    /// The address invited.
    pub email: super::email_address::EmailAddress,
    /// The role accepting gives.
    pub role: super::organization::Role,
    /// When its last mail went out.
    pub sent_at: Timestamp,
    /// When its link lapses.
    pub expires_at: Timestamp,
}

/// One organization the user belongs to: both halves of the membership,
/// the user's and the organization's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MembershipExport {
    /// The organization.
    pub org_id: super::organization::OrgId,
    /// Their role in it.
    pub role: super::organization::Role,
    /// When they joined.
    pub joined_at: Timestamp,
    /// Suspended by the organization's directory (SCIM `active: false`):
    /// the user keeps their place and holds no power in it.
    pub suspended: bool,
    /// What the organization's directory holds about the user; `null` when
    /// no directory provisioned or linked them.
    pub directory: Option<DirectoryExport>,
}

/// What an organization's directory (SCIM) holds about a member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryExport {
    /// The directory's `userName` for the user, as it wrote it.
    pub user_name: String,
    /// The directory's `externalId` for the user; `null` when it sent none.
    pub external_id: Option<String>,
    /// Whether the directory made the account (rather than linking an
    /// existing one): only then may it erase it.
    pub provisioned: bool,
    /// The names the organization keeps for the user alone, one claim each,
    /// in the form they are compared in.
    pub claimed_names: Vec<DirectoryNameExport>,
}

/// One name an organization's directory claims for a member: no other
/// member of the organization may be given it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryNameExport {
    /// Which of the directory's attributes it is.
    pub attribute: DirectoryAttribute,
    /// The name as compared: a `userName` lower-cased, an `externalId` exactly.
    pub value: String,
}

/// A directory attribute whose value is unique in an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DirectoryAttribute {
    /// SCIM's `userName`, unique without regard to case.
    UserName,
    /// SCIM's `externalId`, unique exactly.
    ExternalId,
}

/// A switch of the primary kept for its undoing: the former address is the
/// user's data, kept (and reserved to them) for the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SwitchExport {
    /// The profile version the switch wrote.
    pub version: u64,
    /// The address it moved away from.
    pub former_email: EmailAddress,
    /// When.
    pub changed_at: Timestamp,
    /// Until when its link works.
    pub recoverable_until: Timestamp,
    /// How many notices carried a link for it (the tokens are never kept).
    pub links_mailed: u32,
}

/// A recovery of the account: which switches it undid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryExport {
    /// The version of the switch whose link was followed; later ones were undone with it.
    pub undone_version: u64,
    /// The profile version the recovery wrote.
    pub version: u64,
    /// When.
    pub recovered_at: Timestamp,
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
