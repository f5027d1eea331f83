//! GET /admin/user-list: an admin pages through the users, oldest first,
//! optionally of one status; every page is audited.
//!
//! Not `GET /admin/users`: an HTTP API route cannot differ by query string, and
//! that route is the look-up by address (`?email=`), which existing clients call.
//! Nor a path under `/admin/users/`, where `{userId}` names one user.

pub mod query;

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::http::Problem;
pub use query::{Cursor, ListQuery};

route! {
    /// GET /admin/user-list.
    ListUsers: catalog::LIST_USERS,
    parse,
    reads: Reads {
        query: &["status", "limit", "cursor"],
        query_defaults: true,
        ..Reads::CALLER
    },
    example: Example {
        query: &[("status", "active")],
        ..Example::bare(200)
    },
    // Reads only: the store answers a page, or fails as every route may.
    refusals: [],
}

/// The status filter, the page size and where the page starts.
pub fn parse(req: &Request) -> Result<ListQuery, Problem> {
    query::list_query(req)
}

/// The page size is in bounds, and a cursor accepted is one the service
/// writes: it encodes back to itself.
#[cfg(fuzzing)]
fn admitted(req: &Request, query: &ListQuery) {
    use lambda_http::RequestExt;
    assert!((1..=query::MAX_LIMIT).contains(&query.limit));
    if let Some(after) = query.after.clone() {
        let cursor = Cursor {
            filter: query.filter,
            after,
        };
        let raw = req
            .query_string_parameters_ref()
            .and_then(|p| p.first("cursor").map(str::to_owned));
        assert_eq!(raw.as_deref(), Some(cursor.encode().as_str()));
    }
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use super::Cursor;
    use crate::app::App;
    use crate::audit::AdminAction;
    use crate::catalog::LIST_USERS;
    use crate::domain::UserSummary;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};
    use crate::metrics::Metric;

    /// The Lambda entry point of GET /admin/user-list: a page of users and where the next starts.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_USERS, |caller, req| run(app, caller, req)).await
    }

    /// The response: a page of users, and the cursor of the next page while there may be one.
    #[derive(Debug, Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        users: Vec<UserSummary>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
    }

    async fn run(app: &App, admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let page = list(app, &req).await;
        let (outcome, metric) = match &page {
            Ok(_) => ("listed", Metric::AdminLookups),
            Err(failure) => (failure.problem.code, Metric::AdminActionsRefused),
        };
        AdminAction {
            action: "list",
            admin: &admin.user_id,
            target: None,
            outcome,
            metric: Some(metric),
        }
        .record();
        response::json(StatusCode::OK, &page?)
    }

    async fn list(app: &App, req: &Request) -> Result<Page, Failure> {
        let query = super::parse(req)?;
        let page = app
            .store
            .list_users(query.filter.statuses(), query.after.as_ref(), query.limit)
            .await?;
        Ok(Page {
            users: page.users,
            next_cursor: page.next.map(|after| {
                Cursor {
                    filter: query.filter,
                    after,
                }
                .encode()
            }),
        })
    }
}
