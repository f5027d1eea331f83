//! `/scim/v2/Users`: a directory creates, reads, lists, replaces and patches
//! the organization's members. Each handler reads the request into the
//! protocol's values, calls the provisioning engine or one store read, and
//! answers the User as a resource, its ETag in the header and in `meta`.

use lambda_http::http::{StatusCode, header};
use lambda_http::{Body, Request, RequestExt, Response};

use super::{Answer, base_url, json_body, query_pairs, scim_json};
use crate::app::App;
use crate::domain::UserId;
use crate::provisioning::{self, Change};
use crate::scim::discovery::list_response;
use crate::scim::{Condition, ListQuery, Meta, Patch, Projection, ScimError, ScimUser, user_resource};
use crate::store::{ScimClient, ScimMember};

/// The member a path's `{userId}` names: one that is no `sub` names no one (404).
pub fn user_param(req: &Request) -> Result<UserId, ScimError> {
    req.path_parameters_ref()
        .and_then(|p| p.first("userId"))
        .and_then(|raw| UserId::parse_sub(raw).ok())
        .ok_or_else(|| ScimError::status(404, "no such User"))
}

/// The member as a resource, with only the attributes asked for.
fn resource(member: &ScimMember, base: &str, projection: &Projection) -> serde_json::Value {
    let meta = Meta {
        id: member.id.as_str(),
        version: member.version,
        created: member.created,
        last_modified: member.last_modified,
    };
    projection.apply(user_resource(&member.user, meta, base))
}

/// One member's response: the resource, its ETag, and on a create its `Location`.
fn member_response(req: &Request, status: StatusCode, member: &ScimMember) -> Answer {
    let projection = projection(req)?;
    let base = base_url(req);
    let mut response = scim_json(status, &resource(member, &base, &projection));
    let headers = response.headers_mut();
    if let Ok(etag) = header::HeaderValue::from_str(&member.version.etag()) {
        headers.insert(header::ETAG, etag);
    }
    if status == StatusCode::CREATED
        && let Ok(location) = header::HeaderValue::from_str(&format!("{base}/Users/{}", member.id))
    {
        headers.insert(header::LOCATION, location);
    }
    Ok(response)
}

fn projection(req: &Request) -> Result<Projection, ScimError> {
    let pairs = query_pairs(req);
    Projection::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn if_match(req: &Request) -> Option<&str> {
    req.headers().get(header::IF_MATCH).and_then(|v| v.to_str().ok())
}

/// POST /Users: 201 with the member, new or linked.
pub async fn create(app: &App, client: ScimClient, req: Request) -> Answer {
    let user = ScimUser::from_json(&json_body(&req)?)?;
    let users = app
        .users
        .as_ref()
        .ok_or_else(|| ScimError::status(500, "something went wrong on our side"))?;
    let member = provisioning::create(&app.store, users, &client, &user, app.clock.now()).await?;
    member_response(&req, StatusCode::CREATED, &member)
}

/// GET /Users/{userId}: the member, if the directory made or linked them.
pub async fn get(app: &App, client: ScimClient, req: Request) -> Answer {
    let id = user_param(&req)?;
    let member = app.store.scim_member(client.org, &id).await?;
    member_response(&req, StatusCode::OK, &member)
}

/// PUT /Users/{userId}: the member as sent.
pub async fn replace(app: &App, client: ScimClient, req: Request) -> Answer {
    let id = user_param(&req)?;
    let user = ScimUser::from_json(&json_body(&req)?)?;
    let changed = provisioning::update(
        &app.store,
        &client,
        &id,
        &Change::Replace(user),
        if_match(&req),
        app.clock.now(),
    )
    .await?;
    member_response(&req, StatusCode::OK, &changed)
}

/// PATCH /Users/{userId}: the operations applied to the member as read;
/// 200 with the member after them (RFC 7644 section 3.5.2 allows 204; the
/// clients read the result).
pub async fn patch(app: &App, client: ScimClient, req: Request) -> Answer {
    let id = user_param(&req)?;
    let patch = Patch::parse(&json_body(&req)?)?;
    let changed = provisioning::update(
        &app.store,
        &client,
        &id,
        &Change::Patch(patch),
        if_match(&req),
        app.clock.now(),
    )
    .await?;
    member_response(&req, StatusCode::OK, &changed)
}

/// GET /Users: a filter that names a key looks the member up by it; any
/// other list (no filter, or `active` alone) pages through the members.
pub async fn list(app: &App, client: ScimClient, req: Request) -> Answer {
    let pairs = query_pairs(&req);
    let query = ListQuery::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let projection = projection(&req)?;
    let found = match &query.filter {
        Some(filter) => app.store.scim_find(client.org, filter, app.clock.now()).await?,
        None => None,
    };
    let (members, total) = match found {
        Some(found) => {
            let total = found.len() as u64;
            let skip = usize::try_from(query.start_index - 1).unwrap_or(usize::MAX);
            let page = found.into_iter().skip(skip).take(query.count as usize).collect();
            (page, total)
        }
        None => {
            let active = query.filter.as_ref().and_then(|f| {
                f.0.iter().find_map(|c| match c {
                    Condition::Active(active) => Some(*active),
                    _ => None,
                })
            });
            let page = app
                .store
                .scim_list(client.org, query.start_index, query.count, active, app.clock.now())
                .await?;
            (page.members, page.total)
        }
    };
    let base = base_url(&req);
    let resources = members.iter().map(|m| resource(m, &base, &projection)).collect();
    Ok(scim_json(
        StatusCode::OK,
        &list_response(resources, total, query.start_index),
    ))
}

/// DELETE /Users/{userId}: 204 once the member is gone from the
/// organization (and, where it made and alone used the account, erased).
pub async fn delete(app: &App, client: ScimClient, req: Request) -> Answer {
    let id = user_param(&req)?;
    provisioning::delete(&app.store, &client, &id, if_match(&req), app.clock.now()).await?;
    let mut response = Response::new(Body::Empty);
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}
