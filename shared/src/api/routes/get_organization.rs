//! GET /organizations/{orgId}: a member reads the organization.

use lambda_http::Request;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::OrgId;
use crate::http::Problem;

route! {
    /// GET /organizations/{orgId}.
    GetOrganization: catalog::GET_ORGANIZATION,
    parse,
    reads: Reads {
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        ..Example::bare(200)
    },
    refusals: [crate::StoreError::NotFound, crate::StoreError::OrganizationNotFound],
}

/// The organization.
pub fn parse(req: &Request) -> Result<OrgId, Problem> {
    org_param(req)
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &OrgId) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{OrganizationView, acting};
    use crate::app::App;
    use crate::catalog::GET_ORGANIZATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /organizations/{orgId}: the organization, its ETag and the caller's role.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &GET_ORGANIZATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let org = super::parse(&req)?;
        let (organization, role) = app.store.get_organization(&acting(app, &caller), org).await?;
        response::organization(
            organization.version,
            &OrganizationView {
                organization: &organization,
                role,
            },
        )
    }
}
