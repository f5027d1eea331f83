//! GET /admin/users: an admin finds the account that holds an address; every lookup is audited.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::EmailAddress;
use crate::http::Problem;
use crate::http::request::query_param;

route! {
    /// GET /admin/users.
    FindUserByEmail: catalog::FIND_USER_BY_EMAIL,
    parse,
    reads: Reads {
        query: &["email"],
        ..Reads::CALLER
    },
    example: Example {
        query: &[("email", "{primary}")],
        ..Example::bare(200)
    },
    refusals: [crate::StoreError::NotFound],
}

/// The address to look up.
pub fn parse(req: &Request) -> Result<EmailAddress, Problem> {
    query_param(req, "email", EmailAddress::parse)
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &EmailAddress) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::audit::AdminAction;
    use crate::catalog::FIND_USER_BY_EMAIL;
    use crate::domain::Account;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};
    use crate::metrics::Metric;

    /// The Lambda entry point of GET /admin/users?email=: the account holding the address, profile and addresses.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &FIND_USER_BY_EMAIL, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, admin: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let found = find(app, &req).await;
        let (target, outcome, metric) = match &found {
            Ok(account) => (Some(&account.profile.user_id), "found", Metric::AdminLookups),
            Err(failure) if failure.problem.code == "NOT_FOUND" => (None, "not_found", Metric::AdminLookups),
            Err(failure) => (None, failure.problem.code, Metric::AdminActionsRefused),
        };
        AdminAction {
            action: "lookup",
            admin: &admin.user_id,
            target,
            outcome,
            metric: Some(metric),
        }
        .record();
        response::json(StatusCode::OK, &found?)
    }

    async fn find(app: &App, req: &Request) -> Result<Account, Failure> {
        let email = super::parse(req)?;
        Ok(app.store.find_by_email(&email).await?)
    }
}
