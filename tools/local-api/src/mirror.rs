//! The local user pool, mirrored into a user pool in moto's Cognito, so that
//! what calls Cognito in `make dev` has a pool to call: sync-cognito-email
//! moves a user's `email` to their new primary, disables a suspended user and
//! deletes a deleted one, there. A sign-in reads the mirror back: a disabled or
//! deleted user gets Cognito's refusal, and the address Cognito holds now is
//! the one to sign in with. A recovered account's reset password
//! (AdminResetUserPassword) is read back too, and the local sign-in completes
//! the reset as Cognito's forgot-password flow would.

use aws_sdk_cognitoidentityprovider::Client;
use aws_sdk_cognitoidentityprovider::types::{AttributeType, MessageActionType, UserStatusType};

use crate::pool::PoolUser;

#[derive(Debug, thiserror::Error)]
#[error("moto's Cognito refused {operation}: {message}")]
pub struct MirrorError {
    operation: &'static str,
    message: String,
}

fn refused<E: std::error::Error>(operation: &'static str) -> impl FnOnce(E) -> MirrorError {
    move |err| MirrorError {
        operation,
        message: aws_sdk_cognitoidentityprovider::error::DisplayErrorContext(err).to_string(),
    }
}

/// A user as the mirror holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirrored {
    /// Cognito's `email`: the primary, once the sync applied it.
    pub email: Option<String>,
    pub enabled: bool,
    /// Cognito's RESET_REQUIRED: the user must choose a new password before
    /// signing in (a recovery asks for it).
    pub reset_required: bool,
}

#[derive(Debug, Clone)]
pub struct Mirror {
    client: Client,
    pool_id: String,
}

impl Mirror {
    pub fn new(sdk: &aws_config::SdkConfig, pool_id: &str) -> Self {
        Self {
            client: Client::new(sdk),
            pool_id: pool_id.to_owned(),
        }
    }

    pub fn pool_id(&self) -> &str {
        &self.pool_id
    }

    /// Makes the user exist in the mirror, named by `sub` as the service names
    /// them, with the local pool's address (kept if they exist already: the
    /// sync may have moved it).
    pub async fn put(&self, user: &PoolUser) -> Result<(), MirrorError> {
        let attribute = |name: &str, value: &str| AttributeType::builder().name(name).value(value).build();
        let attributes = [
            attribute("email", &user.email).map_err(refused("AdminCreateUser"))?,
            attribute("email_verified", &user.email_verified.to_string()).map_err(refused("AdminCreateUser"))?,
        ];
        match self
            .client
            .admin_create_user()
            .user_pool_id(&self.pool_id)
            .username(&user.sub)
            .set_user_attributes(Some(attributes.to_vec()))
            .message_action(MessageActionType::Suppress)
            .send()
            .await
        {
            Ok(_) => self.set_password(&user.sub).await,
            Err(err) if err.as_service_error().is_some_and(|e| e.is_username_exists_exception()) => Ok(()),
            Err(err) => Err(refused("AdminCreateUser")(err)),
        }
    }

    /// Gives the user a permanent password nobody knows: CONFIRMED, as after a
    /// sign-up's confirmation or a completed password reset. Local sign-in asks
    /// for no password, so every mirrored user is as after their first sign-in,
    /// and AdminResetUserPassword (a recovery) applies to them as in Cognito.
    pub async fn set_password(&self, sub: &str) -> Result<(), MirrorError> {
        let password = format!("Local-{}-Aa1!", uuid::Uuid::new_v4().simple());
        self.client
            .admin_set_user_password()
            .user_pool_id(&self.pool_id)
            .username(sub)
            .password(password)
            .permanent(true)
            .send()
            .await
            .map(|_| ())
            .map_err(refused("AdminSetUserPassword"))
    }

    /// Marks the user's address verified.
    pub async fn verify_email(&self, sub: &str) -> Result<(), MirrorError> {
        let verified = AttributeType::builder()
            .name("email_verified")
            .value("true")
            .build()
            .map_err(refused("AdminUpdateUserAttributes"))?;
        self.client
            .admin_update_user_attributes()
            .user_pool_id(&self.pool_id)
            .username(sub)
            .user_attributes(verified)
            .send()
            .await
            .map(|_| ())
            .map_err(refused("AdminUpdateUserAttributes"))
    }

    /// The user as the mirror holds them; `None` once deleted.
    pub async fn get(&self, sub: &str) -> Result<Option<Mirrored>, MirrorError> {
        match self
            .client
            .admin_get_user()
            .user_pool_id(&self.pool_id)
            .username(sub)
            .send()
            .await
        {
            Ok(user) => Ok(Some(Mirrored {
                email: user
                    .user_attributes()
                    .iter()
                    .find(|a| a.name() == "email")
                    .and_then(|a| a.value().map(str::to_owned)),
                enabled: user.enabled(),
                reset_required: user.user_status() == Some(&UserStatusType::ResetRequired),
            })),
            Err(err) if err.as_service_error().is_some_and(|e| e.is_user_not_found_exception()) => Ok(None),
            Err(err) => Err(refused("AdminGetUser")(err)),
        }
    }

    /// The `sub` of the user whose Cognito `email` is `email`.
    pub async fn sub_of(&self, email: &str) -> Result<Option<String>, MirrorError> {
        let listed = self
            .client
            .list_users()
            .user_pool_id(&self.pool_id)
            .filter(format!("email = \"{}\"", email.replace('"', "")))
            .send()
            .await
            .map_err(refused("ListUsers"))?;
        Ok(listed
            .users()
            .iter()
            .find(|u| {
                u.attributes()
                    .iter()
                    .any(|a| a.name() == "email" && a.value() == Some(email))
            })
            .and_then(|u| u.username().map(str::to_owned)))
    }

    /// The users a function made in the mirror by address (a directory's
    /// AdminCreateUser, as in the template's pool, which signs users in by
    /// email): named by address here, by `sub` in the template's pool.
    pub async fn strays(&self) -> Result<Vec<PoolUser>, MirrorError> {
        let mut strays = Vec::new();
        let mut token = None;
        loop {
            let page = self
                .client
                .list_users()
                .user_pool_id(&self.pool_id)
                // The mirror's own users have a password (CONFIRMED); a directory's have none yet.
                .filter("cognito:user_status = \"FORCE_CHANGE_PASSWORD\"")
                .set_pagination_token(token)
                .send()
                .await
                .map_err(refused("ListUsers"))?;
            for user in page.users() {
                let attribute = |name: &str| {
                    user.attributes()
                        .iter()
                        .find(|a| a.name() == name)
                        .and_then(|a| a.value().map(str::to_owned))
                };
                let (Some(username), Some(sub), Some(email)) = (user.username(), attribute("sub"), attribute("email"))
                else {
                    continue;
                };
                if username.contains('@') && username != sub {
                    strays.push(PoolUser {
                        sub,
                        email,
                        email_verified: attribute("email_verified").as_deref() == Some("true"),
                        given_name: None,
                        family_name: None,
                    });
                }
            }
            token = page.pagination_token().map(str::to_owned);
            if token.is_none() {
                return Ok(strays);
            }
        }
    }

    /// Names a stray by its `sub`, as the template's pool does (and as the
    /// service calls Cognito): made again under it, then the one named by
    /// address deleted.
    pub async fn adopt(&self, stray: &PoolUser) -> Result<(), MirrorError> {
        // Made under its sub first: the user is never missing in between.
        self.put(stray).await?;
        self.client
            .admin_delete_user()
            .user_pool_id(&self.pool_id)
            .username(&stray.email)
            .send()
            .await
            .map(|_| ())
            .map_err(refused("AdminDeleteUser"))
    }
}

/// How often the mirror looks for strays: the Cognito sync's first call on
/// a directory's new account comes a stream poll (200 ms) after its write.
const ADOPTION_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Adopts every stray as it appears, into the mirror and the local pool
/// (where it can sign in, as a directory's account can in Cognito).
pub async fn adopt_strays(mirror: Mirror, pool: std::sync::Arc<crate::pool::Pool>) {
    loop {
        match mirror.strays().await {
            Ok(strays) => {
                for stray in strays {
                    if let Err(err) = mirror.adopt(&stray).await {
                        tracing::warn!(error = %err, sub = stray.sub, "a directory's account was not adopted");
                        continue;
                    }
                    if let Err(err) = pool.put(stray).await {
                        tracing::warn!(error = %err, "the local pool could not be saved");
                    }
                }
            }
            Err(err) => tracing::warn!(error = %err, "moto's Cognito did not list its users"),
        }
        tokio::time::sleep(ADOPTION_POLL).await;
    }
}
