//! GET /organizations/{orgId}/invitations: owners and admins page through
//! the pending invitations.

use lambda_http::Request;

use super::orgs::{org_param, page_query};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{InvitationId, OrgId};
use crate::http::Problem;

route! {
    /// GET /organizations/{orgId}/invitations.
    ListInvitations: catalog::LIST_INVITATIONS,
    parse,
    reads: Reads {
        path: &["orgId"],
        query: &["limit", "after"],
        query_defaults: true,
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

/// Which organization, how many invitations, and after which one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitationsQuery {
    /// The organization.
    pub org: OrgId,
    /// Invitations on the page, 1 to 100.
    pub limit: usize,
    /// The last invitation of the previous page.
    pub after: Option<InvitationId>,
}

/// The organization and the page asked for.
pub fn parse(req: &Request) -> Result<InvitationsQuery, Problem> {
    let org = org_param(req)?;
    let (limit, after) = page_query(req, InvitationId::parse)?;
    Ok(InvitationsQuery { org, limit, after })
}

#[cfg(fuzzing)]
fn admitted(_: &Request, query: &InvitationsQuery) {
    assert!((1..=100).contains(&query.limit));
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::http::StatusCode;
    use lambda_http::{Body, Request, Response};
    use serde::Serialize;

    use crate::api::routes::orgs::{acting, audited};
    use crate::app::App;
    use crate::catalog::LIST_INVITATIONS;
    use crate::domain::{Invitation, InvitationId};
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// A page of invitations, and where the next starts while there may be one.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        invitations: Vec<Invitation>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_after: Option<InvitationId>,
    }

    /// The Lambda entry point of GET /organizations/{orgId}/invitations.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_INVITATIONS, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let query = super::parse(&req)?;
        let actor = acting(app, &caller);
        let limit = u32::try_from(query.limit).unwrap_or(100);
        let page = app
            .store
            .list_invitations(&actor, query.org, query.after, limit)
            .await
            .map_err(Failure::from);
        let page = audited("list_invitations", &actor, query.org, None, page)?;
        response::json(
            StatusCode::OK,
            &Page {
                invitations: page.invitations,
                next_after: page.next,
            },
        )
    }
}
