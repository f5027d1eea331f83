//! The session a user's request acts in: when its token's sign-in happened.
//! A recovery writes `tokensValidAfter` on the profile, since the HTTP API's
//! authorizer cannot see Cognito's revocation; every read of the caller's own
//! profile, and every write's condition on it, then refuses a session from
//! before it. It travels with the request's task, as the deadline does, so no
//! store method needs another parameter for it.

use std::future::Future;

use super::items::ProfileItem;

tokio::task_local! {
    static SIGNED_IN_AT: i64;
}

/// Runs `work` as a session signed in at `signed_in_at` (Unix seconds).
pub async fn within<F: Future>(signed_in_at: i64, work: F) -> F::Output {
    SIGNED_IN_AT.scope(signed_in_at, work).await
}

/// The current request's sign-in, when it acts as a user on their own account.
pub(crate) fn signed_in_at() -> Option<i64> {
    SIGNED_IN_AT.try_with(|at| *at).ok()
}

/// Whether a recovery of `profile` ended the current session. Both times are
/// whole seconds, so a sign-in in the recovery's own second is ended too: it
/// may have come just before it, and a taker who signs in every second would
/// otherwise keep one session. The owner's next sign-in comes later (the
/// recovery holds sign-in until Cognito is settled); were it in that second,
/// they sign in once more.
pub(crate) fn revoked(profile: &ProfileItem) -> bool {
    matches!((signed_in_at(), profile.tokens_valid_after), (Some(at), Some(after)) if at <= after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{NewUser, Timestamp};

    #[tokio::test]
    async fn only_a_session_from_before_the_recovery_is_revoked() {
        let user = NewUser {
            user_id: crate::domain::UserId::parse("u").unwrap(),
            email: crate::domain::EmailAddress::parse("a@example.com").unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        let mut profile = ProfileItem::new(&user, 1, Timestamp::now());
        assert!(!revoked(&profile), "no session: an admin's or the system's read");
        assert!(!within(1, async { revoked(&profile) }).await, "never recovered");
        profile.tokens_valid_after = Some(100);
        assert!(!revoked(&profile));
        assert!(within(99, async { revoked(&profile) }).await);
        assert!(
            within(100, async { revoked(&profile) }).await,
            "signed in the second it recovered: perhaps before it"
        );
        assert!(!within(101, async { revoked(&profile) }).await);
    }
}
