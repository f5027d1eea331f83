//! The removal of deleted organizations' members, a page at a time. The
//! deletion itself (the status, the slug, the purge's item) was one write,
//! so no reader sees a half-deleted organization as live and nobody joins
//! it; what remains is work. The scheduled `purge-organizations` finds it
//! in the `PURGES` partition (one small Query), works until its deadline,
//! checked per member, and leaves the rest for its next run: removed members
//! are gone from the partition, so the partition itself is the checkpoint.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;

use crate::domain::OrgId;
use crate::store::expr::{Update, and};
use crate::store::items::{self, MemberItem, OrgStatus, OrganizationItem, PurgeItem, attr};
use crate::store::keys;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{retrying, send_by_deadline};
use crate::store::{Store, StoreError};

use crate::store::ops::profile::read_changed;

/// What one run did to one deleted organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    /// Memberships removed in this run.
    pub removed: usize,
    /// Whether the organization is gone: its last items deleted.
    pub finished: bool,
}

/// Members read per page.
const PAGE: i32 = 100;
/// Memberships removed at once: each its own transaction, on distinct items.
const REMOVALS_AT_ONCE: usize = 16;
/// Deleted organizations read per run; more wait for the next.
const PURGES_PER_RUN: i32 = 100;

impl Store {
    /// The deleted organizations whose members are still being removed, oldest first.
    pub async fn pending_purges(&self) -> Result<Vec<OrgId>, StoreError> {
        let query = self
            .query(|x| x.eq(keys::PK, keys::purges_pk()))
            .consistent_read(true)
            .limit(PURGES_PER_RUN);
        let items = send_by_deadline!(&self.client, query)?.items.unwrap_or_default();
        let mut pending = items
            .into_iter()
            .map(items::from_item::<PurgeItem>)
            .collect::<Result<Vec<_>, _>>()?;
        pending.sort_by_key(|p| (p.requested_at, p.org_id));
        Ok(pending.into_iter().map(|p| p.org_id).collect())
    }

    /// Removes `org`'s members until `stop_at`, then, with none left, the
    /// organization's own item and its purge's. An organization that is not
    /// being deleted is left alone.
    pub async fn purge_organization(&self, org: OrgId, stop_at: Instant) -> Result<Purged, StoreError> {
        let mut removed = 0;
        loop {
            let current: Option<OrganizationItem> =
                self.get(keys::org_key(org)).await?.map(items::from_item).transpose()?;
            match current {
                Some(o) if o.status == OrgStatus::Deleting => {}
                // Gone (a repeated run) or never deleted: only its purge item may remain.
                Some(_) => {
                    return Ok(Purged {
                        removed,
                        finished: false,
                    });
                }
                None => {
                    self.forget(org, false).await?;
                    return Ok(Purged {
                        removed,
                        finished: true,
                    });
                }
            }
            if Instant::now() >= stop_at {
                return Ok(Purged {
                    removed,
                    finished: false,
                });
            }
            let query = self
                .query(|x| {
                    and([
                        x.eq(keys::PK, keys::org_pk(org)),
                        // Its members, invitations, domains and SCIM tokens: all that sorts before the organization item.
                        x.lt(keys::SK, keys::org_sk()),
                    ])
                })
                .consistent_read(true)
                .limit(PAGE);
            let page = send_by_deadline!(&self.client, query)?.items.unwrap_or_default();
            if page.is_empty() {
                self.forget(org, true).await?;
                return Ok(Purged {
                    removed,
                    finished: true,
                });
            }
            let mut members = Vec::new();
            for item in page {
                let kind = keys::classify(
                    keys::key_string(&item, keys::PK).unwrap_or_default(),
                    keys::key_string(&item, keys::SK).unwrap_or_default(),
                );
                if matches!(
                    kind,
                    keys::ItemKind::Invitation
                        | keys::ItemKind::OrgDomain
                        | keys::ItemKind::ScimToken
                        | keys::ItemKind::DirectoryClaim
                ) {
                    // An invitation's link and a SCIM token would find no
                    // organization, a domain's claim went with the deletion,
                    // and a directory's names name members being removed:
                    // deleted so nothing lingers.
                    let delete = self
                        .client
                        .delete_item()
                        .table_name(self.table())
                        .set_key(Some(keys::key_of(&item)));
                    send_by_deadline!(&self.client, delete)?;
                } else {
                    members.push(items::from_item::<MemberItem>(item)?);
                }
            }
            // Checked per member: one past the deadline is left for the next run.
            let mut members = members.into_iter();
            let mut under_way = FuturesUnordered::new();
            loop {
                while under_way.len() < REMOVALS_AT_ONCE && Instant::now() < stop_at {
                    let Some(member) = members.next() else { break };
                    under_way.push(self.purge_member(member));
                }
                match under_way.next().await {
                    Some(done) => {
                        done?;
                        removed += 1;
                    }
                    None => break,
                }
            }
        }
    }

    /// One member of a deleted organization: both halves, and their count.
    async fn purge_member(&self, member: MemberItem) -> Result<(), StoreError> {
        retrying!({
            let plan = purge_plan(self.table(), &member)?;
            match self.transact(&plan).await {
                // Gone already (a repeated run, or the member's own erasure).
                Err(Rejection::Failed(StoreError::MemberNotFound)) => Ok(()),
                other => other,
            }
        })
    }

    /// The organization's own item (when `with_org`) and its purge's, together, last.
    async fn forget(&self, org: OrgId, with_org: bool) -> Result<(), StoreError> {
        retrying!({
            let mut plan = TxPlan::new();
            if with_org {
                let delete = plan::delete(self.table(), keys::org_key(org), |x| {
                    x.eq(attr::STATUS, OrgStatus::Deleting)
                })?;
                plan.push(delete, read_changed);
            }
            let done = plan::delete(self.table(), keys::purge_key(org), |x| x.exists(keys::PK))?;
            plan.push(done, |_| Ok(Rejection::Failed(StoreError::NotFound)));
            match self.transact(&plan).await {
                // Another run finished it first.
                Err(Rejection::Failed(StoreError::NotFound)) => Ok(()),
                other => other,
            }
        })
    }
}

fn purge_plan(table: &str, member: &MemberItem) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    for key in [
        keys::member_key(member.org_id, &member.user_id),
        keys::membership_key(&member.user_id, member.org_id),
    ] {
        let delete = plan::delete(table, key, |x| x.exists(keys::PK))?;
        plan.push(delete, |_| Ok(Rejection::Failed(StoreError::MemberNotFound)));
    }
    let count = plan::update(table, keys::profile_key(&member.user_id), |x| {
        let update = Update::default().set(x.add_from_zero(attr::ORGANIZATIONS, -1));
        (update, and([x.exists(keys::PK), x.gt(attr::ORGANIZATIONS, 0u32)]))
    })?;
    plan.push(count, read_changed);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Role, UserId};
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::now;

    #[test]
    fn a_purged_member_goes_with_both_halves_and_their_count() {
        let member = MemberItem {
            entity_type: EntityType::Member,
            org_id: OrgId::new(),
            user_id: UserId::parse("m").unwrap(),
            role: Role::Owner,
            joined_at: now(),
            directory: None,
            version: 0,
            suspended: false,
        };
        let plan = purge_plan("t", &member).unwrap();
        plan::tests::assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 3, "no owners' count: the organization is going");
        assert!(matches!(
            plan.read(0, None),
            Rejection::Failed(StoreError::MemberNotFound)
        ));
    }
}
