//! Changing the canonical form on a live table (`cargo xtask canonicalize`):
//! a scan of the email records, and the move of one record's claim and GSI1
//! key to the form a new policy gives it, in one transaction. A move never
//! takes a form another claim holds (that is a collision, for people to
//! resolve), and a record that changed since it was read is read again: the
//! service keeps running under the old policy while the table moves.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::address_policy::CanonicalEmail;
use crate::domain::{EmailAddress, EmailId, UserId};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{self, ClaimItem, EmailItem, EntityType, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

/// One email record, as the migration reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedRecord {
    /// The owner.
    pub user_id: UserId,
    /// The record.
    pub email_id: EmailId,
    /// The address as typed: only ever printed when the operator asks.
    pub email: EmailAddress,
    /// The form its claim and GSI1 key are on now.
    pub canonical: CanonicalEmail,
    /// Whether the owner verified it.
    pub is_verified: bool,
}

/// A page of a scan of the email records, and where the next one starts.
#[derive(Debug)]
pub struct RecordPage {
    /// The email records of the page (other items are filtered out).
    pub records: Vec<ScannedRecord>,
    /// The key to go on from; `None` at the end of the segment.
    pub next: Option<Item>,
}

/// What a move of one record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// The claim and the GSI1 key are on the new form now.
    Done,
    /// They were already: nothing written.
    Already,
    /// Another claim holds the new form: nothing written; a collision to resolve.
    Collision,
    /// The record changed or went since it was read (its user acted): nothing
    /// written; read it again.
    Changed,
    /// The record's claim is missing or names another record (a broken
    /// invariant the checker reports): nothing written.
    NoClaim,
}

impl Store {
    /// One page of segment `segment` of `segments` of a scan of the table's
    /// email records, from `after`. At most `limit` items are evaluated.
    pub async fn scan_email_records(
        &self,
        segment: u32,
        segments: u32,
        limit: i32,
        after: Option<Item>,
    ) -> Result<RecordPage, StoreError> {
        let mut x = Expr::default();
        let email_type: AttributeValue =
            serde_dynamo::to_attribute_value(EntityType::Email).map_err(StoreError::Corrupt)?;
        let filter = x.eq(attr::ENTITY_TYPE, email_type);
        let request = self.scan_segment(&x, filter, (segment, segments), limit, after);
        let page = send_by_deadline!(&self.client, request)?;
        let records = page
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| {
                let record: EmailItem = items::from_item(item)?;
                Ok(ScannedRecord {
                    canonical: record.canonical(),
                    user_id: record.user_id,
                    email_id: record.email_id,
                    email: record.email,
                    is_verified: record.is_verified,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(RecordPage {
            records,
            next: page.last_evaluated_key,
        })
    }

    /// Who holds the claim on `form`: its user, record, and whether verified.
    pub async fn claim_holder(&self, form: &CanonicalEmail) -> Result<Option<(UserId, EmailId, bool)>, StoreError> {
        let claim = self.claim_on(form).await?;
        Ok(claim.map(|c| (c.user_id, c.email_id, c.expires_at.is_none())))
    }

    /// Moves `record`'s claim and GSI1 key to `to`, in one transaction: the
    /// record as read, its claim released, the claim on `to` taken only if no
    /// claim holds it. Idempotent: run again, a moved record is `Already`.
    pub async fn move_claim(&self, record: &ScannedRecord, to: &CanonicalEmail) -> Result<Moved, StoreError> {
        if &record.canonical == to {
            return Ok(Moved::Already);
        }
        let claim = self.claim_on(&record.canonical).await?;
        let Some(claim) = claim.filter(|c| c.user_id == record.user_id && c.email_id == record.email_id) else {
            // Read before an earlier run moved it: its claim is on `to` already.
            let moved = self
                .claim_holder(to)
                .await?
                .is_some_and(|(user, email_id, _)| user == record.user_id && email_id == record.email_id);
            return Ok(if moved { Moved::Already } else { Moved::NoClaim });
        };
        let plan = move_plan(self.table(), record, &claim, to)?;
        match self.transact(&plan).await {
            Ok(()) => Ok(Moved::Done),
            Err(Rejection::Failed(StoreError::EmailTaken)) => Ok(Moved::Collision),
            Err(Rejection::Retry) => Ok(Moved::Changed),
            Err(Rejection::Failed(err) | Rejection::Otherwise(err)) => Err(err),
            Err(other) => Err(StoreError::UnexpectedCancellation(format!("{other:?}"))),
        }
    }
}

/// The move of one record's claim from its form to `to`: the record (as
/// read) keyed on `to`, the old claim (still this record's) deleted, and the
/// same claim put on `to` where no claim is.
fn move_plan(
    table: &str,
    record: &ScannedRecord,
    claim: &ClaimItem,
    to: &CanonicalEmail,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let rekeyed = plan::update(table, keys::email_key(&record.user_id, record.email_id), |x| {
        let mut update = Update::default().set(x.eq(keys::GSI1PK, keys::email_gsi1pk(to)));
        update = if to.is_spelled(&record.email) {
            update.remove(x.name(attr::CANONICAL_EMAIL))
        } else {
            update.set(x.eq(attr::CANONICAL_EMAIL, to))
        };
        let as_read = if record.canonical.is_spelled(&record.email) {
            x.not_exists(attr::CANONICAL_EMAIL)
        } else {
            x.eq(attr::CANONICAL_EMAIL, &record.canonical)
        };
        // Verified or not as read: a verification in between changes the claim too.
        let condition = and([
            x.exists(keys::PK),
            x.eq(attr::EMAIL, &record.email),
            x.eq(attr::IS_VERIFIED, record.is_verified),
            as_read,
        ]);
        (update, condition)
    })?;
    plan.push(rekeyed, |_| Ok(Rejection::Retry));
    // The claim as read, expiry included: the copy put below must be what it is now.
    let released = plan::delete(table, keys::claim_key(&record.canonical), |x| {
        let expiry = match claim.expires_at {
            Some(at) => x.eq(attr::EXPIRES_AT, at),
            None => x.not_exists(attr::EXPIRES_AT),
        };
        and([
            x.eq(attr::USER_ID, &record.user_id),
            x.eq(attr::EMAIL_ID, record.email_id),
            expiry,
        ])
    })?;
    plan.push(released, |_| Ok(Rejection::Retry));
    let taken = plan::put(table, items::claim_item(to, claim)?, |x| x.not_exists(keys::PK))?;
    let (user, email_id) = (record.user_id.clone(), record.email_id);
    plan.push(taken, move |old| {
        let holder = plan::old::<ClaimItem>(old)?;
        Ok(match holder {
            // This very record's claim: moved by a concurrent run.
            Some(c) if c.user_id == user && c.email_id == email_id => Rejection::Retry,
            Some(_) => Rejection::Failed(StoreError::EmailTaken),
            None => Rejection::Retry,
        })
    });
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address_policy::Canonicalization;
    use crate::domain::Timestamp;
    use crate::store::plan::tests::assert_well_formed;

    fn record(typed: &str, policy: Canonicalization) -> (ScannedRecord, ClaimItem) {
        let email = EmailAddress::parse(typed).unwrap();
        let now = Timestamp::parse("2026-11-25T10:00:00.000Z").unwrap();
        let item = EmailItem::verified_primary(&UserId::parse("u").unwrap(), &email, policy, now);
        let claim = item.claim(None);
        (
            ScannedRecord {
                canonical: item.canonical(),
                user_id: item.user_id,
                email_id: item.email_id,
                email,
                is_verified: true,
            },
            claim,
        )
    }

    fn s(item: &Item, name: &str) -> String {
        item[name].as_s().unwrap().clone()
    }

    #[test]
    fn a_move_rekeys_the_record_releases_the_old_claim_and_takes_the_new_one_where_none_is() {
        let gmail = Canonicalization::parse("gmail").unwrap();
        let (record, claim) = record("A.Da+x@googlemail.com", Canonicalization::NONE);
        let to = gmail.canonical(&record.email);
        let plan = move_plan("t", &record, &claim, &to).unwrap();
        assert_well_formed(&plan);
        let items = plan.items();
        assert_eq!(items.len(), 3);
        let rekey = items[0].update().unwrap();
        assert_eq!(rekey.key(), &keys::email_key(&record.user_id, record.email_id));
        let values: Vec<String> = rekey
            .expression_attribute_values()
            .unwrap()
            .values()
            .filter_map(|v| v.as_s().ok().cloned())
            .collect();
        assert!(values.contains(&"EMAIL#ada@gmail.com".to_owned()), "{values:?}");
        assert!(values.contains(&"ada@gmail.com".to_owned()), "{values:?}");
        let condition = rekey.condition_expression().unwrap();
        assert!(
            condition.contains("attribute_not_exists(#canonicalEmail)"),
            "{condition}"
        );
        assert!(condition.contains("#isVerified = "), "verified as read: {condition}");
        let released = items[1].delete().unwrap().condition_expression().unwrap();
        assert!(
            released.contains("attribute_not_exists(#expiresAt)"),
            "the claim as read: {released}"
        );
        assert_eq!(
            s(items[1].delete().unwrap().key(), keys::PK),
            "EMAIL#a.da+x@googlemail.com"
        );
        let put = items[2].put().unwrap();
        assert_eq!(s(put.item(), keys::PK), "EMAIL#ada@gmail.com");
        assert_eq!(put.condition_expression().unwrap(), "attribute_not_exists(#PK)");
        // Another record's claim on the new form is a collision; this record's own, a concurrent move.
        let mut other = claim.clone();
        other.user_id = UserId::parse("v").unwrap();
        let other = items::claim_item(&to, &other).unwrap();
        assert!(matches!(
            plan.read(2, Some(&other)),
            Rejection::Failed(StoreError::EmailTaken)
        ));
        let own = items::claim_item(&to, &claim).unwrap();
        assert!(matches!(plan.read(2, Some(&own)), Rejection::Retry));
        assert!(matches!(plan.read(0, None), Rejection::Retry));
    }

    #[test]
    fn moving_back_to_the_address_itself_removes_the_stored_form() {
        let gmail = Canonicalization::parse("gmail").unwrap();
        let (record, claim) = record("a.da@gmail.com", gmail);
        assert_eq!(record.canonical.as_str(), "ada@gmail.com");
        let to = Canonicalization::NONE.canonical(&record.email);
        let plan = move_plan("t", &record, &claim, &to).unwrap();
        let rekey = plan.items()[0].update().unwrap();
        assert!(
            rekey.update_expression().contains("REMOVE"),
            "{}",
            rekey.update_expression()
        );
        assert!(!rekey.condition_expression().unwrap().contains("attribute_not_exists"));
        assert_eq!(
            s(plan.items()[1].delete().unwrap().key(), keys::PK),
            "EMAIL#ada@gmail.com"
        );
    }
}
