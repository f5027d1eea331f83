//! The organizations' functions: one per access pattern of organizations
//! and their members, and the scheduled purge of deleted ones. Part of the
//! one list (`FUNCTIONS`, in `catalog.rs`); here so that list stays readable.

use super::function::{Access, Alarm, Function, Trigger, function, http};

/// `POST /organizations`: the caller creates an organization and becomes its owner.
pub const CREATE_ORGANIZATION: Function = Function {
    ..http(
        "create-organization",
        "POST",
        "/organizations",
        Access::User,
        "Creates an organization (its slug claimed deployment-wide); the caller is its owner.",
        // The organization, its slug, both halves of the membership, the creator's count: one transaction.
        &["PutItem", "UpdateItem"],
    )
};
/// `GET /me/organizations`: the organizations the caller belongs to, with their role in each.
pub const LIST_MY_ORGANIZATIONS: Function = Function {
    ..http(
        "list-my-organizations",
        "GET",
        "/me/organizations",
        Access::User,
        "Lists the organizations the caller belongs to, with their role in each.",
        &["Query", "GetItem"],
    )
};
/// `GET /organizations/{orgId}`: a member reads the organization.
pub const GET_ORGANIZATION: Function = Function {
    ..http(
        "get-organization",
        "GET",
        "/organizations/{orgId}",
        Access::User,
        "Returns an organization to its members, with the caller's role.",
        &["GetItem"],
    )
};
/// `PATCH /organizations/{orgId}`: an owner or admin renames it, under If-Match.
pub const UPDATE_ORGANIZATION: Function = Function {
    ..http(
        "update-organization",
        "PATCH",
        "/organizations/{orgId}",
        Access::User,
        "Renames an organization (owners and admins; optimistic concurrency through If-Match).",
        &["GetItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `DELETE /organizations/{orgId}`: an owner deletes it, under If-Match; its members go after.
pub const DELETE_ORGANIZATION: Function = Function {
    ..http(
        "delete-organization",
        "DELETE",
        "/organizations/{orgId}",
        Access::User,
        "Deletes an organization (owners; If-Match): gone at once to readers, its members removed after.",
        &["GetItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// `GET /organizations/{orgId}/members`: owners and admins page through the members.
pub const LIST_MEMBERS: Function = Function {
    ..http(
        "list-members",
        "GET",
        "/organizations/{orgId}/members",
        Access::User,
        "Lists an organization's members and their roles, a page at a time (owners and admins).",
        &["GetItem", "Query"],
    )
};
/// `PUT /organizations/{orgId}/members/{userId}/role`: an owner or admin changes a member's role.
pub const SET_MEMBER_ROLE: Function = Function {
    ..http(
        "set-member-role",
        "PUT",
        "/organizations/{orgId}/members/{userId}/role",
        Access::User,
        "Changes a member's role (owners and admins; owners alone make or unmake owners; an organization keeps one).",
        &["GetItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `DELETE /organizations/{orgId}/members/{userId}`: a member leaves, or an owner or admin removes them.
pub const REMOVE_MEMBER: Function = Function {
    ..http(
        "remove-member",
        "DELETE",
        "/organizations/{orgId}/members/{userId}",
        Access::User,
        "Removes a member (owners and admins), or the caller leaves (their own userId); an organization keeps an owner.",
        &["GetItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// Deleted organizations' members are removed, a page at a time: each run
/// works through the deletions under way (the `PURGES` partition) until a
/// little before its deadline, and the next run goes on where it stopped.
pub const PURGE_ORGANIZATIONS: Function = Function {
    timeout_seconds: 60,
    alarms: &[
        Alarm::Errors,
        Alarm::Throttles,
        Alarm::Duration,
        Alarm::ConditionalCheckFailures,
    ],
    ..function(
        "purge-organizations",
        Trigger::Schedule {
            event: "EveryMinute",
            rate: "rate(1 minute)",
            api_calls: None,
        },
        "removes deleted organizations' members, a page at a time, then the organizations.",
        &["GetItem", "Query", "UpdateItem", "DeleteItem"],
    )
};
