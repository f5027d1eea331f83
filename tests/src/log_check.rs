//! The PII check over every captured log (see [`crate::logs`]): no address, phone
//! number, token, verification code or test name in any line, except the code of
//! the `log` sender's own line.
//!
//! JSON lines (the service's format) are checked value by value; other lines
//! (cargo lambda watch, text logs) as text. The `log` sender's line is recognised
//! by its exact shape: level INFO, message `verification code issued`, and only
//! the fields that line has. Its `code` is exempt there and collected: a
//! collected code anywhere else is a finding.
//!
//! Names are a fixed list of the names the suites use rather than every value
//! the test support sends: hostile and generated inputs ("a", "x", "null")
//! would match everywhere. Fields named like personal data (`email`, `phone`,
//! `first_name`, `token`, …) are findings whatever their value, which covers
//! names not in the list.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// What the `log` sender's line says (shared/src/mail.rs).
pub const SENDER_MESSAGE: &str = "verification code issued";
/// Every top-level key of that line in the service's JSON format.
const SENDER_KEYS: &[&str] = &["timestamp", "level", "message", "email_id", "code", "span", "target"];

/// The names the suites give people (tests, events/, the walkthrough in docs/local-dev.md).
pub const TEST_NAMES: &[&str] = &["Ada", "Augusta", "Lovelace", "King", "Grace", "Hopper", "Mallory"];

/// Field names that hold personal data whatever the value (compared lowercase,
/// without `_` and `-`).
const PII_FIELDS: &[&str] = &[
    "email",
    "emailaddress",
    "address",
    "to",
    "phone",
    "phonenumber",
    "firstname",
    "lastname",
    "givenname",
    "familyname",
    "fullname",
    "token",
    "accesstoken",
    "idtoken",
    "refreshtoken",
    "authorization",
    "password",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Email,
    Phone,
    Token,
    Code,
    Name,
    PiiField,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email address",
            Self::Phone => "phone number",
            Self::Token => "token",
            Self::Code => "verification code",
            Self::Name => "test name",
            Self::PiiField => "personal-data field",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    pub kind: Kind,
    /// The first character and the length: enough to find it, not to read it.
    pub hint: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {} ({})",
            self.file.display(),
            self.line,
            self.kind.as_str(),
            self.hint
        )
    }
}

#[derive(Debug, Default)]
pub struct Report {
    pub files: usize,
    pub lines: usize,
    /// Lines of the `log` sender, whose code is allowed.
    pub sender_lines: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn to_json(&self) -> Value {
        let mut by_kind = serde_json::Map::new();
        for f in &self.findings {
            let n = by_kind.entry(f.kind.as_str()).or_insert(Value::from(0u64));
            *n = Value::from(n.as_u64().unwrap_or(0) + 1);
        }
        serde_json::json!({
            "files_scanned": self.files,
            "lines_scanned": self.lines,
            "log_sender_lines": self.sender_lines,
            "findings": self.findings.len(),
            "findings_by_kind": by_kind,
        })
    }
}

/// Checks every file of `dir` (not recursive).
pub fn check_dir(dir: &Path) -> std::io::Result<Report> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            let bytes = std::fs::read(&path)?;
            files.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(check(&files))
}

/// Checks `(name, contents)` pairs: codes issued anywhere are looked for everywhere.
pub fn check(files: &[(PathBuf, String)]) -> Report {
    let mut codes = HashSet::new();
    let mut report = Report {
        files: files.len(),
        ..Report::default()
    };
    for (_, text) in files {
        // Only lines that name the sender's message are parsed here.
        for line in text.lines().filter(|l| l.contains(SENDER_MESSAGE)) {
            if let Some(code) = serde_json::from_str(line).ok().as_ref().and_then(sender_code) {
                codes.insert(code);
                report.sender_lines += 1;
            }
        }
    }
    for (file, text) in files {
        for (i, line) in text.lines().enumerate() {
            report.lines += 1;
            for (kind, hint) in check_line(line, &codes) {
                report.findings.push(Finding {
                    file: file.clone(),
                    line: i + 1,
                    kind,
                    hint,
                });
            }
        }
    }
    report
}

/// The code of a `log` sender line, if `value` is exactly one.
fn sender_code(value: &Value) -> Option<String> {
    let object = value.as_object()?;
    let code = object.get("code")?.as_str()?;
    let is_sender = object.get("message")?.as_str()? == SENDER_MESSAGE
        && object.get("level").and_then(Value::as_str) == Some("INFO")
        && object.get("email_id").is_some_and(Value::is_string)
        && object.keys().all(|k| SENDER_KEYS.contains(&k.as_str()))
        && code.len() == 6
        && code.bytes().all(|b| b.is_ascii_digit());
    is_sender.then(|| code.to_owned())
}

/// Every finding in one line, with its masked hint.
pub fn check_line(line: &str, codes: &HashSet<String>) -> Vec<(Kind, String)> {
    let mut found = Vec::new();
    match serde_json::from_str::<Value>(line) {
        Ok(value @ Value::Object(_)) => {
            let exempt = sender_code(&value).is_some();
            check_value(None, &value, exempt, codes, &mut found);
        }
        _ => check_text(line, codes, false, &mut found),
    }
    found
}

fn check_value(
    key: Option<&str>,
    value: &Value,
    sender: bool,
    codes: &HashSet<String>,
    found: &mut Vec<(Kind, String)>,
) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                // The sender's own code, in its own line, and only there.
                if sender && key.is_none() && k == "code" {
                    continue;
                }
                if is_pii_field(k) && !matches!(v, Value::Null) && v.as_str().is_none_or(|s| !s.is_empty()) {
                    found.push((Kind::PiiField, format!("field {k}")));
                }
                check_value(Some(k), v, sender, codes, found);
            }
        }
        Value::Array(items) => {
            for v in items {
                check_value(key, v, sender, codes, found);
            }
        }
        Value::String(s) => {
            // A timestamp's fraction is six digits too.
            let timestamp = key == Some("timestamp");
            check_text(s, codes, !timestamp, found);
        }
        _ => {}
    }
}

fn is_pii_field(key: &str) -> bool {
    let normalized: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    PII_FIELDS.contains(&normalized.as_str())
}

/// `any_code`: any standalone six-digit run is a code (string values of JSON
/// lines); otherwise only codes the sender issued are (free text).
fn check_text(text: &str, codes: &HashSet<String>, any_code: bool, found: &mut Vec<(Kind, String)>) {
    for email in emails(text) {
        found.push((Kind::Email, mask(&email)));
    }
    for phone in phones(text) {
        found.push((Kind::Phone, mask(&phone)));
    }
    for token in tokens(text) {
        found.push((Kind::Token, mask(&token)));
    }
    for run in six_digit_runs(text) {
        if any_code || codes.contains(&run) {
            found.push((Kind::Code, mask(&run)));
        }
    }
    for word in words(text) {
        if TEST_NAMES.contains(&word) {
            found.push((Kind::Name, mask(word)));
        }
    }
}

fn mask(s: &str) -> String {
    let first: String = s.chars().take(1).collect();
    format!("{first}… {} chars", s.chars().count())
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

fn is_local_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

fn is_domain_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-')
}

/// `local@domain.tld`, and `local%40domain.tld` as a URL spells it.
fn emails(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_len = if bytes[i] == b'@' {
            1
        } else if bytes[i..].starts_with(b"%40") {
            3
        } else {
            i += 1;
            continue;
        };
        let mut start = i;
        while start > 0 && is_local_char(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = i + at_len;
        while end < bytes.len() && is_domain_char(bytes[end]) {
            end += 1;
        }
        let domain = text[i + at_len..end].trim_end_matches(['.', '-']);
        let tld_ok = domain.rsplit_once('.').is_some_and(|(host, tld)| {
            !host.is_empty() && tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic())
        });
        if start < i && tld_ok {
            out.push(text[start..i + at_len + domain.len()].to_owned());
            i += at_len + domain.len();
        } else {
            i += at_len;
        }
    }
    out
}

/// E.164 as the service accepts it: `+`, a non-zero digit, then 6 to 14 more
/// digits (short `+12` runs are too common to mean a phone).
fn phones(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'+' || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if (7..=15).contains(&digits) && bytes[i + 1] != b'0' {
            out.push(text[i..=i + digits].to_owned());
        }
    }
    out
}

/// JWTs (`eyJ…` header, a dot, a payload) and bearer credentials.
fn tokens(text: &str) -> Vec<String> {
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("eyJ").map(|p| p + i) {
        let header = bytes[at..].iter().take_while(|b| is_b64(**b)).count();
        let after = at + header;
        if header >= 10 && bytes.get(after) == Some(&b'.') && bytes.get(after + 1).is_some_and(|b| is_b64(*b)) {
            out.push(text[at..after].to_owned());
        }
        i = after.max(at + 3);
    }
    let lower = text.to_ascii_lowercase();
    let mut i = 0;
    while let Some(at) = lower[i..].find("bearer ").map(|p| p + i) {
        let start = at + "bearer ".len();
        let credential = bytes[start..].iter().take_while(|b| is_b64(**b) || **b == b'.').count();
        if credential >= 8 {
            out.push(text[start..start + credential].to_owned());
        }
        i = start;
    }
    out
}

/// Runs of exactly six digits standing alone: not inside a word, a number, a
/// decimal fraction or a dashed identifier.
fn six_digit_runs(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let apart = |b: Option<&u8>| b.is_none_or(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_')));
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let len = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        let before = i.checked_sub(1).and_then(|j| bytes.get(j));
        if len == 6 && apart(before) && apart(bytes.get(i + 6)) {
            out.push(text[i..i + 6].to_owned());
        }
        i += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENDER_LINE: &str = r#"{"timestamp":"2026-11-22T06:16:46.123456Z","level":"INFO","message":"verification code issued","email_id":"01JD3Q6F8Y2W9X4V5T7R3N1M0K","code":"042917","span":{"request_id":"7c1e0d4a-1b2c-4d3e-8f9a-0b1c2d3e4f5a","sub":"3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e","name":"request"}}"#;

    fn kinds(line: &str) -> Vec<Kind> {
        check_line(line, &HashSet::new()).into_iter().map(|(k, _)| k).collect()
    }

    fn run(files: &[(&str, &str)]) -> Report {
        let files: Vec<(PathBuf, String)> = files.iter().map(|(n, t)| (PathBuf::from(n), (*t).to_owned())).collect();
        check(&files)
    }

    #[test]
    fn clean_lines_of_the_service_pass() {
        for line in [
            r#"{"timestamp":"2026-11-22T06:16:46.123456Z","level":"INFO","message":"request handled","status":201,"span":{"request_id":"7c1e0d4a-1b2c-4d3e-8f9a-0b1c2d3e4f5a","sub":"3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e","name":"request"}}"#,
            r#"{"timestamp":"2026-11-22T06:16:46.000001Z","level":"INFO","message":"refused","code":"EMAIL_TAKEN","status":409}"#,
            r#"{"timestamp":"2026-11-22T06:16:46Z","level":"INFO","message":"initialised","function":"add-email","table":"test-123456-0-0e0f0b1c2d3e4f5a6b7c8d9e0f1a2b3c"}"#,
            r#"{"level":"ERROR","message":"failed","cause":"dispatch failure: io error: connection refused (os error 111) at 127.0.0.1:45678"}"#,
            // The metrics' EMF document: names and counts, the function's name.
            r#"{"_aws":{"Timestamp":1795342499270,"CloudWatchMetrics":[{"Namespace":"UserService/user-service","Dimensions":[["FunctionName"]],"Metrics":[{"Name":"SignUps","Unit":"Count"}]}]},"FunctionName":"user-service-post-confirmation","SignUps":1}"#,
            // An admin action's audit event: users by sub.
            r#"{"timestamp":"2026-11-22T10:15:02.640146Z","level":"INFO","message":"admin action","audit":"admin_action","action":"lookup","admin":"9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c","outcome":"not_found","span":{"request_id":"a72c51ee-f1b7-4b4a-a548-079a7d3949f8","sub":"9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c","name":"request"}}"#,
            "INFO cargo_lambda_watch: starting the runtime at 2026-11-22 06:16:46.123456 +0000",
            "",
        ] {
            assert_eq!(kinds(line), Vec::<Kind>::new(), "{line}");
        }
    }

    #[test]
    fn each_kind_of_pii_is_caught() {
        let cases: &[(&str, Kind)] = &[
            (
                r#"{"level":"INFO","message":"added ada.work@example.com"}"#,
                Kind::Email,
            ),
            (
                r#"{"level":"INFO","message":"found","cause":"key EMAIL#Ada.Work%40Example.co.uk"}"#,
                Kind::Email,
            ),
            ("plain text for grace+tag@example.org here", Kind::Email),
            (
                r#"{"level":"INFO","message":"profile updated to +14155550100"}"#,
                Kind::Phone,
            ),
            ("text +442071234567", Kind::Phone),
            (
                r#"{"level":"INFO","message":"token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"}"#,
                Kind::Token,
            ),
            ("authorization: Bearer abcdefgh12345678", Kind::Token),
            (
                r#"{"level":"WARN","message":"wrong code","guess":"123456"}"#,
                Kind::Code,
            ),
            (
                r#"{"level":"WARN","message":"wrong code 654321 for the address"}"#,
                Kind::Code,
            ),
            (r#"{"level":"INFO","message":"hello Ada"}"#, Kind::Name),
            ("text Lovelace", Kind::Name),
            (
                r#"{"level":"INFO","message":"profile","first_name":"Zed"}"#,
                Kind::PiiField,
            ),
            (
                r#"{"level":"INFO","message":"x","span":{"phoneNumber":"0800 123"}}"#,
                Kind::PiiField,
            ),
        ];
        for (line, kind) in cases {
            assert!(
                kinds(line).contains(kind),
                "{kind:?} not caught in {line}: {:?}",
                kinds(line)
            );
        }
    }

    #[test]
    fn the_sender_line_may_carry_its_code_and_nothing_else() {
        assert_eq!(kinds(SENDER_LINE), Vec::<Kind>::new());
        // The same message with another field is not the sender's line.
        let extra = SENDER_LINE.replace(r#""code":"042917""#, r#""code":"042917","to":"x""#);
        assert!(kinds(&extra).contains(&Kind::Code), "{:?}", kinds(&extra));
        // Its other fields are checked as any line's.
        let leaky = SENDER_LINE.replace("01JD3Q6F8Y2W9X4V5T7R3N1M0K", "ada@example.com");
        assert_eq!(kinds(&leaky), vec![Kind::Email]);
        // Another message with a code field is not the sender's.
        let other = SENDER_LINE.replace(SENDER_MESSAGE, "verification code sent");
        assert!(kinds(&other).contains(&Kind::Code));
    }

    #[test]
    fn a_code_the_sender_issued_is_caught_in_any_other_line() {
        let report = run(&[
            ("a.jsonl", SENDER_LINE),
            ("b.log", "watch: invoked with body {\"code\": 042917}\nnothing here"),
        ]);
        assert_eq!((report.files, report.lines, report.sender_lines), (2, 3, 1));
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        let finding = &report.findings[0];
        assert_eq!(
            (finding.file.to_str(), finding.line, finding.kind),
            (Some("b.log"), 1, Kind::Code)
        );
        assert!(!finding.to_string().contains("042917"), "the hint masks it: {finding}");
        // Free text with a six-digit number the sender never issued is no finding.
        assert!(run(&[("c.log", "pid 123456 started")]).findings.is_empty());
    }

    #[test]
    fn an_empty_directory_scans_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let report = check_dir(dir.path()).unwrap();
        assert_eq!((report.files, report.lines), (0, 0));
    }
}
