//! moto's server mode, the AWS API emulator for what DynamoDB Local does not
//! cover (Secrets Manager here; SES and Cognito too), started per test on
//! 127.0.0.1 and stopped with the test.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::config::Credentials;

use crate::{lambda, process, wait};

/// How to get moto, for every failure message.
pub const HOW_TO_INSTALL: &str = "moto_server is not on PATH: run `make test` (installs everything), or \
`make tools` and put .venv/bin on PATH";

pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    /// Starts `moto_server` on a free loopback port and waits until it answers.
    pub fn start() -> Self {
        let port = lambda::free_port();
        let mut cmd = Command::new("moto_server");
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().unwrap_or_else(|e| panic!("{HOW_TO_INSTALL} ({e})"));
        let moto = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        wait::until("moto_server to answer", wait::GENEROUS, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok()
        });
        moto
    }

    /// An SDK configuration that sends every service to this emulator.
    pub fn sdk_config(&self) -> SdkConfig {
        SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(aws_credential_types::provider::SharedCredentialsProvider::new(
                Credentials::new("testing", "testing", None, None, "moto"),
            ))
            .endpoint_url(&self.endpoint)
            .build()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        process::stop_group(&mut self.child, &mut [], Duration::from_secs(10));
    }
}
