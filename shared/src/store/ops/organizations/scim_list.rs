//! A directory's list of its members (GET /Users without a key to look up):
//! the organization's memberships its directory made or linked, in the
//! order of their ids, a page of them shown. A page costs what it returns:
//! `totalResults` is the organization's counts (one read, kept by every
//! write that adds, ends or suspends a directory's membership), and a page
//! starts where the page before it ended, remembered under its index (a
//! cursor, kept a day), so the sequential walks Okta and Entra ID make read
//! each member once. A page asked for out of order (no cursor at its index)
//! walks the ids from the first, as SCIM's index paging leaves no other way.

use aws_sdk_dynamodb::types::{AttributeValue, Select};

use crate::domain::{OrgId, Timestamp, UserId};
use crate::store::expr::{Update, and, or};
use crate::store::items::{self, OrgCountsItem, ScimCursorItem, attr};
use crate::store::keys;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

use super::counts::Walked;
use super::scim_users::ScimMember;

/// How long a page's cursor to the next is kept.
const CURSOR_SECONDS: i64 = 86_400;

/// A page of a directory's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimPage {
    /// The members shown, at most the count asked for.
    pub members: Vec<ScimMember>,
    /// How many members the list holds, this page's and every other's.
    pub total: u64,
    /// The membership items the page's queries evaluated: what its reads
    /// cost grows with (the members shown are then read one by one).
    pub evaluated: u64,
}

/// Which members a list shows: all the directory's, or the active or the
/// suspended alone; each has its own cursors.
fn view(active: Option<bool>) -> &'static str {
    match active {
        None => "all",
        Some(true) => "active",
        Some(false) => "suspended",
    }
}

impl Store {
    /// The directory's members from the `start_index`th (1-based), at most
    /// `count`; with `active`, only members whose membership is (or is not)
    /// suspended. Bounded by the invocation's deadline: each query is sent by it.
    pub async fn scim_list(
        &self,
        org: OrgId,
        start_index: u64,
        count: u32,
        active: Option<bool>,
        now: Timestamp,
    ) -> Result<ScimPage, StoreError> {
        let view = view(active);
        let read = self.org_counts(org).await?;
        let counts = if read.exact {
            read
        } else {
            self.count_whole(org, &read).await?
        };
        let total = match active {
            None => counts.directory_members,
            Some(true) => counts.directory_members - counts.suspended_members,
            Some(false) => counts.suspended_members,
        };
        let total = u64::try_from(total).unwrap_or(0);
        // Where the page starts: the first member, where the page before it
        // ended, or (asked out of order) after skipping from the first.
        let (mut start, mut skip) = match start_index {
            0 | 1 => (None, 0),
            _ => match self.cursor(org, view, start_index).await? {
                Some(after) => (Some(after), 0),
                None => (None, start_index - 1),
            },
        };
        let wanted_count = count as usize;
        let mut wanted: Vec<UserId> = Vec::new();
        let mut last: Option<String> = None;
        let mut evaluated = 0_u64;
        while wanted.len() < wanted_count {
            let (mut filter, mut projection) = (String::new(), String::new());
            let query = self
                .query(|x| {
                    projection = format!("{}, {}", x.name(attr::USER_ID), x.name(keys::SK));
                    let directory = x.exists(attr::DIRECTORY);
                    filter = match active {
                        None => directory,
                        Some(true) => and([directory, x.not_exists(attr::SUSPENDED)]),
                        Some(false) => and([directory, x.exists(attr::SUSPENDED)]),
                    };
                    and([
                        x.eq(keys::PK, keys::org_pk(org)),
                        x.begins_with(keys::SK, keys::member_sk_prefix()),
                    ])
                })
                .select(Select::SpecificAttributes)
                .set_exclusive_start_key(start.take());
            // Past the skip, no more items than the page still needs are evaluated.
            let query = if skip == 0 {
                let left = i32::try_from(wanted_count - wanted.len()).unwrap_or(i32::MAX);
                query.limit(left)
            } else {
                query
            };
            let query = query.filter_expression(filter).projection_expression(projection);
            let out = send_by_deadline!(&self.client, query)?;
            evaluated += u64::try_from(out.scanned_count).unwrap_or(0);
            for item in out.items.unwrap_or_default() {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                if wanted.len() == wanted_count {
                    break;
                }
                let user = match item.get(attr::USER_ID) {
                    Some(AttributeValue::S(id)) => {
                        UserId::parse(id).map_err(|_| StoreError::Inconsistent("a membership's user id"))?
                    }
                    _ => return Err(StoreError::Inconsistent("a membership without its user id")),
                };
                wanted.push(user);
                last = keys::key_string(&item, keys::SK).map(str::to_owned);
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break,
            }
        }
        if wanted.len() == wanted_count
            && let Some(after) = last
        {
            self.remember_cursor(org, view, start_index.max(1) + u64::from(count), after, now)
                .await?;
        }
        let domains = self.verified_domains(org).await?;
        let members = self.scim_members(org, &wanted, &domains).await?;
        Ok(ScimPage {
            members,
            total,
            evaluated,
        })
    }

    /// Where a list of `view` resumes at `start_index`: the key after which its page starts.
    async fn cursor(
        &self,
        org: OrgId,
        view: &str,
        start_index: u64,
    ) -> Result<Option<std::collections::HashMap<String, AttributeValue>>, StoreError> {
        let found = self.get(keys::scim_cursor_key(org, view, start_index)).await?;
        let cursor: Option<ScimCursorItem> = found.map(items::from_item).transpose()?;
        Ok(cursor.map(|c| {
            [
                (keys::PK.to_owned(), AttributeValue::S(keys::org_pk(org))),
                (keys::SK.to_owned(), AttributeValue::S(c.after)),
            ]
            .into_iter()
            .collect()
        }))
    }

    /// Remembers that a list of `view` resumes at `start_index` after the member `after`.
    async fn remember_cursor(
        &self,
        org: OrgId,
        view: &str,
        start_index: u64,
        after: String,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let ttl = now.unix_seconds() + CURSOR_SECONDS;
        self.update_if(keys::scim_cursor_key(org, view, start_index), |x| {
            let update = Update::default()
                .set(x.eq(attr::ENTITY_TYPE, "ScimCursor"))
                .set(x.eq(attr::AFTER, after))
                .set(x.eq(attr::TTL, ttl));
            // The latest page's word stands, whatever was there.
            (update, or(x.not_exists(keys::PK), x.exists(keys::PK)))
        })
        .await
        .map(|_| ())
    }

    /// The counts of an organization older than them, walked whole once and
    /// kept (exact) unless a write moved them during the walk.
    async fn count_whole(&self, org: OrgId, read: &OrgCountsItem) -> Result<OrgCountsItem, StoreError> {
        let mut walked = Walked::default();
        let mut start = None;
        loop {
            let mut projection = String::new();
            let query = self
                .query(|x| {
                    projection = format!("{}, {}", x.name(attr::DIRECTORY), x.name(attr::SUSPENDED));
                    and([
                        x.eq(keys::PK, keys::org_pk(org)),
                        x.begins_with(keys::SK, keys::member_sk_prefix()),
                    ])
                })
                .consistent_read(true)
                .select(Select::SpecificAttributes)
                .set_exclusive_start_key(start.take());
            let out = send_by_deadline!(&self.client, query.projection_expression(projection))?;
            for item in out.items.unwrap_or_default() {
                walked.members += 1;
                if item.contains_key(attr::DIRECTORY) {
                    walked.directory += 1;
                    walked.suspended +=
                        i64::from(matches!(item.get(attr::SUSPENDED), Some(AttributeValue::Bool(true))));
                }
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break,
            }
        }
        // Moved meanwhile: this answer uses the walk, and a later list counts again.
        self.settle_counts(org, read, walked).await?;
        Ok(OrgCountsItem {
            members: walked.members,
            directory_members: walked.directory,
            suspended_members: walked.suspended,
            version: read.version,
            exact: true,
        })
    }
}
