//! PATCH /organizations/{orgId}: an owner or admin renames the organization,
//! or changes its address rules, under If-Match.

use lambda_http::Request;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{IfMatch, OrgId, OrganizationPatch};
use crate::http::Problem;
use crate::http::request::{if_match, json_body};

route! {
    /// PATCH /organizations/{orgId}.
    UpdateOrganization: catalog::UPDATE_ORGANIZATION,
    parse,
    reads: Reads {
        json_body: true,
        if_match: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        body: Some(r#"{"name": "Acme Europe"}"#),
        if_match: true,
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::OrganizationVersionMismatch { current: 2 },
    ],
}

/// The organization, the `If-Match` precondition (the organization's ETag)
/// and the change: a name, rules, or both; an empty change is bad input.
pub fn parse(req: &Request) -> Result<(OrgId, IfMatch, OrganizationPatch), Problem> {
    let org = org_param(req)?;
    let precondition = if_match(req)?;
    let patch: OrganizationPatch = json_body(req)?;
    if patch.name.is_none() && patch.rules.is_none() {
        return Err(Problem::validation("name", "give a name, rules, or both"));
    }
    Ok((org, precondition, patch))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, IfMatch, OrganizationPatch)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{OrganizationView, acting, audited};
    use crate::app::App;
    use crate::catalog::UPDATE_ORGANIZATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of PATCH /organizations/{orgId}: the organization with its new ETag.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &UPDATE_ORGANIZATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, precondition, patch) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let updated = app
            .store
            .update_organization(&actor, org, &precondition, &patch, app.clock.now())
            .await
            .map_err(Failure::from);
        let action = if patch.rules.is_some() { "set_rules" } else { "rename" };
        let organization = audited(action, &actor, org, None, updated)?;
        response::organization(
            organization.version,
            &OrganizationView {
                organization: &organization,
                role: None,
            },
        )
    }
}
