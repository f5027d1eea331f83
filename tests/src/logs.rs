//! Every log line a test process writes, kept on disk for the PII check
//! (`cargo run -p integration-tests --bin check-logs`).
//!
//! The first use of the test support ([`capture`], called from `ddb`, `events`, `TestApp`,
//! `Moto`, `Watch` and `LogCapture`) installs a global subscriber in the
//! service's own JSON format at its production level (INFO, SDK at WARN), writing
//! to `target/test-logs/<binary>-<test>-<pid>.jsonl`. nextest runs one test per
//! process, so one file names one test. A [`LogCapture`]
//! replaces the global subscriber on its thread (`set_default`), so its writer
//! tees every line into the same file. Child processes' output goes to files of
//! its own beside it ([`ChildLog`], [`stdio`], [`keep`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::fmt::MakeWriter;

/// Overrides the directory (default `target/test-logs`).
pub const DIR_VAR: &str = "TEST_LOG_DIR";

/// Where every captured log goes; `make test` empties it before the suites.
pub fn dir() -> PathBuf {
    std::env::var_os(DIR_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target/test-logs"))
}

/// Installs the process-wide capture once; later calls do nothing.
pub fn capture() {
    let _ = sink();
}

/// The path of this process's in-process log file.
pub fn path() -> PathBuf {
    sink().path.clone()
}

/// The domain events a test read back from the bus, kept beside its log:
/// check-logs reads them for personal data as it reads the logs.
pub fn keep_events(events: &[serde_json::Value]) {
    use std::io::Write;
    let path = path().with_extension("events.jsonl");
    let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) else {
        panic!("cannot keep the events in {}", path.display());
    };
    for event in events {
        let _ = writeln!(file, "{event}");
    }
}

struct Sink {
    path: PathBuf,
    file: Mutex<File>,
}

impl Sink {
    /// One whole formatted line per call, under the lock: lines of concurrent
    /// threads never interleave.
    fn write_line(&self, buf: &[u8]) {
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = file.write_all(buf);
    }
}

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| {
        let path = new_file_path("jsonl");
        let file = open(&path);
        let installed = tracing::subscriber::set_global_default(user_service::app::json_subscriber(SinkWriter));
        if installed.is_err() {
            // Another global subscriber: its lines escape the check unless it tees here.
            eprintln!(
                "integration-tests: a global tracing subscriber was already set; {} gets only LogCapture lines",
                path.display()
            );
        }
        Sink {
            path,
            file: Mutex::new(file),
        }
    })
}

fn open(path: &Path) -> File {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
    }
    File::options()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()))
}

/// `<dir>/<binary>-<test>-<pid>[.<n>].<ext>`: unique per process and per call.
fn new_file_path(ext: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let suffix = if n == 0 { String::new() } else { format!(".{n}") };
    dir().join(format!("{}{suffix}.{ext}", process_label()))
}

/// `<binary>-<test>-<pid>`: the test binary without cargo's hash, and the test
/// nextest runs in this process (its first argument), or `all`.
fn process_label() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown".to_owned());
    let binary = match binary.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => name.to_owned(),
        _ => binary,
    };
    let test = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "all".to_owned());
    let test: String = test
        .replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    format!("{binary}-{test}-{}", std::process::id())
}

/// Writes to this process's log file.
#[derive(Clone, Copy, Default)]
struct SinkWriter;

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        sink().write_line(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for SinkWriter {
    type Writer = SinkWriter;
    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

/// Tees a [`MakeWriter`] into this process's log file: what a subscriber of a
/// test's own (a `LogCapture`, a `Dispatch` of a suite) wraps its writer in, so
/// its lines reach the PII check too, e.g.
/// `user_service::app::json_subscriber(logs::Tee(my_writer))`.
#[derive(Clone, Default)]
pub struct Tee<M>(pub M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Tee<M> {
    type Writer = TeeWriter<M::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        capture();
        TeeWriter(self.0.make_writer())
    }
}

/// One event's writer of a [`Tee`].
pub struct TeeWriter<W>(W);

impl<W: Write> Write for TeeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(buf)?;
        sink().write_line(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A child process's output, line by line, in a file of its own beside this
/// process's log (`<binary>-<test>-<pid>.<n>.<label>.log`).
pub struct ChildLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl ChildLog {
    pub fn new(label: &str) -> Arc<Self> {
        capture();
        let path = new_file_path(&format!("{}.log", sanitize(label)));
        let file = open(&path);
        Arc::new(Self {
            path,
            file: Mutex::new(file),
        })
    }

    pub fn line(&self, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(file, "{line}");
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A file in the log directory for a child's stdout or stderr, e.g.
/// `Command::new(..).stdout(logs::stdio("local-api"))`.
pub fn stdio(label: &str) -> std::process::Stdio {
    capture();
    open(&new_file_path(&format!("{}.log", sanitize(label)))).into()
}

/// Copies a log a child wrote elsewhere (scripts/dev's `functions.log`) into the
/// log directory, before its directory goes away. A missing file is not copied.
pub fn keep(path: &Path, label: &str) {
    capture();
    if path.exists() {
        let to = new_file_path(&format!("{}.log", sanitize(label)));
        if let Err(e) = std::fs::copy(path, &to) {
            panic!("keeping {} as {}: {e}", path.display(), to.display());
        }
    }
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(marker: &str) -> usize {
        std::fs::read_to_string(path())
            .unwrap()
            .lines()
            .filter(|l| l.contains(marker))
            .count()
    }

    #[test]
    fn lines_reach_the_file_with_and_without_a_log_capture() {
        capture();
        let marker = uuid::Uuid::new_v4().to_string();
        // Another thread: no thread-local subscriber, the global one writes.
        let m = marker.clone();
        std::thread::spawn(move || tracing::info!(marker = %m, "global"))
            .join()
            .unwrap();
        // A LogCapture hides the global subscriber on its thread; it tees.
        let capture = LogCapture::default();
        {
            let _guard = capture.install();
            tracing::info!(marker = %marker, "captured");
            tracing::debug!(marker = %marker, "below the production level");
        }
        assert_eq!(capture.lines().len(), 1, "{}", capture.text());
        assert_eq!(logged(&marker), 2, "both lines, once each, in {}", path().display());
    }

    #[test]
    fn child_output_and_kept_files_land_in_the_directory() {
        let log = ChildLog::new("child test");
        log.line("one line");
        assert!(log.path().starts_with(dir()));
        assert_eq!(std::fs::read_to_string(log.path()).unwrap(), "one line\n");
        let elsewhere = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(elsewhere.path(), "kept\n").unwrap();
        keep(elsewhere.path(), "kept");
        let kept = std::fs::read_dir(dir())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .contains(&format!("-{}.", std::process::id()))
            })
            .filter(|e| e.file_name().to_string_lossy().ends_with(".kept.log"))
            .count();
        assert_eq!(kept, 1);
    }
}

/// Captures what the service logs, in the service's own format.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// Installs the capture for the current thread until the guard drops.
    /// Every line also reaches the process's log file ((this module)): the
    /// thread-local subscriber hides the global one.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        capture();
        tracing::subscriber::set_default(user_service::app::json_subscriber(Tee(self.clone())))
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    pub fn lines(&self) -> Vec<serde_json::Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).expect("every log line is JSON"))
            .collect()
    }

    /// The last verification code the `log` sender issued for `email_id`.
    pub fn code_for(&self, email_id: &str) -> String {
        crate::http::logged_code(&self.lines(), email_id)
            .unwrap_or_else(|| panic!("no code logged for {email_id}:\n{}", self.text()))
    }
}

impl std::io::Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogCapture {
    type Writer = LogCapture;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
