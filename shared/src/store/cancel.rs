//! The one place that turns failed conditions into domain outcomes.
//!
//! A transaction is cancelled with one reason per item, in order. The first item
//! whose condition failed decides, read through the role its builder gave it and
//! the item as it was (ReturnValuesOnConditionCheckFailure = ALL_OLD), so no
//! extra read is needed to tell, say, a suspended account from a full one.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::domain::{Timestamp, UserStatus};
use crate::keys::{self, Item, ItemKind};

use super::error::StoreError;
use super::items::{self, ClaimItem, EmailItem, ProfileItem};
use super::limits::{self, Counter, LimitItem};
use super::tx::{Role, TxPlan};

/// Why a write did not happen, for the operation to act on.
#[derive(Debug)]
pub enum Rejection {
    /// A final answer for the caller.
    Failed(StoreError),
    /// Something read before the write changed in between: read again and retry.
    Retry,
    /// The profile of a user being created exists already.
    UserExists,
    /// Another user's unverified claim holds the address and may be taken over.
    TakeOver(ClaimItem),
    /// The idempotency token is in use by a request with other parameters, or by
    /// one still in flight: retry without it, the conditions keep it idempotent.
    TokenInUse,
    /// A rate-limit counter is not as seen: here it is now; decide again from it.
    LimitMoved(Counter, Option<LimitItem>),
}

impl From<StoreError> for Rejection {
    fn from(err: StoreError) -> Self {
        Self::Failed(err)
    }
}

/// Reason codes of cancelled items that a later attempt may not meet.
const THROTTLED: &[&str] = &[
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
    "RequestLimitExceeded",
];

pub fn transaction_failure(
    err: SdkError<TransactWriteItemsError, HttpResponse>,
    plan: &TxPlan,
    now: Timestamp,
) -> Rejection {
    let canceled = match err.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(canceled)) => canceled,
        Some(
            TransactWriteItemsError::IdempotentParameterMismatchException(_)
            | TransactWriteItemsError::TransactionInProgressException(_),
        ) => return Rejection::TokenInUse,
        _ => return Rejection::Failed(err.into()),
    };
    let reasons = canceled.cancellation_reasons();
    let mut rejections: Vec<Rejection> = reasons
        .iter()
        .zip(plan.roles.iter().zip(&plan.items))
        .filter(|(reason, _)| reason.code() == Some("ConditionalCheckFailed"))
        .map(|(reason, (role, item))| condition_failed(role, item_kind(item), reason.item(), now))
        .collect();
    // The first failed item decides, except that a full account is the least
    // specific answer: "you have this address already" tells the caller more.
    if let Some(pos) = rejections
        .iter()
        .position(|r| !matches!(r, Rejection::Failed(StoreError::LimitReached)))
    {
        return rejections.swap_remove(pos);
    }
    if let Some(first) = rejections.into_iter().next() {
        return first;
    }
    let codes: Vec<&str> = reasons.iter().filter_map(|r| r.code()).collect();
    if codes.contains(&"TransactionConflict") {
        Rejection::Retry
    } else if codes.iter().any(|c| THROTTLED.contains(c)) {
        Rejection::Failed(StoreError::Unavailable(Box::new(err.into())))
    } else {
        Rejection::Failed(StoreError::UnexpectedCancellation(codes.join(",")))
    }
}

fn parse<T: for<'de> serde::Deserialize<'de>>(old: Option<&Item>) -> Result<Option<T>, StoreError> {
    old.map(|item| items::from_item(item.clone())).transpose()
}

/// What kind of item a transaction's write addresses, from its key.
pub fn item_kind(item: &TransactWriteItem) -> ItemKind {
    let key = item
        .put()
        .map(|p| p.item())
        .or_else(|| item.update().map(|u| u.key()))
        .or_else(|| item.delete().map(|d| d.key()))
        .or_else(|| item.condition_check().map(|c| c.key()));
    key.map_or(ItemKind::Unknown, |key| {
        keys::classify(
            keys::key_string(key, keys::PK).unwrap_or_default(),
            keys::key_string(key, keys::SK).unwrap_or_default(),
        )
    })
}

/// What a failed condition on `role` means, given the kind of item it is and the
/// item as it was.
pub fn condition_failed(role: &Role, kind: ItemKind, old: Option<&Item>, now: Timestamp) -> Rejection {
    match interpret(role, kind, old, now) {
        Ok(rejection) => rejection,
        Err(err) => Rejection::Failed(err),
    }
}

fn interpret(role: &Role, kind: ItemKind, old: Option<&Item>, now: Timestamp) -> Result<Rejection, StoreError> {
    use StoreError as E;
    let failed = |e: StoreError| Ok(Rejection::Failed(e));
    match role {
        Role::NewProfile => Ok(Rejection::UserExists),
        Role::ActiveProfile => Ok(profile_unwritable(parse(old)?.as_ref()).unwrap_or(Rejection::Retry)),
        Role::ProfileWithRoom { max_emails } => {
            let profile: Option<ProfileItem> = parse(old)?;
            if let Some(rejection) = profile_unwritable(profile.as_ref()) {
                return Ok(rejection);
            }
            match profile {
                Some(p) if p.email_count >= *max_emails => failed(E::LimitReached),
                _ => Ok(Rejection::Retry),
            }
        }
        // Only a profile's own state is an answer; a record or claim that changed
        // under the request means the state moved: read again and retry.
        Role::ProfileAtVersion { .. } | Role::ReadBefore | Role::NewRecord | Role::OwnClaim => match kind {
            ItemKind::Profile => {
                Ok(profile_unwritable(parse::<ProfileItem>(old)?.as_ref()).unwrap_or(Rejection::Retry))
            }
            ItemKind::Email | ItemKind::Claim | ItemKind::Limit | ItemKind::Unknown => Ok(Rejection::Retry),
        },
        Role::NewClaim {
            user,
            live_claims_yield,
        } => {
            let Some(claim) = parse::<ClaimItem>(old)? else {
                return Ok(Rejection::Retry);
            };
            if &claim.user_id == user {
                failed(E::AlreadyAdded)
            } else if claim.expires_at.is_none() || (claim.is_live(now) && !live_claims_yield) {
                failed(E::EmailTaken)
            } else {
                Ok(Rejection::TakeOver(claim))
            }
        }
        Role::RecordToVerify {
            max_attempts,
            resend_interval_seconds,
        } => {
            let Some(record) = parse::<EmailItem>(old)? else {
                return failed(E::NotFound);
            };
            if record.is_verified {
                failed(E::AlreadyVerified)
            } else if record.verification_attempts.unwrap_or(0) >= *max_attempts {
                failed(E::TooManyAttempts {
                    retry_after_secs: next_code_in(&record, *resend_interval_seconds, now),
                })
            } else if record.verification_expires_at.is_none_or(|at| at <= now) {
                failed(E::VerificationExpired)
            } else {
                Ok(Rejection::Retry)
            }
        }
        Role::RecordToResend { resend_after } => {
            let Some(record) = parse::<EmailItem>(old)? else {
                return failed(E::NotFound);
            };
            match record.verification_sent_at {
                _ if record.is_verified => failed(E::AlreadyVerified),
                Some(sent) if sent > *resend_after => failed(E::TooManyRequests {
                    retry_after_secs: resend_after.seconds_until(sent).max(1),
                }),
                _ => Ok(Rejection::Retry),
            }
        }
        Role::NewPrimary => match parse::<EmailItem>(old)? {
            None => failed(E::NotFound),
            Some(record) if !record.is_verified => failed(E::NotVerified),
            Some(_) => Ok(Rejection::Retry),
        },
        Role::RecordToRemove => match parse::<EmailItem>(old)? {
            None => failed(E::NotFound),
            Some(record) if record.is_primary => failed(E::PrimaryEmail),
            Some(_) => Ok(Rejection::Retry),
        },
        Role::Limit(counter) => Ok(Rejection::LimitMoved(*counter, limits::parse(old)?)),
    }
}

/// Seconds until a new code may be asked for the record: the wait after too many
/// wrong codes for the current one.
pub fn next_code_in(record: &EmailItem, resend_interval_seconds: i64, now: Timestamp) -> u64 {
    record
        .verification_sent_at
        .map_or(1, |sent| now.seconds_until(sent.plus_seconds(resend_interval_seconds)))
        .max(1)
}

/// Why the caller's profile refuses a write, if the profile itself is the reason.
fn profile_unwritable(profile: Option<&ProfileItem>) -> Option<Rejection> {
    match profile.map(|p| p.status) {
        None | Some(UserStatus::Deleted) => Some(Rejection::Failed(StoreError::NotFound)),
        Some(UserStatus::Suspended) => Some(Rejection::Failed(StoreError::AccountInactive)),
        Some(UserStatus::Active) => None,
    }
}

/// A failed `version = :expected AND status = active` update of a profile.
pub fn profile_update_failed(old: Option<&Item>) -> StoreError {
    let profile = match parse::<ProfileItem>(old) {
        Ok(profile) => profile,
        Err(err) => return err,
    };
    if let Some(Rejection::Failed(err)) = profile_unwritable(profile.as_ref()) {
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
    use crate::domain::{EmailAddress, EmailId, NewUser, UserId};
    use crate::keys;

    fn now() -> Timestamp {
        Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap()
    }

    fn profile(status: UserStatus, count: u32, version: u64) -> Item {
        let user = NewUser {
            user_id: UserId::parse("u").unwrap(),
            email: EmailAddress::parse("a@example.com").unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        let mut p = ProfileItem::new(&user, count, now());
        p.status = status;
        p.version = version;
        items::profile_item(&p).unwrap()
    }

    fn claim(user: &str, expires: Option<Timestamp>) -> Item {
        let c = ClaimItem {
            entity_type: items::EntityType::EmailClaim,
            user_id: UserId::parse(user).unwrap(),
            email_id: EmailId::new(),
            expires_at: expires,
        };
        items::claim_item(&EmailAddress::parse("a@example.com").unwrap(), &c).unwrap()
    }

    /// The kind of item each role is put on in the plans.
    fn kind_of(role: &Role) -> ItemKind {
        match role {
            Role::NewClaim { .. } | Role::OwnClaim => ItemKind::Claim,
            Role::RecordToVerify { .. } | Role::RecordToResend { .. } | Role::NewPrimary | Role::RecordToRemove => {
                ItemKind::Email
            }
            Role::Limit(_) => ItemKind::Limit,
            _ => ItemKind::Profile,
        }
    }

    fn failed(r: Rejection) -> StoreError {
        match r {
            Rejection::Failed(e) => e,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn profile_roles_tell_missing_inactive_and_full_apart() {
        let room = Role::ProfileWithRoom { max_emails: 10 };
        assert!(matches!(
            failed(condition_failed(&room, kind_of(&room), None, now())),
            StoreError::NotFound
        ));
        let deleted = profile(UserStatus::Deleted, 1, 1);
        assert!(matches!(
            failed(condition_failed(&room, kind_of(&room), Some(&deleted), now())),
            StoreError::NotFound
        ));
        let suspended = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(
            failed(condition_failed(&room, kind_of(&room), Some(&suspended), now())),
            StoreError::AccountInactive
        ));
        let full = profile(UserStatus::Active, 10, 1);
        assert!(matches!(
            failed(condition_failed(&room, kind_of(&room), Some(&full), now())),
            StoreError::LimitReached
        ));
        let fine = profile(UserStatus::Active, 3, 1);
        assert!(matches!(
            condition_failed(&room, kind_of(&room), Some(&fine), now()),
            Rejection::Retry
        ));
    }

    #[test]
    fn claim_role_tells_own_verified_and_unverified_holders_apart() {
        let me = UserId::parse("me").unwrap();
        let add = Role::NewClaim {
            user: me.clone(),
            live_claims_yield: false,
        };
        let sign_up = Role::NewClaim {
            user: me,
            live_claims_yield: true,
        };
        assert!(matches!(
            failed(condition_failed(&add, kind_of(&add), Some(&claim("me", None)), now())),
            StoreError::AlreadyAdded
        ));
        for role in [&add, &sign_up] {
            assert!(matches!(
                failed(condition_failed(
                    role,
                    kind_of(role),
                    Some(&claim("other", None)),
                    now()
                )),
                StoreError::EmailTaken
            ));
        }
        let pending = claim("other", Some(now().plus_seconds(10)));
        assert!(matches!(
            failed(condition_failed(&add, kind_of(&add), Some(&pending), now())),
            StoreError::EmailTaken
        ));
        assert!(
            matches!(condition_failed(&sign_up, kind_of(&sign_up), Some(&pending), now()), Rejection::TakeOver(c) if c.user_id.as_str() == "other")
        );
        let expired = claim("other", Some(now().plus_seconds(-10)));
        assert!(matches!(
            condition_failed(&add, kind_of(&add), Some(&expired), now()),
            Rejection::TakeOver(_)
        ));
        assert!(matches!(
            condition_failed(&add, kind_of(&add), None, now()),
            Rejection::Retry
        ));
    }

    #[test]
    fn a_record_or_claim_that_moved_is_retried_not_reported() {
        // Before, any old image was read as a profile: a claim or record that had
        // merely changed became 404 or 403.
        for kind in [ItemKind::Email, ItemKind::Claim] {
            for role in [Role::ReadBefore, Role::OwnClaim, Role::NewRecord] {
                let other = claim("other", None);
                assert!(matches!(
                    condition_failed(&role, kind, Some(&other), now()),
                    Rejection::Retry
                ));
                assert!(matches!(condition_failed(&role, kind, None, now()), Rejection::Retry));
            }
        }
        // On a profile, the profile's own state is the answer.
        let suspended = profile(UserStatus::Suspended, 1, 1);
        assert!(matches!(
            failed(condition_failed(
                &Role::ReadBefore,
                ItemKind::Profile,
                Some(&suspended),
                now()
            )),
            StoreError::AccountInactive
        ));
        assert!(matches!(
            failed(condition_failed(&Role::ReadBefore, ItemKind::Profile, None, now())),
            StoreError::NotFound
        ));
    }

    #[test]
    fn version_mismatch_reports_the_current_version() {
        let old = profile(UserStatus::Active, 1, 7);
        assert!(matches!(
            profile_update_failed(Some(&old)),
            StoreError::VersionMismatch { current: 7 }
        ));
        let suspended = profile(UserStatus::Suspended, 1, 7);
        assert!(matches!(
            profile_update_failed(Some(&suspended)),
            StoreError::AccountInactive
        ));
        assert!(matches!(profile_update_failed(None), StoreError::NotFound));
    }

    #[test]
    fn resend_too_soon_says_when() {
        let user = UserId::parse("me").unwrap();
        let address = EmailAddress::parse("a@example.com").unwrap();
        let sent = now().plus_seconds(-20);
        let mut record = EmailItem::unverified(&user, EmailId::new(), &address, "h".into(), now(), sent);
        record.verification_sent_at = Some(sent);
        let item = items::to_item(keys::email_key(&user, record.email_id), &record).unwrap();
        let role = Role::RecordToResend {
            resend_after: now().plus_seconds(-60),
        };
        assert!(matches!(
            failed(condition_failed(&role, kind_of(&role), Some(&item), now())),
            StoreError::TooManyRequests { retry_after_secs: 40 }
        ));
    }
}
