//! The SCIM 2.0 functions (RFC 7644), one per operation a directory calls,
//! under `/scim/v2`: no authorizer; each proves the organization's SCIM
//! token itself (`api::scim::serve`). Every one reads the token's item and
//! its organization (GetItem), notes the token's last use or counts a
//! refused token against its source (UpdateItem). Part of the one list
//! (`FUNCTIONS`, in `catalog.rs`).

use super::function::{Function, scim};

/// What every SCIM route does to prove its token.
const PROVE: [&str; 2] = ["GetItem", "UpdateItem"];

/// `ANY /scim/v2/{proxy+}`: the discovery documents, and the protocol's 404,
/// 405 and 501 for everything under the base URL no other route takes.
pub const SCIM_DISCOVERY: Function = Function {
    ..scim(
        "scim-discovery",
        "ANY",
        "/scim/v2/{proxy+}",
        "SCIM: /ServiceProviderConfig, /ResourceTypes and /Schemas; 404, 405 or 501 for anything else under /scim/v2.",
        &PROVE,
    )
};
/// `GET /scim/v2/Users`: a filter by key, or the directory's members a page at a time.
pub const SCIM_LIST_USERS: Function = Function {
    ..scim(
        "scim-list-users",
        "GET",
        "/scim/v2/Users",
        "SCIM: finds members by userName, externalId, address or id, or lists the directory's members by startIndex.",
        &["GetItem", "UpdateItem", "Query"],
    )
};
/// `POST /scim/v2/Users`: a new account made verified at the organization's
/// domain, or an existing one linked by its own address there.
pub const SCIM_CREATE_USER: Function = Function {
    cognito_actions: &["AdminCreateUser", "AdminGetUser", "AdminDeleteUser"],
    timeout_seconds: 15,
    ..scim(
        "scim-create-user",
        "POST",
        "/scim/v2/Users",
        "SCIM: makes a member: a new account (Cognito and the table) or an existing one linked by its address.",
        &["GetItem", "Query", "PutItem", "UpdateItem", "ConditionCheckItem"],
    )
};
/// `GET /scim/v2/Users/{userId}`: one member as the directory sees them.
pub const SCIM_GET_USER: Function = Function {
    ..scim(
        "scim-get-user",
        "GET",
        "/scim/v2/Users/{userId}",
        "SCIM: one member of the organization, as its directory made or linked them.",
        &["GetItem", "UpdateItem", "Query"],
    )
};
/// A change of a member's addresses may wait for Cognito to sign them in
/// with the new primary before the former one leaves (the table stream's
/// consumer moves it, in about a second): room for that, under API
/// Gateway's 30-second limit.
const CHANGE_TIMEOUT_SECONDS: u32 = 25;

/// `PUT /scim/v2/Users/{userId}`: the member as sent (If-Match honoured).
pub const SCIM_REPLACE_USER: Function = Function {
    timeout_seconds: CHANGE_TIMEOUT_SECONDS,
    ..scim(
        "scim-replace-user",
        "PUT",
        "/scim/v2/Users/{userId}",
        "SCIM: replaces a member's names, phone, addresses and active (If-Match honoured).",
        &[
            "GetItem",
            "Query",
            "PutItem",
            "UpdateItem",
            "DeleteItem",
            "ConditionCheckItem",
        ],
    )
};
/// `PATCH /scim/v2/Users/{userId}`: operations on the member (If-Match honoured).
pub const SCIM_PATCH_USER: Function = Function {
    timeout_seconds: CHANGE_TIMEOUT_SECONDS,
    ..scim(
        "scim-patch-user",
        "PATCH",
        "/scim/v2/Users/{userId}",
        "SCIM: applies a PATCH (Entra ID's and Okta's shapes) to a member (If-Match honoured).",
        &[
            "GetItem",
            "Query",
            "PutItem",
            "UpdateItem",
            "DeleteItem",
            "ConditionCheckItem",
        ],
    )
};
/// `DELETE /scim/v2/Users/{userId}`: the membership ends; the account is
/// erased where the organization made it and alone uses it.
pub const SCIM_DELETE_USER: Function = Function {
    // The invitations to an erased account's addresses, by GSI1.
    queries_gsi1: true,
    ..scim(
        "scim-delete-user",
        "DELETE",
        "/scim/v2/Users/{userId}",
        "SCIM: ends a membership; erases the account where the organization made it and alone uses it.",
        &[
            "GetItem",
            "Query",
            "PutItem",
            "UpdateItem",
            "DeleteItem",
            "ConditionCheckItem",
        ],
    )
};
