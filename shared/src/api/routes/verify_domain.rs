//! POST /organizations/{orgId}/domains/{domain}/verification: an owner or
//! admin proves the domain with one of their own addresses at it, verified
//! by code.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::{domain_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{EmailId, OrgDomain, OrgId};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations/{orgId}/domains/{domain}/verification.
    VerifyDomain: catalog::VERIFY_DOMAIN,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId", "domain"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("domain", "{domain}")],
        body: Some(r#"{"emailId": "{domainAddress}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::DomainNotFound,
        crate::StoreError::DomainNotProven,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Payload {
    email_id: EmailId,
}

/// The organization, the domain, and the actor's address that proves it.
pub fn parse(req: &Request) -> Result<(OrgId, OrgDomain, EmailId), Problem> {
    let org = org_param(req)?;
    let domain = domain_param(req)?;
    let Payload { email_id } = json_body(req)?;
    Ok((org, domain, email_id))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, OrgDomain, EmailId)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::VERIFY_DOMAIN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations/{orgId}/domains/{domain}/verification: the verified domain.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &VERIFY_DOMAIN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, domain, email_id) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let verified = app
            .store
            .verify_domain(&actor, org, &domain, email_id, app.clock.now())
            .await
            .map_err(Failure::from);
        let verified = audited("verify_domain", &actor, org, None, verified)?;
        response::json(StatusCode::OK, &verified)
    }
}
