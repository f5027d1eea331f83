//! POST /organizations/{orgId}/scim-tokens: an owner or admin makes a named
//! SCIM token for the organization's identity provider. The token is in
//! this response and nowhere else: the table keeps only its keyed hash.

use lambda_http::Request;
use serde::Deserialize;

use super::orgs::org_param;
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgId, ScimTokenName};
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations/{orgId}/scim-tokens.
    CreateScimToken: catalog::CREATE_SCIM_TOKEN,
    parse,
    reads: Reads {
        json_body: true,
        path: &["orgId"],
        ..Reads::CALLER
    },
    example: Example {
        path: &[("orgId", "{org}")],
        body: Some(r#"{"name": "Okta"}"#),
        ..Example::bare(201)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::OrganizationNotFound,
        crate::StoreError::RoleRequired,
        crate::StoreError::ScimTokenLimitReached,
    ],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    name: ScimTokenName,
}

/// The organization and the token's name.
pub fn parse(req: &Request) -> Result<(OrgId, ScimTokenName), Problem> {
    let org = org_param(req)?;
    let Payload { name } = json_body(req)?;
    Ok((org, name))
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &(OrgId, ScimTokenName)) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::{StatusCode, header};
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::CREATE_SCIM_TOKEN;
    use crate::domain::ScimTokenInfo;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The made token: what the list shows, and the token, this once.
    #[derive(Serialize)]
    struct Made<'a> {
        #[serde(flatten)]
        info: &'a ScimTokenInfo,
        token: String,
    }

    /// The Lambda entry point of POST /organizations/{orgId}/scim-tokens: 201 with the token.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &CREATE_SCIM_TOKEN, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (org, name) = super::parse(&req)?;
        let actor = acting(app, &caller);
        let made = app
            .store
            .create_scim_token(&actor, org, &name, app.clock.now())
            .await
            .map_err(Failure::from);
        let made = audited("create_scim_token", &actor, org, None, made)?;
        let body = Made {
            info: &made.info,
            token: made.token.encode(),
        };
        // A credential: no cache along the way keeps it.
        Ok(response::with_header(
            response::json(StatusCode::CREATED, &body)?,
            header::CACHE_CONTROL,
            "no-store",
        ))
    }
}
