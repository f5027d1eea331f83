//! PUT /organizations/{orgId}/members/{userId}/role: an owner or admin changes a member's role.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::{member_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgId, Role, UserId};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// PUT /organizations/{orgId}/members/{userId}/role.
    SetMemberRole: catalog::SET_MEMBER_ROLE,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId", "userId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("userId", "{member}")],
        body: Some(r#"{"role": "admin"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::MemberNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::LastOwner,
        crate::StoreError::MemberSuspended,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    role: Role,
}

/// The organization, the member and their new role.
pub fn parse(req: &Request) -> Result<(OrgId, UserId, Role), Problem> {
    let org = org_param(req)?;
    let member = member_param(req)?;
    let Payload { role } = json_body(req)?;
    Ok((org, member, role))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, (_, _, role): &(OrgId, UserId, Role)) {
    assert_eq!(super::fuzzing::body_str(req, "role"), role.as_str());
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
    use crate::catalog::SET_MEMBER_ROLE;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of PUT /organizations/{orgId}/members/{userId}/role: the membership as it is now.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &SET_MEMBER_ROLE, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, member, role) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let set = app
            .store
            .set_member_role(&actor, org, &member, role)
            .await
            .map_err(Failure::from);
        let membership = audited("set_role", &actor, org, Some(&member), set)?;
        response::json(StatusCode::OK, &membership)
    }
}
