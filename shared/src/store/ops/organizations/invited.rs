//! The invitations to a user's own addresses: what their export shows and
//! their erasure deletes. Found through GSI1 under each address's canonical
//! form (`INVITED#…`), so no scan, and no key needed to find them.

use crate::domain::{InvitationId, OrgId};
use crate::store::items::{self, EmailItem, InvitationItem};
use crate::store::keys;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError, query_all};

impl Store {
    /// The invitations, pending or lapsed, to the addresses of `records`
    /// that their owner verified (an unverified address's invitations are
    /// not theirs to see). GSI1 is eventually consistent: one sent a moment
    /// ago may be missing.
    pub(in crate::store) async fn invitations_to(
        &self,
        records: &[EmailItem],
    ) -> Result<Vec<InvitationItem>, StoreError> {
        let mut found = Vec::new();
        for (org, id) in self
            .invitation_keys_to(records.iter().filter(|r| r.is_verified))
            .await?
        {
            if let Some(item) = self.get(keys::invitation_key(org, id)).await? {
                found.push(items::from_item::<InvitationItem>(item)?);
            }
        }
        found.sort_by_key(|i| (i.sent_at, i.org_id));
        Ok(found)
    }

    /// Deletes every invitation to the addresses of `records`, verified or
    /// not: an erased user's addresses are free for others, and an
    /// invitation meant for this person must not pass to them.
    pub(in crate::store) async fn drop_invitations_to(&self, records: &[EmailItem]) -> Result<(), StoreError> {
        for (org, id) in self.invitation_keys_to(records.iter()).await? {
            let delete = self
                .client
                .delete_item()
                .table_name(self.table())
                .set_key(Some(keys::invitation_key(org, id)));
            send_by_deadline!(&self.client, delete)?;
        }
        Ok(())
    }

    /// The keys of the invitations to each address of `records`.
    async fn invitation_keys_to(
        &self,
        records: impl Iterator<Item = &EmailItem>,
    ) -> Result<Vec<(OrgId, InvitationId)>, StoreError> {
        let mut found = Vec::new();
        for record in records {
            let query = self
                .query(|x| x.eq(keys::GSI1PK, keys::invited_gsi1pk(&record.canonical())))
                .index_name(keys::GSI1);
            for item in query_all(&self.client, query).await? {
                let pk = keys::key_string(&item, keys::PK).unwrap_or_default();
                let sk = keys::key_string(&item, keys::SK).unwrap_or_default();
                if let (Some(org), Some(id)) = (keys::org_of_pk(pk), keys::invitation_of_sk(sk)) {
                    found.push((org, id));
                }
            }
        }
        Ok(found)
    }
}
