//! DELETE /organizations/{orgId}/members/{userId}: a member leaves (their own
//! `userId`), or an owner or admin removes them.

use lambda_http::Request;

use super::orgs::{member_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgId, UserId};
use crate::http::Problem;

route! {
    /// DELETE /organizations/{orgId}/members/{userId}.
    RemoveMember: catalog::REMOVE_MEMBER,
    parse,
    reads: Reads {
        path: &["orgId", "userId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("userId", "{member}")],
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::MemberNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::LastOwner,
    ],
}

/// The organization and the member.
pub fn parse(req: &Request) -> Result<(OrgId, UserId), Problem> {
    Ok((org_param(req)?, member_param(req)?))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, UserId)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::REMOVE_MEMBER;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /organizations/{orgId}/members/{userId}: 204.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &REMOVE_MEMBER, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, member) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let action = if member == caller.user_id {
            "leave"
        } else {
            "remove_member"
        };
        let removed = app
            .store
            .remove_member(&actor, org, &member)
            .await
            .map_err(Failure::from);
        audited(action, &actor, org, Some(&member), removed)?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
