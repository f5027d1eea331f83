//! A write as a plan: the conditioned items of one TransactWriteItems, each
//! pushed together with the reading of its failure, so a condition and what its
//! failure means are written side by side by the operation that owns them
//! (`ops`). Pure: `Store::transact` sends a plan and hands the cancellation back
//! here, where the reasons are read through the plan's own readings and the item
//! as it was (ReturnValuesOnConditionCheckFailure = ALL_OLD), so no extra read is
//! needed to tell, say, a suspended account from a full one.

use std::fmt;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    CancellationReason, ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use serde::de::DeserializeOwned;

use crate::metrics::{self, Metric};
use crate::store::keys::Item;

use super::error::{StoreError, THROTTLING_CODES};
use super::expr::{self, Expr};
use super::items::{self, ClaimItem, Counter, LimitItem};

/// Why a write did not happen, for the operation to act on.
#[derive(Debug)]
pub(crate) enum Rejection {
    /// A final answer for the caller.
    Failed(StoreError),
    /// A final answer, but the least specific one: given only when no other
    /// failed item of the transaction has an answer.
    Otherwise(StoreError),
    /// Something read before the write changed in between: read again and retry.
    Retry,
    /// The cancellation showed what the next attempt needs (a claim to take
    /// over, a counter as it is): try again, having lost no race.
    Again,
    /// The profile of a user being created exists already.
    UserExists,
    /// Another user's unverified claim holds the address and may be taken over.
    TakeOver(ClaimItem),
    /// The idempotency token is in use by a request with other parameters, or by
    /// one still in flight: retry without it, the conditions keep it idempotent.
    TokenInUse,
    /// Rate-limit counters not as seen: here they are now; decide again from them.
    /// Every counter of the transaction that moved, so one retry learns them all.
    LimitMoved(Vec<(Counter, Option<LimitItem>)>),
}

impl From<StoreError> for Rejection {
    fn from(err: StoreError) -> Self {
        Self::Failed(err)
    }
}

/// What a failed condition on one item means, given the item as it was.
type Reading = Box<dyn Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync>;

/// The most items DynamoDB takes in one TransactWriteItems.
pub(crate) const MAX_ITEMS: usize = 100;

/// One TransactWriteItems: its items and, position by position, their readings.
pub(crate) struct TxPlan {
    items: Vec<TransactWriteItem>,
    readings: Vec<Reading>,
    /// Idempotency token: DynamoDB runs a repeated request with it only once.
    pub client_request_token: Option<String>,
}

impl fmt::Debug for TxPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxPlan")
            .field("items", &self.items)
            .field("client_request_token", &self.client_request_token)
            .finish_non_exhaustive()
    }
}

impl TxPlan {
    pub(crate) fn new() -> Self {
        Self {
            items: Vec::new(),
            readings: Vec::new(),
            client_request_token: None,
        }
    }

    /// Adds an item and how a failure of its condition reads.
    pub(crate) fn push(
        &mut self,
        item: TransactWriteItem,
        reading: impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync + 'static,
    ) {
        self.items.push(item);
        self.readings.push(Box::new(reading));
    }

    pub(crate) fn items(&self) -> &[TransactWriteItem] {
        &self.items
    }

    /// What a failed condition on item `index` means, given the item as it was.
    pub(crate) fn read(&self, index: usize, old: Option<&Item>) -> Rejection {
        match self.readings.get(index).map(|read| read(old)) {
            Some(Ok(rejection)) => rejection,
            Some(Err(err)) => Rejection::Failed(err),
            None => Rejection::Failed(StoreError::UnexpectedCancellation(format!("no item {index}"))),
        }
    }

    /// Why the transaction of this plan failed.
    pub(crate) fn read_failure(&self, err: SdkError<TransactWriteItemsError, HttpResponse>) -> Rejection {
        let canceled = match err.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(canceled)) => canceled,
            Some(
                TransactWriteItemsError::IdempotentParameterMismatchException(_)
                | TransactWriteItemsError::TransactionInProgressException(_),
            ) => return Rejection::TokenInUse,
            _ => return Rejection::Failed(err.into()),
        };
        let reasons = canceled.cancellation_reasons();
        if let Some(rejection) = self.read_conditions(reasons) {
            return match rejection {
                Rejection::Failed(err) => Rejection::Failed(refused(err)),
                other => other,
            };
        }
        let codes: Vec<&str> = reasons.iter().filter_map(|r| r.code()).collect();
        if codes.contains(&"TransactionConflict") {
            Rejection::Retry
        } else if codes.iter().any(|c| THROTTLING_CODES.contains(c)) {
            Rejection::Failed(StoreError::Unavailable(Box::new(err.into())).failed())
        } else {
            Rejection::Failed(StoreError::UnexpectedCancellation(codes.join(",")).failed())
        }
    }

    /// The first item whose condition failed decides, unless its answer is the
    /// least specific kind and another failed item has one.
    fn read_conditions(&self, reasons: &[CancellationReason]) -> Option<Rejection> {
        let mut rejections: Vec<Rejection> = reasons
            .iter()
            .take(self.items.len())
            .enumerate()
            .filter(|(_, reason)| reason.code() == Some("ConditionalCheckFailed"))
            .map(|(index, reason)| self.read(index, reason.item()))
            .collect();
        if let Some(pos) = rejections.iter().position(|r| !matches!(r, Rejection::Otherwise(_))) {
            let mut chosen = rejections.swap_remove(pos);
            if let Rejection::LimitMoved(moved) = &mut chosen {
                for other in rejections {
                    if let Rejection::LimitMoved(more) = other {
                        moved.extend(more);
                    }
                }
            }
            return Some(chosen);
        }
        match rejections.into_iter().next()? {
            Rejection::Otherwise(err) => Some(Rejection::Failed(err)),
            other => Some(other),
        }
    }
}

/// A write refused by its conditions, answered as `err`: counted here, for
/// transactions and single-item updates alike. A failure a reading gives that
/// is DynamoDB's, not the data's, counts as its kind instead.
pub(crate) fn refused(err: StoreError) -> StoreError {
    if err.dynamodb_metric().is_some() {
        return err.failed();
    }
    metrics::count(Metric::ConditionalCheckFailures);
    err
}

/// The item a failed condition returned, as `T`.
pub(crate) fn old<T: DeserializeOwned>(old: Option<&Item>) -> Result<Option<T>, StoreError> {
    old.map(|item| items::from_item(item.clone())).transpose()
}

/// Finishes a conditioned write builder: condition, names, values, and ALL_OLD
/// on failure so its reading sees the item as it was.
macro_rules! conditioned {
    ($builder:expr, $condition:expr, $expr:expr) => {
        $builder
            .condition_expression($condition)
            .set_expression_attribute_names($expr.names_or_none())
            .set_expression_attribute_values($expr.values_or_none())
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()?
    };
}

/// Put, Delete and ConditionCheck differ only in their builder: each takes its
/// condition from `condition`, written into a fresh `Expr`.
macro_rules! keyed_write {
    ($(#[$doc:meta])* $name:ident, $builder:ident, $set:ident, $item:ident) => {
        $(#[$doc])*
        pub(crate) fn $name(
            table: &str,
            item: Item,
            condition: impl FnOnce(&mut Expr) -> String,
        ) -> Result<TransactWriteItem, StoreError> {
            let mut x = Expr::default();
            let condition = condition(&mut x);
            let write = conditioned!($builder::builder().table_name(table).$set(Some(item)), condition, x);
            Ok(TransactWriteItem::builder().$item(write).build())
        }
    };
}

keyed_write!(
    /// A Put of `item` under the condition `condition` writes.
    put, Put, set_item, put
);
keyed_write!(
    /// A Delete of the item at the key `item` under the condition `condition` writes.
    delete, Delete, set_key, delete
);
keyed_write!(
    /// A ConditionCheck of the item at the key `item`.
    check, ConditionCheck, set_key, condition_check
);

/// An Update of the item at `key`: `write` gives the update and its condition.
pub(crate) fn update(
    table: &str,
    key: Item,
    write: impl FnOnce(&mut Expr) -> (expr::Update, String),
) -> Result<TransactWriteItem, StoreError> {
    let mut x = Expr::default();
    let (update, condition) = write(&mut x);
    let builder = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression(update.text());
    let update = conditioned!(builder, condition, x);
    Ok(TransactWriteItem::builder().update(update).build())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeSet;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;

    /// Asserts that every item of `plan` defines exactly the `#names` and
    /// `:values` its expressions use, and that each has a reading.
    pub(crate) fn assert_well_formed(plan: &TxPlan) {
        assert_eq!(plan.items.len(), plan.readings.len());
        for item in &plan.items {
            let (texts, names, values): (Vec<&str>, _, _) = if let Some(p) = item.put() {
                (
                    p.condition_expression().into_iter().collect(),
                    p.expression_attribute_names(),
                    p.expression_attribute_values(),
                )
            } else if let Some(u) = item.update() {
                (
                    [Some(u.update_expression()), u.condition_expression()]
                        .into_iter()
                        .flatten()
                        .collect(),
                    u.expression_attribute_names(),
                    u.expression_attribute_values(),
                )
            } else if let Some(d) = item.delete() {
                (
                    d.condition_expression().into_iter().collect(),
                    d.expression_attribute_names(),
                    d.expression_attribute_values(),
                )
            } else {
                let c = item.condition_check().unwrap();
                (
                    vec![c.condition_expression()],
                    c.expression_attribute_names(),
                    c.expression_attribute_values(),
                )
            };
            let (mut used_names, mut used_values) = (BTreeSet::new(), BTreeSet::new());
            for text in &texts {
                let (n, v) = expr::tokens(text);
                used_names.extend(n);
                used_values.extend(v);
            }
            let defined_names: BTreeSet<String> = names.into_iter().flat_map(|m| m.keys().cloned()).collect();
            let defined_values: BTreeSet<String> = values.into_iter().flat_map(|m| m.keys().cloned()).collect();
            assert_eq!(used_names, defined_names, "names of {texts:?}");
            assert_eq!(used_values, defined_values, "values of {texts:?}");
            for (placeholder, attribute) in names.into_iter().flatten() {
                assert_eq!(placeholder, &format!("#{attribute}"));
                let keys = [
                    crate::store::keys::PK,
                    crate::store::keys::SK,
                    crate::store::keys::GSI1PK,
                    crate::store::keys::GSI2PK,
                ];
                assert!(
                    super::super::items::attr::ALL.contains(&attribute.as_str()) || keys.contains(&attribute.as_str()),
                    "{attribute} is not an attribute constant"
                );
            }
        }
    }

    fn failed_with(item: Option<Item>) -> CancellationReason {
        CancellationReason::builder()
            .code("ConditionalCheckFailed")
            .set_item(item)
            .build()
    }

    fn passed() -> CancellationReason {
        CancellationReason::builder().code("None").build()
    }

    fn key() -> TransactWriteItem {
        check("t", Item::new(), |x| x.exists(crate::store::keys::PK)).unwrap()
    }

    #[test]
    fn the_first_failed_item_decides_unless_its_answer_is_the_least_specific() {
        let mut plan = TxPlan::new();
        plan.push(key(), |_| Ok(Rejection::Otherwise(StoreError::LimitReached)));
        plan.push(key(), |_| Ok(Rejection::Failed(StoreError::AlreadyAdded)));
        plan.push(key(), |old| {
            Ok(match old {
                Some(_) => Rejection::Retry,
                None => Rejection::Failed(StoreError::NotFound),
            })
        });
        assert_well_formed(&plan);
        let full_and_added = [failed_with(None), failed_with(None), passed()];
        assert!(matches!(
            plan.read_conditions(&full_and_added),
            Some(Rejection::Failed(StoreError::AlreadyAdded))
        ));
        let only_full = [failed_with(None), passed(), passed()];
        assert!(matches!(
            plan.read_conditions(&only_full),
            Some(Rejection::Failed(StoreError::LimitReached))
        ));
        let old = Item::from([(crate::store::keys::PK.to_owned(), AttributeValue::S("x".into()))]);
        let third = [passed(), passed(), failed_with(Some(old))];
        assert!(matches!(plan.read_conditions(&third), Some(Rejection::Retry)));
        assert!(plan.read_conditions(&[passed(), passed(), passed()]).is_none());
    }

    #[test]
    fn every_counter_that_moved_is_learned_from_one_cancellation() {
        let mut plan = TxPlan::new();
        plan.push(key(), |_| Ok(Rejection::Retry));
        plan.push(key(), |_| Ok(Rejection::LimitMoved(vec![(Counter::CodesIssued, None)])));
        plan.push(key(), |_| Ok(Rejection::LimitMoved(vec![(Counter::CodesSent, None)])));
        let both = [passed(), failed_with(None), failed_with(None)];
        assert!(matches!(
            plan.read_conditions(&both),
            Some(Rejection::LimitMoved(moved))
                if moved == vec![(Counter::CodesIssued, None), (Counter::CodesSent, None)]
        ));
        // A lost race elsewhere decides first: the counters are read again anyway.
        let all = [failed_with(None), failed_with(None), failed_with(None)];
        assert!(matches!(plan.read_conditions(&all), Some(Rejection::Retry)));
    }
}
