//! Adding an unverified address: count it on the profile, write the record and
//! its claim, and count the code it is sent, in one transaction.

use crate::domain::{Email, EmailAddress, EmailId, Timestamp, UserId};
use crate::store::expr::{Update, and};
use crate::store::items::{self, ClaimItem, EmailItem, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::limits::{self, Counter, CounterWrite};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};
use crate::verification::VerificationCode;

use super::claim::{NewClaim, after_claim_write, push_new_claim};
use super::profile::{active, read_changed, refusal};

impl Store {
    /// Adds an unverified address and issues it `code`. The claim is held for
    /// `verification_ttl_seconds` from the user's first add of the address in the
    /// last 24 hours, so removing and adding it again does not extend it; the code
    /// counts against the daily limits of codes (`limits::admit_code`).
    pub async fn add_email(
        &self,
        user: &UserId,
        email: &EmailAddress,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<Email, StoreError> {
        if let Err(refusal) = self.policy.admit(email) {
            let refused = StoreError::NotAllowed(refusal);
            refused.count_refusal();
            return Err(refused);
        }
        let key = self.key()?;
        let email_id = EmailId::new();
        let code_expires_at = now.plus_seconds(self.config.code_ttl_seconds);
        let policy = self.policy.canonicalization;
        let fresh = EmailItem::unverified(
            user,
            email_id,
            email,
            policy,
            code.hash(key, email_id),
            code_expires_at,
            now,
        );
        let address = key.address_hash(&fresh.canonical());
        let previous_form = self.policy.previous_form(email);
        let mut held: Option<ClaimItem> = None;
        let mut seen = limits::Seen::default();
        retrying!({
            let caps = (&self.config).into();
            limits::admit_code(&seen, caps, now)
                .map_err(|retry_after_secs| StoreError::TooManyRequests { retry_after_secs })?;
            let mut record = fresh.clone();
            // Taking back an address of theirs still reserved: it stays so.
            record.reserved_until = held
                .as_ref()
                .filter(|claim| claim.user_id == *user && claim.is_reserved(now))
                .and_then(|claim| claim.reserved_until);
            let spent = limits::attempts_spent(&seen, caps, self.config.verification_max_attempts, now);
            record.verification_attempts = Some(spent);
            let first_added_at = limits::first_added_at(seen.user_address.as_ref(), now);
            let claim_expires_at = first_added_at.plus_seconds(self.config.verification_ttl_seconds);
            let mut counters = limits::code_counts(&seen, user, &address, now).to_vec();
            if seen.user_address.as_ref().and_then(|i| i.first_added_at) != Some(first_added_at) {
                // A new window of holding the address begins: remember its start.
                counters.push(CounterWrite {
                    counter: Counter::UserAddress,
                    key: keys::user_address_key(user, &address),
                    seen: seen.user_address.as_ref(),
                    event: None,
                    first_added_at: Some(first_added_at),
                });
            }
            let claim = NewClaim {
                expires_at: Some(claim_expires_at),
                live_claims_yield: false,
                held: held.as_ref(),
                previous_form: previous_form.as_ref(),
            };
            let plan = plan(
                self.table(),
                &record,
                self.config.max_emails_per_user,
                claim,
                counters,
                now,
            )?;
            let result = self.transact(&plan).await;
            after_claim_write(limits::learn(result, &mut seen), &mut held).map(|()| record.into_domain())
        })
        .inspect_err(StoreError::count_refusal)
    }
}

/// A failed room condition on the caller's profile: missing or inactive, or
/// full. Full is the least specific answer: "you have this address already"
/// tells the caller more.
fn read_room(max_emails: u32) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync + 'static {
    move |old| {
        let profile: Option<ProfileItem> = plan::old(old)?;
        if let Some(err) = refusal(profile.as_ref()) {
            return Ok(Rejection::Failed(err));
        }
        Ok(match profile {
            Some(p) if p.email_count >= max_emails => Rejection::Otherwise(StoreError::LimitReached),
            _ => Rejection::Retry,
        })
    }
}

/// The claim is held until `claim.expires_at`; `counters` count the code sent
/// and, when it begins, the user's window of holding the address.
fn plan(
    table: &str,
    record: &EmailItem,
    max_emails: u32,
    claim: NewClaim<'_>,
    counters: Vec<CounterWrite<'_>>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let room = plan::update(table, keys::profile_key(&record.user_id), |x| {
        let update = Update::default().set(x.add(attr::EMAIL_COUNT, 1));
        (update, and([active(x), x.lt(attr::EMAIL_COUNT, max_emails)]))
    })?;
    plan.push(room, read_room(max_emails));
    let new_record = plan::put(table, items::email_item(record)?, |x| x.not_exists(keys::PK))?;
    plan.push(new_record, read_changed);
    push_new_claim(&mut plan, table, record, claim, now)?;
    for counter in counters {
        limits::push_count(&mut plan, table, counter, now)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An add's claim, held until `expires_at`, taking over `held` if any.
    fn claim(expires_at: Timestamp, held: Option<&ClaimItem>) -> NewClaim<'_> {
        NewClaim {
            expires_at: Some(expires_at),
            live_claims_yield: false,
            held,
            previous_form: None,
        }
    }
    use crate::domain::UserStatus;
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::{address, failed, now, profile, user};
    use crate::store::plan::tests::assert_well_formed;

    fn s<'a>(item: &'a Item, k: &str) -> &'a str {
        item[k].as_s().unwrap()
    }

    fn codes_issued() -> CounterWrite<'static> {
        CounterWrite {
            counter: Counter::CodesIssued,
            key: keys::codes_issued_key("h"),
            seen: None,
            event: Some(now()),
            first_added_at: None,
        }
    }

    #[test]
    fn a_code_counts_for_the_address_the_user_and_the_pair() {
        let seen = limits::Seen::default();
        let counts = limits::code_counts(&seen, &user(), "h", now());
        let plan = plan("t", &record(), 10, claim(now(), None), counts.to_vec(), now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 6);
        let key_of = |item: &Item| {
            let s = |k| keys::key_string(item, k).unwrap().to_owned();
            (s(keys::PK), s(keys::SK))
        };
        let written: Vec<_> = plan.items()[3..]
            .iter()
            .map(|w| key_of(w.put().unwrap().item()))
            .collect();
        let expected = [
            keys::codes_issued_key("h"),
            keys::codes_requested_key(&user(), "h"),
            keys::codes_sent_key(&user()),
        ];
        assert_eq!(written, expected.iter().map(key_of).collect::<Vec<_>>());
        assert!(matches!(
            plan.read(5, None),
            Rejection::LimitMoved(moved) if moved == vec![(Counter::CodesSent, None)]
        ));
    }

    fn record() -> EmailItem {
        let expires = now().plus_seconds(86_400);
        EmailItem::unverified(
            &user(),
            EmailId::new(),
            &address(),
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            expires,
            now(),
        )
    }

    #[test]
    fn add_email_takeover_removes_the_holders_record_in_the_same_transaction() {
        let record = record();
        let holder = UserId::parse("user-b").unwrap();
        let held = ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: holder.clone(),
            email_id: EmailId::new(),
            expires_at: Some(now().plus_seconds(-1)),
            reserved_until: None,
            ttl: None,
        };
        let claim_expires = now().plus_seconds(3_600);
        let plan = plan(
            "t",
            &record,
            10,
            claim(claim_expires, Some(&held)),
            vec![codes_issued()],
            now(),
        )
        .unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 6);
        assert!(matches!(
            plan.read(5, None),
            Rejection::LimitMoved(moved) if moved == vec![(Counter::CodesIssued, None)]
        ));
        let claim = plan.items()[2].put().unwrap();
        // Only an expired claim is taken over: `expiresAt <= now`.
        assert!(
            claim
                .condition_expression()
                .unwrap()
                .contains("#expiresAt <= :expiresAt")
        );
        assert_eq!(
            claim.expression_attribute_values().unwrap()[":expiresAt"]
                .as_s()
                .unwrap(),
            &now().to_string()
        );
        // The claim is held until the claim's own expiry, not the code's.
        assert_eq!(s(claim.item(), "expiresAt"), &claim_expires.to_string());
        let del = plan.items()[3].delete().unwrap();
        assert_eq!(del.key(), &keys::email_key(&holder, held.email_id));
        let dec = plan.items()[4].update().unwrap();
        assert_eq!(dec.update_expression(), "SET #emailCount = #emailCount - :emailCountBy");
        assert_eq!(dec.key(), &keys::profile_key(&holder));

        let record_put = plan.items()[1].put().unwrap();
        assert!(record_put.item().contains_key("verificationCodeHash"));
        assert_eq!(record_put.item()["verificationAttempts"].as_n().unwrap(), "0");
    }

    #[test]
    fn a_failed_room_condition_tells_missing_inactive_and_full_apart() {
        let plan = plan("t", &record(), 10, claim(now(), None), vec![codes_issued()], now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(
            plan.items()[0].update().unwrap().condition_expression(),
            Some("attribute_exists(#PK) AND #status = :status AND #emailCount < :emailCount")
        );
        assert!(matches!(failed(plan.read(0, None)), StoreError::NotFound));
        let deleted = profile(UserStatus::Deleted, 1, 1);
        assert!(matches!(failed(plan.read(0, Some(&deleted))), StoreError::NotFound));
        let suspended = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(
            failed(plan.read(0, Some(&suspended))),
            StoreError::AccountInactive
        ));
        let full = profile(UserStatus::Active, 10, 1);
        assert!(matches!(
            plan.read(0, Some(&full)),
            Rejection::Otherwise(StoreError::LimitReached)
        ));
        let fine = profile(UserStatus::Active, 3, 1);
        assert!(matches!(plan.read(0, Some(&fine)), Rejection::Retry));
        // The record has a fresh id: failing, a concurrent writer got there first.
        assert!(matches!(plan.read(1, None), Rejection::Retry));
    }

    #[test]
    fn while_the_table_moves_the_address_must_be_free_under_the_previous_form_too() {
        let previous = crate::address_policy::Canonicalization::NONE.canonical(&address());
        let with_previous = NewClaim {
            previous_form: Some(&previous),
            ..claim(now(), None)
        };
        let plain = plan("t", &record(), 10, claim(now(), None), vec![codes_issued()], now()).unwrap();
        let plan = plan("t", &record(), 10, with_previous, vec![codes_issued()], now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), plain.items().len() + 1);
        let check = plan.items()[2].condition_check().unwrap();
        assert_eq!(check.key(), &keys::claim_key(&previous));
        assert_eq!(check.condition_expression(), "attribute_not_exists(#PK)");
        let claim_of = |holder: &UserId| {
            let claim = ClaimItem {
                entity_type: EntityType::EmailClaim,
                user_id: holder.clone(),
                email_id: EmailId::new(),
                expires_at: None,
                reserved_until: None,
                ttl: None,
            };
            items::claim_item(&previous, &claim).unwrap()
        };
        assert!(matches!(
            failed(plan.read(2, Some(&claim_of(&user())))),
            StoreError::AlreadyAdded
        ));
        let other = UserId::parse("someone-else").unwrap();
        assert!(matches!(
            failed(plan.read(2, Some(&claim_of(&other)))),
            StoreError::EmailTaken
        ));
    }
}
