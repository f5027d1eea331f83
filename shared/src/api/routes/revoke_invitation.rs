//! DELETE /organizations/{orgId}/invitations/{invitationId}: an owner or
//! admin revokes a pending invitation (owners alone revoke an owner's): its
//! link works no more.

use lambda_http::Request;

use super::orgs::{invitation_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{InvitationId, OrgId};
use crate::http::Problem;

route! {
    /// DELETE /organizations/{orgId}/invitations/{invitationId}.
    RevokeInvitation: catalog::REVOKE_INVITATION,
    parse,
    reads: Reads {
        path: &["orgId", "invitationId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("invitationId", "{invitation}")],
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::InvitationNotFound,
    ],
}

/// The organization and its invitation.
pub fn parse(req: &Request) -> Result<(OrgId, InvitationId), Problem> {
    Ok((org_param(req)?, invitation_param(req)?))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, InvitationId)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::REVOKE_INVITATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /organizations/{orgId}/invitations/{invitationId}: 204.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &REVOKE_INVITATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, invitation) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let revoked = app
            .store
            .revoke_invitation(&actor, org, invitation)
            .await
            .map_err(Failure::from);
        audited("revoke_invitation", &actor, org, None, revoked)?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
