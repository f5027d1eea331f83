//! POST /organizations/{orgId}/invitations: an owner or admin invites an
//! address in a role (owners alone invite owners). Inviting an address
//! already invited sends its invitation again, with a new link.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{EmailAddress, OrgId, Role};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations/{orgId}/invitations.
    CreateInvitation: catalog::CREATE_INVITATION,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        body: Some(r#"{"email": "{extra}", "role": "member"}"#),
        ..Example::bare(201)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::NotAllowed(crate::address_policy::Refusal::Subaddress),
        crate::StoreError::RoleRequired,
        crate::StoreError::TooManyInvitations { retry_after_secs: 60 },
    ],
}

/// Who is invited, and in what role.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewInvitation {
    /// The address invited.
    pub email: EmailAddress,
    /// The role accepting gives.
    pub role: Role,
}

/// The organization, and the invitation to send.
pub fn parse(req: &Request) -> Result<(OrgId, NewInvitation), Problem> {
    Ok((org_param(req)?, json_body(req)?))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, (_, new): &(OrgId, NewInvitation)) {
    assert_eq!(super::fuzzing::body_str(req, "role"), new.role.as_str());
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited, deliver_invitation};
    use crate::app::App;
    use crate::catalog::CREATE_INVITATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations/{orgId}/invitations: 201 with the invitation; the link goes out by mail.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &CREATE_INVITATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, new) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let invited = app
            .store
            .invite(&actor, org, &new.email, new.role, app.clock.now())
            .await
            .map_err(Failure::from);
        let invited = audited("invite", &actor, org, None, invited)?;
        deliver_invitation(app, &invited).await;
        response::json(StatusCode::CREATED, &invited.invitation)
    }
}
