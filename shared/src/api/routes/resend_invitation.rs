//! POST /organizations/{orgId}/invitations/{invitationId}/resend: an owner
//! or admin sends a pending invitation again: a new link, which ends the
//! one before, within the same caps as the first.

use lambda_http::Request;

use super::orgs::{invitation_param, org_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{InvitationId, OrgId};
use crate::http::Problem;

route! {
    /// POST /organizations/{orgId}/invitations/{invitationId}/resend.
    ResendInvitation: catalog::RESEND_INVITATION,
    parse,
    reads: Reads {
        path: &["orgId", "invitationId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("invitationId", "{invitation}")],
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::InvitationNotFound,
        crate::StoreError::TooManyInvitations { retry_after_secs: 60 },
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

    use crate::api::routes::orgs::{acting, audited, deliver_invitation};
    use crate::app::App;
    use crate::catalog::RESEND_INVITATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations/{orgId}/invitations/{invitationId}/resend: the invitation as sent now.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &RESEND_INVITATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, invitation) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let invited = app
            .store
            .resend_invitation(&actor, org, invitation, app.clock.now())
            .await
            .map_err(Failure::from);
        let invited = audited("resend_invitation", &actor, org, None, invited)?;
        deliver_invitation(app, &invited).await;
        response::json(StatusCode::OK, &invited.invitation)
    }
}
