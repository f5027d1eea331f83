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
        // Query: its domains, whose claims the deletion releases.
        &["GetItem", "Query", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
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
/// `POST /organizations/{orgId}/invitations`: an owner or admin invites an address in a role.
pub const CREATE_INVITATION: Function = Function {
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "create-invitation",
        "POST",
        "/organizations/{orgId}/invitations",
        Access::User,
        "Invites an address to an organization in a role, by mail (owners and admins; owners alone invite owners; inviting again resends).",
        // The organization, the actor, the invitation and its two counters: one transaction.
        &["GetItem", "PutItem", "ConditionCheckItem"],
    )
};
/// `GET /organizations/{orgId}/invitations`: owners and admins page through the pending invitations.
pub const LIST_INVITATIONS: Function = Function {
    ..http(
        "list-invitations",
        "GET",
        "/organizations/{orgId}/invitations",
        Access::User,
        "Lists an organization's pending invitations, a page at a time (owners and admins).",
        &["GetItem", "Query"],
    )
};
/// `POST /organizations/{orgId}/invitations/{invitationId}/resend`: a new link for a pending invitation.
pub const RESEND_INVITATION: Function = Function {
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "resend-invitation",
        "POST",
        "/organizations/{orgId}/invitations/{invitationId}/resend",
        Access::User,
        "Sends a pending invitation again with a new link, which ends the one before (owners and admins; counted).",
        &["GetItem", "PutItem", "ConditionCheckItem"],
    )
};
/// `DELETE /organizations/{orgId}/invitations/{invitationId}`: an owner or admin revokes an invitation.
pub const REVOKE_INVITATION: Function = Function {
    ..http(
        "revoke-invitation",
        "DELETE",
        "/organizations/{orgId}/invitations/{invitationId}",
        Access::User,
        "Revokes a pending invitation: its link works no more (owners and admins; owners alone revoke an owner's).",
        &["GetItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// `POST /invitations/accept`: the caller accepts an invitation to an address they hold, verified.
pub const ACCEPT_INVITATION: Function = Function {
    reads_verification_key: true,
    ..http(
        "accept-invitation",
        "POST",
        "/invitations/accept",
        Access::User,
        "Accepts an invitation with its mailed token: the caller, holding the address verified, joins in its role (idempotent).",
        // Both halves, the caller's count, the organization, the invitation used up, the claim and the record: one transaction.
        &["GetItem", "PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// `POST /organizations/{orgId}/domains`: an owner or admin claims a mail domain.
pub const CLAIM_DOMAIN: Function = Function {
    ..http(
        "claim-domain",
        "POST",
        "/organizations/{orgId}/domains",
        Access::User,
        "Claims a mail domain for an organization, pending until proved (owners and admins; one organization per domain; no consumer or disposable domain).",
        // The record, the claim (and a lapsed one's organization), the counts, the actor: one transaction.
        &["GetItem", "PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// `GET /organizations/{orgId}/domains`: owners and admins list the domains.
pub const LIST_DOMAINS: Function = Function {
    ..http(
        "list-domains",
        "GET",
        "/organizations/{orgId}/domains",
        Access::User,
        "Lists an organization's domains, their status and enrollment (owners and admins).",
        &["GetItem", "Query"],
    )
};
/// `POST /organizations/{orgId}/domains/{domain}/verification`: proved by the actor's verified address there.
pub const VERIFY_DOMAIN: Function = Function {
    ..http(
        "verify-domain",
        "POST",
        "/organizations/{orgId}/domains/{domain}/verification",
        Access::User,
        "Verifies an organization's domain with one of the caller's own addresses at it, verified by code (owners and admins).",
        &["GetItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `PATCH /organizations/{orgId}/domains/{domain}`: the domain's enrollment mode.
pub const UPDATE_DOMAIN: Function = Function {
    ..http(
        "update-domain",
        "PATCH",
        "/organizations/{orgId}/domains/{domain}",
        Access::User,
        "Sets how users at a verified domain meet the organization: none, suggest or invite (owners and admins).",
        &["GetItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `DELETE /organizations/{orgId}/domains/{domain}`: the domain removed, its claim free.
pub const REMOVE_DOMAIN: Function = Function {
    ..http(
        "remove-domain",
        "DELETE",
        "/organizations/{orgId}/domains/{domain}",
        Access::User,
        "Removes a domain from an organization; its claim is free at once (owners and admins).",
        &["GetItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// `GET /me/organization-suggestions`: organizations the caller may join by a domain.
pub const SUGGEST_ORGANIZATIONS: Function = Function {
    ..http(
        "suggest-organizations",
        "GET",
        "/me/organization-suggestions",
        Access::User,
        "Lists the organizations the caller may join by the verified domain of one of their verified addresses.",
        &["GetItem", "Query"],
    )
};
/// `POST /organizations/{orgId}/enrollment`: the caller joins by their address at an inviting domain.
pub const JOIN_BY_DOMAIN: Function = Function {
    ..http(
        "join-by-domain",
        "POST",
        "/organizations/{orgId}/enrollment",
        Access::User,
        "Joins an organization whose verified domain invites its users, by the caller's verified address there (idempotent).",
        &["GetItem", "PutItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `POST /organizations/{orgId}/scim-tokens`: a SCIM token for the organization's identity provider, shown once.
pub const CREATE_SCIM_TOKEN: Function = Function {
    reads_verification_key: true,
    ..http(
        "create-scim-token",
        "POST",
        "/organizations/{orgId}/scim-tokens",
        Access::User,
        "Makes a named SCIM token for an organization's identity provider, shown once (owners and admins).",
        &["GetItem", "PutItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `GET /organizations/{orgId}/scim-tokens`: owners and admins list the live tokens, never their secrets.
pub const LIST_SCIM_TOKENS: Function = Function {
    ..http(
        "list-scim-tokens",
        "GET",
        "/organizations/{orgId}/scim-tokens",
        Access::User,
        "Lists an organization's live SCIM tokens: names, makers, creation and last-use times (owners and admins).",
        &["GetItem", "Query"],
    )
};
/// `DELETE /organizations/{orgId}/scim-tokens/{tokenId}`: the token's next request is refused.
pub const REVOKE_SCIM_TOKEN: Function = Function {
    ..http(
        "revoke-scim-token",
        "DELETE",
        "/organizations/{orgId}/scim-tokens/{tokenId}",
        Access::User,
        "Revokes an organization's SCIM token: its next request is refused (owners and admins).",
        &["GetItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// Deleted organizations' members are removed, a page at a time: each run
/// gives each deletion under way (the `PURGES` partition) a turn, least
/// recently taken up first, until a little before its deadline; each
/// organization resumes from its own checkpoint. One whose turn fails is
/// passed over and the run fails at its end (the Errors alarm).
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
