//! DELETE /organizations/{orgId}: an owner deletes the organization, under If-Match.

use lambda_http::Request;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{IfMatch, OrgId};
use crate::http::Problem;
use crate::http::request::if_match;

route! {
    /// DELETE /organizations/{orgId}.
    DeleteOrganization: catalog::DELETE_ORGANIZATION,
    parse,
    reads: Reads {
        if_match: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        if_match: true,
        ..Example::bare(202)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::OrganizationVersionMismatch { current: 2 },
    ],
}

/// The organization and the `If-Match` precondition (its ETag).
pub fn parse(req: &Request) -> Result<(OrgId, IfMatch), Problem> {
    Ok((org_param(req)?, if_match(req)?))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, IfMatch)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::DELETE_ORGANIZATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /organizations/{orgId}: 202, the
    /// organization gone to readers; its members are removed after.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &DELETE_ORGANIZATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, precondition) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let deleted = app
            .store
            .delete_organization(&actor, org, &precondition, app.clock.now())
            .await
            .map_err(Failure::from);
        audited("delete", &actor, org, None, deleted)?;
        Ok(response::empty(StatusCode::ACCEPTED))
    }
}
