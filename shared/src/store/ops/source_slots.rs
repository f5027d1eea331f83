//! A network source's guess caps, taken before the guess (recovery links,
//! SCIM tokens): a slot is one conditional append of the request's time to
//! the source's counter, whose condition is the room left
//! (`size(events) < cap`), so DynamoDB orders concurrent requests and no more
//! than the cap get a slot in a rolling day, with no version to lose a race
//! on. A list full only of events older than the window is trimmed (pinned
//! to its version) and the slot taken again. The legacy password's slots
//! (`migration`) work the same way on the hash's own item.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

use crate::domain::Timestamp;
use crate::store::expr::{Expr, Update, or};
use crate::store::items::{self, EntityType, LimitItem, attr};
use crate::store::keys::Item;
use crate::store::limits::{self, WINDOW_SECONDS};
use crate::store::plan::Rejection;
use crate::store::retry::{self, refused_or_raced, retrying, send_by_deadline};
use crate::store::{Store, StoreError};

/// What [`Store::take_source_slot`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceSlot {
    /// The request may be judged: its slot, counted until given back.
    Taken(SourceSlotAt),
    /// Every slot of the window is taken: seconds until one frees.
    Full(u64),
}

/// A slot taken on a source's counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SourceSlotAt {
    /// Where the append put it in the list (it may have moved since).
    at: usize,
    /// Its time, epoch seconds: what the list holds.
    time: i64,
}

/// One append's outcome.
enum Appended {
    /// Taken, at this place in the list.
    Taken(usize),
    /// The condition failed: the counter as it was.
    Refused(Option<LimitItem>),
    /// A transaction held the item: try again.
    Conflict,
}

impl Store {
    /// Takes a slot on the counter at `key` under `cap` a rolling day,
    /// before the request it admits is judged. A counter full as read is
    /// refused with no write at all, so a flood past the cap costs one read
    /// a request.
    pub(crate) async fn take_source_slot(&self, key: Item, cap: u32, now: Timestamp) -> Result<SourceSlot, StoreError> {
        let seen: Option<LimitItem> = self.get(key.clone()).await?.map(items::from_item).transpose()?;
        if let Err(retry_after) = limits::admit(seen.as_ref(), cap, now) {
            return Ok(SourceSlot::Full(retry_after));
        }
        let deadline = crate::deadline::deadline_from_now();
        let mut attempt = 0u32;
        loop {
            let old = match self.append_source_slot(&key, cap, now).await? {
                Appended::Taken(at) => {
                    return Ok(SourceSlot::Taken(SourceSlotAt {
                        at,
                        time: now.unix_seconds(),
                    }));
                }
                Appended::Refused(old) => old,
                Appended::Conflict => None,
            };
            if let Some(old) = old {
                if let Err(retry_after) = limits::admit(Some(&old), cap, now) {
                    return Ok(SourceSlot::Full(retry_after));
                }
                // Full only of events older than the window: drop them. A
                // trim lost to another writer changed the list too.
                let recent = limits::recent(Some(&old), now);
                self.rewrite_source_slots(&key, old.version, &recent).await?;
            }
            attempt += 1;
            let pause = retry::backoff(attempt);
            if !retry::may_retry(attempt, pause, deadline) {
                return Err(StoreError::Contended.failed());
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// One conditional append of `now` to the counter: taken (at its place in
    /// the list), or refused with the counter as it was. A counter that does
    /// not exist yet is made whole by the same write.
    async fn append_source_slot(&self, key: &Item, cap: u32, now: Timestamp) -> Result<Appended, StoreError> {
        let mut x = Expr::default();
        let list = x.name(attr::EVENTS);
        let empty = x.value(attr::EVENTS, AttributeValue::L(Vec::new()));
        let slot = x.value(
            attr::EVENTS,
            AttributeValue::L(vec![AttributeValue::N(now.unix_seconds().to_string())]),
        );
        let rate_limit: AttributeValue =
            serde_dynamo::to_attribute_value(EntityType::RateLimit).map_err(StoreError::Corrupt)?;
        let update = Update::default()
            .set(format!("{list} = list_append(if_not_exists({list}, {empty}), {slot})"))
            .set(x.eq(attr::ENTITY_TYPE, rate_limit))
            .set(x.add_from_zero(attr::VERSION, 1))
            // An hour past the window: by then nothing in it counts any more.
            .set(x.eq(attr::TTL, now.unix_seconds() + WINDOW_SECONDS + 3_600));
        let room = or(x.not_exists(attr::EVENTS), x.size_lt(attr::EVENTS, cap));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(key.clone()))
            .update_expression(update.text())
            .condition_expression(room)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .return_values(ReturnValue::UpdatedNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        match send_by_deadline!(&self.client, request) {
            Ok(out) => {
                let len = out
                    .attributes
                    .as_ref()
                    .and_then(|a| a.get(attr::EVENTS))
                    .and_then(|list| list.as_l().ok())
                    .map_or(0, Vec::len);
                Ok(Appended::Taken(len.saturating_sub(1)))
            }
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => Ok(Appended::Refused(
                    failed.item().cloned().map(items::from_item).transpose()?,
                )),
                Some(UpdateItemError::TransactionConflictException(_)) => Ok(Appended::Conflict),
                _ => Err(err.into()),
            },
        }
    }

    /// Gives back a slot [`Store::take_source_slot`] took, once the request
    /// turned out to be no wrong guess (the credential was right, or the
    /// judgment failed on our side). One UpdateItem removes it where it was
    /// put, on condition that it is still there; when the list moved
    /// meanwhile (a trim, another slot given back), it is found again and
    /// removed pinned to the version read. Events of the same second are
    /// alike: removing any one of them gives this one back.
    pub(crate) async fn give_back_source_slot(&self, key: Item, slot: SourceSlotAt) -> Result<(), StoreError> {
        let mut x = Expr::default();
        let list = x.name(attr::EVENTS);
        let time = x.value(attr::EVENTS, slot.time);
        let update = Update::default()
            .remove(format!("{list}[{}]", slot.at))
            .set(x.add(attr::VERSION, 1));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(key.clone()))
            .update_expression(update.text())
            .condition_expression(format!("{list}[{}] = {time}", slot.at))
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        match send_by_deadline!(&self.client, request) {
            Ok(_) => return Ok(()),
            Err(err) if refused_or_raced(&err) => {}
            Err(err) => return Err(err.into()),
        }
        retrying!({
            let Some(item) = self.get(key.clone()).await? else {
                return Ok(());
            };
            let seen: LimitItem = items::from_item(item)?;
            let Some(at) = seen.events.iter().position(|t| *t == slot.time) else {
                return Ok(());
            };
            let mut events = seen.events;
            events.remove(at);
            if self.rewrite_source_slots(&key, seen.version, &events).await? {
                Ok(())
            } else {
                Err(Rejection::Retry)
            }
        })
    }

    /// Writes the counter's events as `events`, pinned to the version read:
    /// `false` when another writer moved it first.
    async fn rewrite_source_slots(&self, key: &Item, version: u64, events: &[i64]) -> Result<bool, StoreError> {
        let list = AttributeValue::L(events.iter().map(|t| AttributeValue::N(t.to_string())).collect());
        self.update_if(key.clone(), |x| {
            let update = Update::default()
                .set(x.eq(attr::EVENTS, list))
                .set(x.add(attr::VERSION, 1));
            (update, x.eq(attr::VERSION, version))
        })
        .await
    }
}
