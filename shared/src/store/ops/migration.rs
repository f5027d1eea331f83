//! Migration at sign-in: a user the import left pending (a profile under a
//! provisional id, its addresses claimed, its legacy password hash apart),
//! found by address for Cognito's migration trigger, and moved whole to the
//! `sub` Cognito gives it when it first appears: profile, records, claims, and
//! the hash gone, in one transaction.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

use crate::domain::{EmailAddress, NewAccount, Timestamp, UserId, UserStatus};
use crate::import::PasswordHash;
use crate::metrics::{self, Metric};
use crate::store::expr::{Expr, Update, and, or};
use crate::store::items::{self, EmailItem, EntityType, LegacyPasswordItem, ProfileItem, attr};
use crate::store::keys;
use crate::store::limits;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{refused_or_raced, retrying, send_by_deadline};
use crate::store::{Created, Store, StoreError};

use super::profile::read_changed;

/// Wrong passwords a pending user's legacy hash is tried against in a
/// rolling day; past it the trigger refuses before hashing. Forgot-password
/// still migrates the user, so this locks out a guesser, not the owner.
pub const MAX_WRONG_PASSWORDS: usize = 10;

/// A pending user as the migration trigger reads them.
#[derive(Debug, Clone)]
pub struct PendingUser {
    /// The profile under its provisional id.
    pub profile: ProfileItem,
    /// Its legacy password, if the import gave one.
    pub password: Option<LegacyPasswordItem>,
}

/// What [`Store::adopt_pending`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adopted {
    /// The pending user is now the new `sub`'s: this call moved it.
    Moved,
    /// The new `sub` has its profile already (an earlier delivery moved it).
    Existing,
    /// No pending user holds the address.
    NoPending,
    /// The pending user is suspended: nothing moves until an admin reactivates it.
    Suspended,
}

impl Store {
    /// Writes a user to migrate at sign-in: the account as
    /// [`Store::create_account`] writes it, under its provisional id
    /// (`account.user.user_id`, from [`UserId::new_pending`]), with no
    /// Cognito user, and the legacy hash in its own item. Idempotent by the
    /// primary address: a pending user who has it already is returned,
    /// `Existing`, whatever id this call was given.
    pub async fn create_pending_account(
        &self,
        account: &NewAccount,
        password: &PasswordHash,
        now: Timestamp,
    ) -> Result<(UserId, Created), StoreError> {
        let pending = account.user.user_id.clone();
        if !pending.is_pending() {
            return Err(StoreError::Inconsistent("a pending account needs a pending id"));
        }
        if let Some(existing) = self.pending_user(&account.user.email).await? {
            return Ok((existing.profile.user_id, Created::Existing));
        }
        let legacy = LegacyPasswordItem {
            entity_type: EntityType::LegacyPassword,
            user_id: pending.clone(),
            password_hash: password.clone(),
            wrong_passwords: Vec::new(),
            version: 1,
        };
        match self.create_with(account, Some(&legacy), now).await {
            Ok(created) => Ok((pending, created)),
            // A run at the same time wrote the same line first, or an earlier
            // one did and the user has migrated since: the line's own person.
            Err(StoreError::EmailTaken) => match self.pending_user(&account.user.email).await? {
                Some(existing) => Ok((existing.profile.user_id, Created::Existing)),
                None => match &account.import_key {
                    Some(import_key) => match self.line_holder(&account.user.email, import_key).await? {
                        Some(holder) => Ok((holder, Created::Existing)),
                        None => Err(StoreError::EmailTaken),
                    },
                    None => Err(StoreError::EmailTaken),
                },
            },
            Err(err) => Err(err),
        }
    }

    /// The pending user holding `address` (its verified claim), with its
    /// legacy password; `None` when no pending user holds it. Strongly
    /// consistent reads: the claim, the profile, the hash.
    pub async fn pending_user(&self, address: &EmailAddress) -> Result<Option<PendingUser>, StoreError> {
        let Some(pending) = self.pending_holder(address).await? else {
            return Ok(None);
        };
        let (profile, password) = futures::future::try_join(
            self.get(keys::profile_key(&pending)),
            self.get(keys::legacy_password_key(&pending)),
        )
        .await?;
        let Some(profile) = profile.map(items::from_item::<ProfileItem>).transpose()? else {
            return Ok(None);
        };
        if profile.status == UserStatus::Deleted || !self.is_primary_of(&profile, address) {
            return Ok(None);
        }
        Ok(Some(PendingUser {
            profile,
            password: password.map(items::from_item).transpose()?,
        }))
    }

    /// Takes a slot for one password check against a pending user's hash,
    /// before the check runs: the slot counts as a wrong password until
    /// [`Store::give_back_password_slot`] returns it. One UpdateItem whose
    /// condition is the room left (`size(wrongPasswords) < MAX_WRONG_PASSWORDS`),
    /// so concurrent guesses are ordered by DynamoDB and no more than the limit
    /// are ever admitted, with no version to lose a race on. A list full of
    /// slots older than the window is trimmed (pinned to its version) and the
    /// slot taken again.
    pub async fn take_password_slot(&self, user: &UserId, now: Timestamp) -> Result<PasswordSlot, StoreError> {
        let deadline = crate::deadline::deadline_from_now();
        let mut attempt = 0u32;
        loop {
            let old = match self.append_password_slot(user, now).await? {
                Appended::Taken(at) => {
                    return Ok(PasswordSlot::Taken(Slot {
                        at,
                        time: now.unix_seconds(),
                    }));
                }
                Appended::Refused(None) => return Ok(PasswordSlot::Gone),
                Appended::Refused(Some(old)) => Some(old),
                Appended::Conflict => None,
            };
            if let Some(old) = old {
                if let Err(retry_after) = password_admitted(&old, now) {
                    return Ok(PasswordSlot::Full(retry_after));
                }
                // Full only of slots older than the window: drop them. A
                // trim lost to another writer changed the list too.
                let recent = limits::recent_of(&old.wrong_passwords, now);
                self.rewrite_password_slots(user, old.version, recent).await?;
            }
            attempt += 1;
            let pause = crate::store::retry::backoff(attempt);
            if !crate::store::retry::may_retry(attempt, pause, deadline) {
                return Err(StoreError::Contended.failed());
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// One conditional append of a slot at `now`: taken (at its place in the
    /// list), or refused with the item as it was (`None`: no hash any more),
    /// or lost to a transaction.
    async fn append_password_slot(&self, user: &UserId, now: Timestamp) -> Result<Appended, StoreError> {
        let mut x = Expr::default();
        let list = x.name(attr::WRONG_PASSWORDS);
        let empty = x.value(attr::WRONG_PASSWORDS, AttributeValue::L(Vec::new()));
        let slot = x.value(
            attr::WRONG_PASSWORDS,
            AttributeValue::L(vec![AttributeValue::N(now.unix_seconds().to_string())]),
        );
        let cap = x.value(
            attr::WRONG_PASSWORDS,
            u64::try_from(MAX_WRONG_PASSWORDS).unwrap_or(u64::MAX),
        );
        let update = Update::default()
            .set(format!("{list} = list_append(if_not_exists({list}, {empty}), {slot})"))
            .set(x.add(attr::VERSION, 1));
        let room = or(x.not_exists(attr::WRONG_PASSWORDS), format!("size({list}) < {cap}"));
        let condition = and([x.exists(keys::PK), room]);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::legacy_password_key(user)))
            .update_expression(update.text())
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .return_values(ReturnValue::UpdatedNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        match send_by_deadline!(&self.client, request) {
            Ok(out) => {
                let len = out
                    .attributes
                    .as_ref()
                    .and_then(|a| a.get(attr::WRONG_PASSWORDS))
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

    /// Gives back a slot [`Store::take_password_slot`] took, once the password
    /// matched (or the hash could not be checked): it was no guess. One
    /// UpdateItem removes it where it was put, on condition that it is still
    /// there; when the list moved meanwhile (a trim, another slot given back),
    /// it is found again and removed pinned to the version read. A hash gone
    /// meanwhile (migrated, erased) has nothing to give back to.
    pub async fn give_back_password_slot(&self, user: &UserId, slot: Slot) -> Result<(), StoreError> {
        let mut x = Expr::default();
        let list = x.name(attr::WRONG_PASSWORDS);
        let time = x.value(attr::WRONG_PASSWORDS, slot.time);
        let update = Update::default()
            .remove(format!("{list}[{}]", slot.at))
            .set(x.add(attr::VERSION, 1));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::legacy_password_key(user)))
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
            let Some(item) = self.get(keys::legacy_password_key(user)).await? else {
                return Ok(());
            };
            let seen: LegacyPasswordItem = items::from_item(item)?;
            let Some(at) = seen.wrong_passwords.iter().position(|t| *t == slot.time) else {
                return Ok(());
            };
            let mut slots = seen.wrong_passwords;
            slots.remove(at);
            if self.rewrite_password_slots(user, seen.version, slots).await? {
                Ok(())
            } else {
                Err(Rejection::Retry)
            }
        })
    }

    /// Writes the hash item's slots as `slots`, pinned to the version read:
    /// `false` when another writer moved it first.
    async fn rewrite_password_slots(&self, user: &UserId, version: u64, slots: Vec<i64>) -> Result<bool, StoreError> {
        let mut x = Expr::default();
        let list = AttributeValue::L(slots.iter().map(|t| AttributeValue::N(t.to_string())).collect());
        let update = Update::default()
            .set(x.eq(attr::WRONG_PASSWORDS, list))
            .set(x.add(attr::VERSION, 1));
        let condition = x.eq(attr::VERSION, version);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::legacy_password_key(user)))
            .update_expression(update.text())
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        match send_by_deadline!(&self.client, request) {
            Ok(_) => Ok(true),
            Err(err) if refused_or_raced(&err) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    /// Moves the pending user holding `address` to `user`, the `sub` Cognito
    /// gave it: the profile (active, Cognito's address its primary), every
    /// record and the claim of each under the new id, the provisional items
    /// and the legacy hash deleted, in one transaction pinned to the pending
    /// profile's version. Idempotent: a second delivery finds the new profile.
    pub async fn adopt_pending(
        &self,
        address: &EmailAddress,
        user: &UserId,
        now: Timestamp,
    ) -> Result<Adopted, StoreError> {
        retrying!({
            let Some(pending) = self.pending_holder(address).await? else {
                return Ok(self.moved_already(user).await?);
            };
            let (items, password) =
                futures::future::try_join(self.user_items(&pending), self.get(keys::legacy_password_key(&pending)))
                    .await?;
            let Some(profile) = items
                .profile
                .filter(|p| p.status != UserStatus::Deleted && self.is_primary_of(p, address))
            else {
                return Ok(self.moved_already(user).await?);
            };
            if profile.status == UserStatus::Suspended {
                return Ok(Adopted::Suspended);
            }
            let plan = adoption(self.table(), &profile, &items.emails, password.is_some(), user, now)?;
            match self.transact(&plan).await {
                Ok(()) => {
                    metrics::count(Metric::UsersMigrated);
                    Ok(Adopted::Moved)
                }
                Err(Rejection::UserExists) => Ok(Adopted::Existing),
                Err(other) => Err(other),
            }
        })
    }

    /// No pending user holds the address: `Existing` if a delivery racing
    /// this one moved it to `user` a moment ago (its create failed on the
    /// pending user's claim just before), else `NoPending`. Read strongly
    /// consistent, so the sign-up of a user who has their profile is never
    /// closed.
    async fn moved_already(&self, user: &UserId) -> Result<Adopted, StoreError> {
        Ok(match self.profile_status(user).await? {
            Some(_) => Adopted::Existing,
            None => Adopted::NoPending,
        })
    }

    /// Whether `address` is the pending user's primary: only the primary
    /// migrates them. A verified secondary address (an old work mailbox, say)
    /// proves less, and its sign-up is closed as any other's.
    fn is_primary_of(&self, profile: &ProfileItem, address: &EmailAddress) -> bool {
        profile
            .email
            .as_ref()
            .is_some_and(|primary| self.policy.same(primary, address))
    }

    /// The pending user whose verified claim holds `address`, by any of its forms.
    async fn pending_holder(&self, address: &EmailAddress) -> Result<Option<UserId>, StoreError> {
        Ok(self
            .claims(address)
            .await?
            .into_iter()
            .find(|claim| claim.expires_at.is_none() && claim.user_id.is_pending())
            .map(|claim| claim.user_id))
    }
}

/// Whether another password may be tried against `legacy` at `now`: `Err`
/// with the seconds until one may, past [`MAX_WRONG_PASSWORDS`] in the window.
pub fn password_admitted(legacy: &LegacyPasswordItem, now: Timestamp) -> Result<(), u64> {
    let cap = u32::try_from(MAX_WRONG_PASSWORDS).unwrap_or(u32::MAX);
    limits::admit_of(&legacy.wrong_passwords, cap, now)
}

/// What [`Store::take_password_slot`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordSlot {
    /// A check may run: its slot, counted until given back.
    Taken(Slot),
    /// Every slot of the window is taken: seconds until one frees.
    Full(u64),
    /// The hash is gone: the user migrated or was erased meanwhile.
    Gone,
}

/// A slot taken for one password check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Where the append put it in the list (it may have moved since).
    pub at: usize,
    /// Its time, epoch seconds: what the list holds.
    pub time: i64,
}

/// One append's outcome.
enum Appended {
    /// Taken, at this place in the list.
    Taken(usize),
    /// The condition failed; the item as it was.
    Refused(Option<LegacyPasswordItem>),
    Conflict,
}

/// The move of a pending user to `user`. The pending profile's delete pins
/// its version and count, so the records read are all there are; each claim
/// moves only from the pending user; the new profile's absence makes a
/// repeated delivery `UserExists`.
fn adoption(
    table: &str,
    pending: &ProfileItem,
    records: &[EmailItem],
    has_password: bool,
    user: &UserId,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let from = &pending.user_id;
    let profile = ProfileItem {
        user_id: user.clone(),
        status: UserStatus::Active,
        updated_at: now,
        // Cognito signs the user in with the address the trigger gave it: the primary.
        cognito_email: pending.email.clone(),
        sync_requested_at: None,
        gone_from_cognito: false,
        ..pending.clone()
    };
    plan.push(
        plan::put(table, items::profile_item(&profile)?, |x| x.not_exists(keys::PK))?,
        |_| Ok(Rejection::UserExists),
    );
    let remove_pending = plan::delete(table, keys::profile_key(from), |x| {
        and([
            x.eq(attr::VERSION, pending.version),
            x.eq(attr::EMAIL_COUNT, pending.email_count),
            x.eq(attr::STATUS, UserStatus::Active),
        ])
    })?;
    plan.push(remove_pending, read_changed);
    if has_password {
        let forget = plan::delete(table, keys::legacy_password_key(from), |x| x.exists(keys::PK))?;
        plan.push(forget, read_changed);
    }
    for record in records {
        let moved = EmailItem {
            user_id: user.clone(),
            ..record.clone()
        };
        let canonical = moved.canonical();
        plan.push(
            plan::put(table, items::email_item(&moved)?, |x| x.not_exists(keys::PK))?,
            read_changed,
        );
        plan.push(
            plan::delete(table, keys::email_key(from, record.email_id), |x| x.exists(keys::PK))?,
            read_changed,
        );
        let claim = plan::update(table, keys::claim_key(&canonical), |x| {
            let update = Update::default().set(x.eq(attr::USER_ID, user));
            let condition = and([x.eq(attr::USER_ID, from), x.eq(attr::EMAIL_ID, record.email_id)]);
            (update, condition)
        })?;
        plan.push(claim, read_changed);
    }
    if plan.items().len() > 100 {
        return Err(StoreError::LimitReached);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address_policy::Canonicalization;
    use crate::store::limits::WINDOW_SECONDS;
    use crate::store::ops::fixtures::{address, new_user, now};
    use crate::store::plan::tests::assert_well_formed;

    fn pending() -> (ProfileItem, Vec<EmailItem>) {
        let id = UserId::new_pending();
        let user = crate::domain::NewUser {
            user_id: id.clone(),
            ..new_user()
        };
        let mut profile = ProfileItem::new(&user, 2, now());
        profile.version = 3;
        let primary = EmailItem::verified_primary(&id, &address(), Canonicalization::NONE, now());
        let old = EmailItem::imported(
            &id,
            &EmailAddress::parse("ada.old@example.org").unwrap(),
            Canonicalization::NONE,
            false,
            "00".repeat(32),
            now(),
        );
        (profile, vec![primary, old])
    }

    #[test]
    fn the_move_puts_the_new_items_deletes_the_pending_ones_and_moves_each_claim() {
        let (profile, records) = pending();
        let sub = UserId::parse_sub("7c9e6679-7425-40de-944b-e07fc1f90ae7").unwrap();
        let plan = adoption("t", &profile, &records, true, &sub, now()).unwrap();
        assert_well_formed(&plan);
        // Profile put and pending delete, the hash, and three items per record.
        assert_eq!(plan.items().len(), 3 + 3 * records.len());
        let new_profile = plan.items()[0].put().unwrap();
        assert_eq!(new_profile.condition_expression(), Some("attribute_not_exists(#PK)"));
        assert_eq!(new_profile.item()[keys::PK], keys::profile_key(&sub)[keys::PK]);
        assert_eq!(new_profile.item()["cognitoEmail"].as_s().unwrap(), "ada@example.com");
        assert_eq!(new_profile.item()["version"].as_n().unwrap(), "3");
        let gone = plan.items()[1].delete().unwrap();
        assert_eq!(gone.key()[keys::PK], keys::profile_key(&profile.user_id)[keys::PK]);
        assert!(gone.condition_expression().unwrap().contains("#version = :version"));
        let hash = plan.items()[2].delete().unwrap();
        assert_eq!(hash.key(), &keys::legacy_password_key(&profile.user_id));
        for (at, record) in records.iter().enumerate() {
            let put = plan.items()[3 + 3 * at].put().unwrap();
            assert_eq!(put.item()["userId"].as_s().unwrap(), sub.as_str());
            assert_eq!(put.item()[keys::GSI1SK].as_s().unwrap(), &keys::user_pk(&sub));
            let delete = plan.items()[4 + 3 * at].delete().unwrap();
            assert_eq!(delete.key(), &keys::email_key(&profile.user_id, record.email_id));
            let claim = plan.items()[5 + 3 * at].update().unwrap();
            assert_eq!(claim.key(), &keys::claim_key(&record.canonical()));
            assert!(claim.condition_expression().unwrap().contains("#userId = :userId"));
        }
        // The new profile there already: a repeated delivery; anything else moved: read again.
        assert!(matches!(plan.read(0, None), Rejection::UserExists));
        assert!(matches!(plan.read(1, None), Rejection::Retry));
        // Without a hash, no delete of one.
        let plan = adoption("t", &profile, &records, false, &sub, now()).unwrap();
        assert_eq!(plan.items().len(), 2 + 3 * records.len());
    }

    #[test]
    fn wrong_passwords_fill_a_rolling_day_and_then_refuse() {
        let (profile, _) = pending();
        let mut legacy = LegacyPasswordItem {
            entity_type: EntityType::LegacyPassword,
            user_id: profile.user_id,
            password_hash: crate::import::PasswordHash::parse(
                crate::import::HashAlgorithm::Bcrypt,
                "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
            )
            .unwrap(),
            wrong_passwords: vec![now().unix_seconds() - WINDOW_SECONDS - 5],
            version: 1,
        };
        for i in 0..MAX_WRONG_PASSWORDS {
            assert_eq!(password_admitted(&legacy, now()), Ok(()), "{i}");
            // A slot taken, as the append takes it after a trim.
            let at = now().plus_seconds(i as i64);
            legacy.wrong_passwords = limits::recent_of(&legacy.wrong_passwords, at);
            legacy.wrong_passwords.push(at.unix_seconds());
            legacy.version += 1;
        }
        // The one from over a day ago was dropped on the first trim.
        assert_eq!(legacy.wrong_passwords.len(), MAX_WRONG_PASSWORDS);
        assert_eq!(legacy.version, 1 + MAX_WRONG_PASSWORDS as u64);
        let later = now().plus_seconds(60);
        assert_eq!(password_admitted(&legacy, later), Err(WINDOW_SECONDS as u64 - 60));
        // A day after the first, one slot frees.
        assert_eq!(password_admitted(&legacy, now().plus_seconds(WINDOW_SECONDS)), Ok(()));
    }
}
