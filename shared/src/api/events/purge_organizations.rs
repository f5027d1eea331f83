//! Deleted organizations' members go, a page at a time. The schedule runs
//! this every minute: it reads the deletions under way (the `PURGES`
//! partition: one small Query while few are under way) and gives each
//! organization a turn, least recently taken up first, until a little
//! before its deadline, checked per organization and per member; the next
//! run goes on. An organization whose turn fails is logged by its id and
//! passed over: the others are still purged, and the run then fails, so the
//! function's error alarm fires while the rest of the work gets done. An
//! idle run costs that one Query.

use std::time::Duration;

use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::app::App;
use crate::deadline;

/// Kept back from the invocation's deadline to answer.
const MARGIN: Duration = Duration::from_secs(5);

/// The Lambda entry point of the schedule.
pub async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let deadline = deadline::from_lambda(event.context.deadline, None);
    let span = tracing::info_span!("purge", request_id = %event.context.request_id);
    let stop_at = deadline.map_or_else(|| Instant::now() + Duration::from_secs(50), |d| d - MARGIN);
    let work = async {
        let pending = app.store.pending_purges().await.map_err(|err| failure(&err))?;
        let (mut removed, mut finished, mut failed) = (0, 0, 0);
        for org in &pending {
            if Instant::now() >= stop_at {
                break;
            }
            match app.store.purge_turn(*org, app.clock.now(), stop_at).await {
                Ok(purged) => {
                    logged(*org, purged);
                    removed += purged.removed;
                    finished += usize::from(purged.finished);
                }
                // This organization's turn only: the next one's goes on.
                Err(err) => {
                    turn_failed(*org, &err);
                    failed += 1;
                }
            }
        }
        let run = json!({ "pending": pending.len(), "finished": finished, "removed": removed });
        if failed > 0 {
            return Err(failed_turns(&run, failed));
        }
        Ok(run)
    };
    Box::pin(deadline::within(deadline, tracing::Instrument::instrument(work, span))).await
}

/// One organization's turn, logged: outside the async block, whose future
/// must stay `Send` for every lifetime the log's fields borrow.
fn logged(org: crate::domain::OrgId, purged: crate::store::Purged) {
    tracing::info!(%org, removed = purged.removed, finished = purged.finished, "purged");
}

/// One organization's failed turn, by its id and the error's kind.
fn turn_failed(org: crate::domain::OrgId, err: &crate::StoreError) {
    tracing::error!(%org, cause = %err, "an organization's purge turn failed; the run goes on");
}

/// A run in which some organizations' turns failed, after the others'
/// work: answered as an error, so the error alarm fires (the next run tries
/// them again, after the others).
fn failed_turns(run: &Value, failed: usize) -> Diagnostic {
    tracing::error!(failed, %run, "purge run done with failed turns");
    Diagnostic {
        error_type: "PURGE_FAILED".to_owned(),
        error_message: format!(
            "the purge of {failed} deleted organization(s) failed this run; the others went on, and the next run tries them again"
        ),
    }
}

/// A run that could not read the deletions under way: logged, and answered as an error.
fn failure(err: &crate::StoreError) -> Diagnostic {
    tracing::error!(cause = %err, "purge run failed");
    Diagnostic {
        error_type: "PURGE_FAILED".to_owned(),
        error_message: "the purge of deleted organizations failed; the next run goes on".to_owned(),
    }
}
