//! The stored shapes of organizations: the organization, its two-sided
//! memberships and its slug's claim.

use serde::{Deserialize, Serialize};

use super::EntityType;
use crate::domain::{Membership, OrgId, OrgName, Organization, Role, Slug, Timestamp, UserId};

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
/// organization's own item once its last member is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgeItem {
    /// Always `OrganizationPurge`.
    pub entity_type: EntityType,
    /// The organization.
    pub org_id: OrgId,
    /// When it was deleted.
    pub requested_at: Timestamp,
}
