//! Retrying writes that lost a race, bounded by the invocation's deadline
//! (`crate::deadline`): every store operation under it stops retrying in time
//! to answer, and each DynamoDB call's own timeout is cut to what is left.

use std::time::Duration;

use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::Client;
use tokio::time::Instant;

use super::error::StoreError;
use super::plan::Rejection;
use crate::deadline::{call_timeout, current_deadline, left};

/// Attempts at most, deadline or not: a write that lost this often is contended.
pub const MAX_ATTEMPTS: u32 = 8;

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

/// A single-item update DynamoDB did not apply: its condition failed, or a
/// transaction held the item. Either way the item is not as the write assumed.
pub(crate) fn refused_or_raced(
    err: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::update_item::UpdateItemError,
        aws_sdk_dynamodb::config::http::HttpResponse,
    >,
) -> bool {
    use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
    matches!(
        err.as_service_error(),
        Some(UpdateItemError::ConditionalCheckFailedException(_) | UpdateItemError::TransactionConflictException(_))
    )
}

/// Runs `$body` (an attempt yielding `Result<T, Rejection>`) until it succeeds
/// or fails for good; a lost race reads and tries again after a short, jittered
/// pause, while the invocation's deadline allows. A macro rather than a
/// closure-taking function: async closures that borrow make futures that are
/// not `Send` for every lifetime.
macro_rules! retrying {
    ($body:block) => {{
        let deadline = $crate::deadline::deadline_from_now();
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

    #[test]
    fn backoff_grows_and_stays_bounded() {
        assert!(backoff(1) >= Duration::from_millis(20) && backoff(1) < Duration::from_millis(40));
        assert!(backoff(9) <= Duration::from_millis(340));
    }
}
