//! A user's memberships as their export shows them. The user's half of each
//! is read with their account; the organization's half, which holds what
//! the organization's directory says of them, is one GetItem more per
//! membership (a few at once, `MAX_ORGANIZATIONS_PER_USER` at most). The
//! names the directory claims for them are read back from the keys its
//! claims are written under, derived from that half: no claim is read and
//! nothing is scanned.

use futures::{StreamExt, TryStreamExt};

use crate::domain::{DirectoryAttribute, DirectoryExport, DirectoryNameExport, MembershipExport, OrgId};
use crate::store::items::{self, DirectoryIdentity, MemberItem};
use crate::store::keys::{self, DirectoryClaimName};
use crate::store::{Store, StoreError};

use super::directory;

/// The organizations' halves read at once.
const GETS_AT_ONCE: usize = 16;

impl Store {
    /// Each of the user's halves of their memberships (`halves`, in their
    /// order) with the organization's half beside it.
    pub(in crate::store) async fn exported_memberships(
        &self,
        halves: &[MemberItem],
    ) -> Result<Vec<MembershipExport>, StoreError> {
        // Collected first: a closure in the stream's type would make the
        // handler's future not `Send` for every lifetime (rust#110338).
        let reads: Vec<_> = halves.iter().map(|ours| self.exported_membership(ours)).collect();
        futures::stream::iter(reads).buffered(GETS_AT_ONCE).try_collect().await
    }

    /// One membership with the organization's half read.
    async fn exported_membership(&self, ours: &MemberItem) -> Result<MembershipExport, StoreError> {
        let item = self.get(keys::member_key(ours.org_id, &ours.user_id)).await?;
        let theirs = item.map(items::from_item::<MemberItem>).transpose()?;
        Ok(membership(ours, theirs.as_ref()))
    }
}

/// A membership as exported. Without the organization's half (removed
/// between the two reads) it shows what the user's half holds.
fn membership(ours: &MemberItem, theirs: Option<&MemberItem>) -> MembershipExport {
    MembershipExport {
        org_id: ours.org_id,
        role: ours.role,
        joined_at: ours.joined_at,
        suspended: theirs.is_some_and(|m| m.suspended),
        directory: theirs
            .and_then(|m| m.directory.as_ref())
            .map(|identity| exported_directory(ours.org_id, identity)),
    }
}

/// A directory's identity for a member, with the names it claims in `org`.
fn exported_directory(org: OrgId, identity: &DirectoryIdentity) -> DirectoryExport {
    let claimed_names = directory::claim_keys(org, identity)
        .iter()
        .filter_map(|key| keys::directory_claim_of_sk(keys::key_string(key, keys::SK)?))
        .map(|name| match name {
            DirectoryClaimName::UserName(value) => DirectoryNameExport {
                attribute: DirectoryAttribute::UserName,
                value: value.to_owned(),
            },
            DirectoryClaimName::ExternalId(value) => DirectoryNameExport {
                attribute: DirectoryAttribute::ExternalId,
                value: value.to_owned(),
            },
        })
        .collect();
    DirectoryExport {
        user_name: identity.user_name.clone(),
        external_id: identity.external_id.clone(),
        provisioned: identity.provisioned,
        claimed_names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Role, UserId};
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::now;

    fn half(entity_type: EntityType, org: OrgId) -> MemberItem {
        MemberItem {
            entity_type,
            org_id: org,
            user_id: UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
            role: Role::Member,
            joined_at: now(),
            directory: None,
            version: 0,
            suspended: false,
        }
    }

    #[test]
    fn a_membership_carries_the_directorys_half_and_the_names_it_claims() {
        let org = OrgId::new();
        let ours = half(EntityType::Membership, org);
        let mut theirs = half(EntityType::Member, org);
        theirs.suspended = true;
        theirs.version = 4;
        let identity = DirectoryIdentity {
            user_name: "Ada.Lovelace@Corp.example".into(),
            external_id: Some("00u1AbC".into()),
            provisioned: true,
        };
        theirs.directory = Some(identity.clone());

        let exported = membership(&ours, Some(&theirs));
        assert_eq!((exported.org_id, exported.role), (org, Role::Member));
        assert_eq!(exported.joined_at, now());
        assert!(exported.suspended);
        let directory = exported.directory.unwrap();
        assert_eq!(
            directory.user_name, "Ada.Lovelace@Corp.example",
            "as the directory wrote it"
        );
        assert_eq!(directory.external_id.as_deref(), Some("00u1AbC"));
        assert!(directory.provisioned);
        assert_eq!(
            directory.claimed_names,
            vec![
                DirectoryNameExport {
                    attribute: DirectoryAttribute::UserName,
                    value: "ada.lovelace@corp.example".into(),
                },
                DirectoryNameExport {
                    attribute: DirectoryAttribute::ExternalId,
                    value: "00u1AbC".into(),
                },
            ]
        );
        // Exactly the claims the membership's writes put, key for key.
        let rebuilt: Vec<_> = directory
            .claimed_names
            .iter()
            .map(|name| match name.attribute {
                DirectoryAttribute::UserName => keys::directory_name_key(org, &name.value),
                DirectoryAttribute::ExternalId => keys::directory_external_key(org, &name.value),
            })
            .collect();
        assert_eq!(rebuilt, directory::claim_keys(org, &identity));
    }

    #[test]
    fn without_a_directory_or_the_organizations_half_nothing_is_invented() {
        let org = OrgId::new();
        let ours = half(EntityType::Membership, org);
        let linked_without_external = DirectoryIdentity {
            user_name: "ada".into(),
            external_id: None,
            provisioned: false,
        };
        let mut theirs = half(EntityType::Member, org);
        theirs.directory = Some(linked_without_external);
        let directory = membership(&ours, Some(&theirs)).directory.unwrap();
        assert_eq!((directory.external_id, directory.provisioned), (None, false));
        assert_eq!(directory.claimed_names.len(), 1, "{:?}", directory.claimed_names);

        theirs.directory = None;
        let plain = membership(&ours, Some(&theirs));
        assert_eq!((plain.suspended, plain.directory), (false, None));
        let gone = membership(&ours, None);
        assert_eq!((gone.suspended, gone.directory), (false, None));
        assert_eq!(gone.role, Role::Member);
    }
}
