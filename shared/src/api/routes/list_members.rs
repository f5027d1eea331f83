//! GET /organizations/{orgId}/members: owners and admins page through the members.

use lambda_http::Request;

use super::orgs::{org_param, page_query};
use super::{Example, Reads};
use crate::catalog;
use crate::domain::{OrgId, UserId};
use crate::http::Problem;

route! {
    /// GET /organizations/{orgId}/members.
    ListMembers: catalog::LIST_MEMBERS,
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

/// Which organization, how many members, and after which member (by sub:
/// members are listed in the order of their subs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembersQuery {
    /// The organization.
    pub org: OrgId,
    /// Members on the page, 1 to 100.
    pub limit: usize,
    /// The last member of the previous page.
    pub after: Option<UserId>,
}

/// The organization and the page asked for.
pub fn parse(req: &Request) -> Result<MembersQuery, Problem> {
    let org = org_param(req)?;
    let (limit, after) = page_query(req, UserId::parse_sub)?;
    Ok(MembersQuery { org, limit, after })
}

#[cfg(fuzzing)]
fn admitted(_: &Request, query: &MembersQuery) {
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
    use crate::catalog::LIST_MEMBERS;
    use crate::domain::{Membership, UserId};
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// A page of members, and where the next starts while there may be one.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Page {
        members: Vec<Membership>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next_after: Option<UserId>,
    }

    /// The Lambda entry point of GET /organizations/{orgId}/members.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &LIST_MEMBERS, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let query = super::parse(&req)?;
        let actor = acting(app, &caller);
        let limit = u32::try_from(query.limit).unwrap_or(100);
        let page = app
            .store
            .list_members(&actor, query.org, query.after.as_ref(), limit)
            .await
            .map_err(Failure::from);
        let page = audited("list_members", &actor, query.org, None, page)?;
        response::json(
            StatusCode::OK,
            &Page {
                members: page.members,
                next_after: page.next,
            },
        )
    }
}
