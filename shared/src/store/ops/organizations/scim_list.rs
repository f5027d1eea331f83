//! A directory's list of its members (GET /Users without a key to look up):
//! the organization's memberships its directory made or linked, in the
//! order of their ids, a page of them shown.

use aws_sdk_dynamodb::types::{AttributeValue, Select};

use crate::domain::{OrgId, UserId};
use crate::store::expr::and;
use crate::store::items::attr;
use crate::store::keys;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

use super::scim_users::ScimMember;

/// A page of a directory's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimPage {
    /// The members shown, at most the count asked for.
    pub members: Vec<ScimMember>,
    /// How many members the list holds, this page's and every other's.
    pub total: u64,
}

impl Store {
    /// The directory's members from the `start_index`th (1-based), at most
    /// `count`; with `active`, only members whose membership is (or is not)
    /// suspended. SCIM pages by index, not by a cursor, so each page walks
    /// the organization's memberships from the first, reading their ids
    /// alone, and counts them all for `totalResults`: about 350 bytes a
    /// member, so 1 MB (125 read units) for 3,000 members (docs/scim.md,
    /// "Pacing and cost"). Bounded by the invocation's deadline.
    pub async fn scim_list(
        &self,
        org: OrgId,
        start_index: u64,
        count: u32,
        active: Option<bool>,
    ) -> Result<ScimPage, StoreError> {
        let mut total = 0_u64;
        let mut wanted: Vec<UserId> = Vec::new();
        let mut start = None;
        loop {
            let (mut filter, mut projection) = (String::new(), String::new());
            let query = self
                .query(|x| {
                    projection = x.name(attr::USER_ID);
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
                .set_exclusive_start_key(start);
            let query = query.filter_expression(filter).projection_expression(projection);
            let out = send_by_deadline!(&self.client, query)?;
            for item in out.items.unwrap_or_default() {
                total += 1;
                if total >= start_index && wanted.len() < count as usize {
                    let user = match item.get(attr::USER_ID) {
                        Some(AttributeValue::S(id)) => {
                            UserId::parse(id).map_err(|_| StoreError::Inconsistent("a membership's user id"))?
                        }
                        _ => return Err(StoreError::Inconsistent("a membership without its user id")),
                    };
                    wanted.push(user);
                }
            }
            match out.last_evaluated_key {
                Some(key) if !key.is_empty() => start = Some(key),
                _ => break,
            }
        }
        let domains = self.verified_domains(org).await?;
        let members = self.scim_members(org, &wanted, &domains).await?;
        Ok(ScimPage { members, total })
    }
}
