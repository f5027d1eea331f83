//! Erasure that reaches everyone. A user who deletes themselves in Cognito
//! (DeleteUser with their own access token) fires no trigger, yet must not
//! leave a profile, claims and personal data behind. Two routes reach them:
//!
//! - **As it happens.** CloudTrail records the DeleteUser call, with the
//!   user's `sub`, and an EventBridge rule delivers the record here within
//!   minutes. The user is erased once this pool confirms it has no such user
//!   (the record does not name the pool; another pool's user has no profile
//!   here). A record that names no user starts a pass at once.
//! - **The pass**, the safety net for what delivery (best effort) misses: the
//!   reconcile's engine (`crate::reconciler`), resumable from its
//!   checkpoint. The schedule runs this every 15 minutes: a run continues the
//!   pass under way, or starts one when the last started
//!   `RECONCILE_INTERVAL_HOURS` ago, and stops before its deadline.
//!
//! This handler reads the delivery, runs the engine and answers what it did.

use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{Value, json};

use crate::app::App;
use crate::deadline;
use crate::domain::UserId;
use crate::reconcile::{Phase, Tally};
use crate::reconciler::{Erased, Reconciler, RunError, Ticked};

/// The detail type of a CloudTrail record EventBridge delivers.
const API_CALL: &str = "AWS API Call via CloudTrail";

/// The Lambda entry point: a CloudTrail record of a DeleteUser call, or the schedule's tick.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let span = tracing::info_span!("reconcile", request_id = %event.context.request_id);
    let deadline = deadline::from_lambda(event.context.deadline, None);
    let run = Reconciler::new(&app.store, app.users.as_ref(), &app.reconcile, &app.clock, deadline);
    let work = async move {
        let ticked = match Delivery::of(&event.payload) {
            Delivery::Deleted(Some(user)) => {
                return match run.erase_one(&user).await {
                    Ok(Erased::Now) => Ok(json!({ "erased": 1 })),
                    Ok(Erased::Before | Erased::StillInPool) => Ok(json!({ "erased": 0 })),
                    Err(err) => Err(failure(&err)),
                };
            }
            Delivery::Deleted(None) => run.requested().await,
            Delivery::FailedCall => return Ok(json!({ "ignored": "the DeleteUser call failed" })),
            Delivery::Tick => run.tick().await,
        };
        answer(ticked)
    };
    Box::pin(deadline::within(deadline, tracing::Instrument::instrument(work, span))).await
}

/// What an event asks of the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// CloudTrail's record of a successful DeleteUser: the user's `sub`, when the record names it.
    Deleted(Option<UserId>),
    /// A DeleteUser that failed (the record has an error code): nobody was deleted.
    FailedCall,
    /// The schedule, or anything else: move the pass on.
    Tick,
}

impl Delivery {
    /// Reads an EventBridge event. Cognito records the user's `sub` (never
    /// the username) in `additionalEventData.sub` for user-token calls.
    pub fn of(event: &Value) -> Self {
        if event["detail-type"] != API_CALL || event["detail"]["eventName"] != "DeleteUser" {
            return Self::Tick;
        }
        let detail = &event["detail"];
        if detail["errorCode"].as_str().is_some_and(|code| !code.is_empty()) {
            return Self::FailedCall;
        }
        Self::Deleted(
            detail["additionalEventData"]["sub"]
                .as_str()
                .and_then(|sub| UserId::parse_sub(sub).ok()),
        )
    }
}

/// What a run did, as the function answers it. A pass that finished having
/// failed on some users fails the run, so the function's error alarm fires;
/// the next pass retries those users.
fn answer(ticked: Result<Ticked, RunError>) -> Result<Value, Diagnostic> {
    match ticked {
        Err(err) => Err(failure(&err)),
        Ok(Ticked::Skipped) => Ok(json!({ "skipped": "another run holds the lease" })),
        Ok(Ticked::Idle) => Ok(json!({ "idle": true })),
        Ok(Ticked::Complete(tally)) if tally.failed > 0 => Err(Diagnostic {
            error_type: "SWEEP_FAILED".to_owned(),
            error_message: "some users could not be checked or erased; see the log".to_owned(),
        }),
        Ok(Ticked::Complete(tally)) => Ok(json!({ "complete": true, "tally": tally_json(&tally) })),
        Ok(Ticked::Continues { phase, tally }) => Ok(json!({
            "complete": false,
            "phase": phase_name(&phase),
            "tally": tally_json(&tally),
        })),
    }
}

fn phase_name(phase: &Phase) -> &'static str {
    match phase {
        Phase::Table { .. } => "table",
        Phase::Cognito { .. } => "cognito",
    }
}

fn tally_json(tally: &Tally) -> Value {
    serde_json::to_value(tally).unwrap_or(Value::Null)
}

fn failure(err: &RunError) -> Diagnostic {
    tracing::error!(cause = %crate::error::chain(err), "reconcile run failed");
    Diagnostic {
        error_type: "SWEEP_FAILED".to_owned(),
        error_message: match err {
            RunError::Store(_) => "the table could not be read or written",
            RunError::Cognito(_) => "Cognito could not be asked",
            RunError::NoPool => "the user pool is not configured",
            RunError::HoldsUnfinished { .. } => "some recoveries' holds on sign-in could not be finished; see the log",
            RunError::Implausible { .. } => {
                "Cognito lacks too many of the table's users: nothing was erased; see the log"
            }
        }
        .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(detail: Value) -> Value {
        json!({
            "version": "0",
            "detail-type": API_CALL,
            "source": "aws.cognito-idp",
            "detail": detail,
        })
    }

    #[test]
    fn a_delete_user_record_names_the_user_by_sub() {
        let sub = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
        let event = record(json!({ "eventName": "DeleteUser", "additionalEventData": { "sub": sub } }));
        assert_eq!(
            Delivery::of(&event),
            Delivery::Deleted(Some(UserId::parse_sub(sub).unwrap()))
        );
    }

    #[test]
    fn a_record_without_a_sub_starts_a_pass_and_a_failed_call_is_ignored() {
        let unnamed = record(json!({ "eventName": "DeleteUser", "additionalEventData": {} }));
        assert_eq!(Delivery::of(&unnamed), Delivery::Deleted(None));
        let forged = record(json!({ "eventName": "DeleteUser", "additionalEventData": { "sub": "PROFILE" } }));
        assert_eq!(Delivery::of(&forged), Delivery::Deleted(None));
        let failed = record(json!({ "eventName": "DeleteUser", "errorCode": "NotAuthorizedException" }));
        assert_eq!(Delivery::of(&failed), Delivery::FailedCall);
        let empty_code = record(json!({ "eventName": "DeleteUser", "errorCode": "" }));
        assert_eq!(Delivery::of(&empty_code), Delivery::Deleted(None));
    }

    #[test]
    fn anything_else_is_the_schedule() {
        assert_eq!(
            Delivery::of(&json!({ "detail-type": "Scheduled Event" })),
            Delivery::Tick
        );
        let other_call = record(json!({ "eventName": "AdminDeleteUser" }));
        assert_eq!(Delivery::of(&other_call), Delivery::Tick);
        assert_eq!(Delivery::of(&json!(null)), Delivery::Tick);
    }
}
