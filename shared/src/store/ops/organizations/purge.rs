//! The removal of deleted organizations' members, a page at a time. The
//! deletion itself (the status, the slug, the purge's item) was one write,
//! so no reader sees a half-deleted organization as live and nobody joins
//! it; what remains is work. The scheduled `purge-organizations` reads the
//! deletions under way from the `PURGES` partition and gives each
//! organization a turn, in the order of `pending_purges`, until its
//! deadline. Each organization has its own checkpoint: its purge item
//! records when a run last took it up, what was removed and the turns that
//! failed, and its partition is where the next turn resumes (removed members
//! are gone from it). A turn that fails ends that organization's turn only.

use std::collections::HashSet;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;

use crate::domain::{OrgId, Timestamp, UserId};
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

impl Store {
    /// The deleted organizations whose members are still being removed, in
    /// the order a run takes them up: those no run has taken up yet, oldest
    /// deletion first, then the one taken up longest ago. A turn that failed
    /// or ran out of time sends its organization behind the others, so none
    /// holds the rest back. The whole `PURGES` partition is read (a page
    /// holds thousands), page by page until the invocation's deadline.
    pub async fn pending_purges(&self) -> Result<Vec<OrgId>, StoreError> {
        let query = self.query(|x| x.eq(keys::PK, keys::purges_pk())).consistent_read(true);
        let mut pending = Vec::new();
        let mut start = None;
        loop {
            let page = query.clone().set_exclusive_start_key(start);
            let out = send_by_deadline!(&self.client, page)?;
            for item in out.items.unwrap_or_default() {
                pending.push(items::from_item::<PurgeItem>(item)?);
            }
            let past_deadline = crate::deadline::current_deadline().is_some_and(|d| Instant::now() >= d);
            match out.last_evaluated_key.filter(|k| !k.is_empty()) {
                Some(key) if !past_deadline => start = Some(key),
                _ => break,
            }
        }
        pending.sort_by_key(turn_order);
        Ok(pending.into_iter().map(|p| p.org_id).collect())
    }

    /// One organization's turn in a run. It is taken up on its checkpoint
    /// first (`attemptedAt`), so that a turn which fails, hangs or is cut off
    /// still sends it behind the others; then its members are removed until
    /// `stop_at`; then what the turn removed, and whether it failed, is added
    /// to the checkpoint. A failed turn keeps what it removed: the next
    /// resumes from what is left.
    pub async fn purge_turn(&self, org: OrgId, now: Timestamp, stop_at: Instant) -> Result<Purged, StoreError> {
        if !self.take_up_purge(org, now).await? {
            // Another run finished it since the list was read.
            return Ok(Purged {
                removed: 0,
                finished: true,
            });
        }
        let mut removed = 0;
        match self.purge_members(org, stop_at, &mut removed).await {
            // Its checkpoint went with the organization.
            Ok(true) => Ok(Purged {
                removed,
                finished: true,
            }),
            Ok(false) => {
                self.record_turn(org, removed, false).await?;
                Ok(Purged {
                    removed,
                    finished: false,
                })
            }
            Err(err) => {
                // The turn's own failure is what the run reports; failing to
                // count it (DynamoDB down for both) loses only the count.
                if let Err(also) = self.record_turn(org, removed, true).await {
                    tracing::warn!(%org, cause = %also, "a failed purge turn was not recorded");
                }
                Err(err)
            }
        }
    }

    /// Removes `org`'s members until `stop_at`, then, with none left, the
    /// organization's own item and its purge's. An organization that is not
    /// being deleted is left alone. Its checkpoint is not touched: a run
    /// goes through [`Store::purge_turn`].
    pub async fn purge_organization(&self, org: OrgId, stop_at: Instant) -> Result<Purged, StoreError> {
        let mut removed = 0;
        let finished = self.purge_members(org, stop_at, &mut removed).await?;
        Ok(Purged { removed, finished })
    }

    /// Writes that a run took `org` up at `now`, unless its purge is over.
    async fn take_up_purge(&self, org: OrgId, now: Timestamp) -> Result<bool, StoreError> {
        self.update_if(keys::purge_key(org), |x| {
            let update = Update::default().set(x.eq(attr::ATTEMPTED_AT, now));
            (update, x.exists(keys::PK))
        })
        .await
    }

    /// Adds a turn's outcome to `org`'s checkpoint, unless its purge is over
    /// (a checkpoint is never written back once deleted).
    async fn record_turn(&self, org: OrgId, removed: usize, failed: bool) -> Result<(), StoreError> {
        self.update_if(keys::purge_key(org), |x| {
            let removed = i64::try_from(removed).unwrap_or(i64::MAX);
            let failures = if failed {
                x.add_from_zero(attr::FAILED_TURNS, 1)
            } else {
                x.eq(attr::FAILED_TURNS, 0u64)
            };
            let update = Update::default()
                .set(x.add_from_zero(attr::MEMBERS_REMOVED, removed))
                .set(failures);
            (update, x.exists(keys::PK))
        })
        .await
        .map(|_| ())
    }

    /// The members of `org` removed until `stop_at`, counted in `removed` as
    /// they go (a failure keeps the count); whether the organization is gone.
    async fn purge_members(&self, org: OrgId, stop_at: Instant, removed: &mut usize) -> Result<bool, StoreError> {
        // Whom this turn has handled: one met again is still there (its
        // halves disagree), and going round would spin until the deadline.
        let mut gone: HashSet<UserId> = HashSet::new();
        loop {
            let current: Option<OrganizationItem> =
                self.get(keys::org_key(org)).await?.map(items::from_item).transpose()?;
            match current {
                Some(o) if o.status == OrgStatus::Deleting => {}
                // Never deleted: a purge item without its deletion is left to the invariant checks.
                Some(_) => return Ok(false),
                // Gone (a repeated run): only its purge item may remain.
                None => {
                    self.forget(org, false).await?;
                    return Ok(true);
                }
            }
            if Instant::now() >= stop_at {
                return Ok(false);
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
                return Ok(true);
            }
            let mut members = Vec::new();
            for item in page {
                // Checked per item: the rest of the page is the next turn's.
                if Instant::now() >= stop_at {
                    return Ok(false);
                }
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
                        | keys::ItemKind::OrgCounts
                        | keys::ItemKind::ScimCursor
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
                    let member = items::from_item::<MemberItem>(item)?;
                    if gone.contains(&member.user_id) {
                        return Err(StoreError::Inconsistent(
                            "a member the purge removed is still in the organization",
                        ));
                    }
                    members.push(member);
                }
            }
            // Checked per member: one past the deadline is left for the next run.
            let mut members = members.into_iter();
            let mut under_way = FuturesUnordered::new();
            loop {
                while under_way.len() < REMOVALS_AT_ONCE && Instant::now() < stop_at {
                    let Some(member) = members.next() else { break };
                    under_way.push(async move {
                        let user = member.user_id.clone();
                        self.purge_member(member).await.map(|removed| (user, removed))
                    });
                }
                match under_way.next().await {
                    Some(done) => {
                        let (user, removed_now) = done?;
                        *removed += usize::from(removed_now);
                        gone.insert(user);
                    }
                    None => break,
                }
            }
        }
    }

    /// One member of a deleted organization: both halves, and their count.
    /// Whether this removed them (`false`: a half was gone already).
    async fn purge_member(&self, member: MemberItem) -> Result<bool, StoreError> {
        retrying!({
            let plan = purge_plan(self.table(), &member)?;
            match self.transact(&plan).await {
                Ok(()) => Ok(true),
                // Gone already (a repeated run, or the member's own erasure).
                Err(Rejection::Failed(StoreError::MemberNotFound)) => Ok(false),
                Err(other) => Err(other),
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

/// Where an organization stands in a run's order: never taken up first (by
/// deletion), then the one taken up longest ago.
fn turn_order(purge: &PurgeItem) -> (Option<Timestamp>, Timestamp, OrgId) {
    (purge.attempted_at, purge.requested_at, purge.org_id)
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

    #[test]
    fn a_run_takes_up_new_deletions_first_then_the_one_taken_up_longest_ago() {
        let purge = |deleted: i64, attempted: Option<i64>| PurgeItem {
            attempted_at: attempted.map(|s| now().plus_seconds(s)),
            ..PurgeItem::new(OrgId::new(), now().plus_seconds(deleted))
        };
        // The oldest deletion failed its turn a minute ago: it goes last.
        let failing = purge(0, Some(120));
        let long_ago = purge(10, Some(60));
        let newer = purge(30, None);
        let new = purge(20, None);
        let mut pending = [failing.clone(), long_ago.clone(), newer.clone(), new.clone()];
        pending.sort_by_key(turn_order);
        let order: Vec<OrgId> = pending.iter().map(|p| p.org_id).collect();
        assert_eq!(order, [new.org_id, newer.org_id, long_ago.org_id, failing.org_id]);
    }
}
