//! PUT /admin/users/{userId}/status: an admin suspends, re-activates or deletes another user; every attempt is audited.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::{UserId, UserStatus};
use crate::http::Problem;
use crate::http::request::{json_body, path_param};

route! {
    /// PUT /admin/users/{userId}/status.
    SetUserStatus: catalog::SET_USER_STATUS,
    parse,
    reads: Reads {
        json_body: true,
        path: &["userId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("userId", "{owner}")],
        body: Some(r#"{"status": "suspended"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AdminInactive,
        crate::StoreError::LastOwner,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    status: UserStatus,
}

/// The user and the new status.
pub fn parse(req: &Request) -> Result<(UserId, UserStatus), Problem> {
    let user = path_param(req, "userId", UserId::parse)?;
    let Payload { status } = json_body(req)?;
    Ok((user, status))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, (_, status): &(UserId, UserStatus)) {
    assert_eq!(super::fuzzing::body_str(req, "status"), status.as_str());
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::audit::AdminAction;
    use crate::catalog::SET_USER_STATUS;
    use crate::domain::{UserId, UserStatus};
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, Problem, response};
    use crate::metrics::Metric;
    use crate::store::StatusSet;

    /// The Lambda entry point of PUT /admin/users/{userId}/status: the user's profile with its new status.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &SET_USER_STATUS, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (user, status) = super::parse(&req).inspect_err(|problem| {
            AdminAction {
                action: "set_status",
                admin: &admin.user_id,
                target: None,
                outcome: problem.code,
                metric: Some(Metric::AdminActionsRefused),
            }
            .record();
        })?;
        let set = set(app, &admin, &user, status).await;
        let (action, done) = match status {
            UserStatus::Suspended => ("suspend", "suspended"),
            UserStatus::Active => ("reactivate", "reactivated"),
            UserStatus::Deleted => ("delete", "deleted"),
        };
        let (outcome, metric) = match &set {
            Ok(set) if set.changed => (done, Some(Metric::AdminStatusChanges)),
            // Already so: audited as such, not as a change that did not happen.
            Ok(_) => ("unchanged", None),
            Err(failure) => (failure.problem.code, Some(Metric::AdminActionsRefused)),
        };
        AdminAction {
            action,
            admin: &admin.user_id,
            target: Some(&user),
            outcome,
            metric,
        }
        .record();
        response::profile(&set?.profile)
    }

    async fn set(app: &App, admin: &Caller, user: &UserId, status: UserStatus) -> Result<StatusSet, Failure> {
        if *user == admin.user_id {
            return Err(Problem::own_status().into());
        }
        // The admin's own profile is checked again inside the write: admitting the
        // admin read it before, and a suspension may land in between.
        Ok(app
            .store
            .set_status_as_admin(&admin.user_id, user, status, app.clock.now())
            .await?)
    }
}
