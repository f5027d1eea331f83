//! How the bench runs: which binaries, how many times, which sections; and
//! how a function, a floor or the Python program is launched.

use std::path::{Path, PathBuf};

use integration_tests::lambda::function_env;
use integration_tests::workspace_root;

use crate::programs::PYTHON;
use crate::runtime::Launch;

/// How the bench runs: which binaries, how many times.
pub(crate) struct Plan {
    pub(crate) smoke: bool,
    pub(crate) spawns: usize,
    pub(crate) warm: usize,
    pub(crate) users: usize,
    pub(crate) bin_dir: PathBuf,
    pub(crate) out: PathBuf,
    /// The sections `--only` names; none: every one.
    pub(crate) only: Vec<String>,
}

/// The daily codes one user may send, for the bench's one user, who adds an
/// address in every warm round of add-email (the variable's most).
pub(crate) const BENCH_CODES_PER_USER: u32 = user_service::config::VERIFICATION_MAX_CODES_PER_USER.max_number();

impl Plan {
    pub(crate) fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }

    pub(crate) fn binary(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A function's or floor's binary, with the local AWS environment pointed at `endpoint`.
    pub(crate) fn launch(&self, name: &str, table: &str, endpoint: &str, ca_file: Option<&Path>) -> Launch {
        let mut launch = Launch::new(name, self.binary(name));
        for (k, v) in function_env(table.to_owned(), &[]) {
            launch = launch.env(k, v);
        }
        launch = launch
            .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
            // One user adds an address per warm round: the timings, not the
            // daily cap of codes a user may send, are what is measured.
            .env(
                user_service::config::VERIFICATION_MAX_CODES_PER_USER.name(),
                BENCH_CODES_PER_USER.to_string(),
            )
            .env("AWS_LAMBDA_LOG_LEVEL", "WARN")
            .env("AWS_LAMBDA_LOG_FORMAT", "JSON");
        if let Some(ca) = ca_file {
            launch = launch.env("SSL_CERT_FILE", ca.display().to_string());
        }
        launch
    }

    /// The Python 3.11 + boto3 handler under awslambdaric.
    pub(crate) fn python(&self, table: &str, endpoint: &str, ca_file: Option<&Path>) -> Launch {
        let root = workspace_root();
        let mut launch = Launch::new(PYTHON, root.join(".venv/bin/python"));
        launch.args = vec!["-m".into(), "awslambdaric".into(), "handler.handler".into()];
        launch.cwd = Some(root.join("tools/bench/python"));
        for (k, v) in integration_tests::local_aws::vars() {
            launch = launch.env(k, v);
        }
        launch = launch
            .env("TABLE_NAME", table)
            // Lambda sets both; botocore reads only this one.
            .env("AWS_DEFAULT_REGION", integration_tests::local_aws::region())
            .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
            .env(
                "LAMBDA_TASK_ROOT",
                root.join("tools/bench/python").display().to_string(),
            )
            .env("_HANDLER", "handler.handler")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        if let Some(ca) = ca_file {
            launch = launch.env("AWS_CA_BUNDLE", ca.display().to_string());
        }
        launch
    }
}
