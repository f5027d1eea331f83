//! The SDK configuration: the standard AWS environment (`AWS_REGION`, credentials,
//! `AWS_ENDPOINT_URL_<SERVICE>` for emulators) with the service's timeouts.

use aws_config::environment::{EnvironmentVariableCredentialsProvider, EnvironmentVariableRegionProvider};
use aws_config::meta::region::ProvideRegion;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_runtime::env_config::EnvConfigValue;
use aws_types::os_shim_internal::Env;
use aws_types::service_config::{LoadServiceConfig, ServiceConfigKey};

use crate::config::ClientTimeouts;

/// For tools run by people: the default chain (profiles, SSO, web identity, IMDS).
pub async fn sdk_config(timeouts: ClientTimeouts) -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .timeout_config(timeout_config(timeouts))
        .load()
        .await
}

/// For a Lambda function: everything from its environment, where Lambda puts its
/// credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`)
/// and its region. Not naming the default chain lets LTO drop it (STS, profile
/// files, IMDS): docs/performance.md has the bytes, and init reads no files.
pub async fn lambda_sdk_config(timeouts: ClientTimeouts) -> SdkConfig {
    SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(EnvironmentVariableRegionProvider::new().region().await)
        .credentials_provider(SharedCredentialsProvider::new(
            EnvironmentVariableCredentialsProvider::new(),
        ))
        .timeout_config(timeout_config(timeouts))
        .service_config(EnvironmentEndpoints(Env::real()))
        .build()
}

fn timeout_config(timeouts: ClientTimeouts) -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(timeouts.connect)
        .operation_attempt_timeout(timeouts.attempt)
        .operation_timeout(timeouts.operation)
        .build()
}

/// `AWS_ENDPOINT_URL_<SERVICE>`, then `AWS_ENDPOINT_URL`, as the default loader
/// reads them, without its profile files.
#[derive(Debug)]
struct EnvironmentEndpoints(Env);

impl LoadServiceConfig for EnvironmentEndpoints {
    fn load_config(&self, key: ServiceConfigKey<'_>) -> Option<String> {
        EnvConfigValue::new()
            .env(key.env())
            .service_id(key.service_id())
            .load(&self.0, None)
            .map(|(value, _)| value.into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_services_own_endpoint_comes_before_the_global_one() {
        let env = Env::from_slice(&[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:1"),
            ("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:2"),
        ]);
        let endpoints = EnvironmentEndpoints(env);
        let key = |service_id| {
            ServiceConfigKey::builder()
                .service_id(service_id)
                .env("AWS_ENDPOINT_URL")
                .profile("endpoint_url")
                .build()
                .unwrap()
        };
        assert_eq!(
            endpoints.load_config(key("DynamoDB")).as_deref(),
            Some("http://127.0.0.1:2")
        );
        assert_eq!(
            endpoints.load_config(key("SESv2")).as_deref(),
            Some("http://127.0.0.1:1")
        );
    }
}
