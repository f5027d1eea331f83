//! Reading organizations: one organization as a member sees it, its members
//! a page at a time, and a user's own organizations. A member's power to
//! read is read here, not conditioned: reads change nothing.

use futures::{StreamExt, TryStreamExt};

use crate::domain::{Actor, Membership, OrgId, Organization, Power, Role, Timestamp, UserId};
use crate::store::expr::and;
use crate::store::items::{self, MemberItem, OrgStatus, OrganizationItem};
use crate::store::keys;
use crate::store::ops::visible;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError, query_all};

use super::powers::allowed;

/// A page of an organization's members, by sub.
#[derive(Debug, Clone)]
pub struct MemberPage {
    /// The members of the page.
    pub members: Vec<Membership>,
    /// The last member of a full page: the next page starts after them.
    pub next: Option<UserId>,
}

/// One organization of a user: what it is and their role in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MyOrganization {
    /// The organization.
    pub organization: Organization,
    /// Their role.
    pub role: Role,
    /// When they joined.
    pub joined_at: Timestamp,
}

/// How many organizations are read at once for a user's list.
const ORGANIZATION_READS_AT_ONCE: usize = 16;

impl Store {
    /// An organization as `actor` sees it, with their role (a deployment
    /// admin who is no member has none).
    pub async fn get_organization(
        &self,
        actor: &Actor,
        org: OrgId,
    ) -> Result<(Organization, Option<Role>), StoreError> {
        let (org, mine, actor) = self.org_and_mine(org, actor, Power::Read).await?;
        allowed(&actor, mine.as_ref(), Power::Read)?;
        Ok((org.into_domain(), mine.map(|m| m.role)))
    }

    /// A page of at most `limit` members of `org`, after the member `after`.
    pub async fn list_members(
        &self,
        actor: &Actor,
        org: OrgId,
        after: Option<&UserId>,
        limit: u32,
    ) -> Result<MemberPage, StoreError> {
        let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
        allowed(&actor, mine.as_ref(), Power::Manage)?;
        let start = after.map(|user| keys::member_key(org, user));
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::org_pk(org)),
                    x.begins_with(keys::SK, keys::member_sk_prefix()),
                ])
            })
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start);
        let out = send_by_deadline!(&self.client, query)?;
        let members = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| items::from_item::<MemberItem>(item).map(MemberItem::into_domain))
            .collect::<Result<Vec<_>, _>>()?;
        let full = out.last_evaluated_key.is_some_and(|k| !k.is_empty());
        let next = full.then(|| members.last().map(|m| m.user_id.clone())).flatten();
        Ok(MemberPage { members, next })
    }

    /// The organizations `user` belongs to, oldest membership first: their
    /// halves from their partition, then each organization. One being
    /// deleted is left out: to its members it is gone already.
    pub async fn my_organizations(&self, user: &UserId) -> Result<Vec<MyOrganization>, StoreError> {
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::user_pk(user)),
                    x.gt(keys::SK, keys::membership_sk_prefix()),
                ])
            })
            .consistent_read(true);
        let found = items::UserItems::from_items(query_all(&self.client, query).await?)?;
        visible(found.profile.ok_or(StoreError::NotFound)?)?;
        let mut mine: Vec<MyOrganization> = futures::stream::iter(found.memberships)
            .map(|m| async move {
                let org: Option<OrganizationItem> = self
                    .get(keys::org_key(m.org_id))
                    .await?
                    .map(items::from_item)
                    .transpose()?;
                Ok::<_, StoreError>(org.filter(|o| o.status == OrgStatus::Active).map(|o| MyOrganization {
                    organization: o.into_domain(),
                    role: m.role,
                    joined_at: m.joined_at,
                }))
            })
            .buffer_unordered(ORGANIZATION_READS_AT_ONCE)
            .try_filter_map(|found| async move { Ok(found) })
            .try_collect()
            .await?;
        mine.sort_by_key(|m| (m.joined_at, m.organization.org_id));
        Ok(mine)
    }
}
