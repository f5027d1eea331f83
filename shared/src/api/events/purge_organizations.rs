//! Deleted organizations' members go, a page at a time. The schedule runs
//! this every minute: it reads the deletions under way (one small Query of
//! the `PURGES` partition), works through them until a little before its
//! deadline, checked per member, and leaves the rest to the next run. An
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
        let pending = app.store.pending_purges().await.map_err(failure)?;
        let (mut removed, mut finished) = (0, 0);
        for org in &pending {
            if Instant::now() >= stop_at {
                break;
            }
            let purged = app.store.purge_organization(*org, stop_at).await.map_err(failure)?;
            logged(*org, purged);
            removed += purged.removed;
            finished += usize::from(purged.finished);
        }
        Ok(json!({ "pending": pending.len(), "finished": finished, "removed": removed }))
    };
    Box::pin(deadline::within(deadline, tracing::Instrument::instrument(work, span))).await
}

/// One organization's run, logged: outside the async block, whose future
/// must stay `Send` for every lifetime the log's fields borrow.
fn logged(org: crate::domain::OrgId, purged: crate::store::Purged) {
    tracing::info!(%org, removed = purged.removed, finished = purged.finished, "purged");
}

/// A failed run: logged, and answered as an error (the next run goes on).
fn failure(err: crate::StoreError) -> Diagnostic {
    tracing::error!(cause = %err, "purge run failed");
    Diagnostic {
        error_type: "PURGE_FAILED".to_owned(),
        error_message: "the purge of deleted organizations failed; the next run goes on".to_owned(),
    }
}
