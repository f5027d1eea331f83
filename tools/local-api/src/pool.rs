//! The local user pool: the Cognito users `make dev` knows (sub, address,
//! whether Cognito verified it, names), kept in the state directory so they
//! survive restarts, like the local database. The service's table is not it: a
//! Cognito user may have no profile yet, which is what the repair path is for.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
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
    pub fn attributes(&self) -> HashMap<String, String> {
        let mut attributes = HashMap::from([
            ("sub".to_owned(), self.sub.clone()),
            ("email".to_owned(), self.email.clone()),
            ("email_verified".to_owned(), self.email_verified.to_string()),
            ("cognito:user_status".to_owned(), "CONFIRMED".to_owned()),
        ]);
        let names = [("given_name", &self.given_name), ("family_name", &self.family_name)];
        for (name, value) in names {
            if let Some(value) = value {
                attributes.insert(name.to_owned(), value.clone());
            }
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

    pub async fn find_sub(&self, sub: &str) -> Option<PoolUser> {
        self.users.lock().await.iter().find(|u| u.sub == sub).cloned()
    }

    pub async fn all(&self) -> Vec<PoolUser> {
        self.users.lock().await.clone()
    }

    /// Adds or replaces the user with this address, and saves the pool.
    pub async fn put(&self, user: PoolUser) -> std::io::Result<()> {
        let mut users = self.users.lock().await;
        users.retain(|u| u.email != user.email && u.sub != user.sub);
        users.push(user);
        let bytes = serde_json::to_vec_pretty(&*users).map_err(std::io::Error::other)?;
        std::fs::write(&self.path, bytes)
    }
}
