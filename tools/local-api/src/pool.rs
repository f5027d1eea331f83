//! The local user pool: the Cognito users `make dev` knows (sub, address,
//! whether Cognito verified it, names), kept in the state directory so they
//! survive restarts, like the local database. The service's table is not it: a
//! Cognito user may have no profile yet, which is what the repair path is for.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolUser {
    pub sub: String,
    /// Normalized, as the service stores addresses.
    pub email: String,
    pub email_verified: bool,
    #[serde(default)]
    pub given_name: Option<String>,
    #[serde(default)]
    pub family_name: Option<String>,
}

impl PoolUser {
    /// The user's attributes as Cognito passes them to triggers.
    pub fn attributes(&self) -> Value {
        let mut attributes = json!({
            "sub": self.sub,
            "email": self.email,
            "email_verified": self.email_verified.to_string(),
            "cognito:user_status": "CONFIRMED",
        });
        if let Some(given) = &self.given_name {
            attributes["given_name"] = json!(given);
        }
        if let Some(family) = &self.family_name {
            attributes["family_name"] = json!(family);
        }
        attributes
    }
}

#[derive(Debug)]
pub struct Pool {
    path: PathBuf,
    users: Mutex<Vec<PoolUser>>,
}

impl Pool {
    pub fn load(path: PathBuf) -> std::io::Result<Self> {
        let users = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(std::io::Error::other)?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(err) => return Err(err),
        };
        Ok(Self {
            path,
            users: Mutex::new(users),
        })
    }

    pub async fn find(&self, email: &str) -> Option<PoolUser> {
        self.users.lock().await.iter().find(|u| u.email == email).cloned()
    }

    /// Adds or replaces the user with this address, and saves the pool.
    pub async fn put(&self, user: PoolUser) -> std::io::Result<()> {
        let mut users = self.users.lock().await;
        users.retain(|u| u.email != user.email);
        users.push(user);
        let bytes = serde_json::to_vec_pretty(&*users).map_err(std::io::Error::other)?;
        std::fs::write(&self.path, bytes)
    }
}
