//! The real binaries under `cargo lambda watch`, invoked with `cargo lambda invoke`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::workspace_root;

/// Fails the test, saying how to install cargo-lambda, when it is missing.
pub fn require_cargo_lambda() {
    let ok = Command::new("cargo")
        .args(["lambda", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "cargo-lambda is not on PATH: run `make test`, or `make tools` and put .venv/bin on PATH"
    );
}

/// The environment of the functions against DynamoDB Local: a region, dummy
/// credentials, no instance-metadata probing, and `extra` on top.
pub fn function_env(table: String, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut env: Vec<(&'static str, String)> = crate::local_aws::vars()
        .into_iter()
        .map(|(k, v)| (k, v.to_owned()))
        .collect();
    env.extend([
        ("TABLE_NAME", table),
        ("AWS_ENDPOINT_URL_DYNAMODB", crate::ddb::endpoint()),
        (
            user_service::config::VERIFICATION_KEY.name(),
            crate::ddb::TEST_KEY.to_owned(),
        ),
        (user_service::config::USER_POOL_ID.name(), "local_UserPool".to_owned()),
        // Codes in the function log; a test that sends through SES (moto), as
        // `make dev` does, sets VERIFICATION_SENDER=ses after these.
        (user_service::config::VERIFICATION_SENDER.name(), "log".to_owned()),
        (user_service::config::ALLOW_LOG_SENDER.name(), "true".to_owned()),
    ]);
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    env
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Which build of the functions to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The debug binaries of the workspace build that `make test` makes before the suites.
    Debug,
    /// The deployed profile (LTO, one codegen unit, stripped), each package on its own.
    Release,
}

impl Build {
    fn dir(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Release => "release",
        }
    }

    /// Builds every function binary once. Debug: the same `--workspace --all-targets`
    /// build as the test suites (nextest makes that one too), so it is fresh when the
    /// suites run after `make test`'s build. Release: the function packages alone, as
    /// they deploy.
    pub fn ensure_built(self) {
        let mut build = Command::new("cargo");
        build.current_dir(workspace_root()).args(["build", "--quiet"]);
        match self {
            Self::Debug => {
                build.args(["--workspace", "--all-targets"]);
            }
            Self::Release => {
                build.arg("--release");
                for f in user_service::catalog::FUNCTIONS {
                    build.args(["-p", f.name]);
                }
            }
        }
        assert!(build.status().unwrap().success(), "building the functions failed");
    }

    pub fn binary(self, function: &str) -> PathBuf {
        workspace_root().join("target").join(self.dir()).join(function)
    }
}

/// The function binaries, each started once as a Lambda execution environment
/// would be, behind `cargo lambda watch --only-lambda-apis` on 127.0.0.1, which
/// provides the Runtime API and the invoke endpoint. Nothing is compiled on an
/// invocation, so no answer waits for a build. Everything stops with the process
/// group on drop.
pub struct Watch {
    child: Child,
    functions: Vec<Child>,
    pub port: u16,
    output: Arc<Mutex<Vec<String>>>,
    log: Arc<crate::logs::ChildLog>,
}

impl Watch {
    /// Builds the debug binaries (a no-op after `make test`'s build) and serves them.
    pub fn start(env: &[(&str, String)]) -> Self {
        Self::start_with(env, Build::Debug)
    }

    pub fn start_with(env: &[(&str, String)], build: Build) -> Self {
        build.ensure_built();
        let root = workspace_root();
        let port = free_port();
        let mut cmd = Command::new("cargo");
        cmd.current_dir(&root)
            .args(["lambda", "watch", "--only-lambda-apis", "--quiet"])
            .args(["--invoke-address", "127.0.0.1", "--invoke-port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("cargo lambda watch starts");
        let output = Arc::new(Mutex::new(Vec::new()));
        // Watch's and the functions' output, kept for the PII check.
        let log = crate::logs::ChildLog::new("watch");
        collect_output(&mut child, &output, &log);
        let mut watch = Self {
            child,
            functions: Vec::new(),
            port,
            output,
            log,
        };
        watch.wait_until_listening();

        // Each function joins watch's process group, so stopping watch stops them too.
        let pgid = i32::try_from(watch.child.id()).unwrap();
        for f in user_service::catalog::FUNCTIONS {
            let mut function = Command::new(build.binary(f.name));
            function
                .current_dir(&root)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env(
                    "AWS_LAMBDA_RUNTIME_API",
                    format!("http://127.0.0.1:{port}/.rt/{}", f.name),
                )
                .env("AWS_LAMBDA_FUNCTION_NAME", f.name)
                .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
                .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            std::os::unix::process::CommandExt::process_group(&mut function, pgid);
            let mut started = function
                .spawn()
                .unwrap_or_else(|e| panic!("{} does not start: {e}", build.binary(f.name).display()));
            collect_output(&mut started, &watch.output, &watch.log);
            watch.functions.push(started);
        }
        watch
    }

    fn wait_until_listening(&self) {
        let listening = crate::wait::poll(crate::wait::GENEROUS, || {
            std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()
        });
        assert!(
            listening.is_some(),
            "cargo lambda watch did not listen on 127.0.0.1:{}:\n{}",
            self.port,
            self.output().join("\n")
        );
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything watch and the functions printed so far.
    pub fn output(&self) -> Vec<String> {
        self.output.lock().unwrap().clone()
    }

    /// The JSON log lines the functions wrote.
    pub fn log_lines(&self) -> Vec<Value> {
        self.output()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// Invokes `function` with a payload file; Ok(response) or Err(error text).
    pub fn invoke(&self, function: &str, data_file: &Path) -> Result<Value, String> {
        let out = Command::new("cargo")
            .current_dir(workspace_root())
            .args(["lambda", "invoke", function, "--invoke-address", "127.0.0.1"])
            .args(["--invoke-port", &self.port.to_string(), "--output-format", "json"])
            .arg("--data-file")
            .arg(data_file)
            .output()
            .expect("cargo lambda invoke runs");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if out.status.success() {
            serde_json::from_str(&stdout).map_err(|e| format!("not JSON ({e}): {stdout} {stderr}"))
        } else {
            Err(format!("{stdout}{stderr}"))
        }
    }

    /// Stops watch and every process it started.
    pub fn stop(&mut self) {
        crate::process::stop_group(&mut self.child, &mut self.functions, Duration::from_secs(10));
    }
}

/// Collects a child's stdout and stderr lines into `output`, on threads of their own.
fn collect_output(child: &mut Child, output: &Arc<Mutex<Vec<String>>>, log: &Arc<crate::logs::ChildLog>) {
    let streams = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ];
    for stream in streams.into_iter().flatten() {
        let output = Arc::clone(output);
        let log = Arc::clone(log);
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                log.line(&line);
                output.lock().unwrap().push(line);
            }
        });
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

pub use crate::process::group_alive;
