//! The export of a user's own data (`GET /me/export`): counted against the
//! user's daily exports (`counted_read`), then read whole: the user's
//! partition (profile and email records, one Query to its end), the claim of
//! each address, the organization's half of each membership (what its
//! directory holds about the user), and the user's own counters
//! (`LIMIT#USER#<sub>`, one Query).
//! The mapping into the export document is pure, and tested here: no code
//! hash and no keyed address hash ever reaches it.

use futures::future::try_join_all;

use crate::domain::{
    AccountExport, ClaimExport, EXPORT_FORMAT_VERSION, EmailExport, LimitExport, LimitKind, PendingVerification,
    ProfileExport, RecoveryExport, SwitchExport, Timestamp, UserId,
};
use crate::store::items::{self, ClaimItem, Counter, EmailItem, LimitItem, PrimaryChangeItem, ProfileItem};
use crate::store::keys;
use crate::store::limits::{self, WINDOW_SECONDS};
use crate::store::{Store, StoreError, query_all};

use super::visible;

impl Store {
    /// Everything the table holds about `user`, counted against their exports
    /// (`EXPORTS_PER_USER` a rolling day; past it `TooManyExports`, and
    /// nothing is read or written). A deleted or unknown user is not found; a
    /// suspended one may export, as they may read their account. An export
    /// that fails after it was counted stays counted.
    pub async fn export_account(&self, user: &UserId, now: Timestamp) -> Result<AccountExport, StoreError> {
        let counter = (Counter::Exports, keys::exports_key(user));
        self.count_read(user, counter, self.config().max_exports, now, |retry_after_secs| {
            StoreError::TooManyExports { retry_after_secs }
        })
        .await?;
        let items = self.user_items(user).await?;
        let profile = visible(items.profile.ok_or(StoreError::NotFound)?)?;
        let claims = try_join_all(items.emails.iter().map(|record| self.own_claim(record))).await?;
        let invitations = self.invitations_to(&items.emails).await?;
        let emails = items.emails.into_iter().zip(claims).collect();
        let limits = self.own_limits(user).await?;
        let max_attempts = self.config().verification_max_attempts;
        let mut export = document(profile.clone(), emails, limits, max_attempts, now);
        export.switches = items.changes.iter().map(switch).collect();
        export.memberships = self.exported_memberships(&items.memberships).await?;
        export.invitations = invitations
            .into_iter()
            .map(|i| crate::domain::InvitationExport {
                invitation_id: i.invitation_id,
                org_id: i.org_id,
                email: i.email,
                role: i.role,
                sent_at: i.sent_at,
                expires_at: i.expires_at,
            })
            .collect();
        export.recoveries = profile
            .recoveries
            .iter()
            .map(|r| RecoveryExport {
                undone_version: r.from_version,
                version: r.to_version,
                recovered_at: r.at,
            })
            .collect();
        Ok(export)
    }

    /// The claim on a record's address, when it is that record's.
    async fn own_claim(&self, record: &EmailItem) -> Result<Option<ClaimItem>, StoreError> {
        let claim = self.claim_on(&record.canonical()).await?;
        Ok(claim.filter(|c| c.user_id == record.user_id && c.email_id == record.email_id))
    }

    /// The user's own counters, by kind; keys this service does not write are skipped.
    async fn own_limits(&self, user: &UserId) -> Result<Vec<(LimitKind, LimitItem)>, StoreError> {
        let query = self
            .query(|x| x.eq(keys::PK, keys::user_limits_pk(user)))
            .consistent_read(true);
        let mut limits = Vec::new();
        for item in query_all(&self.client, query).await? {
            let sk = keys::key_string(&item, keys::SK).unwrap_or_default();
            if let Some(kind) = keys::user_limit_kind(sk) {
                limits.push((kind, items::from_item(item)?));
            }
        }
        limits.sort_by_key(|(kind, _)| *kind);
        Ok(limits)
    }
}

/// The export document of what was read.
fn document(
    profile: ProfileItem,
    emails: Vec<(EmailItem, Option<ClaimItem>)>,
    limits: Vec<(LimitKind, LimitItem)>,
    max_attempts: u32,
    now: Timestamp,
) -> AccountExport {
    AccountExport {
        format_version: EXPORT_FORMAT_VERSION,
        exported_at: now,
        user_id: profile.user_id.clone(),
        profile: ProfileExport {
            email_count: profile.email_count,
            cognito_email: profile.cognito_email.clone(),
            sync_requested_at: profile.sync_requested_at,
            profile: profile.into_domain(),
        },
        emails: emails
            .into_iter()
            .map(|(record, claim)| email(record, claim, max_attempts, now))
            .collect(),
        limits: limits.into_iter().map(|(kind, item)| limit(kind, &item, now)).collect(),
        switches: Vec::new(),
        recoveries: Vec::new(),
        memberships: Vec::new(),
        invitations: Vec::new(),
    }
}

/// A switch as exported: its former address and times, never its token hashes.
fn switch(change: &PrimaryChangeItem) -> SwitchExport {
    SwitchExport {
        version: change.version,
        former_email: change.former.email.clone(),
        changed_at: change.changed_at,
        recoverable_until: change.recoverable_until,
        links_mailed: u32::try_from(change.token_hashes.len()).unwrap_or(u32::MAX),
    }
}

/// A record as exported: everything but the code's hash.
fn email(record: EmailItem, claim: Option<ClaimItem>, max_attempts: u32, now: Timestamp) -> EmailExport {
    let pending =
        !record.is_verified && (record.verification_sent_at.is_some() || record.verification_expires_at.is_some());
    let wrong_attempts = record.verification_attempts.unwrap_or(0);
    EmailExport {
        canonical_email: record.canonical_email.as_ref().map(|c| c.as_str().to_owned()),
        primary_version: record.primary_version,
        pending_verification: pending.then(|| PendingVerification {
            code_sent_at: record.verification_sent_at,
            code_expires_at: record.verification_expires_at,
            wrong_attempts,
            attempts_left: max_attempts.saturating_sub(wrong_attempts),
        }),
        claim: claim.map(|c| ClaimExport {
            held: c.is_live(now),
            expires_at: c.expires_at,
        }),
        email: record.into_domain(),
    }
}

/// A counter as exported: its events and window, not its key.
fn limit(kind: LimitKind, item: &LimitItem, now: Timestamp) -> LimitExport {
    let recent = limits::recent(Some(item), now);
    let at = |seconds: i64| Timestamp::from_unix_millis(seconds.saturating_mul(1_000));
    LimitExport {
        kind,
        events: item.events.iter().copied().map(at).collect(),
        in_window: u32::try_from(recent.len()).unwrap_or(u32::MAX),
        clears_at: recent.iter().max().map(|last| at(last + WINDOW_SECONDS)),
        first_added_at: item
            .first_added_at
            .filter(|first| first.plus_seconds(WINDOW_SECONDS) > now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address_policy::Canonicalization;
    use crate::domain::{EmailAddress, EmailId, UserStatus};
    use crate::store::items::EntityType;
    use crate::store::ops::fixtures::{new_user, now, user};

    fn counter(events: &[i64], first_added_at: Option<Timestamp>) -> LimitItem {
        LimitItem {
            entity_type: EntityType::RateLimit,
            events: events.iter().map(|s| now().unix_seconds() + s).collect(),
            version: 3,
            first_added_at,
            ttl: 0,
        }
    }

    #[test]
    fn the_export_holds_every_field_but_the_secrets() {
        let mut profile = ProfileItem::new(&new_user(), 2, now());
        profile.status = UserStatus::Suspended;
        profile.sync_requested_at = Some(now());
        let primary = EmailItem::verified_primary(&user(), &new_user().email, Canonicalization::NONE, now());
        let address = EmailAddress::parse("a.d.a+x@gmail.com").unwrap();
        let gmail = Canonicalization::parse("gmail").unwrap();
        let expires = now().plus_seconds(900);
        let mut pending = EmailItem::unverified(
            &user(),
            EmailId::new(),
            &address,
            gmail,
            "SECRET-HASH".into(),
            expires,
            now(),
        );
        pending.verification_attempts = Some(2);
        let claim = pending.claim(Some(now().plus_seconds(3_600)));
        let limits = vec![
            (LimitKind::CodesSent, counter(&[-90_000, -10], None)),
            (LimitKind::AnAddress, counter(&[], Some(now().plus_seconds(-60)))),
        ];
        let later = now().plus_seconds(5);
        let export = document(
            profile.clone(),
            vec![
                (primary.clone(), Some(primary.claim(None))),
                (pending.clone(), Some(claim)),
            ],
            limits,
            5,
            later,
        );

        assert_eq!(export.format_version, EXPORT_FORMAT_VERSION);
        assert_eq!(EXPORT_FORMAT_VERSION, 2);
        assert_eq!(export.exported_at, later);
        assert_eq!(export.user_id, user());
        assert_eq!(export.profile.profile.status, UserStatus::Suspended);
        assert_eq!(export.profile.cognito_email, profile.cognito_email);
        assert_eq!(export.profile.sync_requested_at, Some(now()));
        assert_eq!(export.profile.email_count, 2);

        let [first, second] = &export.emails[..] else {
            panic!("two records: {export:?}")
        };
        assert!(first.email.is_primary && first.email.is_verified && first.pending_verification.is_none());
        assert_eq!(first.canonical_email, None);
        assert_eq!(
            first.claim,
            Some(ClaimExport {
                expires_at: None,
                held: true
            })
        );
        assert_eq!(second.canonical_email.as_deref(), Some("ada@gmail.com"));
        assert_eq!(
            second.pending_verification,
            Some(PendingVerification {
                code_sent_at: Some(now()),
                code_expires_at: Some(expires),
                wrong_attempts: 2,
                attempts_left: 3,
            })
        );
        assert_eq!(
            second.claim,
            Some(ClaimExport {
                expires_at: Some(now().plus_seconds(3_600)),
                held: true
            })
        );

        // Every stored event, the ones in the window counted; the key's hash is not there.
        let sent = &export.limits[0];
        assert_eq!(sent.kind, LimitKind::CodesSent);
        assert_eq!(sent.events.len(), 2);
        assert_eq!(sent.in_window, 1);
        assert_eq!(sent.clears_at, Some(now().plus_seconds(-10 + WINDOW_SECONDS)));
        let address = &export.limits[1];
        assert_eq!((address.in_window, address.clears_at), (0, None));
        assert_eq!(address.first_added_at, Some(now().plus_seconds(-60)));

        let text = serde_json::to_string(&export).unwrap();
        assert!(!text.contains("SECRET-HASH"), "{text}");
        assert!(!text.contains("verificationCodeHash"), "{text}");
    }

    #[test]
    fn a_lapsed_claim_is_shown_lapsed_and_a_verified_record_has_no_pending_code() {
        let mut record = EmailItem::unverified(
            &user(),
            EmailId::new(),
            &EmailAddress::parse("grace@example.com").unwrap(),
            Canonicalization::NONE,
            "h".into(),
            now(),
            now(),
        );
        let lapsed = record.claim(Some(now()));
        let exported = email(record.clone(), Some(lapsed), 5, now().plus_seconds(1));
        assert_eq!(exported.claim.map(|c| c.held), Some(false));
        assert_eq!(exported.pending_verification.map(|p| p.attempts_left), Some(5));
        assert!(email(record.clone(), None, 5, now()).claim.is_none());

        // Spent past the cap (an address whose count was full): none left, no underflow.
        record.verification_attempts = Some(9);
        let spent = email(record.clone(), None, 5, now());
        assert_eq!(spent.pending_verification.map(|p| p.attempts_left), Some(0));

        record.is_verified = true;
        record.verified_at = Some(now());
        assert!(email(record, None, 5, now()).pending_verification.is_none());
    }
}
