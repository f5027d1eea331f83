//! Migration at sign-in: a user the import left pending (a profile under a
//! provisional id, its addresses claimed, its legacy password hash apart),
//! found by address for Cognito's migration trigger, and moved whole to the
//! `sub` Cognito gives it when it first appears: profile, records, claims, and
//! the hash gone, in one transaction.

use crate::domain::{EmailAddress, NewAccount, Timestamp, UserId, UserStatus};
use crate::import::PasswordHash;
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and};
use crate::store::items::{self, EmailItem, EntityType, LegacyPasswordItem, ProfileItem, attr};
use crate::store::keys;
use crate::store::limits;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
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
            // A run at the same time wrote the same line first.
            Err(StoreError::EmailTaken) => match self.pending_user(&account.user.email).await? {
                Some(existing) => Ok((existing.profile.user_id, Created::Existing)),
                None => Err(StoreError::EmailTaken),
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

    /// Counts one wrong password against a pending user's hash, pinned to the
    /// version read. A count lost to a concurrent one is read and tried again;
    /// a hash gone meanwhile (migrated, erased) counts nothing.
    pub async fn count_wrong_password(&self, seen: &LegacyPasswordItem, now: Timestamp) -> Result<(), StoreError> {
        let mut seen = seen.clone();
        retrying!({
            let item = items::to_item(keys::legacy_password_key(&seen.user_id), &counted(&seen, now))?;
            let put = plan::put(self.table(), item, |x| x.eq(attr::VERSION, seen.version))?;
            let mut plan = TxPlan::new();
            plan.push(put, read_changed);
            match self.transact(&plan).await {
                Ok(()) => Ok(()),
                Err(Rejection::Retry) => match self.get(keys::legacy_password_key(&seen.user_id)).await? {
                    Some(item) => {
                        seen = items::from_item(item)?;
                        Err(Rejection::Again)
                    }
                    None => Ok(()),
                },
                Err(other) => Err(other),
            }
        })
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

/// The item with one more wrong password at `now`, and those older than the window dropped.
fn counted(legacy: &LegacyPasswordItem, now: Timestamp) -> LegacyPasswordItem {
    let mut wrong_passwords = limits::recent_of(&legacy.wrong_passwords, now);
    wrong_passwords.push(now.unix_seconds());
    LegacyPasswordItem {
        wrong_passwords,
        version: legacy.version + 1,
        ..legacy.clone()
    }
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
            legacy = counted(&legacy, now().plus_seconds(i as i64));
        }
        // The one from over a day ago was dropped on the first count.
        assert_eq!(legacy.wrong_passwords.len(), MAX_WRONG_PASSWORDS);
        assert_eq!(legacy.version, 1 + MAX_WRONG_PASSWORDS as u64);
        let later = now().plus_seconds(60);
        assert_eq!(password_admitted(&legacy, later), Err(WINDOW_SECONDS as u64 - 60));
        // A day after the first, one slot frees.
        assert_eq!(password_admitted(&legacy, now().plus_seconds(WINDOW_SECONDS)), Ok(()));
    }
}
