//! A new code for an unverified address, counted against the daily limits of
//! codes (`limits::admit_code`). The claim is left as it is: a resend never extends how long an
//! unverified address is held.

use crate::domain::{EmailAddress, EmailId, Timestamp, UserId};
use crate::store::expr::{Update, and, or};
use crate::store::items::{EmailItem, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, CounterWrite};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};
use crate::verification::VerificationCode;

use super::profile::push_active_check;

impl Store {
    /// Replaces the code of an unverified address; returns the address to send it to.
    pub async fn issue_code(
        &self,
        user: &UserId,
        email_id: EmailId,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<EmailAddress, StoreError> {
        let key = self.key()?;
        let mut seen = limits::Seen::default();
        let mut counters_read = false;
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_verified {
                return Err(StoreError::AlreadyVerified.into());
            }
            let address = key.address_hash(&record.canonical());
            // Every resend follows an add, which wrote the counters: read them
            // once, so the first transaction names their versions. Later attempts
            // learn them from their cancellation.
            if !std::mem::replace(&mut counters_read, true) {
                self.read_counters(&mut seen, limits::code_counters(user, &address))
                    .await?;
            }
            let caps = (&self.config).into();
            limits::admit_code(&seen, caps, now)
                .map_err(|retry_after_secs| StoreError::TooManyRequests { retry_after_secs })?;
            let counts = limits::code_counts(&seen, user, &address, now);
            let new_code = NewCode {
                hash: &code.hash(key, email_id),
                expires_at: now.plus_seconds(self.config.code_ttl_seconds),
                resend_after: now.plus_seconds(-self.config.resend_interval_seconds),
                attempts_spent: limits::attempts_spent(&seen, caps, self.config.verification_max_attempts, now),
            };
            let plan = plan(self.table(), user, email_id, &new_code, counts, now)?;
            limits::learn(self.transact(&plan).await, &mut seen)?;
            Ok(record.email)
        })
        .inspect_err(StoreError::count_refusal)
    }
}

struct NewCode<'a> {
    hash: &'a str,
    expires_at: Timestamp,
    /// The previous code must have been sent no later than this.
    resend_after: Timestamp,
    /// Wrong codes counted as spent already (`limits::attempts_spent`).
    attempts_spent: u32,
}

/// A failed resend: the record is gone, verified, or its last code too recent.
fn read_record(resend_after: Timestamp) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync {
    move |old| {
        let Some(record) = plan::old::<EmailItem>(old)? else {
            return Ok(Rejection::Failed(StoreError::NotFound));
        };
        Ok(match record.verification_sent_at {
            _ if record.is_verified => Rejection::Failed(StoreError::AlreadyVerified),
            Some(sent) if sent > resend_after => Rejection::Failed(StoreError::TooManyRequests {
                retry_after_secs: resend_after.seconds_until(sent).max(1),
            }),
            _ => Rejection::Retry,
        })
    }
}

fn plan(
    table: &str,
    user: &UserId,
    email_id: EmailId,
    code: &NewCode<'_>,
    counts: [CounterWrite<'_>; 3],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    push_active_check(&mut plan, table, user)?;
    let record = plan::update(table, keys::email_key(user, email_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::CODE_HASH, code.hash))
            .set(x.eq(attr::CODE_EXPIRES_AT, code.expires_at))
            .set(x.eq(attr::CODE_ATTEMPTS, code.attempts_spent))
            .set(x.eq(attr::CODE_SENT_AT, now));
        let condition = and([
            x.exists(keys::PK),
            x.eq(attr::IS_VERIFIED, false),
            or(
                x.not_exists(attr::CODE_SENT_AT),
                x.le(attr::CODE_SENT_AT, code.resend_after),
            ),
        ]);
        (update, condition)
    })?;
    plan.push(record, read_record(code.resend_after));
    for count in counts {
        limits::push_count(&mut plan, table, count, now)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::EmailAddress;
    use crate::store::items;
    use crate::store::limits::Counter;
    use crate::store::ops::fixtures::{failed, now};
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn resend_too_soon_says_when() {
        let user = UserId::parse("me").unwrap();
        let address = EmailAddress::parse("a@example.com").unwrap();
        let sent = now().plus_seconds(-20);
        let mut record = EmailItem::unverified(
            &user,
            EmailId::new(),
            &address,
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            now(),
            sent,
        );
        record.verification_sent_at = Some(sent);
        let item = items::to_item(keys::email_key(&user, record.email_id), &record).unwrap();
        let code = NewCode {
            hash: "h2",
            expires_at: now().plus_seconds(600),
            resend_after: now().plus_seconds(-60),
            attempts_spent: 0,
        };
        let seen = limits::Seen::default();
        let counts = limits::code_counts(&seen, &user, "h", now());
        let plan = plan("t", &user, record.email_id, &code, counts, now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        assert!(matches!(
            failed(plan.read(1, Some(&item))),
            StoreError::TooManyRequests { retry_after_secs: 40 }
        ));
        record.is_verified = true;
        let verified = items::to_item(keys::email_key(&user, record.email_id), &record).unwrap();
        assert!(matches!(
            failed(plan.read(1, Some(&verified))),
            StoreError::AlreadyVerified
        ));
        assert!(matches!(failed(plan.read(1, None)), StoreError::NotFound));
        assert!(matches!(
            plan.read(2, None),
            Rejection::LimitMoved(moved) if moved == vec![(Counter::CodesIssued, None)]
        ));
    }
}
