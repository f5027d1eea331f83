//! The local JWT authorizer: access tokens signed with a development key created
//! on first start, checked as the deployed HTTP API's JWT authorizer checks
//! Cognito's: signature, issuer, expiry, `client_id` (an access token's audience)
//! and the route scope `aws.cognito.signin.user.admin`. ID tokens carry no scope,
//! so they are refused, as they are by API Gateway.

use std::collections::HashMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Map, Value, json};

/// The local app client's id: what `client_id` must be.
pub const AUDIENCE: &str = "user-service-local";
/// The scope every route requires (the template's `AuthorizationScopes`).
pub const REQUIRED_SCOPE: &str = "aws.cognito.signin.user.admin";

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the development key could not be read or created")]
    Key(#[source] std::io::Error),
    #[error("the token was refused")]
    Token(#[source] jsonwebtoken::errors::Error),
    #[error("not an access token of this client with the required scope")]
    NotAnAccessToken,
}

#[derive(Clone)]
pub struct DevKey {
    secret: Vec<u8>,
    pub issuer: String,
}

impl std::fmt::Debug for DevKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevKey")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl DevKey {
    /// The key in `path`, created (32 random bytes, mode 0600) when missing.
    pub fn load_or_create(path: &Path, issuer: String) -> Result<Self, AuthError> {
        let secret = match std::fs::read_to_string(path) {
            Ok(hex) => decode_hex(hex.trim()).ok_or_else(|| AuthError::Key(std::io::Error::other("not hex")))?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let mut secret = vec![0u8; 32];
                getrandom::fill(&mut secret).map_err(|e| AuthError::Key(std::io::Error::other(e)))?;
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(AuthError::Key)?;
                }
                let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
                std::fs::write(path, hex).map_err(AuthError::Key)?;
                restrict(path).map_err(AuthError::Key)?;
                secret
            }
            Err(err) => return Err(AuthError::Key(err)),
        };
        Ok(Self { secret, issuer })
    }

    /// An access token like Cognito's, valid for an hour, whose user signed in
    /// `signed_in_ago` before now (`auth_time`): a token refreshed that long
    /// after the sign-in, as Cognito's refresh keeps `auth_time`.
    pub fn issue(&self, sub: &str, groups: &[String], signed_in_ago: u64) -> Result<String, AuthError> {
        let now = unix_now();
        let mut claims = json!({
            "sub": sub,
            "iss": self.issuer,
            "client_id": AUDIENCE,
            "token_use": "access",
            "scope": REQUIRED_SCOPE,
            "auth_time": now.saturating_sub(signed_in_ago),
            "iat": now,
            "exp": now + 3600,
            "username": sub,
        });
        if !groups.is_empty() {
            claims["cognito:groups"] = json!(groups);
        }
        self.sign(&claims)
    }

    fn sign(&self, claims: &Value) -> Result<String, AuthError> {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            claims,
            &EncodingKey::from_secret(&self.secret),
        )
        .map_err(AuthError::Token)
    }

    /// The claims of a valid access token.
    pub fn verify(&self, token: &str) -> Result<Map<String, Value>, AuthError> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[&self.issuer]);
        // Access tokens have no `aud`: API Gateway matches `client_id` instead.
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        validation.leeway = 0;
        let claims =
            jsonwebtoken::decode::<Map<String, Value>>(token, &DecodingKey::from_secret(&self.secret), &validation)
                .map(|data| data.claims)
                .map_err(AuthError::Token)?;
        let claim = |name: &str| claims.get(name).and_then(Value::as_str);
        let scoped = claim("scope").is_some_and(|s| s.split_whitespace().any(|scope| scope == REQUIRED_SCOPE));
        let ours = claim("client_id") == Some(AUDIENCE) && claim("token_use") == Some("access");
        if scoped && ours {
            Ok(claims)
        } else {
            Err(AuthError::NotAnAccessToken)
        }
    }
}

/// Claims as an HTTP API hands them to the function: every value a string,
/// lists as `[a b]`.
pub fn claims_as_api_gateway(claims: &Map<String, Value>) -> HashMap<String, String> {
    claims
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Array(items) => {
                    let parts: Vec<String> = items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned).unwrap_or_else(|| i.to_string()))
                        .collect();
                    format!("[{}]", parts.join(" "))
                }
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect()
}

fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(dir: &Path) -> DevKey {
        DevKey::load_or_create(&dir.join("key"), "http://127.0.0.1:3000/local".into()).unwrap()
    }

    #[test]
    fn issued_tokens_verify_and_others_do_not() {
        let dir = std::env::temp_dir().join(format!("local-api-{}", uuid::Uuid::new_v4()));
        let key = key(&dir);
        let token = key.issue("u-1", &["admin".into()], 0).unwrap();
        let claims = key.verify(&token).unwrap();
        assert_eq!(claims["sub"], "u-1");
        assert_eq!(claims["token_use"], "access");
        let gw = claims_as_api_gateway(&claims);
        assert_eq!(gw["cognito:groups"], "[admin]");
        assert_eq!(gw["scope"], REQUIRED_SCOPE);

        // The same key file gives the same key; another key refuses the token.
        assert!(self::key(&dir).verify(&token).is_ok());
        let other = DevKey::load_or_create(&dir.join("other"), key.issuer.clone()).unwrap();
        assert!(other.verify(&token).is_err());
        let wrong_issuer = DevKey {
            secret: key.secret.clone(),
            issuer: "elsewhere".into(),
        };
        assert!(wrong_issuer.verify(&token).is_err());
        assert!(key.verify("not.a.token").is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn id_tokens_and_other_clients_are_refused() {
        let dir = std::env::temp_dir().join(format!("local-api-{}", uuid::Uuid::new_v4()));
        let key = key(&dir);
        let now = unix_now();
        let id_token = json!({"sub": "u-1", "iss": key.issuer, "aud": AUDIENCE, "token_use": "id", "exp": now + 60});
        let other_client = json!({"sub": "u-1", "iss": key.issuer, "client_id": "another", "token_use": "access",
            "scope": REQUIRED_SCOPE, "exp": now + 60});
        let no_scope = json!({"sub": "u-1", "iss": key.issuer, "client_id": AUDIENCE, "token_use": "access",
            "scope": "openid email", "exp": now + 60});
        for claims in [id_token, other_client, no_scope] {
            let token = key.sign(&claims).unwrap();
            assert!(
                matches!(key.verify(&token), Err(AuthError::NotAnAccessToken)),
                "{claims}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
