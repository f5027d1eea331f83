//! POST /organizations/{orgId}/domains: an owner or admin claims a mail
//! domain for the organization, pending until an address at it proves it.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgDomain, OrgId};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations/{orgId}/domains.
    ClaimDomain: catalog::CLAIM_DOMAIN,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        body: Some(r#"{"domain": "{freeDomain}"}"#),
        ..Example::bare(201)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::DomainTaken,
        crate::StoreError::DomainNotClaimable(crate::org_policy::DomainRefusal::ConsumerDomain),
        crate::StoreError::DomainLimitReached,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    domain: OrgDomain,
}

/// The organization and the domain to claim.
pub fn parse(req: &Request) -> Result<(OrgId, OrgDomain), Problem> {
    let org = org_param(req)?;
    let Payload { domain } = json_body(req)?;
    Ok((org, domain))
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
    use crate::catalog::CLAIM_DOMAIN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations/{orgId}/domains: 201 with the pending domain.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &CLAIM_DOMAIN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, domain) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let claimed = app
            .store
            .claim_domain(&actor, org, &domain, app.clock.now())
            .await
            .map_err(Failure::from);
        let claimed = audited("claim_domain", &actor, org, None, claimed)?;
        response::json(StatusCode::CREATED, &claimed)
    }
}
