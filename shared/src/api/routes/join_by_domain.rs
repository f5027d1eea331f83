//! POST /organizations/{orgId}/enrollment: the caller joins an organization
//! that invites its verified domain's users, by their verified address there.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{EmailId, OrgId};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations/{orgId}/enrollment.
    JoinByDomain: catalog::JOIN_BY_DOMAIN,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        body: Some(r#"{"emailId": "{domainAddress}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::NotEnrollable,
        crate::StoreError::NotAllowed(crate::address_policy::Refusal::Subaddress),
        crate::StoreError::OrganizationLimitReached,
        crate::StoreError::OrganizationFull,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Payload {
    email_id: EmailId,
}

/// The organization and the caller's address at its domain.
pub fn parse(req: &Request) -> Result<(OrgId, EmailId), Problem> {
    let org = org_param(req)?;
    let Payload { email_id } = json_body(req)?;
    Ok((org, email_id))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, EmailId)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::JOIN_BY_DOMAIN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations/{orgId}/enrollment: the caller's membership.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &JOIN_BY_DOMAIN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, email_id) = super::parse(&req)?;
        let membership = app
            .store
            .enroll(&caller.user_id, org, email_id, app.clock.now())
            .await?;
        response::json(StatusCode::OK, &membership)
    }
}
