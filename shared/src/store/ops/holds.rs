//! A recovery's hold on sign-in, and how it always ends. A recovery holds
//! sign-in (`signInHeld` on the profile) until Cognito has the restored
//! address, every session is signed out and a new password is required; the
//! stream consumer does that and releases it. So that a hold whose stream
//! record failed for good is never forgotten, each recovery also puts a hold
//! item in the reconcile's partition, just before its transaction (the
//! largest recovery fills a transaction's 100 items already); the release
//! deletes it after. The reconcile lists the holds older than the stream's
//! share and finishes each one; a hold item whose recovery never committed,
//! or was released, superseded or erased since, is found stale and deleted.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{self, EntityType, ProfileItem, SignInHoldItem, attr};
use crate::store::keys;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

/// A recovery's hold on an account's sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The account held.
    pub user: UserId,
    /// The recovery's time, epoch seconds (the profile's `tokensValidAfter`).
    pub recovered_at: i64,
}

/// A hold as the profile shows it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldAccount {
    /// The hold.
    pub hold: Hold,
    /// The primary address: the one Cognito must sign the account in with.
    pub primary: EmailAddress,
}

impl Store {
    /// Puts the hold item of `user`'s recovery at `recovered_at`, before the
    /// recovery's transaction (an UpdateItem that writes it whole): the same
    /// key again on a retry.
    pub(super) async fn mark_hold(&self, user: &UserId, recovered_at: i64) -> Result<(), StoreError> {
        let reconcile: AttributeValue =
            serde_dynamo::to_attribute_value(EntityType::Reconcile).map_err(StoreError::Corrupt)?;
        let mut x = Expr::default();
        let update = Update::default()
            .set(x.eq(attr::ENTITY_TYPE, reconcile))
            .set(x.eq(attr::USER_ID, user))
            .set(x.eq(attr::TOKENS_VALID_AFTER, recovered_at));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::sign_in_hold_key(recovered_at, user)))
            .update_expression(update.text())
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        send_by_deadline!(&self.client, request)?;
        Ok(())
    }

    /// Up to `limit` hold items of recoveries before `before`, oldest first,
    /// after `after` (the last of the previous page). Strongly consistent: a
    /// hold released a moment ago is not listed.
    pub async fn held_recoveries(
        &self,
        before: Timestamp,
        after: Option<&Hold>,
        limit: u32,
    ) -> Result<Vec<Hold>, StoreError> {
        let (low, high) = keys::sign_in_holds_before(before.unix_seconds());
        let query = self
            .query(|x| {
                let sk = x.name(keys::SK);
                let low = x.value(keys::SK, low);
                let high = x.value(keys::SK, high);
                and([
                    x.eq(keys::PK, keys::sign_in_holds_pk()),
                    format!("{sk} BETWEEN {low} AND {high}"),
                ])
            })
            .consistent_read(true)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(after.map(|h| keys::sign_in_hold_key(h.recovered_at, &h.user)));
        let page = send_by_deadline!(&self.client, query)?;
        page.items
            .unwrap_or_default()
            .into_iter()
            .map(|item| {
                items::from_item::<SignInHoldItem>(item).map(|h| Hold {
                    user: h.user_id,
                    recovered_at: h.tokens_valid_after,
                })
            })
            .collect()
    }

    /// The recovery's hold on `user`'s sign-in as the profile shows it now
    /// (read strongly consistent); `None` when nothing holds it (released,
    /// never held, deleted or no profile).
    pub async fn sign_in_hold(&self, user: &UserId) -> Result<Option<HeldAccount>, StoreError> {
        let profile: Option<ProfileItem> = self
            .get(keys::profile_key(user))
            .await?
            .map(items::from_item)
            .transpose()?;
        Ok(profile.and_then(|p| {
            let held = p.sign_in_held && p.status != UserStatus::Deleted;
            match (held, p.tokens_valid_after, p.email) {
                (true, Some(recovered_at), Some(primary)) => Some(HeldAccount {
                    hold: Hold {
                        user: p.user_id,
                        recovered_at,
                    },
                    primary,
                }),
                _ => None,
            }
        }))
    }

    /// Ends `held`'s hold once Cognito has followed its recovery (the
    /// restored address set, every session signed out, a new password
    /// required): the hold lifted and Cognito's address recorded, on
    /// condition that the profile is still held by this recovery with this
    /// primary, so a later recovery's hold stays and a primary that moved
    /// meanwhile is applied first. `false` when the profile moved; the hold
    /// item goes once the hold is lifted.
    pub async fn finish_hold(&self, held: &HeldAccount) -> Result<bool, StoreError> {
        let hold = &held.hold;
        let lifted = self
            .update_if(keys::profile_key(&hold.user), |x| {
                let update = Update::default()
                    .set(x.eq(attr::COGNITO_EMAIL, &held.primary))
                    .remove(x.name(attr::SIGN_IN_HELD));
                let condition = and([
                    x.exists(attr::SIGN_IN_HELD),
                    x.eq(attr::TOKENS_VALID_AFTER, hold.recovered_at),
                    x.eq(attr::EMAIL, &held.primary),
                    x.ne(attr::STATUS, UserStatus::Deleted),
                ]);
                (update, condition)
            })
            .await?;
        if lifted {
            self.forget_hold(hold).await?;
        }
        Ok(lifted)
    }

    /// Deletes a hold's item: its hold lifted, or the item stale.
    pub async fn forget_hold(&self, hold: &Hold) -> Result<(), StoreError> {
        let request = self
            .client
            .delete_item()
            .table_name(self.table())
            .set_key(Some(keys::sign_in_hold_key(hold.recovered_at, &hold.user)));
        send_by_deadline!(&self.client, request)?;
        Ok(())
    }
}
