//! The import's calls to Cognito: AdminCreateUser paced below the account's
//! UserCreation quota, and every call retried on throttling and transient
//! failures with exponential backoff and jitter, a bounded number of times.

use std::future::Future;
use std::time::Duration;

use aws_sdk_cognitoidentityprovider::Client;
use aws_sdk_cognitoidentityprovider::error::SdkError;
use aws_sdk_cognitoidentityprovider::types::{AttributeType, MessageActionType, UserStatusType, UserType};
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use user_service::domain::{EmailAddress, UserId};
use user_service::reconcile::Pace;

/// Attempts of one call at most, the SDK's own retries inside each.
pub const MAX_ATTEMPTS: u32 = 8;

/// Codes of Cognito answering "slow down" or "try again".
const RETRYABLE: &[&str] = &[
    "TooManyRequestsException",
    "ThrottlingException",
    "LimitExceededException",
    "InternalErrorException",
    "ServiceUnavailable",
];

/// A Cognito call that did not succeed: by its kind, never its message (it may quote an address).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    /// Throttled or unavailable after every attempt.
    #[error("Cognito {0} kept failing ({1})")]
    Exhausted(&'static str, String),
    /// Refused, with Cognito's error code.
    #[error("Cognito {0} refused: {1}")]
    Refused(&'static str, String),
}

impl CallError {
    /// Cognito's code for a refusal.
    pub fn code(&self) -> &str {
        match self {
            Self::Exhausted(_, code) | Self::Refused(_, code) => code,
        }
    }
}

/// What creating the user of an address found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Creation {
    /// This call created it.
    Created(UserId),
    /// Cognito had it already (an earlier run, or its own sign-up), confirmed
    /// or created by an admin: the import completes it.
    Existing(UserId),
    /// Cognito had it, created by an admin and not given its password yet
    /// (a run that stopped in between): the import gives it one, then completes it.
    PasswordPending(UserId),
    /// Cognito has an unconfirmed sign-up with the address: whoever made it
    /// has not proved the mailbox, and the import must not adopt it.
    Unconfirmed,
}

/// The user pool, as the import calls it.
#[derive(Debug)]
pub struct Pool {
    client: Client,
    pool_id: String,
    creations: Pace,
    /// Pauses seen on throttling, for the report.
    throttled: std::sync::atomic::AtomicU64,
}

impl Pool {
    /// The pool `pool_id` through `client`, creating at most `rate` users a second.
    pub fn new(client: Client, pool_id: impl Into<String>, rate: f64) -> Self {
        Self {
            client,
            pool_id: pool_id.into(),
            creations: Pace::new(rate),
            throttled: Default::default(),
        }
    }

    /// How many calls were throttled and tried again.
    pub fn throttled(&self) -> u64 {
        self.throttled.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The user signing in with `email` (the pool's username), created verified
    /// with no message and no password (forgot-password gives one); an
    /// existing one is looked up instead.
    pub async fn create(&self, email: &EmailAddress) -> Result<Creation, CallError> {
        let attribute = |name: &str, value: &str| AttributeType::builder().name(name).value(value).build();
        let (Ok(address), Ok(verified)) = (attribute("email", email.as_str()), attribute("email_verified", "true"))
        else {
            return Err(CallError::Refused("AdminCreateUser", "RequestNotBuilt".to_owned()));
        };
        let created = self
            .call("AdminCreateUser", || async {
                // Each attempt takes a slot: a retry is a call against the quota too.
                let _ = self.creations.take(None).await;
                self.client
                    .admin_create_user()
                    .user_pool_id(&self.pool_id)
                    .username(email.as_str())
                    .user_attributes(address.clone())
                    .user_attributes(verified.clone())
                    .message_action(MessageActionType::Suppress)
                    .send()
                    .await
            })
            .await;
        match created {
            Ok(out) => sub_of(out.user()).map(Creation::Created),
            Err(CallError::Refused(_, code)) if code == "UsernameExistsException" => self.existing(email).await,
            Err(other) => Err(other),
        }
    }

    async fn existing(&self, email: &EmailAddress) -> Result<Creation, CallError> {
        let out = self
            .call("AdminGetUser", || {
                self.client
                    .admin_get_user()
                    .user_pool_id(&self.pool_id)
                    .username(email.as_str())
                    .send()
            })
            .await?;
        let status = out.user_status().cloned();
        if status == Some(UserStatusType::Unconfirmed) {
            return Ok(Creation::Unconfirmed);
        }
        let sub = out
            .user_attributes()
            .iter()
            .find(|a| a.name() == "sub")
            .and_then(|a| a.value())
            .unwrap_or(out.username());
        let user = UserId::parse_sub(sub).map_err(|_| CallError::Refused("AdminGetUser", "NoSub".to_owned()))?;
        Ok(if status == Some(UserStatusType::ForceChangePassword) {
            Creation::PasswordPending(user)
        } else {
            Creation::Existing(user)
        })
    }

    /// Gives the user a permanent password nobody knows (random, never kept):
    /// a user created by an admin stays `FORCE_CHANGE_PASSWORD`, and Cognito
    /// refuses forgot-password in that state. Confirmed, with its address
    /// verified, the user sets a password through forgot-password.
    pub async fn set_unknown_password(&self, user: &UserId) -> Result<(), CallError> {
        let password =
            unknown_password().ok_or_else(|| CallError::Refused("AdminSetUserPassword", "NoRandomness".to_owned()))?;
        self.call("AdminSetUserPassword", || {
            self.client
                .admin_set_user_password()
                .user_pool_id(&self.pool_id)
                .username(user.as_str())
                .password(password.as_str())
                .permanent(true)
                .send()
        })
        .await
        .map(drop)
    }

    /// The user can no longer sign in: an imported suspension.
    pub async fn disable(&self, user: &UserId) -> Result<(), CallError> {
        self.call("AdminDisableUser", || {
            self.client
                .admin_disable_user()
                .user_pool_id(&self.pool_id)
                .username(user.as_str())
                .send()
        })
        .await
        .map(drop)
    }

    /// Undoes a creation whose profile the table refused.
    pub async fn delete(&self, user: &UserId) -> Result<(), CallError> {
        self.call("AdminDeleteUser", || {
            self.client
                .admin_delete_user()
                .user_pool_id(&self.pool_id)
                .username(user.as_str())
                .send()
        })
        .await
        .map(drop)
    }

    /// Runs `attempt` until it succeeds, is refused, or failed transiently
    /// [`MAX_ATTEMPTS`] times, pausing [`backoff`] between.
    async fn call<T, E, R, F, Fut>(&self, operation: &'static str, attempt: F) -> Result<T, CallError>
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        R: std::fmt::Debug,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, R>>>,
    {
        let mut tries = 0;
        loop {
            let err = match attempt().await {
                Ok(value) => return Ok(value),
                Err(err) => err,
            };
            let transient = match &err {
                SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
                SdkError::ServiceError(_) => err.code().is_some_and(|code| RETRYABLE.contains(&code)),
                _ => false,
            };
            let code = err.code().unwrap_or("Unknown").to_owned();
            if !transient {
                return Err(CallError::Refused(operation, code));
            }
            tries += 1;
            if tries >= MAX_ATTEMPTS {
                return Err(CallError::Exhausted(operation, code));
            }
            self.throttled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(backoff(tries)).await;
        }
    }
}

/// The `sub` of a user Cognito returned: its attribute, else its username
/// (a pool signing in by email names users by their sub).
fn sub_of(user: Option<&UserType>) -> Result<UserId, CallError> {
    let user = user.ok_or_else(|| CallError::Refused("AdminCreateUser", "NoUser".to_owned()))?;
    let sub = user
        .attributes()
        .iter()
        .find(|a| a.name() == "sub")
        .and_then(|a| a.value())
        .or(user.username())
        .unwrap_or_default();
    UserId::parse_sub(sub).map_err(|_| CallError::Refused("AdminCreateUser", "NoSub".to_owned()))
}

/// 40 random characters (240 bits) and one of each class the pool's password
/// policy may ask for.
fn unknown_password() -> Option<String> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0u8; 40];
    getrandom::fill(&mut bytes).ok()?;
    let mut password: String = bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(b % 64)]))
        .collect();
    password.push_str("Aa1!");
    Some(password)
}

/// The pause before attempt `tries + 1`: 100 ms doubling to 6.4 s, plus up
/// to half again of jitter, so many importers throttled together spread out.
pub fn backoff(tries: u32) -> Duration {
    let base = 100u64 << tries.clamp(1, 7).saturating_sub(1);
    let mut noise = [0u8; 2];
    let jitter = match getrandom::fill(&mut noise) {
        Ok(()) => u64::from(u16::from_le_bytes(noise)) % (base / 2 + 1),
        Err(_) => base / 4,
    };
    Duration::from_millis(base + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_passwords_differ_and_meet_every_class() {
        let (a, b) = (unknown_password().unwrap(), unknown_password().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 44);
        for class in [char::is_ascii_uppercase, char::is_ascii_lowercase, char::is_ascii_digit] {
            assert!(a.chars().any(|c| class(&c)), "{a}");
        }
        assert!(a.chars().any(|c| c.is_ascii_punctuation()));
    }

    #[test]
    fn backoff_doubles_is_jittered_and_bounded() {
        for tries in 1..20 {
            let pause = backoff(tries);
            let base = 100u64 << (tries.min(7) - 1);
            assert!(pause >= Duration::from_millis(base), "{tries}: {pause:?}");
            assert!(pause <= Duration::from_millis(base * 3 / 2), "{tries}: {pause:?}");
        }
        assert!(backoff(30) <= Duration::from_millis(9_600));
    }
}
