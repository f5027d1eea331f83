//! Making a verified address the primary one: old off, new on, profile follows,
//! all or nothing.

use crate::domain::{EmailId, Profile, Timestamp, UserId, UserStatus};
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and, or};
use crate::store::items::{EmailItem, PrimaryChangeItem, ProfileItem, attr, change_item};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::profile::{read_changed, read_profile, writable};

impl Store {
    /// Makes a verified address the primary one, atomically.
    pub async fn set_primary(&self, user: &UserId, email_id: EmailId, now: Timestamp) -> Result<Profile, StoreError> {
        self.switch_primary(user, email_id, None, now).await
    }

    /// [`Store::set_primary`], under a power's conditions (`under`): its
    /// checks join the switch's transaction, and, when it names a most of
    /// organizations, the profile must count no more.
    pub(in crate::store) async fn switch_primary(
        &self,
        user: &UserId,
        email_id: EmailId,
        under: Option<&Under<'_>>,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        retrying!({
            let items = self.user_items(user).await?;
            let profile = writable(items.profile)?;
            if let Some(held) = under.and_then(|u| u.held)
                && profile.version != held.version
            {
                return Err(StoreError::VersionMismatch {
                    current: profile.version,
                }
                .into());
            }
            let target = items
                .emails
                .iter()
                .find(|r| r.email_id == email_id)
                .ok_or(StoreError::NotFound)?;
            if target.is_primary {
                return Ok(profile.into_domain());
            }
            if !target.is_verified {
                return Err(StoreError::NotVerified.into());
            }
            let current = items
                .emails
                .iter()
                .find(|r| r.is_primary)
                .ok_or(StoreError::Inconsistent("active user without a primary address"))?;
            let switch = Switch {
                former: current,
                new_primary: target,
                window_seconds: self.config.address_recovery_seconds,
                most_organizations: under.and_then(|u| u.most_organizations),
                email_count: under.and_then(|u| u.held).map(|h| h.email_count),
                now,
            };
            let mut plan = plan(self.table(), &profile, &switch)?;
            if let Some(under) = under {
                (under.push)(&mut plan)?;
            }
            self.transact(&plan).await?;
            metrics::count(Metric::PrimarySwitches);
            let mut updated = profile.into_domain();
            updated.email = Some(target.email.clone());
            updated.version += 1;
            updated.updated_at = now;
            Ok(updated)
        })
    }
}

/// A failed promotion: the record is gone or not verified; else it changed.
fn read_new_primary(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<EmailItem>(old)? {
        None => Rejection::Failed(StoreError::NotFound),
        Some(record) if !record.is_verified => Rejection::Failed(StoreError::NotVerified),
        Some(_) => Rejection::Retry,
    })
}

/// The conditions of a power a write is made under (a directory's): its
/// checks, pushed into the write's transaction, and, where the power holds
/// only over an account no more organizations use, that most.
pub(in crate::store) struct Under<'a> {
    /// Pushes the power's checks.
    pub push: &'a (dyn Fn(&mut TxPlan) -> Result<(), StoreError> + Send + Sync),
    /// The most organizations the account may belong to.
    pub most_organizations: Option<u32>,
    /// The profile as the power's plan read it, which the switch must find.
    pub held: Option<Held>,
}

/// A profile as a plan read it: its version and its count of addresses.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) struct Held {
    /// The version.
    pub version: u64,
    /// How many addresses it held.
    pub email_count: u32,
}

/// A switch from `former` to `new_primary`, undoable from `former` for `window_seconds`.
struct Switch<'a> {
    former: &'a EmailItem,
    new_primary: &'a EmailItem,
    window_seconds: i64,
    most_organizations: Option<u32>,
    /// The count of addresses the profile must still hold (none added or removed since).
    email_count: Option<u32>,
    now: Timestamp,
}

fn plan(table: &str, profile: &ProfileItem, switch: &Switch<'_>) -> Result<TxPlan, StoreError> {
    let &Switch {
        former,
        new_primary,
        window_seconds,
        most_organizations,
        email_count,
        now,
    } = switch;
    let mut plan = TxPlan::new();
    let user = &profile.user_id;
    // Pinned to the version read, so the records read with it are still as seen.
    let follow = plan::update(table, keys::profile_key(user), |x| {
        let mut update = Update::default()
            .set(x.eq(attr::EMAIL, &new_primary.email))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now));
        // A profile from before Cognito's address was kept: the primary it had
        // is what Cognito signs in with until the switch reaches Cognito, so it
        // is recorded as such, or its removal would not wait for the sync.
        if let Some(previous) = profile.email.as_ref().filter(|_| profile.cognito_email.is_none()) {
            let name = x.name(attr::COGNITO_EMAIL);
            let value = x.value(attr::COGNITO_EMAIL, previous);
            update = update.set(format!("{name} = if_not_exists({name}, {value})"));
        }
        let mut condition = and([
            x.eq(attr::STATUS, UserStatus::Active),
            x.eq(attr::VERSION, profile.version),
        ]);
        if let Some(most) = most_organizations {
            let room = or(x.not_exists(attr::ORGANIZATIONS), x.le(attr::ORGANIZATIONS, most));
            condition = and([condition, room]);
        }
        if let Some(count) = email_count {
            condition = and([condition, x.eq(attr::EMAIL_COUNT, count)]);
        }
        (update, condition)
    })?;
    plan.push(follow, move |old| {
        // Another organization's, or an address added or removed, since the
        // read: the power no longer holds as planned.
        if let Some(found) = plan::old::<ProfileItem>(old)?
            && (most_organizations.is_some_and(|most| found.organizations > most)
                || email_count.is_some_and(|count| found.email_count != count))
        {
            return Ok(Rejection::Failed(StoreError::VersionMismatch {
                current: found.version,
            }));
        }
        read_profile(old)
    });
    // The former primary can undo the switch for the window, and stays
    // reserved to the account until then, even if removed.
    let change = PrimaryChangeItem::new(former, new_primary, profile.version + 1, now, window_seconds);
    let demote = plan::update(table, keys::email_key(user, former.email_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::IS_PRIMARY, false))
            .set(x.eq(attr::RESERVED_UNTIL, change.recoverable_until));
        (update, x.eq(attr::IS_PRIMARY, true))
    })?;
    plan.push(demote, read_changed);
    // A fresh version cannot have a switch yet: present, the profile moved.
    let undoable = plan::put(table, change_item(&change)?, |x| x.not_exists(keys::PK))?;
    plan.push(undoable, read_changed);
    let promote = plan::update(table, keys::email_key(user, new_primary.email_id), |x| {
        let update = Update::default()
            .set(x.eq(attr::IS_PRIMARY, true))
            .set(x.eq(attr::PRIMARY_VERSION, profile.version + 1));
        let condition = and([
            x.exists(keys::PK),
            x.eq(attr::IS_VERIFIED, true),
            x.eq(attr::IS_PRIMARY, false),
        ]);
        (update, condition)
    })?;
    plan.push(promote, read_new_primary);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::EmailAddress;
    use crate::store::items;
    use crate::store::ops::fixtures::{failed, new_user, now, profile, user};
    use crate::store::plan::tests::assert_well_formed;

    fn former() -> EmailItem {
        EmailItem::verified_primary(
            &user(),
            &EmailAddress::parse("a@example.com").unwrap(),
            crate::address_policy::Canonicalization::NONE,
            now(),
        )
    }

    /// A verified address that is not yet the primary.
    fn next_primary() -> EmailItem {
        let mut next = EmailItem::verified_primary(
            &user(),
            &EmailAddress::parse("b@example.com").unwrap(),
            crate::address_policy::Canonicalization::NONE,
            now(),
        );
        next.is_primary = false;
        next
    }

    fn switch<'a>(former: &'a EmailItem, new_primary: &'a EmailItem) -> Switch<'a> {
        Switch {
            former,
            new_primary,
            window_seconds: 7 * 86_400,
            most_organizations: None,
            email_count: None,
            now: now(),
        }
    }

    #[test]
    fn a_switch_leaves_its_undoing_to_the_former_address_and_reserves_it() {
        let stored = ProfileItem::new(&new_user(), 2, now());
        let old = former();
        let next = next_primary();
        let plan = plan("t", &stored, &switch(&old, &next)).unwrap();
        let until = now().plus_seconds(7 * 86_400);
        let demote = plan.items()[1].update().unwrap();
        assert!(demote.update_expression().contains("#reservedUntil = :reservedUntil"));
        assert_eq!(
            demote.expression_attribute_values().unwrap()[":reservedUntil"]
                .as_s()
                .unwrap(),
            &until.to_string()
        );
        let put = plan.items()[2].put().unwrap();
        assert_eq!(put.condition_expression(), Some("attribute_not_exists(#PK)"));
        let change: PrimaryChangeItem = crate::store::items::from_item(put.item().clone()).unwrap();
        assert_eq!(
            change.version,
            stored.version + 1,
            "named by the version the switch writes"
        );
        assert_eq!(change.former.email_id, old.email_id);
        assert_eq!(change.former.email, old.email);
        assert_eq!(change.new_email_id, next.email_id);
        assert_eq!(change.recoverable_until, until);
        assert_eq!(change.ttl, until.unix_seconds());
        assert!(change.token_hashes.is_empty());
        assert_eq!(put.item()["SK"].as_s().unwrap(), &keys::change_sk(stored.version + 1));
        assert!(matches!(plan.read(2, None), Rejection::Retry));
    }

    #[test]
    fn set_primary_flips_both_records_and_bumps_the_profile() {
        let stored = ProfileItem::new(&new_user(), 2, now());
        let old = former();
        let next = next_primary();
        let plan = plan("t", &stored, &switch(&old, &next)).unwrap();
        assert_well_formed(&plan);
        let p = plan.items()[0].update().unwrap();
        assert!(p.update_expression().contains("#version = #version + :versionBy"));
        assert_eq!(
            p.condition_expression(),
            Some("#status = :status AND #version = :version")
        );
        assert_eq!(
            plan.items()[1].update().unwrap().condition_expression(),
            Some("#isPrimary = :isPrimary2")
        );
        assert!(
            plan.items()[3]
                .update()
                .unwrap()
                .condition_expression()
                .unwrap()
                .contains("#isVerified = :isVerified")
        );

        let suspended = profile(UserStatus::Suspended, 2, 2);
        assert!(matches!(
            failed(plan.read(0, Some(&suspended))),
            StoreError::AccountInactive
        ));
        let moved = profile(UserStatus::Active, 2, 3);
        assert!(matches!(plan.read(0, Some(&moved)), Rejection::Retry));
        assert!(matches!(plan.read(1, None), Rejection::Retry));
        assert!(matches!(failed(plan.read(3, None)), StoreError::NotFound));
        let mut unverified = next.clone();
        unverified.is_verified = false;
        let item = items::email_item(&unverified).unwrap();
        assert!(matches!(failed(plan.read(3, Some(&item))), StoreError::NotVerified));
    }

    #[test]
    fn an_older_profiles_switch_records_the_former_primary_as_cognitos_address() {
        let next = next_primary();
        let recorded = ProfileItem::new(&new_user(), 2, now());
        let old = former();
        let plan_of = |profile: &ProfileItem| plan("t", profile, &switch(&old, &next)).unwrap();
        let update = plan_of(&recorded).items()[0]
            .update()
            .unwrap()
            .update_expression()
            .to_owned();
        assert!(!update.contains("cognitoEmail"), "{update}");
        let older = ProfileItem {
            cognito_email: None,
            ..recorded
        };
        let plan = plan_of(&older);
        assert_well_formed(&plan);
        let update = plan.items()[0].update().unwrap();
        assert!(
            update
                .update_expression()
                .contains("#cognitoEmail = if_not_exists(#cognitoEmail, :cognitoEmail)"),
            "{}",
            update.update_expression()
        );
        let value = &update.expression_attribute_values().unwrap()[":cognitoEmail"];
        assert_eq!(value.as_s().unwrap(), older.email.as_ref().unwrap().as_str());
    }

    #[test]
    fn a_directorys_switch_holds_the_account_as_its_plan_found_it() {
        let stored = ProfileItem::new(&new_user(), 2, now());
        let old = former();
        let next = next_primary();
        let held = Switch {
            most_organizations: Some(1),
            email_count: Some(2),
            ..switch(&old, &next)
        };
        let plan = plan("t", &stored, &held).unwrap();
        let condition = plan.items()[0]
            .update()
            .unwrap()
            .condition_expression()
            .unwrap()
            .to_owned();
        assert!(condition.contains("#organizations <= :organizations"), "{condition}");
        assert!(condition.contains("#emailCount = :emailCount"), "{condition}");
        // An address added since: the power's plan no longer holds, and it is read again.
        let mut grown = stored.clone();
        grown.email_count = 3;
        let item = items::to_item(keys::profile_key(&stored.user_id), &grown).unwrap();
        assert!(matches!(
            plan.read(0, Some(&item)),
            Rejection::Failed(StoreError::VersionMismatch { .. })
        ));
    }
}
