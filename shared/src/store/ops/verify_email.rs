//! Checking a code. The right one verifies the record and makes its claim
//! permanent; a wrong one counts against the code's limit and the user's rolling
//! limits. Past any of them every code is refused, right or wrong.

use crate::address_policy::CanonicalEmail;
use crate::domain::{Email, EmailId, Timestamp, UserId};
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and};
use crate::store::items::{EmailItem, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, Counter, CounterWrite, LimitItem};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};
use crate::verification::VerificationCode;

use super::profile::{push_active_check, read_changed};

/// The code's own limit: wrong codes allowed, and the wait for a new code.
#[derive(Debug, Clone, Copy)]
struct PerCode {
    max_attempts: u32,
    resend_interval_seconds: i64,
}

/// The code being checked, as read from the record.
struct Checked<'a> {
    user: &'a UserId,
    email_id: EmailId,
    code_hash: &'a str,
    per_code: PerCode,
}

impl<'a> Checked<'a> {
    /// Both answers start alike: a plan whose first item checks the user is active.
    fn start(&self, table: &str) -> Result<TxPlan, StoreError> {
        let mut plan = TxPlan::new();
        push_active_check(&mut plan, table, self.user)?;
        Ok(plan)
    }
}

impl Store {
    /// Checks a code. The right one verifies the address and makes its claim
    /// permanent; a wrong one counts against the code's limit and the user's
    /// rolling limits. Past any of them every code is refused, right or wrong.
    pub async fn verify_email(
        &self,
        user: &UserId,
        email_id: EmailId,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<Email, StoreError> {
        let key = self.key()?;
        let config = &self.config;
        let per_code = PerCode {
            max_attempts: config.verification_max_attempts,
            resend_interval_seconds: config.resend_interval_seconds,
        };
        let mut seen = limits::Seen::default();
        let mut counters_read = false;
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_verified {
                return Ok(record.into_domain());
            }
            let attempts = record.verification_attempts.unwrap_or(0);
            if attempts >= config.verification_max_attempts {
                let retry_after_secs = next_code_in(&record, config.resend_interval_seconds, now);
                return Err(StoreError::TooManyAttempts { retry_after_secs }.into());
            }
            let (Some(stored), Some(expires_at)) =
                (record.verification_code_hash.as_deref(), record.verification_expires_at)
            else {
                return Err(StoreError::VerificationExpired.into());
            };
            if expires_at <= now {
                return Err(StoreError::VerificationExpired.into());
            }
            let address = key.address_hash(&record.canonical());
            let user_key = keys::wrong_codes_key(user);
            let address_key = keys::user_address_key(user, &address);
            // The add wrote the user's address counter, and any wrong code the
            // user's own: read both once, so the first transaction names their
            // versions. Later attempts learn them from their cancellation.
            if !std::mem::replace(&mut counters_read, true) {
                let wanted = [
                    (Counter::WrongCodes, user_key.clone()),
                    (Counter::UserAddress, address_key.clone()),
                ];
                self.read_counters(&mut seen, wanted).await?;
            }
            let user_limit = (seen.wrong_codes.as_ref(), config.max_wrong_codes_per_user);
            let address_limit = (seen.user_address.as_ref(), config.max_wrong_codes_per_address);
            for (item, cap) in [user_limit, address_limit] {
                limits::admit(item, cap, now)
                    .map_err(|retry_after_secs| StoreError::TooManyAttempts { retry_after_secs })?;
            }
            let checked = Checked {
                user,
                email_id,
                code_hash: stored,
                per_code,
            };
            if !code.matches(key, email_id, stored) {
                let counters = vec![
                    CounterWrite {
                        counter: Counter::WrongCodes,
                        key: user_key,
                        seen: seen.wrong_codes.as_ref(),
                        event: Some(now),
                        first_added_at: None,
                    },
                    CounterWrite {
                        counter: Counter::UserAddress,
                        key: address_key,
                        seen: seen.user_address.as_ref(),
                        event: Some(now),
                        first_added_at: seen.user_address.as_ref().and_then(|i| i.first_added_at),
                    },
                ];
                let plan = wrong_code_plan(self.table(), &checked, counters, now)?;
                match limits::learn(self.transact(&plan).await, &mut seen) {
                    // Verified by a concurrent request: read it back.
                    Err(Rejection::Failed(StoreError::AlreadyVerified)) => return Err(Rejection::Retry),
                    other => other?,
                }
                // `seen` is each counter as it was before this write, which
                // counted one more wrong code in each: what is left after it.
                let attempts_left = (config.verification_max_attempts - attempts - 1)
                    .min(
                        limits::left(seen.wrong_codes.as_ref(), config.max_wrong_codes_per_user, now).saturating_sub(1),
                    )
                    .min(
                        limits::left(seen.user_address.as_ref(), config.max_wrong_codes_per_address, now)
                            .saturating_sub(1),
                    );
                return Err(StoreError::VerificationFailed { attempts_left }.into());
            }
            let guess_limits = [
                (Counter::WrongCodes, user_key, seen.wrong_codes.as_ref()),
                (Counter::UserAddress, address_key, seen.user_address.as_ref()),
            ];
            let plan = right_code_plan(self.table(), &checked, &record.canonical(), guess_limits, now)?;
            match limits::learn(self.transact(&plan).await, &mut seen) {
                Ok(()) => {
                    metrics::count(Metric::VerificationsSucceeded);
                    let mut verified = record.into_domain();
                    verified.is_verified = true;
                    verified.verified_at = Some(now);
                    Ok(verified)
                }
                // Verified by a concurrent request: read it back.
                Err(Rejection::Failed(StoreError::AlreadyVerified)) => Err(Rejection::Retry),
                Err(other) => Err(other),
            }
        })
        .inspect_err(StoreError::count_refusal)
    }
}

/// Seconds until a new code may be asked for the record: the wait after too many
/// wrong codes for the current one.
fn next_code_in(record: &EmailItem, resend_interval_seconds: i64, now: Timestamp) -> u64 {
    record
        .verification_sent_at
        .map_or(1, |sent| now.seconds_until(sent.plus_seconds(resend_interval_seconds)))
        .max(1)
}

/// A failed condition on the record holding the code: gone, verified already,
/// out of attempts, or expired; anything else changed in between.
fn read_record(
    per_code: PerCode,
    now: Timestamp,
) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync {
    move |old| {
        let Some(record) = plan::old::<EmailItem>(old)? else {
            return Ok(Rejection::Failed(StoreError::NotFound));
        };
        Ok(if record.is_verified {
            Rejection::Failed(StoreError::AlreadyVerified)
        } else if record.verification_attempts.unwrap_or(0) >= per_code.max_attempts {
            Rejection::Failed(StoreError::TooManyAttempts {
                retry_after_secs: next_code_in(&record, per_code.resend_interval_seconds, now),
            })
        } else if record.verification_expires_at.is_none_or(|at| at <= now) {
            Rejection::Failed(StoreError::VerificationExpired)
        } else {
            Rejection::Retry
        })
    }
}

/// The right code: the record becomes verified and its claim permanent.
fn right_code_plan(
    table: &str,
    checked: &Checked<'_>,
    email: &CanonicalEmail,
    guess_limits: [(Counter, Item, Option<&LimitItem>); 2],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = checked.start(table)?;
    let record = plan::update(table, keys::email_key(checked.user, checked.email_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::IS_VERIFIED, true))
            .set(x.eq(attr::VERIFIED_AT, now))
            .remove(x.name(attr::CODE_HASH))
            .remove(x.name(attr::CODE_EXPIRES_AT))
            .remove(x.name(attr::CODE_ATTEMPTS))
            .remove(x.name(attr::CODE_SENT_AT));
        let condition = and([
            x.eq(attr::IS_VERIFIED, false),
            x.eq(attr::CODE_HASH, checked.code_hash),
            x.lt(attr::CODE_ATTEMPTS, checked.per_code.max_attempts),
            x.gt(attr::CODE_EXPIRES_AT, now),
        ]);
        (update, condition)
    })?;
    plan.push(record, read_record(checked.per_code, now));
    let claim = plan::update(table, keys::claim_key(email), |x| {
        // Verified, the record holds it for good: a reservation it was taken
        // back under (its record keeps the time) has nothing left to hold.
        let update = Update::default()
            .remove(x.name(attr::EXPIRES_AT))
            .remove(x.name(attr::RESERVED_UNTIL));
        let condition = and([
            x.eq(attr::USER_ID, checked.user),
            x.eq(attr::EMAIL_ID, checked.email_id),
            x.exists(attr::EXPIRES_AT),
        ]);
        (update, condition)
    })?;
    plan.push(claim, read_changed);
    // A right code past a guess limit is refused like a wrong one: over the limit,
    // an answer must tell nothing about the code.
    for (counter, key, seen) in guess_limits {
        limits::push_room_check(&mut plan, table, counter, key, seen)?;
    }
    Ok(plan)
}

/// A wrong code: count the attempt against the same code that was checked, and
/// against the user's rolling limits.
fn wrong_code_plan(
    table: &str,
    checked: &Checked<'_>,
    counters: Vec<CounterWrite<'_>>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = checked.start(table)?;
    let record = plan::update(table, keys::email_key(checked.user, checked.email_id), |x| {
        let update = Update::default().set(x.add(attr::CODE_ATTEMPTS, 1));
        let condition = and([
            x.eq(attr::IS_VERIFIED, false),
            x.eq(attr::CODE_HASH, checked.code_hash),
            x.lt(attr::CODE_ATTEMPTS, checked.per_code.max_attempts),
        ]);
        (update, condition)
    })?;
    plan.push(record, read_record(checked.per_code, now));
    for counter in counters {
        limits::push_count(&mut plan, table, counter, now)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::items;
    use crate::store::ops::fixtures::{address, failed, now, user};
    use crate::store::plan::tests::assert_well_formed;

    const PER_CODE: PerCode = PerCode {
        max_attempts: 5,
        resend_interval_seconds: 60,
    };

    /// A check of the code hashed "h" on a new record of `user`.
    fn checked(user: &UserId) -> Checked<'_> {
        Checked {
            user,
            email_id: EmailId::new(),
            code_hash: "h",
            per_code: PER_CODE,
        }
    }

    fn record_item(record: &EmailItem) -> Item {
        items::to_item(keys::email_key(&record.user_id, record.email_id), record).unwrap()
    }

    #[test]
    fn the_right_code_verifies_the_record_and_its_claim_under_the_guess_limits() {
        let user = user();
        let checked = checked(&user);
        let limits = [
            (Counter::WrongCodes, keys::wrong_codes_key(&user), None),
            (Counter::UserAddress, keys::user_address_key(&user, "a"), None),
        ];
        let plan = right_code_plan(
            "t",
            &checked,
            &crate::address_policy::Canonicalization::NONE.canonical(&address()),
            limits,
            now(),
        )
        .unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        let record = plan.items()[1].update().unwrap();
        assert_eq!(
            record.update_expression(),
            "SET #isVerified = :isVerified, #verifiedAt = :verifiedAt \
             REMOVE #verificationCodeHash, #verificationExpiresAt, #verificationAttempts, #verificationSentAt"
        );
        assert_eq!(
            plan.items()[2].update().unwrap().key(),
            &keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&address()))
        );
        assert!(matches!(plan.read(2, None), Rejection::Retry));
        assert!(matches!(
            plan.read(4, None),
            Rejection::LimitMoved(moved) if moved == vec![(Counter::UserAddress, None)]
        ));
    }

    #[test]
    fn a_failed_check_tells_gone_verified_spent_and_expired_apart() {
        let user = user();
        let checked = checked(&user);
        let plan = wrong_code_plan("t", &checked, Vec::new(), now()).unwrap();
        assert_well_formed(&plan);
        assert!(matches!(failed(plan.read(1, None)), StoreError::NotFound));
        let sent = now().plus_seconds(-20);
        let mut record = EmailItem::unverified(
            &user,
            checked.email_id,
            &address(),
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            now().plus_seconds(60),
            sent,
        );
        assert!(matches!(plan.read(1, Some(&record_item(&record))), Rejection::Retry));
        record.verification_attempts = Some(5);
        assert!(matches!(
            failed(plan.read(1, Some(&record_item(&record)))),
            StoreError::TooManyAttempts { retry_after_secs: 40 }
        ));
        record.verification_attempts = Some(1);
        record.verification_expires_at = Some(now());
        assert!(matches!(
            failed(plan.read(1, Some(&record_item(&record)))),
            StoreError::VerificationExpired
        ));
        record.is_verified = true;
        assert!(matches!(
            failed(plan.read(1, Some(&record_item(&record)))),
            StoreError::AlreadyVerified
        ));
    }
}
