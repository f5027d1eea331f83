//! The one list of functions: what triggers each, what it may do and how it is
//! watched. `cargo xtask template` writes template.yaml's per-function blocks
//! (function, log group, policy, events, alarms) and samconfig.toml's watch list
//! from it, and `make test` fails when they are not current.
//!
//! This file is the list itself; what an entry is stands in `catalog/function.rs`.

mod function;
mod organizations;
mod scim;

pub use function::{
    Access, Alarm, ApiCalls, DEFAULT_TIMEOUT_SECONDS, Function, MIN_MEMORY_MB, STANDARD_ALARMS,
    TRIGGER_TIMEOUT_SECONDS, Trigger, UNMEASURED_MEMORY_MB,
};
use function::{function, http};
pub use organizations::*;
pub use scim::*;

/// `GET /me`: the caller reads their own profile.
pub const GET_PROFILE: Function = Function {
    memory_mb: 256,
    ..http(
        "get-profile",
        "GET",
        "/me",
        Access::User,
        "Returns the caller's profile.",
        &["GetItem"],
    )
};
/// `GET /me/account`: the caller's profile and every address, in one Query.
pub const GET_ACCOUNT: Function = Function {
    memory_mb: 128,
    ..http(
        "get-account",
        "GET",
        "/me/account",
        Access::User,
        "Returns the caller's profile with all their email addresses.",
        &["Query"],
    )
};
/// `PATCH /me`: the caller changes names and phone under If-Match.
pub const UPDATE_PROFILE: Function = Function {
    memory_mb: 128,
    ..http(
        "update-profile",
        "PATCH",
        "/me",
        Access::User,
        "Updates the caller's name and phone (optimistic concurrency through If-Match).",
        &["UpdateItem"],
    )
};
/// `GET /me/emails`: the caller's addresses.
pub const LIST_EMAILS: Function = Function {
    memory_mb: 256,
    ..http(
        "list-emails",
        "GET",
        "/me/emails",
        Access::User,
        "Lists the caller's email addresses.",
        &["Query"],
    )
};
/// `POST /me/emails`: claims a new address for the caller and mails it a code.
pub const ADD_EMAIL: Function = Function {
    memory_mb: 128,
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "add-email",
        "POST",
        "/me/emails",
        Access::User,
        "Adds an unverified email address to the caller's account.",
        &["UpdateItem", "PutItem", "DeleteItem"],
    )
};
/// `POST /me/emails/{emailId}/verification`: mails a new code, within the rate limits.
pub const SEND_VERIFICATION: Function = Function {
    memory_mb: 128,
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "send-verification",
        "POST",
        "/me/emails/{emailId}/verification",
        Access::User,
        "Sends a new verification code for one of the caller's addresses.",
        &["GetItem", "ConditionCheckItem", "UpdateItem", "PutItem"],
    )
};
/// `POST /me/emails/{emailId}/verify`: proves an address with its code.
pub const VERIFY_EMAIL: Function = Function {
    memory_mb: 128,
    reads_verification_key: true,
    ..http(
        "verify-email",
        "POST",
        "/me/emails/{emailId}/verify",
        Access::User,
        "Verifies one of the caller's addresses with a code.",
        &["GetItem", "ConditionCheckItem", "UpdateItem", "PutItem"],
    )
};
/// `PUT /me/primary-email`: moves the primary to a verified address; Cognito follows through the stream.
pub const SET_PRIMARY_EMAIL: Function = Function {
    needs_recent_sign_in: true,
    memory_mb: 128,
    ..http(
        "set-primary-email",
        "PUT",
        "/me/primary-email",
        Access::User,
        "Makes a verified address the caller's primary address.",
        // PutItem: the switch, kept for its undoing.
        &["Query", "UpdateItem", "PutItem"],
    )
};
/// `DELETE /me/emails/{emailId}`: drops an address that is not primary and releases its claim.
pub const REMOVE_EMAIL: Function = Function {
    needs_recent_sign_in: true,
    memory_mb: 128,
    ..http(
        "remove-email",
        "DELETE",
        "/me/emails/{emailId}",
        Access::User,
        "Removes one of the caller's addresses.",
        &["GetItem", "UpdateItem", "DeleteItem"],
    )
};
/// `GET /me/emails/{emailId}`: one of the caller's addresses.
pub const GET_EMAIL: Function = Function {
    memory_mb: 256,
    ..http(
        "get-email",
        "GET",
        "/me/emails/{emailId}",
        Access::User,
        "Returns one of the caller's addresses.",
        &["GetItem"],
    )
};
/// `DELETE /me`: the caller closes their own account under If-Match.
pub const DELETE_ACCOUNT: Function = Function {
    // The invitations to the user's addresses, by GSI1.
    queries_gsi1: true,
    needs_recent_sign_in: true,
    memory_mb: 128,
    ..http(
        "delete-account",
        "DELETE",
        "/me",
        Access::User,
        "Closes the caller's account (If-Match), releasing and erasing everything.",
        // GetItem: the reservation of a former primary removed since its switch.
        &["GetItem", "Query", "UpdateItem", "DeleteItem"],
    )
};
/// `GET /emails/availability`: whether the caller could add an address, before trying.
pub const CHECK_EMAIL: Function = Function {
    memory_mb: 128,
    ..http(
        "check-email",
        "GET",
        "/emails/availability",
        Access::User,
        "Tells whether an address is free to add (a per-user daily limit).",
        &["GetItem", "ConditionCheckItem", "PutItem"],
    )
};
/// `GET /me/export`: everything the table holds about the caller (GDPR
/// articles 15 and 20), within a per-user daily limit. GetItem: the claims of
/// the caller's addresses, the organization's half of each of their
/// memberships (what its directory holds about them), and the counter before
/// it is counted.
pub const EXPORT_ACCOUNT: Function = Function {
    // The invitations to the user's addresses, by GSI1.
    queries_gsi1: true,
    memory_mb: 128,
    ..http(
        "export-account",
        "GET",
        "/me/export",
        Access::User,
        "Exports everything the service holds about the caller (a per-user daily limit).",
        &["GetItem", "Query", "ConditionCheckItem", "PutItem"],
    )
};
/// `GET /recovery`: the page a recovery link opens. It asks before it
/// recovers (a mail scanner that opens the link changes nothing) and posts the
/// token from the link's fragment, which browsers never send.
pub const RECOVERY_PAGE: Function = Function {
    memory_mb: 128,
    ..http(
        "recovery-page",
        "GET",
        "/recovery",
        Access::Anyone,
        "The page a recovery link opens: it asks, then posts the link's token.",
        &[],
    )
};
/// `POST /recovery`: a former primary address takes the account back with the
/// one-time token its notice carried. GetItem: the source's counter of refused
/// links; Query: the account; the recovery is one transaction.
pub const RECOVER_ACCOUNT: Function = Function {
    memory_mb: 128,
    reads_verification_key: true,
    ..http(
        "recover-account",
        "POST",
        "/recovery",
        Access::Anyone,
        "Takes an account back from a switch of its primary address, with the link mailed to the former address.",
        &[
            "GetItem",
            "Query",
            "UpdateItem",
            "PutItem",
            "DeleteItem",
            "ConditionCheckItem",
        ],
    )
};
/// `GET /admin/users`: an admin finds an address's owner through GSI1.
pub const FIND_USER_BY_EMAIL: Function = Function {
    memory_mb: 256,
    queries_gsi1: true,
    ..http(
        "find-user-by-email",
        "GET",
        "/admin/users",
        Access::Admin,
        "Admins only: finds a user by email address.",
        &["Query", "GetItem"],
    )
};
/// `GET /admin/user-list`: an admin pages through the users, oldest first, through GSI2.
/// Not `/admin/users`: a route cannot differ by query string, and that one is
/// the look-up by address.
pub const LIST_USERS: Function = Function {
    memory_mb: 256,
    queries_gsi2: true,
    ..http(
        "list-users",
        "GET",
        "/admin/user-list",
        Access::Admin,
        "Admins only: lists users oldest first, by status, a page at a time.",
        // GetItem: the acting admin's own profile, which must be active.
        &["Query", "GetItem"],
    )
};
/// `PUT /admin/users/{userId}/status`: an admin suspends, re-activates or deletes a user.
pub const SET_USER_STATUS: Function = Function {
    // The invitations to the user's addresses, by GSI1.
    queries_gsi1: true,
    memory_mb: 128,
    ..http(
        "set-user-status",
        "PUT",
        "/admin/users/{userId}/status",
        Access::Admin,
        "Admins only: sets a user's status.",
        &["GetItem", "Query", "UpdateItem", "DeleteItem", "ConditionCheckItem"],
    )
};
/// Cognito PreSignUp: refuses a sign-up whose address another user has verified.
pub const PRE_SIGN_UP: Function = Function {
    memory_mb: 256,
    timeout_seconds: TRIGGER_TIMEOUT_SECONDS,
    ..function(
        "pre-sign-up",
        Trigger::CognitoPreSignUp,
        "checks the address against the table.",
        &["GetItem"],
    )
};
/// Cognito PostConfirmation: records the confirmed user (profile, verified primary, claim).
pub const POST_CONFIRMATION: Function = Function {
    memory_mb: 128,
    timeout_seconds: TRIGGER_TIMEOUT_SECONDS,
    // A sign-up whose address another account verified first is closed.
    cognito_actions: &["AdminDeleteUser"],
    ..function(
        "post-confirmation",
        Trigger::CognitoPostConfirmation,
        "records the confirmed user in the table.",
        // GetItem and Query: a reset's first appearance of a migrated user.
        &["GetItem", "Query", "PutItem", "DeleteItem", "UpdateItem"],
    )
};
/// Cognito PostAuthentication: refuses suspended and deleted users; creates a missing profile.
pub const POST_AUTHENTICATION: Function = Function {
    memory_mb: 256,
    timeout_seconds: TRIGGER_TIMEOUT_SECONDS,
    cognito_actions: &["AdminDeleteUser"],
    ..function(
        "post-authentication",
        Trigger::CognitoPostAuthentication,
        "the repair path; a profile for a confirmed user who has none.",
        // Query: a migrated user's first sign-in moves their pending account.
        &["GetItem", "Query", "PutItem", "DeleteItem", "UpdateItem"],
    )
};

/// Cognito UserMigration: a pending user's first sign-in is checked against
/// their legacy password hash (or their forgot-password begins), and Cognito
/// gets their verified primary. Never below one full vCPU (1,769 MB): the
/// hashes' ceiling (`CostLimits::TRIGGER`) is set for a whole core, where a
/// bcrypt of cost 12 takes a quarter of a second; at 128 MB it takes seconds.
pub const MIGRATE_USER: Function = Function {
    timeout_seconds: TRIGGER_TIMEOUT_SECONDS,
    memory_mb: 1_769,
    memory_floor_mb: 1_769,
    alarms: &[
        Alarm::Errors,
        Alarm::Throttles,
        Alarm::Duration,
        Alarm::ConditionalCheckFailures,
        Alarm::PasswordResetMigrations,
    ],
    ..function(
        "migrate-user",
        Trigger::CognitoUserMigration,
        "checks a pending user's legacy password at their first sign-in.",
        // UpdateItem: a password check's slot taken on the hash's item before
        // the check, given back when the password matched, or the day's slots trimmed.
        &["GetItem", "UpdateItem"],
    )
};

/// Profiles of users who deleted themselves in Cognito (DeleteUser with their own
/// access token fires no trigger) are erased: as CloudTrail records the call,
/// and by a resumable pass that diffs the table against Cognito's users, which
/// the schedule moves on every 15 minutes.
pub const RECONCILE_USERS: Function = Function {
    // The invitations to the user's addresses, by GSI1.
    queries_gsi1: true,
    memory_mb: 128,
    // Lambda's longest: a run stops itself before it, and the next goes on.
    timeout_seconds: 900,
    alarms: &[
        Alarm::Errors,
        Alarm::Throttles,
        // Past the point where a run stops itself, not 80 % of the timeout:
        // a run of a large pool uses its whole time.
        Alarm::Duration,
        Alarm::ConditionalCheckFailures,
        Alarm::PassOverdue,
    ],
    // AdminDeleteUser: a user deleted here whose Cognito side never happened,
    // and a sign-up closed because another account verified its address.
    // The rest: a recovery whose stream record failed for good, finished
    // (its address, every session signed out, a new password).
    cognito_actions: &[
        "ListUsers",
        "AdminGetUser",
        "AdminDeleteUser",
        "AdminUpdateUserAttributes",
        "AdminUserGlobalSignOut",
        "AdminResetUserPassword",
    ],
    ..function(
        "reconcile-users",
        Trigger::Schedule {
            event: "Every15Minutes",
            rate: "rate(15 minutes)",
            api_calls: Some(ApiCalls {
                event: "CognitoDeleteUser",
                pattern: DELETE_USER_RECORDS,
            }),
        },
        "erases the profiles of users who deleted themselves in Cognito.",
        // BatchGetItem: listed users' profiles, to compare their addresses;
        // GetItem: whether another account verified a stranded sign-up's address.
        &["Scan", "Query", "GetItem", "BatchGetItem", "UpdateItem", "DeleteItem"],
    )
};

/// CloudTrail's records of Cognito's DeleteUser (a user deleting themselves
/// with their access token). A failed call is let through and ignored by the
/// handler: its record may carry an empty `errorCode`, which a pattern cannot
/// tell from a real one.
pub const DELETE_USER_RECORDS: &str = r#"{"source":["aws.cognito-idp"],"detail-type":["AWS API Call via CloudTrail"],"detail":{"eventSource":["cognito-idp.amazonaws.com"],"eventName":["DeleteUser"]}}"#;

/// Profile changes reach Cognito: its `email` follows the primary address,
/// suspensions disable the user and deletions delete them. The old primary
/// gets a notice when the primary moves away from it.
pub const SYNC_COGNITO_EMAIL: Function = Function {
    memory_mb: 128,
    timeout_seconds: 60,
    alarms: &[
        Alarm::Errors,
        Alarm::Throttles,
        Alarm::Duration,
        Alarm::IteratorAge,
        Alarm::FailedRecords,
        Alarm::ConditionalCheckFailures,
    ],
    cognito_actions: &[
        // Only after AliasExistsException: does the user hold the address already?
        "AdminGetUser",
        "AdminUpdateUserAttributes",
        "AdminUserGlobalSignOut",
        "AdminDisableUser",
        "AdminEnableUser",
        "AdminDeleteUser",
        // A recovery: a new password at the next sign-in.
        "AdminResetUserPassword",
    ],
    sends_email: true,
    // The recovery link's token is stored as a keyed hash.
    reads_verification_key: true,
    ..function(
        "sync-cognito-email",
        Trigger::TableStream {
            event: "ProfileChanges",
            filters: &[PROFILE_CHANGES],
        },
        "profile changes reach Cognito (email follows the primary; suspend, re-activate, delete; a recovery signs out and asks for a new password); notifies the old primary with its recovery link.",
        // Records the address Cognito now holds on the profile, and a
        // recovery token on its switch; an erasure's switches are queried
        // and deleted with the addresses they reserve.
        &["UpdateItem", "Query", "DeleteItem"],
    )
};

/// Profile items that changed. Filters cannot compare the old image with the
/// new one, so the consumer does; this only spares it every other record.
pub const PROFILE_CHANGES: &str = r#"{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"entityType":{"S":["User"]}}}}"#;

/// Domain events for the rest of the system: every change of a profile, an
/// address, an organization or a membership, as the stream's images show it, becomes its events (CloudEvents)
/// on the stack's EventBridge bus (docs/events.md).
pub const PUBLISH_EVENTS: Function = Function {
    memory_mb: 128,
    timeout_seconds: 60,
    alarms: &[
        Alarm::Errors,
        Alarm::Throttles,
        Alarm::Duration,
        Alarm::IteratorAge,
        Alarm::FailedRecords,
    ],
    publishes_events: true,
    ..function(
        "publish-events",
        Trigger::TableStream {
            event: "TableChanges",
            filters: USER_AND_EMAIL_CHANGES,
        },
        "puts a domain event on the stack's event bus for every change of a profile, an address, an organization or a membership.",
        &[],
    )
};

/// Records of profiles, email records, organizations and members (the
/// organization's half of a membership): written, changed or removed (a
/// removal has no new image, a new item no old one). Claims, counters, the
/// user's half of a membership and the reconcile's own items make no event.
pub const USER_AND_EMAIL_CHANGES: &[&str] = &[
    r#"{"dynamodb":{"NewImage":{"entityType":{"S":["User","Email","Organization","Member"]}}}}"#,
    r#"{"dynamodb":{"OldImage":{"entityType":{"S":["User","Email","Organization","Member"]}}}}"#,
];

/// Every function of the stack: the template, its tests and the local tools go through this list.
pub const FUNCTIONS: &[Function] = &[
    GET_PROFILE,
    GET_ACCOUNT,
    UPDATE_PROFILE,
    LIST_EMAILS,
    ADD_EMAIL,
    SEND_VERIFICATION,
    VERIFY_EMAIL,
    SET_PRIMARY_EMAIL,
    REMOVE_EMAIL,
    GET_EMAIL,
    DELETE_ACCOUNT,
    CHECK_EMAIL,
    EXPORT_ACCOUNT,
    RECOVERY_PAGE,
    RECOVER_ACCOUNT,
    FIND_USER_BY_EMAIL,
    LIST_USERS,
    SET_USER_STATUS,
    CREATE_ORGANIZATION,
    LIST_MY_ORGANIZATIONS,
    GET_ORGANIZATION,
    UPDATE_ORGANIZATION,
    DELETE_ORGANIZATION,
    LIST_MEMBERS,
    SET_MEMBER_ROLE,
    REMOVE_MEMBER,
    CREATE_INVITATION,
    LIST_INVITATIONS,
    RESEND_INVITATION,
    REVOKE_INVITATION,
    ACCEPT_INVITATION,
    CLAIM_DOMAIN,
    LIST_DOMAINS,
    VERIFY_DOMAIN,
    UPDATE_DOMAIN,
    REMOVE_DOMAIN,
    SUGGEST_ORGANIZATIONS,
    JOIN_BY_DOMAIN,
    CREATE_SCIM_TOKEN,
    LIST_SCIM_TOKENS,
    REVOKE_SCIM_TOKEN,
    SCIM_DISCOVERY,
    SCIM_LIST_USERS,
    SCIM_CREATE_USER,
    SCIM_GET_USER,
    SCIM_REPLACE_USER,
    SCIM_PATCH_USER,
    SCIM_DELETE_USER,
    PRE_SIGN_UP,
    POST_CONFIRMATION,
    POST_AUTHENTICATION,
    MIGRATE_USER,
    RECONCILE_USERS,
    SYNC_COGNITO_EMAIL,
    PUBLISH_EVENTS,
    PURGE_ORGANIZATIONS,
];

/// The entry for a function's name, as template.yaml's `Binary` property gives it.
pub fn by_name(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// The function a trigger invokes, e.g. Cognito's PreSignUp. What wires a
/// trigger up (the local Cognito) finds its function here, never by name.
pub fn by_trigger(trigger: Trigger) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.trigger == trigger)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_routes_are_unique() {
        let mut names: Vec<_> = FUNCTIONS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FUNCTIONS.len());
        let mut routes: Vec<_> = FUNCTIONS
            .iter()
            .filter_map(|f| match f.trigger {
                Trigger::Http { method, path, .. } => Some((method, path)),
                _ => None,
            })
            .collect();
        let count = routes.len();
        routes.sort_unstable();
        routes.dedup();
        assert_eq!(routes.len(), count);
        assert_eq!(count, 48);
    }
}
