//! The invocation's deadline. It travels with the request's task (a task-local
//! set by the HTTP wrapper, the triggers and the stream and schedule handlers
//! from the Lambda context), so every loop, retry and call under it can stop in
//! time to answer.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Kept back from the Lambda deadline to answer (and log) after the last attempt.
pub const MARGIN: Duration = Duration::from_millis(500);
/// How long a write may keep retrying where no invocation deadline is known
/// (tests, tools, the local API).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `work` under `deadline` (when known).
pub async fn within<F: Future>(deadline: Option<Instant>, work: F) -> F::Output {
    match deadline {
        Some(deadline) => DEADLINE.scope(deadline, work).await,
        None => work.await,
    }
}

/// The deadline of the current invocation, if one is set.
pub fn current_deadline() -> Option<Instant> {
    DEADLINE.try_with(|d| *d).ok()
}

/// The retry deadline for a Lambda deadline in epoch milliseconds (the context's
/// `deadline`), less the margin; `None` when the context has none (0). `cap`
/// bounds it further (Cognito waits 5 s for a trigger, whatever the function's timeout).
pub fn from_lambda(deadline_ms: u64, cap: Option<Duration>) -> Option<Instant> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    // A deadline already past when the invocation begins is no deadline: a
    // context without one (0), or an emulator sending a duration instead of an
    // instant (cargo lambda watch sends 600000).
    if deadline_ms <= now_ms {
        return cap.map(|c| Instant::now() + c.saturating_sub(MARGIN));
    }
    let left = Duration::from_millis(deadline_ms - now_ms);
    let left = cap.map_or(left, |c| left.min(c));
    Some(Instant::now() + left.saturating_sub(MARGIN))
}

/// A call's timeout: `configured`, cut to what is left of the invocation when
/// a deadline is set, so a call started just before it cannot outlive it.
pub fn call_timeout(configured: Option<Duration>) -> Option<Duration> {
    match (current_deadline().map(left), configured) {
        (Some(left), Some(configured)) => Some(left.min(configured)),
        (left, configured) => left.or(configured),
    }
}

/// Where the current operation must stop retrying.
pub fn deadline_from_now() -> Instant {
    current_deadline().unwrap_or_else(|| Instant::now() + DEFAULT_BUDGET)
}

/// What is left until `deadline`, for a DynamoDB call's operation timeout.
pub fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn call_timeouts_are_cut_to_what_is_left() {
        let three = Duration::from_secs(3);
        assert_eq!(call_timeout(Some(three)), Some(three), "no deadline: as configured");
        assert_eq!(call_timeout(None), None);
        let deadline = Instant::now() + Duration::from_secs(1);
        let (cut, bare) = within(Some(deadline), async {
            (call_timeout(Some(three)), call_timeout(None))
        })
        .await;
        assert_eq!(
            (cut, bare),
            (Some(Duration::from_secs(1)), Some(Duration::from_secs(1)))
        );
        let long = within(Some(Instant::now() + Duration::from_secs(60)), async {
            call_timeout(Some(three))
        })
        .await;
        assert_eq!(long, Some(three));
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_travels_with_the_task() {
        assert!(current_deadline().is_none());
        let deadline = Instant::now() + Duration::from_secs(3);
        let seen = within(Some(deadline), async { current_deadline() }).await;
        assert_eq!(seen, Some(deadline));
        assert_eq!(within(None, async { current_deadline() }).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn lambda_deadlines_keep_a_margin_and_a_cap() {
        let in_two_s = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64 + 2_000;
        let d = from_lambda(in_two_s, None).unwrap();
        let left = left(d);
        assert!(
            left <= Duration::from_millis(1_500) && left > Duration::from_millis(1_400),
            "{left:?}"
        );
        let capped = from_lambda(in_two_s + 60_000, Some(Duration::from_secs(5))).unwrap();
        assert!(super::left(capped) <= Duration::from_millis(4_500));
        assert!(from_lambda(0, None).is_none());
        assert!(from_lambda(600_000, None).is_none(), "a duration is not an instant");
        assert!(from_lambda(600_000, Some(Duration::from_secs(5))).is_some());
    }
}
