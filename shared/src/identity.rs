//! Cognito, as the functions that ask it about users, or bring it in line with
//! the table, see it. Usernames are the user's `sub`.

use aws_sdk_cognitoidentityprovider::Client;
use aws_sdk_cognitoidentityprovider::error::SdkError;
use aws_sdk_cognitoidentityprovider::types::{AttributeType, UserStatusType};
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use crate::config::{ConfigError, USER_POOL_ID};
use crate::domain::{EmailAddress, UserId};

/// Users per ListUsers call: Cognito's maximum.
pub const LIST_USERS_PAGE: i32 = 60;

/// Less time than this left in the invocation, and a call is not started.
pub const MIN_CALL_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// A Cognito call that failed. Shown by the operation and the error code alone:
/// service messages may quote the request.
#[derive(Debug, thiserror::Error)]
#[error("Cognito {operation} failed: {failure}")]
pub struct IdentityError {
    /// The admin API operation that failed, such as `AdminDisableUser`.
    pub operation: &'static str,
    failure: String,
    /// The typed error, when the call reached the SDK.
    error: Option<Box<aws_sdk_cognitoidentityprovider::Error>>,
}

impl IdentityError {
    fn new<E, R>(operation: &'static str, err: SdkError<E, R>) -> Self
    where
        E: ProvideErrorMetadata,
        aws_sdk_cognitoidentityprovider::Error: From<SdkError<E, R>>,
    {
        Self {
            operation,
            failure: crate::error::aws_failure(&err),
            error: Some(Box::new(err.into())),
        }
    }

    fn not_built(operation: &'static str) -> Self {
        Self {
            operation,
            failure: "request not built".to_owned(),
            error: None,
        }
    }

    /// Another Cognito user holds the address as its email.
    pub fn is_alias_taken(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::AliasExistsException(_))
        )
    }

    /// Cognito refused a parameter: for ListUsers, a pagination token it no longer takes.
    pub fn is_invalid_parameter(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::InvalidParameterException(_))
        )
    }

    fn is_not_authorized(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::NotAuthorizedException(_))
        )
    }

    fn is_username_taken(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::UsernameExistsException(_))
        )
    }

    /// Cognito throttled the call: its quota (UserCreation for AdminCreateUser) is spent for now.
    pub fn is_throttled(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::TooManyRequestsException(_))
        )
    }

    fn is_user_not_found(&self) -> bool {
        matches!(
            self.error.as_deref(),
            Some(aws_sdk_cognitoidentityprovider::Error::UserNotFoundException(_))
        )
    }
}

/// What a call that brings Cognito in line found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The call took effect, or Cognito was already as asked.
    Done,
    /// Cognito has no such user (deleted there): nothing left to change.
    NoSuchUser,
}

/// A user that is already gone has nothing left to change: every write that
/// brings Cognito in line with the table treats it as done.
fn applied<T>(result: Result<T, IdentityError>) -> Result<Applied, IdentityError> {
    match result {
        Ok(_) => Ok(Applied::Done),
        Err(err) if err.is_user_not_found() => Ok(Applied::NoSuchUser),
        Err(err) => Err(err),
    }
}

/// One admin call that names a user and nothing else, with its error typed.
macro_rules! on_user {
    ($pool:expr, $call:ident, $operation:literal, $user:expr) => {
        $pool
            .client
            .$call()
            .user_pool_id(&$pool.pool_id)
            .username($user.as_str())
            .customize()
            .config_override($pool.timeouts())
            .send()
            .await
            .map_err(|err| IdentityError::new($operation, err))
    };
}

/// A user as ListUsers gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedUser {
    /// The user's `sub`.
    pub user_id: UserId,
    /// Whether the sign-up was confirmed (an unconfirmed one has no profile yet).
    pub confirmed: bool,
    /// When Cognito created the user, in epoch seconds.
    pub created_at: Option<i64>,
    /// The address Cognito signs the user in with, if it parses as one.
    pub email: Option<EmailAddress>,
}

/// One page of ListUsers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListedPage {
    /// The users of the page.
    pub users: Vec<ListedUser>,
    /// The token of the next page; `None` after the last.
    pub next: Option<String>,
}

/// The user pool, through its admin API.
#[derive(Debug, Clone)]
pub struct UserPool {
    client: Client,
    pool_id: String,
}

impl UserPool {
    /// The pool `pool_id`, called through `client`; tests point it at their own Cognito.
    pub fn new(client: Client, pool_id: impl Into<String>) -> Self {
        Self {
            client,
            pool_id: pool_id.into(),
        }
    }

    /// A client whose pool comes with each event (a Cognito trigger's): call
    /// [`UserPool::in_pool`] with the event's pool before anything else.
    pub fn from_events(client: Client) -> Self {
        Self::new(client, String::new())
    }

    /// The same client, on `pool_id`.
    pub fn in_pool(&self, pool_id: &str) -> Self {
        Self::new(self.client.clone(), pool_id)
    }

    /// From the shared SDK configuration and `USER_POOL_ID`.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Self, ConfigError> {
        let pool_id = crate::config::required(lookup, USER_POOL_ID, "the Cognito user pool id")?;
        Ok(Self::new(Client::new(sdk), pool_id))
    }

    /// The client's timeouts, the operation's cut to what is left of the
    /// invocation: no call outlives the deadline.
    fn timeouts(&self) -> aws_sdk_cognitoidentityprovider::config::Builder {
        let configured = self
            .client
            .config()
            .timeout_config()
            .and_then(|t| t.operation_timeout());
        let mut builder = aws_sdk_cognitoidentityprovider::config::Builder::default();
        if let Some(timeout) = crate::deadline::call_timeout(configured) {
            builder = builder.timeout_config(
                aws_smithy_types::timeout::TimeoutConfig::builder()
                    .operation_timeout(timeout)
                    .build(),
            );
        }
        builder
    }

    /// One page of the pool's users whose sub starts with `prefix` (all of
    /// them for `""`), [`LIST_USERS_PAGE`] at most, from `token` on.
    /// ListUsers, unlike AdminGetUser, does not count its users as active for
    /// billing, and spends the UserList quota rather than the sign-in path's.
    pub async fn list_users(&self, prefix: &str, token: Option<String>) -> Result<ListedPage, IdentityError> {
        let mut request = self
            .client
            .list_users()
            .user_pool_id(&self.pool_id)
            .attributes_to_get("sub")
            .attributes_to_get("email")
            .limit(LIST_USERS_PAGE)
            .set_pagination_token(token);
        if !prefix.is_empty() {
            // Only hex digits reach here; nothing in it needs quoting.
            request = request.filter(format!("sub ^= \"{prefix}\""));
        }
        let out = request
            .customize()
            .config_override(self.timeouts())
            .send()
            .await
            .map_err(|err| IdentityError::new("ListUsers", err))?;
        let users = out
            .users()
            .iter()
            .filter_map(|user| {
                let sub = user
                    .attributes()
                    .iter()
                    .find(|a| a.name() == "sub")
                    .and_then(|a| a.value())
                    .or(user.username())?;
                Some(ListedUser {
                    user_id: UserId::parse(sub).ok()?,
                    confirmed: user.user_status() == Some(&UserStatusType::Confirmed),
                    created_at: user.user_create_date().map(|d| d.secs()),
                    email: user
                        .attributes()
                        .iter()
                        .find(|a| a.name() == "email")
                        .and_then(|a| a.value())
                        .and_then(|raw| EmailAddress::parse(raw).ok()),
                })
            })
            .collect();
        Ok(ListedPage {
            users,
            next: out.pagination_token().filter(|t| !t.is_empty()).map(str::to_owned),
        })
    }

    /// Whether Cognito still has the user.
    pub async fn has_user(&self, user: &UserId) -> Result<bool, IdentityError> {
        let found = on_user!(self, admin_get_user, "AdminGetUser", user);
        Ok(applied(found)? == Applied::Done)
    }

    /// Cognito's email becomes `email`, already verified: the table verified it,
    /// and Cognito must not send a code of its own for it.
    pub async fn set_email(&self, user: &UserId, email: &EmailAddress) -> Result<Applied, IdentityError> {
        const OPERATION: &str = "AdminUpdateUserAttributes";
        let attribute = |name: &str, value: &str| AttributeType::builder().name(name).value(value).build();
        let (Ok(email_attribute), Ok(verified)) =
            (attribute("email", email.as_str()), attribute("email_verified", "true"))
        else {
            return Err(IdentityError::not_built(OPERATION));
        };
        let result = applied(
            self.client
                .admin_update_user_attributes()
                .user_pool_id(&self.pool_id)
                .username(user.as_str())
                .user_attributes(email_attribute)
                .user_attributes(verified)
                .customize()
                .config_override(self.timeouts())
                .send()
                .await
                .map_err(|err| IdentityError::new(OPERATION, err)),
        );
        match result {
            // Some pools (and moto) refuse an address the user itself already
            // holds: a replayed record must still succeed.
            Err(err)
                if err.is_alias_taken()
                    && crate::deadline::current_deadline()
                        .is_none_or(|d| crate::deadline::left(d) >= MIN_CALL_TIME)
                    && self.email_of(user).await?.as_deref() == Some(email.as_str()) =>
            {
                Ok(Applied::Done)
            }
            other => other,
        }
    }

    /// The user's current email in Cognito.
    async fn email_of(&self, user: &UserId) -> Result<Option<String>, IdentityError> {
        let found = on_user!(self, admin_get_user, "AdminGetUser", user)?;
        Ok(found
            .user_attributes()
            .iter()
            .find(|a| a.name() == "email")
            .and_then(|a| a.value().map(str::to_owned)))
    }

    /// Every refresh token of the user stops working.
    pub async fn sign_out_everywhere(&self, user: &UserId) -> Result<Applied, IdentityError> {
        match applied(on_user!(
            self,
            admin_user_global_sign_out,
            "AdminUserGlobalSignOut",
            user
        )) {
            // A disabled user (a replayed suspension): disabling revoked its
            // tokens already, so there is nothing left to sign out.
            Err(err) if err.is_not_authorized() => Ok(Applied::Done),
            other => other,
        }
    }

    /// The user must set a new password at their next sign-in: Cognito mails a
    /// code to their (verified) address, and the old password no longer signs
    /// in. A recovery's: whoever took the account may know the old one.
    pub async fn require_new_password(&self, user: &UserId) -> Result<Applied, IdentityError> {
        match applied(on_user!(
            self,
            admin_reset_user_password,
            "AdminResetUserPassword",
            user
        )) {
            // A user who has yet to choose a password (FORCE_CHANGE_PASSWORD)
            // must choose one anyway; a disabled one cannot sign in.
            Err(err) if err.is_not_authorized() => Ok(Applied::Done),
            other => other,
        }
    }

    /// The user can no longer sign in and their tokens stop working: Cognito's side of a suspension.
    pub async fn disable(&self, user: &UserId) -> Result<Applied, IdentityError> {
        applied(on_user!(self, admin_disable_user, "AdminDisableUser", user))
    }

    /// The user may sign in again: Cognito's side of a re-activation.
    pub async fn enable(&self, user: &UserId) -> Result<Applied, IdentityError> {
        applied(on_user!(self, admin_enable_user, "AdminEnableUser", user))
    }

    /// Deleted, not disabled: a disabled user keeps the address as its username,
    /// so nobody else could sign up with it.
    pub async fn delete(&self, user: &UserId) -> Result<Applied, IdentityError> {
        applied(on_user!(self, admin_delete_user, "AdminDeleteUser", user))
    }

    /// A user signing in with `email`, made verified and without any message
    /// (a directory's: the organization vouches for its domain, and signs its
    /// people in its own way), or the one Cognito has for it. An unconfirmed
    /// sign-up of the address proved nothing, and its password is whoever's
    /// typed it: it is deleted and the user made afresh.
    pub async fn create_verified(&self, email: &EmailAddress) -> Result<MadeUser, IdentityError> {
        const OPERATION: &str = "AdminCreateUser";
        let attribute = |name: &str, value: &str| AttributeType::builder().name(name).value(value).build();
        let (Ok(address), Ok(verified)) = (attribute("email", email.as_str()), attribute("email_verified", "true"))
        else {
            return Err(IdentityError::not_built(OPERATION));
        };
        for _ in 0..2 {
            let created = self
                .client
                .admin_create_user()
                .user_pool_id(&self.pool_id)
                .username(email.as_str())
                .user_attributes(address.clone())
                .user_attributes(verified.clone())
                .message_action(aws_sdk_cognitoidentityprovider::types::MessageActionType::Suppress)
                .customize()
                .config_override(self.timeouts())
                .send()
                .await
                .map_err(|err| IdentityError::new(OPERATION, err));
            let existing = match created {
                Ok(out) => {
                    let user = out
                        .user()
                        .and_then(sub_of)
                        .ok_or_else(|| IdentityError::not_built(OPERATION))?;
                    return Ok(MadeUser {
                        user,
                        signed_up: false,
                        made_now: true,
                    });
                }
                Err(err) if err.is_username_taken() => self.by_username(email).await?,
                Err(err) => return Err(err),
            };
            match existing {
                (user, Some(UserStatusType::Unconfirmed)) => {
                    self.delete(&user).await?;
                }
                (user, Some(UserStatusType::ForceChangePassword)) => {
                    return Ok(MadeUser {
                        user,
                        signed_up: false,
                        made_now: false,
                    });
                }
                (user, _) => {
                    return Ok(MadeUser {
                        user,
                        signed_up: true,
                        made_now: false,
                    });
                }
            }
        }
        Err(IdentityError::not_built(OPERATION))
    }

    /// The user whose username (here, the address) is `email`, and their status.
    async fn by_username(&self, email: &EmailAddress) -> Result<(UserId, Option<UserStatusType>), IdentityError> {
        let out = self
            .client
            .admin_get_user()
            .user_pool_id(&self.pool_id)
            .username(email.as_str())
            .customize()
            .config_override(self.timeouts())
            .send()
            .await
            .map_err(|err| IdentityError::new("AdminGetUser", err))?;
        let sub = out
            .user_attributes()
            .iter()
            .find(|a| a.name() == "sub")
            .and_then(|a| a.value())
            .unwrap_or(out.username());
        let user = UserId::parse(sub).map_err(|_| IdentityError::not_built("AdminGetUser"))?;
        Ok((user, out.user_status().cloned()))
    }
}

/// A user [`UserPool::create_verified`] made or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeUser {
    /// Their `sub`.
    pub user: UserId,
    /// Whether the person signed up and confirmed the address themselves
    /// (their profile's write had not happened yet): not the directory's to erase.
    pub signed_up: bool,
    /// Whether this call made it: a write that then fails deletes it again.
    pub made_now: bool,
}

fn sub_of(user: &aws_sdk_cognitoidentityprovider::types::UserType) -> Option<UserId> {
    let sub = user
        .attributes()
        .iter()
        .find(|a| a.name() == "sub")
        .and_then(|a| a.value())
        .or(user.username())?;
    UserId::parse(sub).ok()
}
