//! Loading the verification key, once per execution environment, and only in the
//! functions whose catalog entry says they read it.
//!
//! Deployed: `VERIFICATION_KEY_SECRET_ID` names a Secrets Manager secret (the
//! template creates it with a generated value); its string is the key. Local runs
//! and tests: `VERIFICATION_KEY` holds a development key.

use aws_config::SdkConfig;

use crate::config::{ConfigError, VERIFICATION_KEY, VERIFICATION_KEY_SECRET_ID};
use crate::verification_key::VerificationKey;

/// The key from the secret named in the environment, or the development key.
pub async fn verification_key(
    lookup: impl Fn(&str) -> Option<String>,
    sdk: &SdkConfig,
) -> Result<VerificationKey, ConfigError> {
    let named = |name: &'static str| lookup(name).filter(|v| !v.trim().is_empty()).map(|v| (name, v));
    let (name, secret) = match (named(VERIFICATION_KEY_SECRET_ID.name()), named(VERIFICATION_KEY.name())) {
        (Some((name, id)), _) => (name, read_secret(sdk, id.trim()).await?),
        (None, Some(dev)) => dev,
        (None, None) => {
            return Err(ConfigError::Missing {
                name: VERIFICATION_KEY_SECRET_ID.name(),
                what: "the ARN of the verification key's secret (VERIFICATION_KEY holds a key for local runs)",
            });
        }
    };
    VerificationKey::from_secret(secret.as_bytes()).map_err(|err| ConfigError::Invalid {
        name,
        reason: err.to_string(),
    })
}

async fn read_secret(sdk: &SdkConfig, secret_id: &str) -> Result<String, ConfigError> {
    let client = aws_sdk_secretsmanager::Client::new(sdk);
    let out = client
        .get_secret_value()
        .secret_id(secret_id)
        .send()
        .await
        .map_err(|err| ConfigError::Unavailable {
            name: VERIFICATION_KEY_SECRET_ID.name(),
            reason: crate::error::chain(&err),
        })?;
    out.secret_string.ok_or_else(|| ConfigError::Invalid {
        name: VERIFICATION_KEY_SECRET_ID.name(),
        reason: "the secret has no string value".to_owned(),
    })
}
