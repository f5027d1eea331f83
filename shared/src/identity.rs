//! Cognito, as the functions that ask it about users see it.

use aws_sdk_cognitoidentityprovider::Client;
use aws_sdk_cognitoidentityprovider::operation::admin_get_user::AdminGetUserError;

use crate::config::ConfigError;
use crate::domain::UserId;

pub const POOL_ID_VAR: &str = "USER_POOL_ID";

#[derive(Debug, thiserror::Error)]
#[error("Cognito AdminGetUser failed")]
pub struct IdentityError(#[source] Box<aws_sdk_cognitoidentityprovider::error::SdkError<AdminGetUserError>>);

/// The user pool, through its admin API.
#[derive(Debug, Clone)]
pub struct UserPool {
    client: Client,
    pool_id: String,
}

impl UserPool {
    pub fn new(client: Client, pool_id: impl Into<String>) -> Self {
        Self {
            client,
            pool_id: pool_id.into(),
        }
    }

    /// From the shared SDK configuration and `USER_POOL_ID`.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Self, ConfigError> {
        let pool_id = lookup(POOL_ID_VAR)
            .filter(|p| !p.trim().is_empty())
            .ok_or(ConfigError::Missing {
                name: POOL_ID_VAR,
                what: "the Cognito user pool id",
            })?;
        Ok(Self::new(Client::new(sdk), pool_id.trim()))
    }

    /// Whether Cognito still has the user (usernames are the `sub`).
    pub async fn has_user(&self, user: &UserId) -> Result<bool, IdentityError> {
        match self
            .client
            .admin_get_user()
            .user_pool_id(&self.pool_id)
            .username(user.as_str())
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(AdminGetUserError::UserNotFoundException(_))
                ) =>
            {
                Ok(false)
            }
            Err(err) => Err(IdentityError(Box::new(err))),
        }
    }
}
