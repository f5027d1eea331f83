//! SCIM tokens: the bearer credentials an organization's identity provider
//! provisions with. Owners and admins make, list and revoke them; each is
//! counted on the organization item (bounded), stored as a keyed hash, and
//! revoked by deleting it, so the next request with it finds nothing. A
//! request proves itself by [`Store::authenticate_scim`]: the token's item
//! and its organization, read strongly consistent; tokens that prove nothing
//! are counted against their network source.

use crate::config::{MAX_SCIM_TOKENS_PER_ORGANIZATION, SCIM_GUESSES_PER_SOURCE};
use crate::domain::{Actor, OrgId, Power, ScimTokenId, ScimTokenInfo, ScimTokenName, Timestamp};
use crate::scim_token::ScimToken;
use crate::store::expr::{Update, and, or};
use crate::store::items::{self, EntityType, OrgStatus, OrganizationItem, ScimTokenItem, attr};
use crate::store::keys::{self, Item};
use crate::store::ops::source_slots::SourceSlot;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{retrying, send_by_deadline};
use crate::store::{Store, StoreError};

use super::powers::{allowed, push_actor};

/// How often a token's last use is written: at most once an hour, so a
/// sync's thousands of requests cost one write, not one each.
const LAST_USE_RESOLUTION_SECONDS: i64 = 3_600;

/// A token just made: what its owners see, and the token, shown this once.
#[derive(Debug)]
pub struct MadeScimToken {
    /// The token as listed.
    pub info: ScimTokenInfo,
    /// The token itself: the table keeps only its keyed hash.
    pub token: ScimToken,
}

/// Who a SCIM request acts for: the organization its token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScimClient {
    /// The organization the request acts on, and only it.
    pub org: OrgId,
    /// The token that proved the request, for the audit trail.
    pub token: ScimTokenId,
}

impl Store {
    /// Makes a SCIM token named `name` for `org` (owners and admins).
    pub async fn create_scim_token(
        &self,
        actor: &Actor,
        org: OrgId,
        name: &ScimTokenName,
        now: Timestamp,
    ) -> Result<MadeScimToken, StoreError> {
        let key = self.key()?;
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let id = ScimTokenId::new();
            let token = ScimToken::generate(org, id).map_err(|_| StoreError::NoRandomSource)?;
            let item = ScimTokenItem {
                entity_type: EntityType::ScimToken,
                org_id: org,
                token_id: id,
                name: name.clone(),
                token_hash: key.scim_token_hash(org, id, token.secret()),
                created_by: actor.user().clone(),
                created_at: now,
                last_used_at: None,
            };
            let plan = create_plan(self.table(), &actor, &item)?;
            self.transact(&plan).await?;
            Ok(MadeScimToken {
                info: item.into_domain(),
                token,
            })
        })
    }

    /// `org`'s live SCIM tokens (owners and admins), oldest first: at most
    /// `MAX_SCIM_TOKENS_PER_ORGANIZATION`, one page.
    pub async fn list_scim_tokens(&self, actor: &Actor, org: OrgId) -> Result<Vec<ScimTokenInfo>, StoreError> {
        let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
        allowed(&actor, mine.as_ref(), Power::Manage)?;
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::org_pk(org)),
                    x.begins_with(keys::SK, keys::scim_token_sk_prefix()),
                ])
            })
            .consistent_read(true);
        send_by_deadline!(&self.client, query)?
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| items::from_item::<ScimTokenItem>(item).map(ScimTokenItem::into_domain))
            .collect()
    }

    /// Revokes `org`'s SCIM token `id` (owners and admins): the next request
    /// with it is refused.
    pub async fn revoke_scim_token(&self, actor: &Actor, org: OrgId, id: ScimTokenId) -> Result<(), StoreError> {
        retrying!({
            let (_, mine, actor) = self.org_and_mine(org, actor, Power::Manage).await?;
            allowed(&actor, mine.as_ref(), Power::Manage)?;
            let plan = revoke_plan(self.table(), &actor, org, id)?;
            self.transact(&plan).await?;
            Ok(())
        })
    }

    /// Proves a SCIM request by its `Authorization` header, from
    /// `source_ip`: the organization its token acts on. No header is
    /// [`StoreError::ScimTokenInvalid`], uncounted; a header that proves
    /// nothing (malformed, revoked, never made, its organization deleted)
    /// is [`StoreError::ScimTokenInvalid`] too, and is counted against its
    /// source; past `SCIM_GUESSES_PER_SOURCE` a day such a request is
    /// [`StoreError::TooManyScimAttempts`] instead. A valid token is never
    /// refused by its source's count: identity providers share egress
    /// addresses between tenants. So the token is proven first, and a
    /// refusal takes its slot on the source's counter, in one conditional
    /// write, before it is answered: concurrent refusals from one source get
    /// at most the cap's number of 401s a day, the rest 429.
    pub async fn authenticate_scim(
        &self,
        source_ip: &str,
        authorization: Option<&str>,
        now: Timestamp,
    ) -> Result<ScimClient, StoreError> {
        // No credential at all guesses nothing: refused without a read or a
        // count (a client without its token, a probe). Any credential that
        // proves nothing is counted below.
        let Some(authorization) = authorization else {
            return Err(StoreError::ScimTokenInvalid);
        };
        let key = self.key()?;
        let token = ScimToken::from_authorization(authorization);
        if let Some(token) = &token {
            let (item, org) = tokio::join!(
                Box::pin(self.get(keys::scim_token_key(token.org(), token.id()))),
                Box::pin(self.get(keys::org_key(token.org()))),
            );
            let item: Option<ScimTokenItem> = item?.map(items::from_item).transpose()?;
            let org: Option<OrganizationItem> = org?.map(items::from_item).transpose()?;
            let proven = item
                .as_ref()
                .filter(|item| key.scim_token_matches(token.org(), token.id(), token.secret(), &item.token_hash));
            if let (
                Some(item),
                Some(OrganizationItem {
                    status: OrgStatus::Active,
                    ..
                }),
            ) = (proven, org)
            {
                if item
                    .last_used_at
                    .is_none_or(|t| t.plus_seconds(LAST_USE_RESOLUTION_SECONDS) <= now)
                {
                    self.note_scim_use(token.org(), token.id(), now).await?;
                }
                return Ok(ScimClient {
                    org: token.org(),
                    token: token.id(),
                });
            }
        }
        // A refusal: its slot before its answer, so concurrent ones never pass the cap.
        let counter = keys::scim_guesses_key(&key.source_hash(source_ip));
        match self.take_source_slot(counter, SCIM_GUESSES_PER_SOURCE, now).await? {
            SourceSlot::Taken(_) => Err(StoreError::ScimTokenInvalid),
            SourceSlot::Full(retry_after_secs) => Err(StoreError::TooManyScimAttempts { retry_after_secs }),
        }
    }

    /// Writes the token's last use, unless another request did this hour,
    /// or it was revoked since it was read (nothing to note then).
    async fn note_scim_use(&self, org: OrgId, id: ScimTokenId, now: Timestamp) -> Result<(), StoreError> {
        // Written already this hour: nothing to do, and not a failure.
        self.update_if(keys::scim_token_key(org, id), |x| {
            let update = Update::default().set(x.eq(attr::LAST_USED_AT, now));
            let condition = and([
                x.exists(keys::PK),
                or(
                    x.not_exists(attr::LAST_USED_AT),
                    x.lt(attr::LAST_USED_AT, now.plus_seconds(-LAST_USE_RESOLUTION_SECONDS + 1)),
                ),
            ]);
            (update, condition)
        })
        .await
        .map(|_| ())
    }
}

/// The making of a token: the actor's powers, the organization active with
/// room for one more, and the token put new.
fn create_plan(table: &str, actor: &Actor, item: &ScimTokenItem) -> Result<TxPlan, StoreError> {
    let org = item.org_id;
    let mut plan = TxPlan::new();
    push_actor(&mut plan, table, org, actor, Power::Manage, false, false)?;
    push_count(&mut plan, table, org, 1)?;
    let stored = items::to_item(keys::scim_token_key(org, item.token_id), item)?;
    // A fresh random id: a collision is a retry, never a refusal.
    plan.push(plan::put(table, stored, |x| x.not_exists(keys::PK))?, |_| {
        Ok(Rejection::Retry)
    });
    Ok(plan)
}

/// The revocation: the actor's powers, the token deleted while it exists,
/// and one less on the organization's count.
fn revoke_plan(table: &str, actor: &Actor, org: OrgId, id: ScimTokenId) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    push_actor(&mut plan, table, org, actor, Power::Manage, false, false)?;
    let delete = plan::delete(table, keys::scim_token_key(org, id), |x| x.exists(keys::PK))?;
    plan.push(delete, |old| {
        Ok(match old {
            None => Rejection::Failed(StoreError::ScimTokenNotFound),
            Some(_) => Rejection::Retry,
        })
    });
    push_count(&mut plan, table, org, -1)?;
    Ok(plan)
}

/// A failed count of tokens: the organization gone or deleting, or at its maximum.
fn read_count(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<OrganizationItem>(old)? {
        None => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(o) if o.status == OrgStatus::Deleting => Rejection::Failed(StoreError::OrganizationNotFound),
        Some(o) if o.scim_tokens >= MAX_SCIM_TOKENS_PER_ORGANIZATION => {
            Rejection::Failed(StoreError::ScimTokenLimitReached)
        }
        Some(_) => Rejection::Retry,
    })
}

/// The organization's count of tokens moves by `by`: one more on condition
/// of room and an active organization, one less while it has any.
fn push_count(plan: &mut TxPlan, table: &str, org: OrgId, by: i64) -> Result<(), StoreError> {
    let update = plan::update(table, keys::org_key(org), |x| {
        let update = Update::default().set(x.add_from_zero(attr::SCIM_TOKENS, by));
        let condition = if by > 0 {
            and([
                x.eq(attr::STATUS, OrgStatus::Active),
                or(
                    x.not_exists(attr::SCIM_TOKENS),
                    x.lt(attr::SCIM_TOKENS, MAX_SCIM_TOKENS_PER_ORGANIZATION),
                ),
            ])
        } else {
            x.gt(attr::SCIM_TOKENS, 0u32)
        };
        (update, condition)
    })?;
    plan.push(update, read_count);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserId;
    use crate::store::plan::tests::assert_well_formed;

    fn token_item(org: OrgId) -> ScimTokenItem {
        ScimTokenItem {
            entity_type: EntityType::ScimToken,
            org_id: org,
            token_id: ScimTokenId::new(),
            name: ScimTokenName::parse("Okta").unwrap(),
            token_hash: "h".into(),
            created_by: UserId::parse("admin").unwrap(),
            created_at: crate::store::ops::fixtures::now(),
            last_used_at: None,
        }
    }

    #[test]
    fn making_a_token_names_the_actor_the_count_and_the_token() {
        let org = OrgId::new();
        let actor = Actor::Member(UserId::parse("admin").unwrap());
        let plan = create_plan("t", &actor, &token_item(org)).unwrap();
        assert_well_formed(&plan);
        // The actor's member item and profile, the count, the token.
        assert_eq!(plan.items().len(), 4);
        assert!(matches!(
            plan.read(2, None),
            Rejection::Failed(StoreError::OrganizationNotFound)
        ));
        assert!(matches!(plan.read(3, None), Rejection::Retry));
    }

    #[test]
    fn a_full_or_deleting_organization_refuses_one_more() {
        let mut org = crate::store::ops::fixtures::organization(1);
        org.scim_tokens = MAX_SCIM_TOKENS_PER_ORGANIZATION;
        let stored = items::to_item(keys::org_key(org.org_id), &org).unwrap();
        assert!(matches!(
            read_count(Some(&stored)),
            Ok(Rejection::Failed(StoreError::ScimTokenLimitReached))
        ));
        org.status = OrgStatus::Deleting;
        let stored = items::to_item(keys::org_key(org.org_id), &org).unwrap();
        assert!(matches!(
            read_count(Some(&stored)),
            Ok(Rejection::Failed(StoreError::OrganizationNotFound))
        ));
    }

    #[test]
    fn revoking_a_token_gone_is_not_found() {
        let actor = Actor::DeploymentAdmin(UserId::parse("admin").unwrap());
        let plan = revoke_plan("t", &actor, OrgId::new(), ScimTokenId::new()).unwrap();
        assert_well_formed(&plan);
        // The admin's profile, the token, the count.
        assert_eq!(plan.items().len(), 3);
        assert!(matches!(
            plan.read(1, None),
            Rejection::Failed(StoreError::ScimTokenNotFound)
        ));
    }
}
