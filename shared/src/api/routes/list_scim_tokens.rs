//! GET /organizations/{orgId}/scim-tokens: owners and admins list the
//! organization's live SCIM tokens, never their secrets.

use lambda_http::Request;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::OrgId;
use crate::http::Problem;

route! {
    /// GET /organizations/{orgId}/scim-tokens.
    ListScimTokens: catalog::LIST_SCIM_TOKENS,
    parse,
    reads: Reads {
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
    ],
}

/// The organization.
pub fn parse(req: &Request) -> Result<OrgId, Problem> {
    org_param(req)
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &OrgId) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::LIST_SCIM_TOKENS;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of GET /organizations/{orgId}/scim-tokens.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_SCIM_TOKENS, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let org = super::parse(&req)?;
        let actor = acting(app, &caller);
        let listed = app.store.list_scim_tokens(&actor, org).await.map_err(Failure::from);
        let tokens = audited("list_scim_tokens", &actor, org, None, listed)?;
        response::json(StatusCode::OK, &serde_json::json!({ "tokens": tokens }))
    }
}
