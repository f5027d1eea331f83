//! A minimal Lambda Runtime API (version 2018-06-01), one per execution
//! environment, and the environment itself: a process spawned as Lambda spawns
//! one, timed from spawn to its first `GET /runtime/invocation/next` (init) and
//! from an event's arrival to its response (an invocation).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

use crate::cpu::{Controller, Cpu, Group, Init, Period, Share, Stat};

/// How long an init or an invocation may take before the bench gives up on it
/// (valgrind makes both slow).
const PATIENCE: Duration = Duration::from_secs(120);

/// What is started: a program, its arguments and environment (nothing inherited
/// but what Lambda would set too).
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) label: String,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    /// The CPU share it runs at, as Lambda's memory size buys it; none: the
    /// machine's whole core.
    pub(crate) cpu: Option<Cpu>,
}

impl Launch {
    pub(crate) fn new(label: impl Into<String>, program: impl Into<PathBuf>) -> Self {
        Self {
            label: label.into(),
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            cpu: None,
        }
    }

    /// The same launch at a CPU share.
    pub(crate) fn at(mut self, cpu: Cpu) -> Self {
        self.cpu = Some(cpu);
        self
    }

    pub(crate) fn env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// The same program, run under `wrapper` (valgrind): `wrapper args… program`.
    pub(crate) fn wrapped(&self, wrapper: &str, wrapper_args: &[String]) -> Self {
        let mut args = wrapper_args.to_vec();
        args.push(self.program.display().to_string());
        args.extend(self.args.iter().cloned());
        Self {
            program: PathBuf::from(wrapper),
            args,
            ..self.clone()
        }
    }
}

struct Invocation {
    id: String,
    body: Bytes,
}

enum Outcome {
    Response(Bytes, Instant),
    Error(String),
}

#[derive(Default)]
struct Shared {
    first_next: Mutex<Option<Instant>>,
    started: Notify,
    init_error: Mutex<Option<String>>,
    queue: tokio::sync::Mutex<Option<mpsc::Receiver<Invocation>>>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
}

const FUNCTION_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:bench";

async fn next(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    {
        let mut first = shared.first_next.lock().unwrap();
        if first.is_none() {
            *first = Some(Instant::now());
            shared.started.notify_waiters();
            shared.started.notify_one();
        }
    }
    let mut queue = shared.queue.lock().await;
    let Some(invocation) = (match queue.as_mut() {
        Some(rx) => rx.recv().await,
        None => None,
    }) else {
        return (StatusCode::GONE, HeaderMap::new(), Bytes::new());
    };
    let deadline_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64 + 30_000)
        .unwrap_or_default();
    let mut headers = HeaderMap::new();
    let header = |v: &str| HeaderValue::from_str(v).unwrap();
    headers.insert("lambda-runtime-aws-request-id", header(&invocation.id));
    headers.insert("lambda-runtime-deadline-ms", header(&deadline_ms.to_string()));
    headers.insert("lambda-runtime-invoked-function-arn", header(FUNCTION_ARN));
    headers.insert(
        "lambda-runtime-trace-id",
        header("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0"),
    );
    headers.insert("content-type", header("application/json"));
    (StatusCode::OK, headers, invocation.body)
}

async fn response(State(shared): State<Arc<Shared>>, Path(id): Path<String>, body: Bytes) -> StatusCode {
    let at = Instant::now();
    if let Some(waiter) = shared.waiting.lock().unwrap().remove(&id) {
        let _ = waiter.send(Outcome::Response(body, at));
    }
    StatusCode::ACCEPTED
}

async fn error(State(shared): State<Arc<Shared>>, Path(id): Path<String>, body: Bytes) -> StatusCode {
    if let Some(waiter) = shared.waiting.lock().unwrap().remove(&id) {
        let _ = waiter.send(Outcome::Error(String::from_utf8_lossy(&body).into_owned()));
    }
    StatusCode::ACCEPTED
}

async fn init_error(State(shared): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    *shared.init_error.lock().unwrap() = Some(String::from_utf8_lossy(&body).into_owned());
    shared.started.notify_one();
    StatusCode::ACCEPTED
}

/// A process started as a Lambda execution environment, with its own Runtime API.
pub(crate) struct Environment {
    pub(crate) label: String,
    child: Child,
    shared: Arc<Shared>,
    events: mpsc::Sender<Invocation>,
    server: tokio::task::JoinHandle<()>,
    /// Spawn to the first `GET /runtime/invocation/next`.
    pub(crate) init: Duration,
    output: Arc<Mutex<Vec<String>>>,
    /// The group it runs in at its share, and the one it ran its init in;
    /// removed once it has ended.
    groups: Vec<Group>,
}

/// The groups an environment at a share needs: the one holding its quota, and
/// (for an init at a whole core) the one its init runs in. Both start the
/// process the same way, through the gate.
fn groups_for(cpu: Cpu) -> Result<(Group, Option<Group>), String> {
    let controller = Controller::get()?;
    let quota = Group::create(controller, cpu.share)?;
    let init = match cpu.init {
        Init::Throttled => None,
        Init::WholeCore => Some(Group::create(
            controller,
            Share::of(crate::cpu::FULL_CORE_MB, Period::Default),
        )?),
    };
    Ok((quota, init))
}

static REQUEST_IDS: AtomicU64 = AtomicU64::new(1);

/// Set by `--nagle`: the Runtime API's sockets keep Nagle's algorithm.
pub(crate) static NAGLE: AtomicBool = AtomicBool::new(false);

impl Environment {
    /// Starts the Runtime API, spawns `launch` against it, and waits until it asks
    /// for its first event.
    pub(crate) async fn start(launch: &Launch) -> Result<Self, String> {
        let (events, rx) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            queue: tokio::sync::Mutex::new(Some(rx)),
            ..Shared::default()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(response))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .with_state(shared.clone());
        // Lambda's Runtime API answers without Nagle's delay; `--nagle` leaves it
        // on, to show what an emulator that does not costs each invocation.
        let nodelay = !NAGLE.load(Ordering::Relaxed);
        let listener = listener.tap_io(move |tcp| {
            let _ = tcp.set_nodelay(nodelay);
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });

        let groups = launch.cpu.map(groups_for).transpose()?;
        let (program, args) = match &groups {
            Some((quota, init)) => crate::cpu::gated(init.as_ref().unwrap_or(quota), &launch.program, &launch.args),
            None => (launch.program.clone(), launch.args.clone()),
        };
        let memory = launch.cpu.map_or(128, |c| c.share.mb);
        let mut command = Command::new(&program);
        command
            .args(&args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", &launch.label)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", memory.to_string())
            .env("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{}", launch.label))
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "bench")
            .env("AWS_EXECUTION_ENV", "AWS_Lambda_bench")
            .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(if groups.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        let signals = shared.clone();
        let started = signals.started.notified();
        tokio::pin!(started);
        started.as_mut().enable();
        let mut spawned = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: cannot start {}: {e}", launch.label, program.display()))?;
        if let Some((quota, init)) = &groups {
            let first = init.as_ref().unwrap_or(quota);
            spawned = open_gate(&mut child, first)
                .await
                .map_err(|e| format!("{}: {e}", launch.label))?;
        }
        let output = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stream).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    output.lock().unwrap().push(line);
                }
            });
        }
        let mut env = Self {
            label: launch.label.clone(),
            child,
            shared,
            events,
            server,
            init: Duration::ZERO,
            output,
            groups: Vec::new(),
        };
        let waited = tokio::time::timeout(PATIENCE, async {
            loop {
                tokio::select! {
                    () = &mut started => return Ok(()),
                    () = tokio::time::sleep(Duration::from_millis(50)) => {
                        if let Ok(Some(status)) = env.child.try_wait() {
                            return Err(format!("exited during init ({status})"));
                        }
                    }
                }
            }
        })
        .await;
        let failure = match waited {
            Ok(Ok(())) => env.shared.init_error.lock().unwrap().clone(),
            Ok(Err(e)) => Some(e),
            Err(_) => Some("init timed out".to_owned()),
        };
        if let Some(failure) = failure {
            return Err(format!("{}: {failure}\n{}", env.label, env.output().join("\n")));
        }
        let first = env.shared.first_next.lock().unwrap().unwrap_or_else(Instant::now);
        env.init = first.duration_since(spawned);
        if let Some((quota, init)) = groups {
            // An init at a whole core ends here: the invocations run at the share.
            if init.is_some() {
                quota.add(env.pid().ok_or("the process ended")?)?;
            }
            env.groups.push(quota);
            env.groups.extend(init);
        }
        Ok(env)
    }

    /// One invocation: from handing the event to the Runtime API to the response
    /// arriving there, as Lambda's front end sees it.
    pub(crate) async fn invoke(&self, event: &Value) -> Result<(Duration, Value), String> {
        let id = format!("{:08x}-bench", REQUEST_IDS.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.shared.waiting.lock().unwrap().insert(id.clone(), tx);
        let body = Bytes::from(serde_json::to_vec(event).map_err(|e| e.to_string())?);
        let sent = Instant::now();
        self.events
            .send(Invocation { id, body })
            .await
            .map_err(|_| format!("{}: the Runtime API stopped", self.label))?;
        match tokio::time::timeout(PATIENCE, rx).await {
            Ok(Ok(Outcome::Response(body, at))) => {
                let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                Ok((at.duration_since(sent), value))
            }
            Ok(Ok(Outcome::Error(e))) => Err(format!("{}: invocation error: {e}", self.label)),
            Ok(Err(_)) | Err(_) => Err(format!("{}: no response\n{}", self.label, self.output().join("\n"))),
        }
    }

    /// What the kernel counted in the group of its share: periods, and those
    /// it was throttled in.
    pub(crate) fn cpu_stat(&self) -> Option<Stat> {
        self.group()?.stat().ok()
    }

    /// The group holding its share, if it runs at one.
    pub(crate) fn group(&self) -> Option<&Group> {
        self.groups.first()
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The CPU time its threads have used so far, in ns (the first field of
    /// each `/proc/<pid>/task/*/schedstat`): what a CPU quota stretches.
    pub(crate) fn cpu_ns(&self) -> Option<u64> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid()?)).ok()?;
        let used = tasks
            .filter_map(|task| {
                let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
                stat.split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum();
        Some(used)
    }

    /// What the process printed so far (stdout and stderr).
    pub(crate) fn output(&self) -> Vec<String> {
        self.output.lock().unwrap().clone()
    }

    /// A field of /proc/<pid>/status in KiB (VmHWM: peak resident; VmRSS: now).
    pub(crate) fn memory_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Ends the process with SIGTERM (valgrind writes its profile on the way out)
    /// and waits for it.
    pub(crate) async fn terminate(mut self) {
        if let Some(pid) = self.pid() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            let _ = tokio::time::timeout(PATIENCE, self.child.wait()).await;
        }
        let _ = self.child.kill().await;
    }
}

/// Waits until the gate's shell sits in `group`, then lets it `exec` the
/// program; the clock of init starts then.
async fn open_gate(child: &mut Child, group: &Group) -> Result<Instant, String> {
    use tokio::io::AsyncWriteExt;
    let pid = child.id().ok_or("the gate's shell ended")?;
    let entered = tokio::time::timeout(PATIENCE, async {
        while group.group_of(pid).as_deref() != Some(group.name().as_str()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    if entered.is_err() {
        return Err(format!("the process never entered {}", group.path().display()));
    }
    let mut stdin = child.stdin.take().ok_or("no standard input to open the gate")?;
    let opened = Instant::now();
    stdin.write_all(b"go\n").await.map_err(|e| format!("the gate: {e}"))?;
    // Dropped: the program's standard input ends, as Lambda's does.
    drop(stdin);
    Ok(opened)
}

impl Drop for Environment {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        self.server.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both inits end with the process in the group of its share, whose quota
    /// the kernel holds.
    #[tokio::test]
    async fn an_environment_runs_at_the_share_from_its_init_or_from_its_first_request() {
        let root = integration_tests::workspace_root();
        let hello = root.join("target/debug").join("floor-hello");
        assert!(
            hello.exists(),
            "{} is missing: run `cargo build --workspace`",
            hello.display()
        );
        for init in Init::ALL {
            let share = Share::of(256, Period::Default);
            let launch = Launch::new("floor-hello", &hello).at(Cpu { share, init });
            let env = Environment::start(&launch).await.unwrap();
            let pid = env.pid().unwrap();
            let (_, answer) = env.invoke(&serde_json::json!({})).await.unwrap();
            assert_eq!(answer["message"], "hello", "{answer}");
            let group = env.group().unwrap();
            assert_eq!(group.applied().unwrap(), (share.quota_us, share.period_us), "{init:?}");
            assert_eq!(group.group_of(pid), Some(group.name()), "{init:?}");
            env.terminate().await;
        }
    }
}
