//! DELETE /organizations/{orgId}/domains/{domain}: an owner or admin
//! removes a domain; its claim is free for others at once.

use lambda_http::Request;

use super::orgs::{domain_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgDomain, OrgId};
use crate::http::Problem;

route! {
    /// DELETE /organizations/{orgId}/domains/{domain}.
    RemoveDomain: catalog::REMOVE_DOMAIN,
    parse,
    reads: Reads {
        path: &["orgId", "domain"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("domain", "{domain}")],
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::DomainNotFound,
    ],
}

/// The organization and the domain.
pub fn parse(req: &Request) -> Result<(OrgId, OrgDomain), Problem> {
    Ok((org_param(req)?, domain_param(req)?))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, OrgDomain)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::REMOVE_DOMAIN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /organizations/{orgId}/domains/{domain}: 204.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &REMOVE_DOMAIN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, domain) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let removed = app
            .store
            .remove_domain(&actor, org, &domain)
            .await
            .map_err(Failure::from);
        audited("remove_domain", &actor, org, None, removed)?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
