//! Editing a profile at the version the client read: one conditioned UpdateItem,
//! and what its failure means.

use crate::domain::{IfMatch, Profile, ProfilePatch, Timestamp, UserId, UserStatus};
use crate::store::expr::{Expr, Update};
use crate::store::items::{ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan;
use crate::store::{Store, StoreError};

use super::profile::{refusal, session_live};

impl Store {
    /// Edits the profile if it is active and its version satisfies `precondition`.
    pub async fn update_profile(
        &self,
        user: &UserId,
        precondition: &IfMatch,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        // Marks the profile with this call alone: an SDK retry resends it, another
        // request (even the same edit at the same instant) cannot have it.
        let write_id = uuid::Uuid::new_v4().to_string();
        self.update_profile_item(
            user,
            |x| {
                let (update, condition) = write(x, precondition, patch, now);
                (update.set(x.eq(LAST_WRITE_ID, write_id.as_str())), condition)
            },
            |old| own_write(old, precondition, &write_id).ok_or_else(|| read_failure(old, precondition)),
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
fn own_write(old: Option<&Item>, precondition: &IfMatch, write_id: &str) -> Option<Profile> {
    let mine = old?
        .get(LAST_WRITE_ID)
        .and_then(|v| v.as_s().ok())
        .is_some_and(|id| id == write_id);
    let p = plan::old::<ProfileItem>(old).ok().flatten()?;
    let from_a_match = p.version.checked_sub(1).is_some_and(|v| precondition.matches(v));
    (mine && from_a_match).then(|| p.into_domain())
}

/// The condition on the version that `precondition` asks for, inside the write:
/// `*` none; one version `=`; several `IN`; none that can match, a version no
/// profile has (versions start at 1), so the write fails and nothing is written.
pub(super) fn version_condition(x: &mut Expr, precondition: &IfMatch) -> Option<String> {
    match precondition {
        IfMatch::Any => None,
        IfMatch::Versions(versions) => match versions.as_slice() {
            [] => Some(x.eq(attr::VERSION, 0u64)),
            [version] => Some(x.eq(attr::VERSION, *version)),
            several => Some(x.is_in(attr::VERSION, several.iter().copied())),
        },
    }
}

pub(super) fn write(x: &mut Expr, precondition: &IfMatch, patch: &ProfilePatch, now: Timestamp) -> (Update, String) {
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
    let condition = [
        Some(x.exists(keys::PK)),
        version_condition(x, precondition),
        Some(x.eq(attr::STATUS, UserStatus::Active)),
        session_live(x),
    ];
    (
        update,
        condition.into_iter().flatten().collect::<Vec<_>>().join(" AND "),
    )
}

/// A failed `version matches AND status = active` update of a profile.
pub(super) fn read_failure(old: Option<&Item>, precondition: &IfMatch) -> StoreError {
    let profile = match plan::old::<ProfileItem>(old) {
        Ok(profile) => profile,
        Err(err) => return err,
    };
    match refusal(profile.as_ref()) {
        // `If-Match: *` with no current profile fails (RFC 9110 13.1.1).
        Some(StoreError::NotFound) if *precondition == IfMatch::Any => return StoreError::NothingToMatch,
        Some(err) => return err,
        None => {}
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
        let three = IfMatch::Versions(vec![3]);
        let old = profile(UserStatus::Active, 1, 7);
        assert!(matches!(
            read_failure(Some(&old), &three),
            StoreError::VersionMismatch { current: 7 }
        ));
        let suspended = profile(UserStatus::Suspended, 1, 7);
        assert!(matches!(
            read_failure(Some(&suspended), &three),
            StoreError::AccountInactive
        ));
        assert!(matches!(
            read_failure(Some(&suspended), &IfMatch::Any),
            StoreError::AccountInactive
        ));
        assert!(matches!(read_failure(None, &three), StoreError::NotFound));
        // `*` and no profile: the precondition fails (412), not 404.
        assert!(matches!(read_failure(None, &IfMatch::Any), StoreError::NothingToMatch));
        let deleted = profile(UserStatus::Deleted, 0, 7);
        assert!(matches!(
            read_failure(Some(&deleted), &IfMatch::Any),
            StoreError::NothingToMatch
        ));
    }

    #[test]
    fn the_version_condition_follows_if_match() {
        let condition = |precondition: &IfMatch| {
            let mut x = Expr::default();
            let (_, condition) = write(&mut x, precondition, &ProfilePatch::default(), now());
            (condition, x.values_or_none().unwrap())
        };
        let (any, _) = condition(&IfMatch::Any);
        assert_eq!(any, "attribute_exists(#PK) AND #status = :status");
        let (one, _) = condition(&IfMatch::Versions(vec![3]));
        assert_eq!(
            one,
            "attribute_exists(#PK) AND #version = :version AND #status = :status"
        );
        let (several, values) = condition(&IfMatch::Versions(vec![3, 4]));
        assert_eq!(
            several,
            "attribute_exists(#PK) AND #version IN (:version, :version2) AND #status = :status"
        );
        assert_eq!(
            values[":version2"],
            aws_sdk_dynamodb::types::AttributeValue::N("4".into())
        );
        // Nothing can match: a version no profile has.
        let (none, values) = condition(&IfMatch::Versions(vec![]));
        assert!(none.contains("#version = :version"));
        assert_eq!(
            values[":version"],
            aws_sdk_dynamodb::types::AttributeValue::N("0".into())
        );
    }

    #[test]
    fn a_lost_response_is_this_write_only_from_a_matching_version() {
        let mut old = profile(UserStatus::Active, 1, 4);
        old.insert(
            LAST_WRITE_ID.into(),
            aws_sdk_dynamodb::types::AttributeValue::S("w".into()),
        );
        assert!(own_write(Some(&old), &IfMatch::Versions(vec![3]), "w").is_some());
        assert!(own_write(Some(&old), &IfMatch::Versions(vec![2, 3]), "w").is_some());
        assert!(own_write(Some(&old), &IfMatch::Any, "w").is_some());
        assert!(own_write(Some(&old), &IfMatch::Versions(vec![4]), "w").is_none());
        assert!(own_write(Some(&old), &IfMatch::Any, "other").is_none());
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
            let (update, condition) = write(&mut x, &IfMatch::Versions(vec![3, 5]), patch, now());
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
