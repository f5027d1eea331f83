//! DELETE /organizations/{orgId}/scim-tokens/{tokenId}: an owner or admin
//! revokes a SCIM token: the next request with it is refused.

use lambda_http::Request;

use super::orgs::{org_param, scim_token_param};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgId, ScimTokenId};
use crate::http::Problem;

route! {
    /// DELETE /organizations/{orgId}/scim-tokens/{tokenId}.
    RevokeScimToken: catalog::REVOKE_SCIM_TOKEN,
    parse,
    reads: Reads {
        path: &["orgId", "tokenId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}"), ("tokenId", "{scimToken}")],
        ..Example::bare(204)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::ScimTokenNotFound,
    ],
}

/// The organization and its token.
pub fn parse(req: &Request) -> Result<(OrgId, ScimTokenId), Problem> {
    Ok((org_param(req)?, scim_token_param(req)?))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, ScimTokenId)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::REVOKE_SCIM_TOKEN;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of DELETE /organizations/{orgId}/scim-tokens/{tokenId}: 204.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &REVOKE_SCIM_TOKEN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, token) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let revoked = app
            .store
            .revoke_scim_token(&actor, org, token)
            .await
            .map_err(Failure::from);
        audited("revoke_scim_token", &actor, org, None, revoked)?;
        Ok(response::empty(StatusCode::NO_CONTENT))
    }
}
