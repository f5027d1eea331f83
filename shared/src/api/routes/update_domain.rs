//! PATCH /organizations/{orgId}/domains/{domain}: an owner or admin sets how
//! users at a verified domain meet the organization (enrollment).

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::{domain_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{Enrollment, OrgDomain, OrgId};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// PATCH /organizations/{orgId}/domains/{domain}.
    UpdateDomain: catalog::UPDATE_DOMAIN,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId", "domain"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("domain", "{domain}")],
        body: Some(r#"{"enrollment": "invite"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::DomainNotFound,
        crate::StoreError::DomainNotVerified,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    enrollment: Enrollment,
}

/// The organization, the domain and its enrollment.
pub fn parse(req: &Request) -> Result<(OrgId, OrgDomain, Enrollment), Problem> {
    let org = org_param(req)?;
    let domain = domain_param(req)?;
    let Payload { enrollment } = json_body(req)?;
    Ok((org, domain, enrollment))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, (_, _, enrollment): &(OrgId, OrgDomain, Enrollment)) {
    assert_eq!(super::fuzzing::body_str(req, "enrollment"), enrollment.as_str());
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::UPDATE_DOMAIN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of PATCH /organizations/{orgId}/domains/{domain}: the domain as it is now.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &UPDATE_DOMAIN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, domain, enrollment) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let set = app
            .store
            .set_enrollment(&actor, org, &domain, enrollment)
            .await
            .map_err(Failure::from);
        let set = audited("set_enrollment", &actor, org, None, set)?;
        response::json(StatusCode::OK, &set)
    }
}
