//! Undoing a switch of the primary from the address it moved away from: the
//! token the notice carries is recorded on the switch (as a keyed hash), and
//! the recovery that follows it puts the account back as it was before the
//! switch, in one transaction:
//! - the former address is the verified primary again (written back if it was
//!   removed; its claim only reserved it);
//! - the address the switch made primary, and every address added since it
//!   was, is removed and released; any other primary is demoted;
//! - the profile records the recovery (which switches it undid) and the time
//!   before which no access token is accepted;
//! - the switch is consumed, so its token works once.
//!
//! The profile's version pins what was read: a concurrent switch, add or
//! recovery moves it, and the recovery reads again. The links that lead here
//! are `recovery_links`'.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::{Profile, Timestamp, UserId, UserStatus};
use crate::metrics::{self, Metric};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{self, ClaimItem, EmailItem, PrimaryChangeItem, ProfileItem, Recovery, attr};
use crate::store::keys;
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::claim::push_own_claim_delete;
use super::profile::{read_changed, read_profile, writable};

/// What a recovery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The profile after it: the former address primary again.
    pub profile: Profile,
    /// The version of the switch undone (later switches were undone with it).
    pub undone_version: u64,
    /// How many addresses it removed.
    pub removed: usize,
}

impl Store {
    /// Follows a recovery link: undoes the switch of `user` that wrote
    /// `version`, and every later one, if `token_hash` is one of its tokens,
    /// it is within its window, and no recovery undid it already. Anything
    /// else is [`StoreError::RecoveryLinkInvalid`], and nothing is written.
    pub async fn recover(
        &self,
        user: &UserId,
        version: u64,
        token_hash: &str,
        now: Timestamp,
    ) -> Result<Recovered, StoreError> {
        let window = self.config.address_recovery_seconds;
        retrying!({
            let items = self.user_items(user).await?;
            let profile = match writable(items.profile) {
                Ok(profile) => profile,
                // A deleted or suspended account cannot be taken back by link.
                Err(StoreError::NotFound | StoreError::AccountInactive) => {
                    return Err(StoreError::RecoveryLinkInvalid.into());
                }
                Err(err) => return Err(err.into()),
            };
            let change = items
                .changes
                .iter()
                .find(|c| c.version == version)
                .filter(|c| c.is_recoverable(now) && c.token_hashes.iter().any(|h| h == token_hash))
                .filter(|c| !profile.recoveries.iter().any(|r| r.undid(c.version)))
                .ok_or(StoreError::RecoveryLinkInvalid)?;
            let undo = Undo::of(&profile, &items.emails, change, now, window);
            let claim = match undo.former_now {
                Some(_) => FormerClaim::OnRecord,
                None => self.former_claim(&change.former).await?,
            };
            let plan = plan(self.table(), &profile, &undo, claim, token_hash)?;
            // The hold's item first: a hold nothing lists could outlive a
            // stream record that failed for good. One that never commits is
            // found stale by the reconcile.
            self.mark_hold(user, now.unix_seconds()).await?;
            self.transact(&plan).await?;
            metrics::count(Metric::AccountsRecovered);
            Ok(undo.outcome(profile))
        })
    }
}

/// The claim of a former primary removed since its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormerClaim {
    /// Its record is on the account: its claim is the record's.
    OnRecord,
    /// Its claim only reserves it for this account.
    Reserved,
    /// Nobody claims it (a recovery removed it since): claimed afresh.
    Free,
}

impl Store {
    /// The claim of `former`, removed from the account: its reservation, or
    /// none at all. Anyone else's claim means it cannot come back:
    /// [`StoreError::RecoveryLinkInvalid`].
    async fn former_claim(&self, former: &EmailItem) -> Result<FormerClaim, StoreError> {
        let claim: Option<ClaimItem> = self
            .get(keys::claim_key(&former.canonical()))
            .await?
            .map(items::from_item)
            .transpose()?;
        match claim {
            None => Ok(FormerClaim::Free),
            Some(c) if c.user_id == former.user_id && c.email_id == former.email_id && c.is_reservation_only() => {
                Ok(FormerClaim::Reserved)
            }
            Some(_) => Err(StoreError::RecoveryLinkInvalid),
        }
    }
}

/// What undoing a switch writes, decided from the account as read. Pure.
#[derive(Debug)]
struct Undo<'a> {
    change: &'a PrimaryChangeItem,
    /// The former address's record as it is now, if it is still on the account
    /// (by its canonical form: it may have been removed and added again).
    former_now: Option<&'a EmailItem>,
    /// Records to remove: the switch's new primary and every one added since.
    removed: Vec<&'a EmailItem>,
    /// A primary neither removed nor the former: demoted.
    demoted: Option<&'a EmailItem>,
    /// The profile's recoveries after this one, older ones past the window dropped.
    recoveries: Vec<Recovery>,
    now: Timestamp,
}

impl<'a> Undo<'a> {
    fn of(
        profile: &ProfileItem,
        emails: &'a [EmailItem],
        change: &'a PrimaryChangeItem,
        now: Timestamp,
        window_seconds: i64,
    ) -> Self {
        let former_form = change.former.canonical();
        let former_now = emails.iter().find(|r| r.canonical() == former_form);
        let removed: Vec<&EmailItem> = emails
            .iter()
            .filter(|r| r.canonical() != former_form && change.brought(r))
            .collect();
        let demoted = emails.iter().find(|r| {
            r.is_primary && r.canonical() != former_form && !removed.iter().any(|gone| gone.email_id == r.email_id)
        });
        let oldest = now.plus_seconds(-window_seconds);
        let mut recoveries: Vec<Recovery> = profile.recoveries.iter().copied().filter(|r| r.at > oldest).collect();
        recoveries.push(Recovery {
            from_version: change.version,
            to_version: profile.version + 1,
            at: now,
        });
        Self {
            change,
            former_now,
            removed,
            demoted,
            recoveries,
            now,
        }
    }

    /// The account's new count of addresses.
    fn email_count(&self, profile: &ProfileItem) -> u32 {
        let restored = u32::from(self.former_now.is_none());
        let removed = u32::try_from(self.removed.len()).unwrap_or(u32::MAX);
        (profile.email_count + restored).saturating_sub(removed)
    }

    fn outcome(&self, profile: ProfileItem) -> Recovered {
        let email_count = self.email_count(&profile);
        let mut restored = profile.into_domain();
        restored.email = Some(self.change.former.email.clone());
        restored.version += 1;
        restored.updated_at = self.now;
        restored.email_count = email_count;
        Recovered {
            profile: restored,
            undone_version: self.change.version,
            removed: self.removed.len(),
        }
    }
}

fn plan(
    table: &str,
    profile: &ProfileItem,
    undo: &Undo<'_>,
    claim: FormerClaim,
    token_hash: &str,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let user = &profile.user_id;
    let now = undo.now;
    let version = profile.version + 1;
    let former = &undo.change.former;
    let recoveries: AttributeValue = serde_dynamo::to_attribute_value(&undo.recoveries).map_err(StoreError::Corrupt)?;
    let restore = plan::update(table, keys::profile_key(user), |x| {
        let update = Update::default()
            .set(x.eq(attr::EMAIL, &former.email))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now))
            .set(x.eq(attr::EMAIL_COUNT, undo.email_count(profile)))
            .set(x.eq(attr::TOKENS_VALID_AFTER, now.unix_seconds()))
            .set(x.eq(attr::SIGN_IN_HELD, true))
            .set(x.eq(attr::RECOVERIES, recoveries.clone()));
        // Pinned to the version read: the records, switches and recoveries
        // read with it are still as seen.
        let condition = and([
            x.eq(attr::STATUS, UserStatus::Active),
            x.eq(attr::VERSION, profile.version),
        ]);
        (update, condition)
    })?;
    plan.push(restore, read_profile);
    // Consumed: the token works once. Its hash is checked in the write too.
    let consume = plan::delete(table, keys::change_key(user, undo.change.version), |x| {
        and([
            x.contains(attr::TOKEN_HASHES, token_hash),
            x.gt(attr::RECOVERABLE_UNTIL, now),
        ])
    })?;
    plan.push(consume, read_changed);
    match undo.former_now {
        Some(record) => {
            // Following the link proved the mailbox: verified, whatever it was.
            let promote = plan::update(table, keys::email_key(user, record.email_id), |x| {
                let update = Update::default()
                    .set(x.eq(attr::IS_PRIMARY, true))
                    .set(x.eq(attr::IS_VERIFIED, true))
                    .set(x.eq(attr::VERIFIED_AT, record.verified_at.unwrap_or(now)))
                    .set(x.eq(attr::PRIMARY_VERSION, version))
                    .remove(x.name(attr::CODE_HASH))
                    .remove(x.name(attr::CODE_EXPIRES_AT))
                    .remove(x.name(attr::CODE_ATTEMPTS))
                    .remove(x.name(attr::CODE_SENT_AT))
                    .remove(x.name(attr::RESERVED_UNTIL));
                (update, x.exists(keys::PK))
            })?;
            plan.push(promote, read_changed);
            if !record.is_verified {
                let held = plan::update(table, keys::claim_key(&record.canonical()), |x| {
                    let update = Update::default()
                        .remove(x.name(attr::EXPIRES_AT))
                        .remove(x.name(attr::RESERVED_UNTIL));
                    (update, own_claim(x, record))
                })?;
                plan.push(held, read_changed);
            }
        }
        None => {
            // Removed since the switch: written back, and its reservation
            // becomes its claim again.
            let mut back = former.clone();
            back.is_primary = true;
            back.primary_version = Some(version);
            back.reserved_until = None;
            let put = plan::put(table, items::email_item(&back)?, |x| x.not_exists(keys::PK))?;
            plan.push(put, read_changed);
            let claim = if claim == FormerClaim::Free {
                let fresh = items::claim_item(&former.canonical(), &back.claim(None))?;
                plan::put(table, fresh, |x| x.not_exists(keys::PK))?
            } else {
                plan::update(table, keys::claim_key(&former.canonical()), |x| {
                    let update = Update::default()
                        .remove(x.name(attr::RESERVED_UNTIL))
                        .remove(x.name(keys::TTL));
                    let reservation = and([own_claim(x, former), x.not_exists(attr::EXPIRES_AT)]);
                    (update, reservation)
                })?
            };
            plan.push(claim, read_changed);
        }
    }
    if let Some(primary) = undo.demoted {
        let demote = plan::update(table, keys::email_key(user, primary.email_id), |x| {
            (Update::default().set(x.eq(attr::IS_PRIMARY, false)), x.exists(keys::PK))
        })?;
        plan.push(demote, read_changed);
    }
    for record in &undo.removed {
        let delete = plan::delete(table, keys::email_key(user, record.email_id), |x| x.exists(keys::PK))?;
        plan.push(delete, read_changed);
        push_own_claim_delete(&mut plan, table, record)?;
    }
    Ok(plan)
}

/// The claim is `record`'s own.
pub(super) fn own_claim(x: &mut Expr, record: &EmailItem) -> String {
    and([
        x.eq(attr::USER_ID, &record.user_id),
        x.eq(attr::EMAIL_ID, record.email_id),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address_policy::Canonicalization;
    use crate::domain::EmailAddress;
    use crate::store::ops::fixtures::{new_user, now, user};
    use crate::store::plan::tests::assert_well_formed;

    const WEEK: i64 = 7 * 86_400;

    fn claim_of(undo: &Undo<'_>) -> FormerClaim {
        if undo.former_now.is_some() {
            FormerClaim::OnRecord
        } else {
            FormerClaim::Reserved
        }
    }

    fn record(address: &str, minutes: i64) -> EmailItem {
        let mut r = EmailItem::verified_primary(
            &user(),
            &EmailAddress::parse(address).unwrap(),
            Canonicalization::NONE,
            now().plus_seconds(minutes * 60),
        );
        r.is_primary = false;
        r
    }

    /// The owner's `a`, an old `b`, then the thief's `x` made primary at
    /// version 5, and `y` added after.
    fn takeover() -> (ProfileItem, Vec<EmailItem>, PrimaryChangeItem) {
        let mut a = record("a@example.com", 0);
        a.is_primary = true;
        let b = record("b@example.com", 1);
        let mut x = record("x@example.com", 10);
        let y = record("y@example.com", 30);
        let change = PrimaryChangeItem::new(&a, &x, 5, now().plus_seconds(20 * 60), WEEK);
        a.is_primary = false;
        x.is_primary = true;
        let mut profile = ProfileItem::new(&new_user(), 4, now());
        profile.version = 6;
        (profile, vec![a, b, x, y], change)
    }

    #[test]
    fn the_former_becomes_primary_and_what_came_with_the_switch_goes() {
        let (profile, emails, change) = takeover();
        let at = now().plus_seconds(3600);
        let undo = Undo::of(&profile, &emails, &change, at, WEEK);
        assert_eq!(undo.former_now.unwrap().email_id, emails[0].email_id);
        let removed: Vec<_> = undo.removed.iter().map(|r| r.email.as_str()).collect();
        assert_eq!(removed, ["x@example.com", "y@example.com"], "b was the owner's before");
        assert!(undo.demoted.is_none(), "the primary is removed");
        assert_eq!(undo.email_count(&profile), 2);
        assert_eq!(
            undo.recoveries,
            [Recovery {
                from_version: 5,
                to_version: 7,
                at
            }]
        );
        let plan = plan("t", &profile, &undo, claim_of(&undo), "h").unwrap();
        assert_well_formed(&plan);
        // Profile, switch consumed, former promoted, two records and their claims.
        assert_eq!(plan.items().len(), 7);
        let restore = plan.items()[0].update().unwrap();
        assert_eq!(
            restore.condition_expression(),
            Some("#status = :status AND #version = :version")
        );
        let values = restore.expression_attribute_values().unwrap();
        assert_eq!(values[":email"].as_s().unwrap(), "a@example.com");
        assert_eq!(
            values[":tokensValidAfter"].as_n().unwrap(),
            &at.unix_seconds().to_string()
        );
        let consume = plan.items()[1].delete().unwrap();
        assert_eq!(consume.key(), &keys::change_key(&user(), 5));
        assert!(
            consume
                .condition_expression()
                .unwrap()
                .contains("contains(#tokenHashes, :tokenHashes)")
        );
        let outcome = undo.outcome(profile);
        assert_eq!(outcome.profile.email.unwrap().as_str(), "a@example.com");
        assert_eq!(
            (outcome.profile.version, outcome.removed, outcome.undone_version),
            (7, 2, 5)
        );
    }

    #[test]
    fn a_removed_former_is_written_back_from_its_reservation() {
        let (mut profile, mut emails, change) = takeover();
        emails.remove(0);
        profile.email_count = 3;
        let undo = Undo::of(&profile, &emails, &change, now().plus_seconds(3600), WEEK);
        assert!(undo.former_now.is_none());
        assert_eq!(undo.email_count(&profile), 2, "a back, x and y gone");
        let plan = plan("t", &profile, &undo, claim_of(&undo), "h").unwrap();
        assert_well_formed(&plan);
        let put = plan.items()[2].put().unwrap();
        let back: EmailItem = items::from_item(put.item().clone()).unwrap();
        assert_eq!(back.email_id, change.former.email_id);
        assert!(back.is_primary && back.is_verified);
        assert_eq!(back.reserved_until, None);
        let claim = plan.items()[3].update().unwrap();
        assert_eq!(claim.key(), &keys::claim_key(&change.former.canonical()));
        assert!(
            claim
                .condition_expression()
                .unwrap()
                .contains("attribute_not_exists(#expiresAt)")
        );
    }

    #[test]
    fn a_later_switch_to_an_older_address_is_demoted_not_removed() {
        let (profile, mut emails, change) = takeover();
        // The thief moved on from x to the owner's older b.
        emails[2].is_primary = false;
        emails[1].is_primary = true;
        let undo = Undo::of(&profile, &emails, &change, now().plus_seconds(3600), WEEK);
        assert_eq!(undo.demoted.unwrap().email.as_str(), "b@example.com");
        assert_eq!(undo.removed.len(), 2);
    }

    #[test]
    fn old_recoveries_are_dropped_after_the_window() {
        let (mut profile, emails, change) = takeover();
        let at = now().plus_seconds(3600);
        let old = Recovery {
            from_version: 1,
            to_version: 2,
            at: at.plus_seconds(-WEEK - 1),
        };
        let recent = Recovery {
            from_version: 3,
            to_version: 4,
            at: at.plus_seconds(-60),
        };
        profile.recoveries = vec![old, recent];
        let undo = Undo::of(&profile, &emails, &change, at, WEEK);
        assert_eq!(undo.recoveries.len(), 2);
        assert_eq!(undo.recoveries[0], recent);
        assert!(recent.undid(3) && !recent.undid(4) && !recent.undid(2));
    }

    #[test]
    fn the_largest_account_recovers_in_one_transaction() {
        let (mut profile, _, _) = takeover();
        let max = crate::config::StoreConfig::MAX_EMAILS_CAP as i64;
        let a = record("a@example.com", 0);
        // The former removed, every other slot filled since the switch.
        let emails: Vec<EmailItem> = (0..max).map(|i| record(&format!("t{i}@example.com"), i + 1)).collect();
        let change = PrimaryChangeItem::new(&a, &emails[0], 5, now(), WEEK);
        profile.email_count = u32::try_from(max).unwrap();
        let undo = Undo::of(&profile, &emails, &change, now().plus_seconds(60), WEEK);
        let plan = plan("t", &profile, &undo, claim_of(&undo), "h").unwrap();
        assert!(plan.items().len() <= 100, "{} items", plan.items().len());
    }
}
