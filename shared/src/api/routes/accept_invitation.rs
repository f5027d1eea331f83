//! POST /invitations/accept: the caller accepts an invitation with the token
//! its mail carried. They must hold the invited address, verified; they join
//! in its role. Accepting again gives the same membership.

use lambda_http::Request;
use serde::Deserialize;

use super::{Example, Reads};
use crate::catalog;
use crate::http::Problem;
use crate::http::request::json_body;
use crate::invitation::InvitationToken;

route! {
    /// POST /invitations/accept.
    AcceptInvitation: catalog::ACCEPT_INVITATION,
    parse,
    reads: Reads {
        json_body: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"token": "{invitationToken}"}"#),
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::NotAllowed(crate::address_policy::Refusal::Subaddress),
        crate::StoreError::InvitationNotFound,
        crate::StoreError::InvitationExpired,
        crate::StoreError::InvitationAddressNotHeld,
        crate::StoreError::OrganizationLimitReached,
        crate::StoreError::OrganizationFull,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    token: String,
}

/// The mail's token. Text no token encodes to is bad input, refused before
/// the table (the format is no secret).
pub fn parse(req: &Request) -> Result<InvitationToken, Problem> {
    let Payload { token } = json_body(req)?;
    InvitationToken::parse(&token).ok_or_else(|| Problem::validation("token", "is not an invitation token"))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, token: &InvitationToken) {
    let raw = super::fuzzing::body_str(req, "token");
    assert_eq!(InvitationToken::parse(&raw).as_ref(), Some(token));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::ACCEPT_INVITATION;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /invitations/accept: the caller's membership.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &ACCEPT_INVITATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let token = super::parse(&req)?;
        let membership = app
            .store
            .accept_invitation(&caller.user_id, &token, app.clock.now())
            .await?;
        response::json(StatusCode::OK, &membership)
    }
}
