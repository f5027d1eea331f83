//! Recovery links: the token a notice carries (issued for a switch, its keyed
//! hash recorded on it), a link followed from a network source (refused
//! links counted against it), and the erasure of a deleted user's switches.
//! The recovery itself, one transaction, is `recovery`'s.

use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use crate::domain::{Timestamp, UserId};
use crate::metrics::{self, Metric};
use crate::recovery::RecoveryToken;
use crate::store::expr::{Expr, and};
use crate::store::items::{self, PrimaryChangeItem, attr};
use crate::store::keys;
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

use super::recovery::{Recovered, own_claim};
use super::source_slots::SourceSlot;

/// The most recovery tokens one switch holds: a stream record redelivered
/// that often mails the notice again without a link.
pub const MAX_TOKENS_PER_CHANGE: u32 = 5;

/// Recovery links that undid nothing, from one network source in a rolling
/// day, before it is refused: a token has 256 bits, so this bounds the cost
/// of a flood, not the odds of a guess.
pub const RECOVERY_GUESSES_PER_SOURCE: u32 = 20;

impl Store {
    /// Follows a recovery link from `source_ip`. A link that undoes nothing is
    /// [`StoreError::RecoveryLinkInvalid`], and is counted against its source.
    /// The source's slot is taken before the link is judged, in one
    /// conditional write (`source_slots`), so concurrent guesses from one
    /// source are judged at most [`RECOVERY_GUESSES_PER_SOURCE`] times a day;
    /// past it the source is refused before the account is read. A link that
    /// undoes its switch gives its slot back, as a matching legacy password
    /// does: it was no guess, and it works once, so it buys no more.
    pub async fn follow_recovery_link(
        &self,
        source_ip: &str,
        token: &RecoveryToken,
        now: Timestamp,
    ) -> Result<Recovered, StoreError> {
        let key = self.key()?;
        let counter = keys::recovery_guesses_key(&key.source_hash(source_ip));
        let slot = match self
            .take_source_slot(counter.clone(), RECOVERY_GUESSES_PER_SOURCE, now)
            .await?
        {
            SourceSlot::Taken(slot) => slot,
            SourceSlot::Full(retry_after_secs) => {
                return Err(StoreError::TooManyRecoveryAttempts { retry_after_secs });
            }
        };
        let hash = key.recovery_hash(token.user(), token.version(), token.secret());
        let outcome = self.recover(token.user(), token.version(), &hash, now).await;
        if matches!(outcome, Err(StoreError::RecoveryLinkInvalid)) {
            // The slot stays taken: it counts this refusal.
            metrics::count(Metric::RecoveryLinksRefused);
        } else if let Err(err) = self.give_back_source_slot(counter, slot).await {
            // Counted until the window moves on: the answer stands all the same.
            tracing::warn!(cause = %crate::error::chain(&err), "a recovery link's slot was not given back");
        }
        outcome
    }

    /// A fresh recovery token for the switch of `user` that wrote `version`,
    /// its keyed hash recorded on the switch, for the notice to mail; with
    /// until when it can be undone. `None` when the switch takes no more:
    /// gone (recovered, erased, or older than recovery links), past its
    /// window, or holding [`MAX_TOKENS_PER_CHANGE`] already; the notice then
    /// goes without a link.
    pub async fn issue_recovery_token(
        &self,
        user: &UserId,
        version: u64,
        now: Timestamp,
    ) -> Result<Option<(RecoveryToken, Timestamp)>, StoreError> {
        let token = RecoveryToken::generate(user, version).map_err(|_| StoreError::NoRandomSource)?;
        let hash = self.key()?.recovery_hash(user, version, token.secret());
        Ok(self
            .add_recovery_token(user, version, &hash, now)
            .await?
            .map(|until| (token, until)))
    }

    async fn add_recovery_token(
        &self,
        user: &UserId,
        version: u64,
        token_hash: &str,
        now: Timestamp,
    ) -> Result<Option<Timestamp>, StoreError> {
        let mut x = Expr::default();
        let hashes = x.name(attr::TOKEN_HASHES);
        let hash = x.value(
            attr::TOKEN_HASHES,
            AttributeValue::L(vec![AttributeValue::S(token_hash.to_owned())]),
        );
        let none = x.value(attr::TOKEN_HASHES, AttributeValue::L(Vec::new()));
        let update = format!("SET {hashes} = list_append(if_not_exists({hashes}, {none}), {hash})");
        let room = x.size_lt(attr::TOKEN_HASHES, MAX_TOKENS_PER_CHANGE);
        let condition = and([
            x.exists(keys::PK),
            x.gt(attr::RECOVERABLE_UNTIL, now),
            format!("(attribute_not_exists({hashes}) OR {room})"),
        ]);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::change_key(user, version)))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .return_values(ReturnValue::AllNew);
        match send_by_deadline!(&self.client, request) {
            Ok(out) => {
                let change: PrimaryChangeItem = items::from_item(out.attributes.unwrap_or_default())?;
                Ok(Some(change.recoverable_until))
            }
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(UpdateItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(None)
            }
            Err(err) => Err(err.into()),
        }
    }
}

impl Store {
    /// After a user's erasure: deletes the switches kept for their recovery,
    /// and the claims that only reserve an address removed from them (a
    /// reservation since taken back, or taken by another user after it
    /// lapsed, is left as it is). Idempotent: the stream applies it again
    /// after a failure, and each call is cut to the invocation's deadline.
    pub async fn erase_switches(&self, user: &UserId) -> Result<usize, StoreError> {
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::user_pk(user)),
                    x.begins_with(keys::SK, keys::change_sk_prefix()),
                ])
            })
            .consistent_read(true);
        let switches: Vec<PrimaryChangeItem> = crate::store::query_all(&self.client, query)
            .await?
            .into_iter()
            .map(items::from_item)
            .collect::<Result<_, _>>()?;
        for switch in &switches {
            let mut x = Expr::default();
            let reservation = and([own_claim(&mut x, &switch.former), x.not_exists(attr::EXPIRES_AT)]);
            let reservation = and([reservation, x.exists(attr::RESERVED_UNTIL)]);
            let release = self
                .client
                .delete_item()
                .table_name(self.table())
                .set_key(Some(keys::claim_key(&switch.former.canonical())))
                .condition_expression(reservation)
                .set_expression_attribute_names(x.names_or_none())
                .set_expression_attribute_values(x.values_or_none());
            match send_by_deadline!(&self.client, release) {
                Ok(_) => {}
                Err(err)
                    if matches!(
                        err.as_service_error(),
                        Some(DeleteItemError::ConditionalCheckFailedException(_))
                    ) => {}
                Err(err) => return Err(err.into()),
            }
            let forget = self
                .client
                .delete_item()
                .table_name(self.table())
                .set_key(Some(keys::change_key(user, switch.version)));
            send_by_deadline!(&self.client, forget)?;
        }
        Ok(switches.len())
    }
}
