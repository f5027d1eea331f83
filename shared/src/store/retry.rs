//! Retrying writes that lost a race, bounded by the invocation's deadline.
//!
//! The deadline travels with the request's task (a task-local set by the HTTP
//! wrapper and the triggers from the Lambda context), so every store operation
//! under it stops retrying in time to answer, and each DynamoDB call's own
//! timeout is cut to what is left.
#![cfg_attr(not(feature = "test-support"), allow(unreachable_pub))]

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::Client;
use tokio::time::Instant;

use super::error::StoreError;
use super::plan::Rejection;

/// Kept back from the Lambda deadline to answer (and log) after the last attempt.
pub const MARGIN: Duration = Duration::from_millis(500);
/// How long a write may keep retrying where no invocation deadline is known
/// (tests, tools, the local API).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);
/// Attempts at most, deadline or not: a write that lost this often is contended.
pub const MAX_ATTEMPTS: u32 = 8;

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

/// Whether another attempt, after `pause`, still fits before `deadline`.
pub fn may_retry(attempt: u32, pause: Duration, deadline: Instant) -> bool {
    attempt < MAX_ATTEMPTS && Instant::now() + pause < deadline
}

/// The pause before attempt `attempt + 1`: exponential from 10 ms, jittered.
pub fn backoff(attempt: u32) -> Duration {
    let mut jitter = [0u8; 2];
    let jitter_ms = match getrandom::fill(&mut jitter) {
        Ok(()) => u64::from(u16::from_le_bytes(jitter) % 20),
        Err(_) => 10,
    };
    Duration::from_millis(10 * (1 << attempt.min(5)) + jitter_ms)
}

/// A DynamoDB call's configuration under an invocation deadline: the client's
/// operation timeout cut to what is left, so a call started just before the
/// deadline cannot outlive it. `None` without a deadline, or while the client's
/// own timeout ends first: an override rebuilds the request's runtime components,
/// which `make bench` counted in every warm invocation.
pub(crate) fn dynamodb_override(client: &Client) -> Option<aws_sdk_dynamodb::config::Builder> {
    let left = left(current_deadline()?);
    let configured = client.config().timeout_config().and_then(|t| t.operation_timeout());
    if configured.is_some_and(|configured| configured <= left) {
        return None;
    }
    let timeout = call_timeout(configured)?;
    Some(
        aws_sdk_dynamodb::config::Builder::default()
            .timeout_config(TimeoutConfig::builder().operation_timeout(timeout).build()),
    )
}

/// Sends a DynamoDB request (`$request`, a fluent builder) with the override
/// [`dynamodb_override`] gives, if any: every call keeps to the invocation's
/// deadline. A macro: each operation's builder is its own type.
macro_rules! send_by_deadline {
    ($client:expr, $request:expr) => {
        match $crate::store::retry::dynamodb_override($client) {
            Some(timeout) => $request.customize().config_override(timeout).send().await,
            None => $request.send().await,
        }
    };
}
pub(crate) use send_by_deadline;

/// Runs `$body` (an attempt yielding `Result<T, Rejection>`) until it succeeds
/// or fails for good; a lost race reads and tries again after a short, jittered
/// pause, while the invocation's deadline allows. A macro rather than a
/// closure-taking function: async closures that borrow make futures that are
/// not `Send` for every lifetime.
macro_rules! retrying {
    ($body:block) => {{
        let deadline = $crate::store::retry::deadline_from_now();
        let mut attempt = 0u32;
        loop {
            let result: Result<_, $crate::store::plan::Rejection> = async $body.await;
            // The outcome is the macro's value, not a return from the caller:
            // the caller may still act on it (count a refusal, read a failure).
            match $crate::store::retry::settle(result, &mut attempt, deadline).await {
                Ok(Some(value)) => break Ok(value),
                Ok(None) => {}
                Err(err) => break Err(err),
            }
        }
    }};
}
pub(crate) use retrying;

/// One attempt's outcome: the value, a final error, or `None` to try again
/// after the pause, when it fits before `deadline`.
pub(crate) async fn settle<T>(
    result: Result<T, Rejection>,
    attempt: &mut u32,
    deadline: Instant,
) -> Result<Option<T>, StoreError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(Rejection::Failed(err)) => Err(err),
        Err(rejection @ (Rejection::Retry | Rejection::TokenInUse | Rejection::Again)) => {
            *attempt += 1;
            let pause = backoff(*attempt);
            if !may_retry(*attempt, pause, deadline) {
                return Err(StoreError::Contended.failed());
            }
            if !matches!(rejection, Rejection::Again) {
                crate::metrics::count(crate::metrics::Metric::ContentionRetries);
            }
            tracing::debug!(
                attempt = *attempt,
                pause_ms = pause.as_millis(),
                "trying the write again"
            );
            tokio::time::sleep(pause).await;
            Ok(None)
        }
        Err(other) => Err(StoreError::UnexpectedCancellation(format!("{other:?}")).failed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_deadline_bounds_the_attempts() {
        let deadline = Instant::now() + Duration::from_millis(100);
        assert!(may_retry(1, Duration::from_millis(50), deadline));
        assert!(!may_retry(1, Duration::from_millis(150), deadline));
        assert!(!may_retry(MAX_ATTEMPTS, Duration::ZERO, deadline));
        tokio::time::advance(Duration::from_millis(100)).await;
        assert!(!may_retry(1, Duration::ZERO, deadline));
        assert_eq!(left(deadline), Duration::ZERO);
    }

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

    #[test]
    fn backoff_grows_and_stays_bounded() {
        assert!(backoff(1) >= Duration::from_millis(20) && backoff(1) < Duration::from_millis(40));
        assert!(backoff(9) <= Duration::from_millis(340));
    }
}
