//! The items of SCIM provisioning: an organization's tokens.

use serde::{Deserialize, Serialize};

use super::EntityType;
use crate::domain::{OrgId, ScimTokenId, ScimTokenInfo, ScimTokenName, Timestamp, UserId};

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
