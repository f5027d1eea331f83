//! The stored shapes of organizations: the organization, its two-sided
//! memberships and its slug's claim.

use serde::{Deserialize, Serialize};

use super::EntityType;
use crate::domain::{
    AddressRules, DomainStatus, DomainView, EmailAddress, Enrollment, Invitation, InvitationId, Membership, OrgDomain,
    OrgId, OrgName, Organization, Role, Slug, Timestamp, UserId,
};

/// Where an organization stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrgStatus {
    /// In use.
    Active,
    /// Deleted: no reader sees it, no member joins it, and its members are
    /// being removed a page at a time; the item goes last.
    Deleting,
}

impl OrgStatus {
    /// The spelling stored in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Deleting => "deleting",
        }
    }
}

/// An organization (`ORG#<orgId>`, `ORG`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationItem {
    /// Always `Organization`.
    pub entity_type: EntityType,
    /// Its id, which names its partition.
    pub org_id: OrgId,
    /// Its display name.
    pub name: OrgName,
    /// Its slug; the claim `SLUG#<slug>` names it back.
    pub slug: Slug,
    /// Active, or deleting.
    pub status: OrgStatus,
    /// Every change of its fields adds one; If-Match names it.
    pub version: u64,
    /// How many of its members are owners: every write that makes or
    /// unmakes an owner moves it, on the condition that it stays above zero.
    pub owners: u32,
    /// How many domains it claims: bounded, and pinned by its deletion,
    /// which releases every claim in its own transaction.
    #[serde(default)]
    pub domains: u32,
    /// How many live SCIM tokens it has: bounded, counted in the writes
    /// that make and revoke them.
    #[serde(default)]
    pub scim_tokens: u32,
    /// What it requires of the address a member joins with.
    #[serde(default)]
    pub rules: AddressRules,
    /// Who created it.
    pub created_by: UserId,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

impl OrganizationItem {
    /// The organization as the API shows it.
    pub fn into_domain(self) -> Organization {
        Organization {
            org_id: self.org_id,
            name: self.name,
            slug: self.slug,
            version: self.version,
            owners: self.owners,
            rules: self.rules,
            created_by: self.created_by,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// One half of a membership: the member under their organization
/// (`ORG#<orgId>`, `MEMBER#<sub>`, entity `Member`) or the organization under
/// its member (`USER#<sub>`, `MEMBERSHIP#<orgId>`, entity `Membership`). The
/// two are written, changed and deleted together, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberItem {
    /// `Member` or `Membership`: which half.
    pub entity_type: EntityType,
    /// The organization.
    pub org_id: OrgId,
    /// The member.
    pub user_id: UserId,
    /// Their role, the same on both halves.
    pub role: Role,
    /// When they joined.
    pub joined_at: Timestamp,
    /// On the organization's half, what its directory calls the member,
    /// when SCIM provisioned or linked them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<super::DirectoryIdentity>,
    /// On the organization's half, one more at each change of the directory's
    /// view of the member (the SCIM ETag's second number); absent until the first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: u64,
    /// On the organization's half: the membership is suspended (a
    /// directory's `active: false`). The member keeps their place and holds
    /// no power, read included, as every power's condition says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspended: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MemberItem {
    /// The membership as the API shows it.
    pub fn into_domain(self) -> Membership {
        Membership {
            org_id: self.org_id,
            user_id: self.user_id,
            role: self.role,
            joined_at: self.joined_at,
        }
    }
}

/// The claim of a slug (`SLUG#<slug>`, `UNIQUE`): the one organization holding it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlugItem {
    /// Always `SlugClaim`.
    pub entity_type: EntityType,
    /// The organization holding the slug.
    pub org_id: OrgId,
}

/// A deleted organization whose members are still being removed
/// (`PURGES`, `ORG#<orgId>`): put by the deletion, deleted with the
/// organization's own item once its last member is gone. It is the
/// organization's own checkpoint in the purge: when a run last took it up,
/// what its runs removed, how many turns in a row failed. Where the next
/// turn resumes is the organization's partition itself: what was removed is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgeItem {
    /// Always `OrganizationPurge`.
    pub entity_type: EntityType,
    /// The organization.
    pub org_id: OrgId,
    /// When it was deleted.
    pub requested_at: Timestamp,
    /// When a run last took it up; absent until one does. Runs take the
    /// least recently taken up first, so an organization whose purge fails
    /// or runs long never holds the others back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_at: Option<Timestamp>,
    /// Memberships its runs removed so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub members_removed: u64,
    /// Its turns in a row that failed; 0 after one that did not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_turns: u64,
}

impl PurgeItem {
    /// The checkpoint of an organization deleted at `now`, no run yet.
    pub fn new(org_id: OrgId, now: Timestamp) -> Self {
        Self {
            entity_type: EntityType::OrganizationPurge,
            org_id,
            requested_at: now,
            attempted_at: None,
            members_removed: 0,
            failed_turns: 0,
        }
    }
}

/// A pending invitation (`ORG#<orgId>`, `INVITATION#<invitationId>`; in
/// GSI1 under `INVITED#<addressHash>`). Accepting deletes it in the join's
/// transaction; DynamoDB's TTL deletes one that lapsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvitationItem {
    /// Always `Invitation`.
    pub entity_type: EntityType,
    /// The organization that invites.
    pub org_id: OrgId,
    /// Its id: derived from the organization and the canonical address.
    pub invitation_id: InvitationId,
    /// The address invited, as typed: the mail goes to it.
    pub email: EmailAddress,
    /// The role accepting gives.
    pub role: Role,
    /// Who sent it last.
    pub invited_by: UserId,
    /// When it was first made.
    pub created_at: Timestamp,
    /// When its last mail went out.
    pub sent_at: Timestamp,
    /// When the last token lapses.
    pub expires_at: Timestamp,
    /// The keyed hash of the last token sent: a resend replaces it, so only
    /// the newest mail's link works.
    pub token_hash: String,
    /// Every write adds one; each write pins the version it read.
    pub version: u64,
    /// When DynamoDB may delete it: a day past its lapse.
    pub ttl: i64,
}

impl InvitationItem {
    /// The invitation as the API shows it.
    pub fn into_domain(self) -> Invitation {
        Invitation {
            invitation_id: self.invitation_id,
            org_id: self.org_id,
            email: self.email,
            role: self.role,
            invited_by: self.invited_by,
            created_at: self.created_at,
            sent_at: self.sent_at,
            expires_at: self.expires_at,
        }
    }
}

/// A domain of an organization (`ORG#<orgId>`, `DOMAIN#<domain>`): its
/// record, which the organization lists. Its claim says the same, for the
/// look-ups by domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgDomainItem {
    /// Always `OrgDomain`.
    pub entity_type: EntityType,
    /// The organization.
    pub org_id: OrgId,
    /// The domain.
    pub domain: OrgDomain,
    /// Pending or verified.
    pub status: DomainStatus,
    /// How its users meet the organization.
    pub enrollment: Enrollment,
    /// When it was claimed.
    pub claimed_at: Timestamp,
    /// While pending: until when its claim holds against other organizations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_until: Option<Timestamp>,
    /// When it was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<Timestamp>,
    /// Who verified it, by the address they hold there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_by: Option<UserId>,
}

impl OrgDomainItem {
    /// The domain as the API shows it.
    pub fn into_domain(self) -> DomainView {
        DomainView {
            domain: self.domain,
            status: self.status,
            enrollment: self.enrollment,
            claimed_at: self.claimed_at,
            pending_until: self.pending_until,
            verified_at: self.verified_at,
        }
    }
}

/// The claim of a domain (`DOMAIN#<domain>`, `UNIQUE`): the one organization
/// holding it, with its status and enrollment, so a user's look-up by the
/// domain of their address is one read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainClaimItem {
    /// Always `DomainClaim`.
    pub entity_type: EntityType,
    /// The organization holding it.
    pub org_id: OrgId,
    /// Pending or verified.
    pub status: DomainStatus,
    /// How its users meet the organization.
    pub enrollment: Enrollment,
    /// While pending: after this, another organization may take the domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_until: Option<Timestamp>,
}
