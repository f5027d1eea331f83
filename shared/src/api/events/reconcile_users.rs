//! The daily sweep: a user who deleted themselves in Cognito (DeleteUser with their
//! own access token fires no trigger) must not leave a profile, claims and personal
//! data behind. Every live profile whose user Cognito no longer has is deleted and
//! erased, as an admin's delete would. The sweep stops before the deadline; what it
//! did not reach, the next day's run reaches.

use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{Value, json};

use crate::app::App;
use crate::deadline;

/// The Lambda entry point of the daily schedule: erases users Cognito no longer has and answers how many were checked and erased.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let span = tracing::info_span!("sweep", request_id = %event.context.request_id);
    let deadline = deadline::from_lambda(event.context.deadline, None);
    Box::pin(deadline::within(
        deadline,
        tracing::Instrument::instrument(sweep(app), span),
    ))
    .await
}

async fn sweep(app: &App) -> Result<Value, Diagnostic> {
    let Some(users) = &app.users else {
        return Err(failure("the user pool is not configured"));
    };
    let (mut checked, mut erased, mut failed) = (0u64, 0u64, 0u64);
    let mut start = None;
    loop {
        let (page, next) = app.store.live_users(start).await.map_err(|err| {
            tracing::error!(cause = %crate::error::chain(&err), "the sweep could not read the table");
            failure("the table could not be read")
        })?;
        for user in page {
            checked += 1;
            match users.has_user(&user).await {
                Ok(true) => {}
                Ok(false) => match app
                    .store
                    .delete_user(&user, crate::store::Deleter::System, app.clock.now())
                    .await
                {
                    Ok(_) | Err(crate::StoreError::NotFound) => {
                        erased += 1;
                        tracing::info!(sub = %user, "deleted in Cognito: profile erased, addresses released");
                    }
                    Err(err) => {
                        failed += 1;
                        tracing::error!(sub = %user, cause = %crate::error::chain(&err), "erasure failed");
                    }
                },
                Err(err) => {
                    failed += 1;
                    tracing::error!(sub = %user, cause = %crate::error::chain(&err), "Cognito could not be asked");
                }
            }
        }
        let out_of_time = deadline::current_deadline().is_some_and(|d| deadline::left(d).is_zero());
        match next {
            Some(key) if !out_of_time => start = Some(key),
            Some(_) => {
                tracing::warn!(checked, "the sweep ran out of time; the next run goes on");
                break;
            }
            None => break,
        }
    }
    tracing::info!(checked, erased, failed, "sweep done");
    if failed > 0 {
        // An error makes the run count as failed, so the function's error alarm fires.
        return Err(failure("some users could not be checked or erased; see the log"));
    }
    Ok(json!({ "checked": checked, "erased": erased }))
}

fn failure(message: &str) -> Diagnostic {
    Diagnostic {
        error_type: "SWEEP_FAILED".to_owned(),
        error_message: message.to_owned(),
    }
}
