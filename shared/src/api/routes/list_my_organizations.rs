//! GET /me/organizations: the organizations the caller belongs to.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /me/organizations.
    ListMyOrganizations: catalog::LIST_MY_ORGANIZATIONS,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [crate::StoreError::NotFound],
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use crate::app::App;
    use crate::catalog::LIST_MY_ORGANIZATIONS;
    use crate::domain::{Organization, Role, Timestamp};
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Mine<'a> {
        #[serde(flatten)]
        organization: &'a Organization,
        role: Role,
        joined_at: Timestamp,
    }

    #[derive(Serialize)]
    struct Page<'a> {
        organizations: Vec<Mine<'a>>,
    }

    /// The Lambda entry point of GET /me/organizations.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_MY_ORGANIZATIONS, |caller, _req| run(app, caller)).await
    }

    async fn run(app: &App, caller: Caller) -> Result<Response<Body>, Failure> {
        let mine = app.store.my_organizations(&caller.user_id).await?;
        let page = Page {
            organizations: mine
                .iter()
                .map(|m| Mine {
                    organization: &m.organization,
                    role: m.role,
                    joined_at: m.joined_at,
                })
                .collect(),
        };
        response::json(StatusCode::OK, &page)
    }
}
