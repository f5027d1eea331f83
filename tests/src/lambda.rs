//! The real binaries under `cargo lambda watch`, invoked with `cargo lambda invoke`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

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
    let mut env = vec![
        ("TABLE_NAME", table),
        ("AWS_ENDPOINT_URL_DYNAMODB", crate::ddb::endpoint()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "local".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "local".to_owned()),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
    ];
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

/// `cargo lambda watch` on 127.0.0.1, killed with its process group on drop.
pub struct Watch {
    child: Child,
    pub port: u16,
    output: Arc<Mutex<Vec<String>>>,
}

impl Watch {
    /// Builds every function first, then serves them.
    pub fn start(env: &[(&str, String)]) -> Self {
        Self::start_with(env, false)
    }

    /// As `start`; `release` builds and serves the release profile (what deploys).
    pub fn start_with(env: &[(&str, String)], release: bool) -> Self {
        let root = workspace_root();
        // One package per build: cargo lambda watch runs `cargo run --bin <name>`,
        // whose features are that package's alone; a joint build would unify
        // features across packages and watch would compile every function again.
        for f in user_service::catalog::FUNCTIONS {
            let mut build = Command::new("cargo");
            build.current_dir(&root).args(["build", "--quiet", "-p", f.name]);
            if release {
                build.arg("--release");
            }
            assert!(build.status().unwrap().success(), "building {} failed", f.name);
        }

        let port = free_port();
        let env_vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut cmd = Command::new("cargo");
        cmd.current_dir(&root)
            .args([
                "lambda",
                "watch",
                "--invoke-address",
                "127.0.0.1",
                "--invoke-port",
                &port.to_string(),
            ])
            .args(["--ignore-changes", "--quiet"])
            .args(if release { &["--release"][..] } else { &[][..] })
            .args(["--env-vars", &env_vars.join(",")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("cargo lambda watch starts");
        let output = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let output = Arc::clone(&output);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    output.lock().unwrap().push(line);
                }
            });
        }
        let watch = Self { child, port, output };
        watch.wait_until_listening();
        watch
    }

    fn wait_until_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
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
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-s", "TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-s", "KILL", "--", &group]).status();
        let _ = self.child.try_wait();
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether any process of the group `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    Command::new("pgrep")
        .args(["-g", &pgid.to_string()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
