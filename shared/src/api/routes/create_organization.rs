//! POST /organizations: the caller creates an organization and becomes its owner.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::domain::NewOrganization;
use crate::http::Problem;
use crate::http::request::json_body;

route! {
    /// POST /organizations.
    CreateOrganization: catalog::CREATE_ORGANIZATION,
    parse,
    reads: Reads {
        json_body: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"name": "Acme", "slug": "{slug}"}"#),
        ..Example::bare(201)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::SlugTaken,
        crate::StoreError::OrganizationLimitReached,
    ],
}

/// The new organization's name and slug.
pub fn parse(req: &Request) -> Result<NewOrganization, Problem> {
    json_body(req)
}

#[cfg(fuzzing)]
fn admitted(req: &Request, new: &NewOrganization) {
    assert_eq!(super::fuzzing::body_str(req, "slug"), new.slug.as_str());
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::{StatusCode, header};
    use lambda_http::{Body, Request, Response};

    use crate::api::routes::orgs::OrganizationView;
    use crate::app::App;
    use crate::catalog::CREATE_ORGANIZATION;
    use crate::domain::Role;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of POST /organizations: 201, the organization and its ETag.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &CREATE_ORGANIZATION, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let new = super::parse(&req)?;
        let org = app
            .store
            .create_organization(&caller.user_id, &new, app.clock.now())
            .await?;
        let view = OrganizationView {
            organization: &org,
            role: Some(Role::Owner),
        };
        let mut response = response::organization(org.version, &view)?;
        *response.status_mut() = StatusCode::CREATED;
        Ok(response::with_header(
            response,
            header::LOCATION,
            &format!("/organizations/{}", org.org_id),
        ))
    }
}
