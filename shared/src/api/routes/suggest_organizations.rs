//! GET /me/organization-suggestions: the organizations the caller may join
//! by the verified domain of one of their verified addresses.

use lambda_http::Request;

use super::{Example, Reads};
use crate::catalog;
use crate::http::Problem;

route! {
    /// GET /me/organization-suggestions.
    SuggestOrganizations: catalog::SUGGEST_ORGANIZATIONS,
    parse,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [crate::StoreError::NotFound],
}

/// Nothing but the caller.
pub fn parse(_: &Request) -> Result<(), Problem> {
    Ok(())
}

#[cfg(fuzzing)]
fn admitted(_: &Request, _: &()) {}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use crate::app::App;
    use crate::catalog::SUGGEST_ORGANIZATIONS;
    use crate::domain::{EmailId, Enrollment, OrgDomain, Organization};
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// One suggestion as the API shows it.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Shown {
        #[serde(flatten)]
        organization: Organization,
        domain: OrgDomain,
        enrollment: Enrollment,
        email_id: EmailId,
    }

    /// The Lambda entry point of GET /me/organization-suggestions.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &SUGGEST_ORGANIZATIONS, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        super::parse(&req)?;
        let suggestions: Vec<Shown> = app
            .store
            .organization_suggestions(&caller.user_id)
            .await?
            .into_iter()
            .map(|s| Shown {
                organization: s.organization,
                domain: s.domain,
                enrollment: s.enrollment,
                email_id: s.email_id,
            })
            .collect();
        response::json(StatusCode::OK, &serde_json::json!({ "suggestions": suggestions }))
    }
}
