//! A user's partition read whole (`USER#…`): its items split by kind.

use super::{EmailItem, MemberItem, PrimaryChangeItem, ProfileItem, from_item};
use crate::store::error::StoreError;
use crate::store::keys::{self, Item};

/// The items of one user's partition (PK = USER#…), split by kind.
#[derive(Debug, Default)]
pub struct UserItems {
    /// The profile, `None` when the partition has none.
    pub profile: Option<ProfileItem>,
    /// The email records, oldest first.
    pub emails: Vec<EmailItem>,
    /// The switches of the primary still undoable, oldest first.
    pub changes: Vec<PrimaryChangeItem>,
    /// The user's halves of their memberships, by organization id.
    pub memberships: Vec<MemberItem>,
}

impl UserItems {
    /// Splits a partition's items by key; claims, counters and unknown keys are skipped.
    pub fn from_items(items: Vec<Item>) -> Result<Self, StoreError> {
        let mut out = Self::default();
        for item in items {
            let kind = keys::classify(
                keys::key_string(&item, keys::PK).unwrap_or_default(),
                keys::key_string(&item, keys::SK).unwrap_or_default(),
            );
            match kind {
                keys::ItemKind::Profile => out.profile = Some(from_item(item)?),
                keys::ItemKind::Email => out.emails.push(from_item(item)?),
                keys::ItemKind::PrimaryChange => out.changes.push(from_item(item)?),
                keys::ItemKind::Membership => out.memberships.push(from_item(item)?),
                keys::ItemKind::Claim
                | keys::ItemKind::Organization
                | keys::ItemKind::Member
                | keys::ItemKind::SlugClaim
                | keys::ItemKind::Purge
                | keys::ItemKind::Invitation
                | keys::ItemKind::OrgDomain
                | keys::ItemKind::DomainClaim
                | keys::ItemKind::ScimToken
                | keys::ItemKind::DirectoryClaim
                | keys::ItemKind::OrgCounts
                | keys::ItemKind::ScimCursor
                | keys::ItemKind::Limit
                | keys::ItemKind::Reconcile
                | keys::ItemKind::LegacyPassword
                | keys::ItemKind::ErasedImport
                | keys::ItemKind::Unknown => {}
            }
        }
        sort_oldest_first(&mut out.emails);
        Ok(out)
    }
}

/// Orders records oldest first (by creation time, then id), as the API lists them.
pub fn sort_oldest_first(emails: &mut [EmailItem]) {
    emails.sort_by_key(|e| (e.created_at, e.email_id));
}
