//! The verification codes the `log` sender issues, read from the service's own
//! JSON log lines as they are written (the way `LogCapture::code_for` reads
//! them), without keeping the log: thousands of requests would make every lookup
//! re-read it all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Default)]
pub(crate) struct CodeBook {
    codes: Arc<Mutex<HashMap<String, String>>>,
    lines: Arc<std::sync::atomic::AtomicUsize>,
}

impl CodeBook {
    /// A dispatcher logging in the service's JSON format into this book.
    pub(crate) fn dispatch(&self) -> tracing::Dispatch {
        // Teed: the whole suite's logs are checked for PII afterwards.
        tracing::Dispatch::new(user_service::app::json_subscriber(integration_tests::logs::Tee(
            self.clone(),
        )))
    }

    /// The last code issued for `email_id`, if any.
    pub(crate) fn code_for(&self, email_id: &str) -> Option<String> {
        self.codes.lock().unwrap().get(email_id).cloned()
    }

    pub(crate) fn line_count(&self) -> usize {
        self.lines.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn read(&self, bytes: &[u8]) {
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            self.lines.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let line: serde_json::Value = serde_json::from_slice(line).expect("every log line is JSON");
            let lines = [line];
            let Some(email_id) = lines[0]["email_id"].as_str() else {
                continue;
            };
            if let Some(code) = integration_tests::http::logged_code(&lines, email_id) {
                self.codes.lock().unwrap().insert(email_id.to_owned(), code);
            }
        }
    }
}

/// One event's output: the formatter writes a line through one writer, which
/// hands it to the book when dropped.
pub(crate) struct Line {
    book: CodeBook,
    buf: Vec<u8>,
}

impl std::io::Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.book.read(&self.buf);
    }
}

impl<'a> MakeWriter<'a> for CodeBook {
    type Writer = Line;
    fn make_writer(&'a self) -> Line {
        Line {
            book: self.clone(),
            buf: Vec::new(),
        }
    }
}
