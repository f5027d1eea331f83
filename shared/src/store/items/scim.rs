//! The items of SCIM provisioning: an organization's tokens, what its
//! directory calls each member it provisions, and the claims that keep
//! those names unique in the organization.

use serde::{Deserialize, Serialize};

use super::EntityType;
use crate::domain::{OrgId, ScimTokenId, ScimTokenInfo, ScimTokenName, Timestamp, UserId};
use crate::scim::{ExternalId, UserName};

/// A SCIM token of an organization (`ORG#<orgId>`, `CREDENTIAL#SCIM#<tokenId>`):
/// the keyed hash of its secret, never the secret. Revoking deletes it, so a
/// token's request finds nothing from then on.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScimTokenItem {
    /// Always `ScimToken`.
    pub entity_type: EntityType,
    /// The organization it acts on.
    pub org_id: OrgId,
    /// Its id.
    pub token_id: ScimTokenId,
    /// Its name.
    pub name: ScimTokenName,
    /// `VerificationKey::scim_token_hash` of its secret.
    pub token_hash: String,
    /// Who made it.
    pub created_by: UserId,
    /// When it was made.
    pub created_at: Timestamp,
    /// When a request last proved itself with it, to the hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<Timestamp>,
}

impl ScimTokenItem {
    /// The token as its organization's owners and admins see it.
    pub fn into_domain(self) -> ScimTokenInfo {
        ScimTokenInfo {
            token_id: self.token_id,
            name: self.name,
            created_by: self.created_by,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
        }
    }
}

impl std::fmt::Debug for ScimTokenItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScimTokenItem")
            .field("org_id", &self.org_id)
            .field("token_id", &self.token_id)
            .field("token_hash", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// What an organization's directory calls a member, on the organization's
/// half of the membership. Each name is also claimed in the organization's
/// partition ([`DirectoryClaimItem`]), in the same transaction.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryIdentity {
    /// The directory's `userName`, as it wrote it.
    pub user_name: String,
    /// The directory's `externalId`, if it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Whether the directory made the account (not linked an existing one):
    /// only such an account may the directory erase.
    #[serde(default)]
    pub provisioned: bool,
}

impl DirectoryIdentity {
    /// The `userName`, parsed again.
    pub fn user_name(&self) -> Option<UserName> {
        UserName::parse(&self.user_name).ok()
    }

    /// The `externalId`, parsed again.
    pub fn external_id(&self) -> Option<ExternalId> {
        self.external_id.as_deref().and_then(|raw| ExternalId::parse(raw).ok())
    }
}

impl std::fmt::Debug for DirectoryIdentity {
    // A userName is often an address: personal data.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectoryIdentity")
            .field("provisioned", &self.provisioned)
            .finish_non_exhaustive()
    }
}

/// The claim of a directory's name for a member in an organization
/// (`ORG#<orgId>`, `DIRECTORY#NAME#<userName>` or `DIRECTORY#EXTERNAL#<externalId>`):
/// put on condition that it is new, deleted with the membership.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryClaimItem {
    /// Always `DirectoryClaim`.
    pub entity_type: EntityType,
    /// The organization.
    pub org_id: OrgId,
    /// The member the name is theirs.
    pub user_id: UserId,
}

/// An organization's counts (`ORG#<orgId>`, `COUNTS`): every membership, and
/// the directory's (suspended among them), each moved in the write that adds
/// or ends one. Counted only from the first such write after it was kept:
/// `exact` once a directory's list counted the organization whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgCountsItem {
    /// Every membership.
    #[serde(default)]
    pub members: i64,
    /// Memberships the directory holds (provisioned or linked).
    #[serde(default)]
    pub directory_members: i64,
    /// The directory's members whose membership is suspended.
    #[serde(default)]
    pub suspended_members: i64,
    /// Moved by every write of the counts.
    #[serde(default)]
    pub version: u64,
    /// Whether the counts were set from a walk of the organization, and so are whole.
    #[serde(default)]
    pub exact: bool,
}

/// Where a directory's list of an organization's members resumes at an
/// index (`ORG#<orgId>`, `CURSOR#<view>#<startIndex>`): the sort key of the
/// last member of the page before it. Kept a day (TTL).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScimCursorItem {
    /// Always `ScimCursor`.
    pub entity_type: EntityType,
    /// The member sort key the next page starts after.
    pub after: String,
    /// When DynamoDB deletes it (epoch seconds).
    pub ttl: i64,
}
