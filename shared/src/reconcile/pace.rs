//! The pace of Cognito calls: each quota category at the pass's share.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Out of time: the call was not started, so the run can stop cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no time left in the run for another call")]
pub struct OutOfTime;

/// A token bucket in one process: calls of one quota category at most
/// `per_second`, with no burst, so the pass never takes more than its share
/// of the account's quota and leaves the rest to the sign-in path.
#[derive(Debug)]
pub struct Pace {
    interval: Duration,
    next: Mutex<Instant>,
}

impl Pace {
    /// A pace of `per_second` calls (at least one a minute).
    pub fn new(per_second: f64) -> Self {
        let per_second = if per_second.is_finite() && per_second > 1.0 / 60.0 {
            per_second
        } else {
            1.0 / 60.0
        };
        Self {
            interval: Duration::from_secs_f64(1.0 / per_second),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for the next slot; refuses one that would start after `latest`
    /// without taking it, so a run that stops leaves no slot spent.
    pub async fn take(&self, latest: Option<Instant>) -> Result<(), OutOfTime> {
        let at = {
            // The instant inside cannot be left half-written: a poisoned lock is usable.
            let mut next = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = (*next).max(Instant::now());
            if latest.is_some_and(|latest| at > latest) {
                return Err(OutOfTime);
            }
            *next = at + self.interval;
            at
        };
        tokio::time::sleep_until(at).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_pace_spaces_calls_and_refuses_a_slot_past_the_deadline() {
        let pace = Pace::new(10.0);
        let start = Instant::now();
        for _ in 0..5 {
            pace.take(None).await.unwrap();
        }
        // Five slots at 10 a second: the first at once, the fifth 400 ms later.
        assert_eq!(Instant::now() - start, Duration::from_millis(400));
        let latest = Instant::now() + Duration::from_millis(50);
        assert_eq!(pace.take(Some(latest)).await, Err(OutOfTime));
        // The refused slot was not spent.
        pace.take(None).await.unwrap();
        assert_eq!(Instant::now() - start, Duration::from_millis(500));
    }
}
