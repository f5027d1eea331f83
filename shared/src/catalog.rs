//! The one list of functions: what triggers each, and which DynamoDB actions its
//! code performs. template.yaml, the local API and the IAM policies are checked
//! against this list by tests, so they cannot drift from the code.

/// Who may call an HTTP route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any signed-in user, acting as the token's `sub`.
    User,
    /// Members of the admin group only.
    Admin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Http {
        method: &'static str,
        path: &'static str,
        access: Access,
    },
    CognitoPreSignUp,
    CognitoPostConfirmation,
    /// Every sign-in: the repair path for confirmed users without a profile.
    CognitoPostAuthentication,
    /// An EventBridge schedule (`rate(...)`).
    Schedule {
        rate: &'static str,
    },
    /// The table's stream (NEW_AND_OLD_IMAGES), through an event source mapping
    /// that passes only the records matching `filter` (a Lambda filter pattern).
    TableStream {
        filter: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// Package, binary and directory name under `functions/`.
    pub name: &'static str,
    pub trigger: Trigger,
    /// DynamoDB IAM actions the code performs, including the item actions
    /// inside its TransactWriteItems.
    pub dynamodb_actions: &'static [&'static str],
    /// Whether it queries GSI1 (and so needs the index ARN).
    pub queries_gsi1: bool,
    /// Whether it hashes codes or addresses, and so reads the verification key's
    /// secret at init (`secretsmanager:GetSecretValue` on that secret alone).
    pub reads_verification_key: bool,
    /// Cognito admin actions it calls, on the stack's user pool alone.
    pub cognito_actions: &'static [&'static str],
    /// Whether it sends mail (`ses:SendEmail` on the sender identity and the
    /// configuration set). No other function builds an SES client.
    pub sends_email: bool,
}

const fn http(
    name: &'static str,
    method: &'static str,
    path: &'static str,
    access: Access,
    dynamodb_actions: &'static [&'static str],
) -> Function {
    Function {
        name,
        trigger: Trigger::Http { method, path, access },
        dynamodb_actions,
        queries_gsi1: false,
        reads_verification_key: false,
        cognito_actions: &[],
        sends_email: false,
    }
}

pub const GET_PROFILE: Function = http("get-profile", "GET", "/me", Access::User, &["GetItem"]);
pub const GET_ACCOUNT: Function = http("get-account", "GET", "/me/account", Access::User, &["Query"]);
pub const UPDATE_PROFILE: Function = http("update-profile", "PATCH", "/me", Access::User, &["UpdateItem"]);
pub const LIST_EMAILS: Function = http("list-emails", "GET", "/me/emails", Access::User, &["Query"]);
pub const ADD_EMAIL: Function = Function {
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "add-email",
        "POST",
        "/me/emails",
        Access::User,
        &["UpdateItem", "PutItem", "DeleteItem"],
    )
};
pub const SEND_VERIFICATION: Function = Function {
    reads_verification_key: true,
    sends_email: true,
    ..http(
        "send-verification",
        "POST",
        "/me/emails/{emailId}/verification",
        Access::User,
        &["GetItem", "ConditionCheckItem", "UpdateItem", "PutItem"],
    )
};
pub const VERIFY_EMAIL: Function = Function {
    reads_verification_key: true,
    ..http(
        "verify-email",
        "POST",
        "/me/emails/{emailId}/verify",
        Access::User,
        &["GetItem", "ConditionCheckItem", "UpdateItem", "PutItem"],
    )
};
pub const SET_PRIMARY_EMAIL: Function = http(
    "set-primary-email",
    "PUT",
    "/me/primary-email",
    Access::User,
    &["Query", "UpdateItem"],
);
pub const REMOVE_EMAIL: Function = http(
    "remove-email",
    "DELETE",
    "/me/emails/{emailId}",
    Access::User,
    &["GetItem", "UpdateItem", "DeleteItem"],
);
pub const GET_EMAIL: Function = http("get-email", "GET", "/me/emails/{emailId}", Access::User, &["GetItem"]);
pub const DELETE_ACCOUNT: Function = http(
    "delete-account",
    "DELETE",
    "/me",
    Access::User,
    &["Query", "UpdateItem", "DeleteItem"],
);
pub const CHECK_EMAIL: Function = http("check-email", "GET", "/emails/availability", Access::User, &["GetItem"]);
pub const FIND_USER_BY_EMAIL: Function = Function {
    queries_gsi1: true,
    ..http(
        "find-user-by-email",
        "GET",
        "/admin/users",
        Access::Admin,
        &["Query", "GetItem"],
    )
};
pub const SET_USER_STATUS: Function = http(
    "set-user-status",
    "PUT",
    "/admin/users/{userId}/status",
    Access::Admin,
    &["GetItem", "Query", "UpdateItem", "DeleteItem"],
);
pub const PRE_SIGN_UP: Function = Function {
    name: "pre-sign-up",
    trigger: Trigger::CognitoPreSignUp,
    dynamodb_actions: &["GetItem"],
    queries_gsi1: false,
    reads_verification_key: false,
    cognito_actions: &[],
    sends_email: false,
};
pub const POST_CONFIRMATION: Function = Function {
    name: "post-confirmation",
    trigger: Trigger::CognitoPostConfirmation,
    dynamodb_actions: &["PutItem", "DeleteItem", "UpdateItem"],
    queries_gsi1: false,
    reads_verification_key: false,
    cognito_actions: &[],
    sends_email: false,
};

pub const POST_AUTHENTICATION: Function = Function {
    name: "post-authentication",
    trigger: Trigger::CognitoPostAuthentication,
    dynamodb_actions: &["GetItem", "PutItem", "DeleteItem", "UpdateItem"],
    queries_gsi1: false,
    reads_verification_key: false,
    cognito_actions: &[],
    sends_email: false,
};

/// Profiles of users who deleted themselves in Cognito (DeleteUser with their own
/// access token fires no trigger) are found by a daily sweep and erased.
pub const RECONCILE_USERS: Function = Function {
    name: "reconcile-users",
    trigger: Trigger::Schedule { rate: "rate(1 day)" },
    dynamodb_actions: &["Scan", "Query", "UpdateItem", "DeleteItem"],
    queries_gsi1: false,
    reads_verification_key: false,
    cognito_actions: &["AdminGetUser"],
    sends_email: false,
};

/// Profile changes reach Cognito: its `email` follows the primary address,
/// suspensions disable the user and deletions delete them. The old primary
/// gets a notice when the primary moves away from it.
pub const SYNC_COGNITO_EMAIL: Function = Function {
    name: "sync-cognito-email",
    trigger: Trigger::TableStream {
        filter: PROFILE_CHANGES,
    },
    dynamodb_actions: &[],
    queries_gsi1: false,
    reads_verification_key: false,
    cognito_actions: &[
        // Only after AliasExistsException: does the user hold the address already?
        "AdminGetUser",
        "AdminUpdateUserAttributes",
        "AdminUserGlobalSignOut",
        "AdminDisableUser",
        "AdminEnableUser",
        "AdminDeleteUser",
    ],
    sends_email: true,
};

/// Profile items that changed. Filters cannot compare the old image with the
/// new one, so the consumer does; this only spares it every other record.
pub const PROFILE_CHANGES: &str = r#"{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"entityType":{"S":["User"]}}}}"#;

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
    FIND_USER_BY_EMAIL,
    SET_USER_STATUS,
    PRE_SIGN_UP,
    POST_CONFIRMATION,
    POST_AUTHENTICATION,
    RECONCILE_USERS,
    SYNC_COGNITO_EMAIL,
];

impl Function {
    /// Who may call it; Cognito triggers are called by Cognito alone.
    pub const fn access(&self) -> Access {
        match self.trigger {
            Trigger::Http { access, .. } => access,
            Trigger::CognitoPreSignUp
            | Trigger::CognitoPostConfirmation
            | Trigger::CognitoPostAuthentication
            | Trigger::Schedule { .. }
            | Trigger::TableStream { .. } => Access::User,
        }
    }
}

pub fn by_name(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
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
        assert_eq!(count, 14);
    }
}
