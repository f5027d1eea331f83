//! Editing a profile at the version the client read: one conditioned UpdateItem,
//! and what its failure means.

use crate::domain::{Profile, ProfilePatch, Timestamp, UserId, UserStatus};
use crate::keys::{self, Item};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{ProfileItem, attr};
use crate::store::plan;
use crate::store::{Store, StoreError};

use super::profile::refusal;

impl Store {
    /// Edits the profile if it is still at `expected_version`.
    pub async fn update_profile(
        &self,
        user: &UserId,
        expected_version: u64,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        // Marks the profile with this call alone: an SDK retry resends it, another
        // request (even the same edit at the same instant) cannot have it.
        let write_id = uuid::Uuid::new_v4().to_string();
        self.update_profile_item(
            user,
            |x| {
                let (update, condition) = write(x, expected_version, patch, now);
                (update.set(x.eq(LAST_WRITE_ID, write_id.as_str())), condition)
            },
            |old| own_write(old, expected_version, &write_id).ok_or_else(|| read_failure(old)),
        )
        .await
    }
}

/// The id of the update that last edited the profile.
const LAST_WRITE_ID: &str = "lastWriteId";

/// The profile, when the failed condition only found this very edit applied:
/// the SDK retried an attempt that had committed but whose answer was lost (a
/// 500 or a timeout), and the retry found the version already moved on. That
/// is this request's success, not a conflict. Told by the write's own id, not
/// by what it wrote: another request with the same edit, version and instant
/// is a conflict (412), as optimistic locking promises.
fn own_write(old: Option<&Item>, expected_version: u64, write_id: &str) -> Option<Profile> {
    let mine = old?
        .get(LAST_WRITE_ID)
        .and_then(|v| v.as_s().ok())
        .is_some_and(|id| id == write_id);
    let p = plan::old::<ProfileItem>(old).ok().flatten()?;
    (mine && p.version == expected_version + 1).then(|| p.into_domain())
}

fn write(x: &mut Expr, expected_version: u64, patch: &ProfilePatch, now: Timestamp) -> (Update, String) {
    let mut update = Update::default()
        .set(x.add(attr::VERSION, 1))
        .set(x.eq(attr::UPDATED_AT, now));
    if let Some(first) = &patch.first_name {
        update = update.set(x.eq(attr::FIRST_NAME, first.as_str()));
    }
    if let Some(last) = &patch.last_name {
        update = update.set(x.eq(attr::LAST_NAME, last.as_str()));
    }
    match &patch.phone {
        Some(Some(phone)) => update = update.set(x.eq(attr::PHONE, phone.as_str())),
        Some(None) => update = update.remove(x.name(attr::PHONE)),
        None => {}
    }
    let condition = and([
        x.exists(keys::PK),
        x.eq(attr::VERSION, expected_version),
        x.eq(attr::STATUS, UserStatus::Active),
    ]);
    (update, condition)
}

/// A failed `version = :expected AND status = active` update of a profile.
fn read_failure(old: Option<&Item>) -> StoreError {
    let profile = match plan::old::<ProfileItem>(old) {
        Ok(profile) => profile,
        Err(err) => return err,
    };
    if let Some(err) = refusal(profile.as_ref()) {
        return err;
    }
    // Active: the version differs, or changed in between. The client re-reads either way.
    match profile {
        Some(p) => StoreError::VersionMismatch { current: p.version },
        None => StoreError::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{PersonName, Phone};
    use crate::store::expr;
    use crate::store::ops::fixtures::{now, profile};

    #[test]
    fn version_mismatch_reports_the_current_version() {
        let old = profile(UserStatus::Active, 1, 7);
        assert!(matches!(
            read_failure(Some(&old)),
            StoreError::VersionMismatch { current: 7 }
        ));
        let suspended = profile(UserStatus::Suspended, 1, 7);
        assert!(matches!(read_failure(Some(&suspended)), StoreError::AccountInactive));
        assert!(matches!(read_failure(None), StoreError::NotFound));
    }

    #[test]
    fn every_name_and_value_written_is_defined() {
        let patches = [
            ProfilePatch {
                first_name: Some(PersonName::parse("Ada").unwrap()),
                last_name: Some(PersonName::parse("L").unwrap()),
                phone: Some(Some(Phone::parse("+15555550100").unwrap())),
            },
            ProfilePatch {
                first_name: None,
                last_name: None,
                phone: Some(None),
            },
        ];
        for patch in &patches {
            let mut x = Expr::default();
            let (update, condition) = write(&mut x, 3, patch, now());
            let (mut names, mut values) = expr::tokens(&update.text());
            let (n, v) = expr::tokens(&condition);
            names.extend(n);
            values.extend(v);
            names.sort();
            names.dedup();
            values.sort();
            values.dedup();
            let mut defined_names: Vec<String> = x.names_or_none().unwrap().into_keys().collect();
            let mut defined_values: Vec<String> = x.values_or_none().unwrap().into_keys().collect();
            defined_names.sort();
            defined_values.sort();
            assert_eq!(names, defined_names);
            assert_eq!(values, defined_values);
        }
    }
}
