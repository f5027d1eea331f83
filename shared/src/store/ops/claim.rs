//! Claims in a write: the claim of a new address (free, or taken over from an
//! unverified holder), the release of the caller's own claim, and what their
//! failures mean. Shared by sign-up, adding, removing and deleting.

use crate::address_policy::CanonicalEmail;
use crate::domain::{Timestamp, UserId};
use crate::metrics::{self, Metric};
use crate::store::StoreError;
use crate::store::expr::{Update, and, or};
use crate::store::items::{self, ClaimItem, EmailItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};

use super::profile::{read_changed, read_profile};

/// A failed claim of a new address by `user`: their own claim means the address
/// is added already, unless it only reserves an address they removed, which
/// they take back; a reserved one, a verified one, or a live one that does not
/// yield, means it is taken; any other unverified claim, or a lapsed
/// reservation, may be taken over.
fn read_new_claim(
    user: UserId,
    live_claims_yield: bool,
    now: Timestamp,
) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync + 'static {
    move |old| {
        let Some(claim) = plan::old::<ClaimItem>(old)? else {
            return Ok(Rejection::Retry);
        };
        Ok(if claim.user_id == user {
            if claim.is_reservation_only() {
                Rejection::TakeOver(claim)
            } else {
                Rejection::Failed(StoreError::AlreadyAdded)
            }
        } else if claim.is_reserved(now) {
            Rejection::Failed(StoreError::EmailTaken)
        } else if claim.is_reservation_only() {
            Rejection::TakeOver(claim)
        } else if claim.expires_at.is_none() || (claim.is_live(now) && !live_claims_yield) {
            Rejection::Failed(StoreError::EmailTaken)
        } else {
            Rejection::TakeOver(claim)
        })
    }
}

/// How a new address is claimed, as a write's plan asks [`push_new_claim`].
#[derive(Clone, Copy)]
pub(super) struct NewClaim<'a> {
    /// While unverified, held until then; `None` for a verified (sign-up) claim.
    pub expires_at: Option<Timestamp>,
    /// Whether any unverified claim yields to it (a confirmed sign-up).
    pub live_claims_yield: bool,
    /// An unverified claim seen held, to take over.
    pub held: Option<&'a ClaimItem>,
    /// The address's form under the previous policy, while the table moves.
    pub previous_form: Option<&'a CanonicalEmail>,
}

/// The claim write of a new address: either the address is free, or it takes
/// over the held claim and, in the same transaction, removes the holder's record.
/// A confirmed sign-up proved ownership through Cognito, so any unverified claim
/// yields to it (`live_claims_yield`); an added address waits until the other
/// user's code has expired.
///
/// While the table moves from a previous policy (`previous_form`), the
/// address's form under it must hold no claim either: a claim not yet moved
/// is its owner's, verified or not (no take-over across forms).
pub(super) fn push_new_claim(
    plan: &mut TxPlan,
    table: &str,
    record: &EmailItem,
    new: NewClaim<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let NewClaim {
        expires_at: claim_expires_at,
        live_claims_yield,
        held,
        previous_form,
    } = new;
    if let Some(form) = previous_form {
        let unmoved = plan::check(table, keys::claim_key(form), |x| x.not_exists(keys::PK))?;
        let user = record.user_id.clone();
        plan.push(unmoved, move |old| {
            Ok(match plan::old::<ClaimItem>(old)? {
                Some(claim) if claim.user_id == user => Rejection::Failed(StoreError::AlreadyAdded),
                Some(_) => Rejection::Failed(StoreError::EmailTaken),
                None => Rejection::Retry,
            })
        });
    }
    let claim = items::claim_item(&record.canonical(), &record.claim(claim_expires_at))?;
    let reading = read_new_claim(record.user_id.clone(), live_claims_yield, now);
    let Some(held) = held else {
        plan.push(plan::put(table, claim, |x| x.not_exists(keys::PK))?, reading);
        return Ok(());
    };
    let others = held.user_id != record.user_id;
    if held.is_reservation_only() {
        // A removed address's reservation: its user takes it back while it
        // holds, anyone once it lapsed; it has no record to remove.
        let put = plan::put(table, claim, |x| {
            let still_held = and([
                x.eq(attr::USER_ID, &held.user_id),
                x.eq(attr::EMAIL_ID, held.email_id),
                x.not_exists(attr::EXPIRES_AT),
            ]);
            if others {
                and([still_held, x.le(attr::RESERVED_UNTIL, now)])
            } else {
                and([still_held, x.exists(attr::RESERVED_UNTIL)])
            }
        })?;
        plan.push(put, reading);
        return Ok(());
    }
    let put = plan::put(table, claim, |x| {
        let not_reserved = or(x.not_exists(attr::RESERVED_UNTIL), x.le(attr::RESERVED_UNTIL, now));
        let still_held = and([
            x.eq(attr::USER_ID, &held.user_id),
            x.eq(attr::EMAIL_ID, held.email_id),
            x.exists(attr::EXPIRES_AT),
            not_reserved,
        ]);
        if live_claims_yield {
            still_held
        } else {
            // Expired means not live: `expiresAt <= now`, as `ClaimItem::is_live` reads it.
            and([still_held, x.le(attr::EXPIRES_AT, now)])
        }
    })?;
    plan.push(put, reading);

    let holders_record = plan::delete(table, keys::email_key(&held.user_id, held.email_id), |x| {
        and([x.exists(keys::PK), x.eq(attr::IS_VERIFIED, false)])
    })?;
    plan.push(holders_record, read_changed);
    let holders_count = plan::update(table, keys::profile_key(&held.user_id), |x| {
        (Update::default().set(x.add(attr::EMAIL_COUNT, -1)), x.exists(keys::PK))
    })?;
    // Read as a profile, as every profile is: a holder's profile gone reads as not found.
    plan.push(holders_count, read_profile);
    Ok(())
}

/// Adds the release of the claim of the caller's `record`; failing, it changed.
pub(super) fn push_own_claim_delete(plan: &mut TxPlan, table: &str, record: &EmailItem) -> Result<(), StoreError> {
    let delete = plan::delete(table, keys::claim_key(&record.canonical()), |x| {
        and([
            x.eq(attr::USER_ID, &record.user_id),
            x.eq(attr::EMAIL_ID, record.email_id),
        ])
    })?;
    plan.push(delete, read_changed);
    Ok(())
}

/// Adds the reservation of the claim of the caller's removed `record` until
/// `until`: no one else may take the address while a switch away from it can
/// be undone; DynamoDB deletes the claim after. Failing, it changed.
pub(super) fn push_own_claim_reserve(
    plan: &mut TxPlan,
    table: &str,
    record: &EmailItem,
    until: Timestamp,
) -> Result<(), StoreError> {
    let reserve = plan::update(table, keys::claim_key(&record.canonical()), |x| {
        let update = Update::default()
            .set(x.eq(attr::RESERVED_UNTIL, until))
            .set(x.eq(keys::TTL, until.unix_seconds()))
            .remove(x.name(attr::EXPIRES_AT));
        let own = and([
            x.eq(attr::USER_ID, &record.user_id),
            x.eq(attr::EMAIL_ID, record.email_id),
        ]);
        (update, own)
    })?;
    plan.push(reserve, read_changed);
    Ok(())
}

/// After a write of a claim: a claim that may be taken over is remembered for
/// the next attempt; any other retry forgets it, so the next attempt reads
/// afresh. A write that committed with a held claim took it over.
pub(super) fn after_claim_write(result: Result<(), Rejection>, held: &mut Option<ClaimItem>) -> Result<(), Rejection> {
    match result {
        Err(Rejection::TakeOver(claim)) => {
            *held = Some(claim);
            Err(Rejection::Again)
        }
        Err(retry @ (Rejection::Retry | Rejection::Again)) => {
            *held = None;
            Err(retry)
        }
        Ok(()) if held.is_some() => {
            metrics::count(Metric::TakeOvers);
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailAddress, EmailId};
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::{failed, now};

    fn claim(user: &str, expires: Option<Timestamp>) -> Item {
        let c = ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: UserId::parse(user).unwrap(),
            email_id: EmailId::new(),
            expires_at: expires,
            reserved_until: None,
            ttl: None,
        };
        items::claim_item(
            &crate::address_policy::Canonicalization::NONE.canonical(&EmailAddress::parse("a@example.com").unwrap()),
            &c,
        )
        .unwrap()
    }

    #[test]
    fn a_failed_claim_tells_own_verified_and_unverified_holders_apart() {
        let me = UserId::parse("me").unwrap();
        let add = read_new_claim(me.clone(), false, now());
        let sign_up = read_new_claim(me, true, now());
        assert!(matches!(
            failed(add(Some(&claim("me", None))).unwrap()),
            StoreError::AlreadyAdded
        ));
        for read in [&add, &sign_up] {
            assert!(matches!(
                failed(read(Some(&claim("other", None))).unwrap()),
                StoreError::EmailTaken
            ));
        }
        let pending = claim("other", Some(now().plus_seconds(10)));
        assert!(matches!(failed(add(Some(&pending)).unwrap()), StoreError::EmailTaken));
        assert!(matches!(sign_up(Some(&pending)).unwrap(), Rejection::TakeOver(c) if c.user_id.as_str() == "other"));
        let expired = claim("other", Some(now().plus_seconds(-10)));
        assert!(matches!(add(Some(&expired)).unwrap(), Rejection::TakeOver(_)));
        assert!(matches!(add(None).unwrap(), Rejection::Retry));
    }
}
