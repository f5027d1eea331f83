//! `make dev` end to end: scripts/dev brings up DynamoDB Local, the functions
//! under cargo lambda watch and the local API; the walkthrough of docs/local-dev.md runs
//! against it exactly as written (its code read from the outbox, where the
//! functions' mail through moto's SES lands); Ctrl-C leaves no process behind.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use integration_tests::lambda::{free_port, require_cargo_lambda};
use integration_tests::workspace_root;
use integration_tests::{process, wait};
use serde_json::{Value, json};
use user_service::domain::Timestamp;

const TABLE: &str = "user-service-dev-test";

struct Dev {
    child: Child,
    ports: [u16; 4],
    state: PathBuf,
}

impl Dev {
    /// make dev on a fresh or an existing state directory, ready within `within`.
    fn start(state: &Path, within: Duration) -> Self {
        let ports = [free_port(), free_port(), free_port(), free_port()];
        let mut cmd = Command::new(workspace_root().join("scripts/dev"));
        cmd.env("PORT", ports[0].to_string())
            .env("LAMBDA_PORT", ports[1].to_string())
            .env("DDB_PORT", ports[2].to_string())
            .env("MOTO_PORT", ports[3].to_string())
            .env("STATE_DIR", state)
            // An edit of the tree while the suite runs must not restart a function mid-request.
            .env("DEV_RELOAD", "0")
            .env("TABLE_NAME", TABLE)
            // Verification windows far longer than the test: no answer depends on
            // how long a busy machine takes between two requests.
            .env("VERIFICATION_TTL_SECONDS", "86400")
            .env("VERIFICATION_RESEND_INTERVAL_SECONDS", "86400")
            .stdin(Stdio::null())
            // Kept with the suite's logs: check-logs reads them for PII.
            .stdout(integration_tests::logs::stdio("dev-stdout"))
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("scripts/dev starts");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(line) if line.contains("dev: ready") => break,
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(_) => panic!(
                    "scripts/dev did not get ready within {} s:\n{}",
                    within.as_secs(),
                    seen.join("\n")
                ),
            }
        }
        std::thread::spawn(move || while rx.recv().is_ok() {});
        Self {
            child,
            ports,
            state: state.to_path_buf(),
        }
    }

    fn api(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[0])
    }

    /// Ctrl-C, as a person would: SIGINT to the script.
    fn interrupt(mut self) {
        let pid = self.child.id();
        let _ = Command::new("kill").args(["-s", "INT", &pid.to_string()]).status();
        assert!(
            process::wait_exit(&mut self.child, wait::GENEROUS),
            "scripts/dev ended on Ctrl-C"
        );
        assert!(
            process::wait_group_gone(pid, wait::GENEROUS),
            "a process of scripts/dev survived"
        );
        // The functions' own log lines, kept before the state directory goes.
        integration_tests::logs::keep(&self.state.join("functions.log"), "dev-functions");
        let state = self.state.display().to_string();
        let left = wait::poll(wait::GENEROUS, || {
            let out = Command::new("pgrep").args(["-f", &state]).output().ok()?;
            out.stdout.is_empty().then_some(())
        });
        assert!(left.is_some(), "a process naming {state} is still running");
        for port in self.ports {
            let closed = wait::poll(wait::GENEROUS, || {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_err().then_some(())
            });
            assert!(closed.is_some(), "port {port} still open");
        }
    }

    fn handled_requests(&self) -> usize {
        std::fs::read_to_string(self.state.join("functions.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"request handled\""))
            .count()
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-s", "TERM", &self.child.id().to_string()])
                .status();
            let _ = self.child.wait();
            // A failed run's function logs: what went wrong, and checked for PII too.
            integration_tests::logs::keep(&self.state.join("functions.log"), "dev-functions");
        }
    }
}

/// The walkthrough block of docs/local-dev.md, verbatim.
fn readme_walkthrough() -> String {
    let readme = std::fs::read_to_string(workspace_root().join("docs/local-dev.md")).unwrap();
    let start = readme
        .find("<!-- walkthrough -->")
        .expect("docs/local-dev.md marks its walkthrough");
    let block = &readme[start..];
    let open = block.find("```sh\n").unwrap() + "```sh\n".len();
    let close = block[open..].find("```").unwrap();
    block[open..open + close].to_owned()
}

/// A GET with an optional bearer token: the status, and the body as JSON (or as
/// a JSON string when it is not JSON).
fn get(url: &str, token: Option<&str>) -> (u16, Value) {
    let request = reqwest::blocking::Client::new().get(url);
    let request = match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    answer(request)
}

/// A POST of a JSON body, without a token (the /local routes).
fn post(url: &str, body: &Value) -> (u16, Value) {
    answer(reqwest::blocking::Client::new().post(url).json(body))
}

fn answer(request: reqwest::blocking::RequestBuilder) -> (u16, Value) {
    let response = request.send().expect("the local API answers");
    let status = response.status().as_u16();
    let text = response.text().expect("a readable body");
    (status, serde_json::from_str(&text).unwrap_or(json!(text)))
}

fn token(user: &Value) -> &str {
    user["token"].as_str().expect("a token")
}

/// The outbox's messages to `to`, newest first, as JSON (`GET /local/outbox?to=`).
fn outbox(api: &str, to: &str) -> Vec<Value> {
    let (status, body) = get(&format!("{api}/local/outbox?to={}", to.replace('@', "%40")), None);
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().cloned().expect("a list of messages")
}

/// The first of `messages` whose subject starts with `subject`.
fn with_subject<'a>(messages: &'a [Value], subject: &str) -> Option<&'a Value> {
    messages
        .iter()
        .find(|m| m["subject"].as_str().is_some_and(|s| s.starts_with(subject)))
}

#[test]
fn make_dev_runs_the_walkthrough_the_browser_tour_and_stops_cleanly() {
    require_cargo_lambda();
    let browser = crate::browser::require();
    let state_dir = tempfile::Builder::new().prefix("user-service-dev-").tempdir().unwrap();
    let state = state_dir.path().to_path_buf();
    // Building every function on a clean target/ takes minutes on a busy machine.
    let dev = Dev::start(&state, Duration::from_secs(1800));
    let api = dev.api();

    // No token, a bad token, a token signed with another key: 401, and no function runs.
    let before = dev.handled_requests();
    assert_eq!(
        get(&format!("{api}/me"), None),
        (401, json!({"message": "Unauthorized"}))
    );
    assert_eq!(get(&format!("{api}/me"), Some("nope")).0, 401);
    let foreign = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4IiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2lnbmF0dXJl";
    assert_eq!(get(&format!("{api}/me"), Some(foreign)).0, 401);
    assert_eq!(get(&format!("{api}/nowhere"), None).0, 404);
    // A page elsewhere that rebinds its name to 127.0.0.1 (DNS rebinding) names
    // its own host: no token minted, no outbox read.
    for (path, method) in [("/local/token", "POST"), ("/local/outbox", "GET"), ("/", "GET")] {
        let request = reqwest::blocking::Client::new()
            .request(method.parse().unwrap(), format!("{api}{path}"))
            .header("host", "rebound.example:3000")
            .json(&json!({"email": "grace@example.com", "groups": ["admin"]}));
        assert_eq!(answer(request).0, 403, "{method} {path} for another host");
    }

    // The walkthrough of docs/local-dev.md, as a newcomer would paste it.
    let walkthrough_started = Timestamp::now();
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &readme_walkthrough()])
        .current_dir(workspace_root())
        .env("PORT", dev.ports[0].to_string())
        .env("STATE_DIR", &state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "walkthrough failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "HTTP/1.1 200 OK",
        "etag: \"1\"",
        "\"isVerified\":true",
        "etag: \"2\"",
        "\"email\":\"ada.work@example.com\"",
        "etag: \"3\"",
        "\"firstName\":\"Augusta Ada\"",
        "HTTP/1.1 412 Precondition Failed",
        "\"code\":\"VERSION_MISMATCH\"",
    ] {
        assert!(
            text.contains(expected),
            "walkthrough output lacks {expected:?}:\n{text}"
        );
    }
    assert!(
        dev.handled_requests() >= before + 6,
        "requests with a token reached the functions"
    );
    let unauthorized = get(&format!("{api}/me/account"), None);
    assert_eq!(unauthorized.0, 401);

    // The code went out through the SES sender to moto's SES, and the outbox
    // lists it: JSON for anything but a browser, stamped when the outbox saw it.
    let mail = outbox(&api, "ada.work@example.com");
    let code = with_subject(&mail, "Your code to verify")
        .unwrap_or_else(|| panic!("the code's message is in the outbox: {mail:?}"));
    assert_eq!(code["to"], json!(["ada.work@example.com"]));
    assert_eq!(code["from"], "no-reply@user-service.localhost");
    assert!(
        code["body"].as_str().is_some_and(|b| b.contains("<p>")),
        "the HTML body: {code}"
    );
    let text = code["text"].as_str().expect("the text");
    assert!(
        integration_tests::moto::code_in(text).is_some(),
        "a six-digit code in the text: {text}"
    );
    assert!(!text.contains('<'), "plain text: {text}");
    let sent_at = code["sentAt"].as_str().expect("sentAt");
    assert!(sent_at.ends_with('Z'), "UTC: {sent_at}");
    let sent_at = Timestamp::parse(sent_at).unwrap_or_else(|_| panic!("RFC 3339: {sent_at}"));
    assert!(
        walkthrough_started <= sent_at && sent_at <= Timestamp::now(),
        "seen during the walkthrough"
    );
    assert!(
        outbox(&api, "ADA.WORK@example.com").len() == mail.len(),
        "the filter ignores case"
    );
    assert!(
        outbox(&api, "nobody@example.com").is_empty(),
        "the filter keeps one address"
    );
    // A browser gets the outbox page, under the pages' Content-Security-Policy.
    let page = reqwest::blocking::Client::new()
        .get(format!("{api}/local/outbox"))
        .header(
            "accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .send()
        .expect("the local API answers");
    assert_eq!(page.status().as_u16(), 200);
    let media = page.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(media.starts_with("text/html"), "{media}");
    assert!(page.headers().contains_key("content-security-policy"));
    assert!(page.text().unwrap().contains("/outbox.js"), "the page loads its script");

    // The walkthrough's changes came out as domain events, as they happened,
    // and none names an address.
    let wanted = [
        "user.created",
        "email.added",
        "email.verified",
        "email.primary_changed",
        "user.updated",
    ];
    let deadline = Instant::now() + Duration::from_secs(120);
    let events = loop {
        let (status, body) = get(&format!("{api}/local/events"), None);
        assert_eq!(status, 200, "{body}");
        let events = body["events"].as_array().cloned().unwrap_or_default();
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        if wanted.iter().all(|w| types.contains(w)) {
            break events;
        }
        assert!(
            Instant::now() < deadline,
            "the walkthrough's events did not all come: {types:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        events
            .iter()
            .all(|e| e["specversion"] == "1.0" && e["source"] == "urn:user-service:local")
    );
    assert!(
        !Value::Array(events).to_string().contains('@'),
        "no address in an event"
    );

    // An admin token from /local/token, for the admin routes.
    let local = |path: &str, body: Value| post(&format!("{api}{path}"), &body);
    let (status, grace) = local("/local/sign-up", json!({"email": "grace@example.com"}));
    assert_eq!(status, 201, "{grace}");
    let (status, admin) = local(
        "/local/token",
        json!({"email": "grace@example.com", "groups": ["admin"]}),
    );
    assert_eq!(status, 200, "{admin}");
    let admin = token(&admin).to_owned();
    let (status, found) = get(&format!("{api}/admin/users?email=ada.work%40example.com"), Some(&admin));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["profile"]["firstName"], "Augusta Ada");
    let (status, refused) = get(
        &format!("{api}/admin/users?email=ada.work%40example.com"),
        Some(token(&grace)),
    );
    assert_eq!((status, refused["code"].as_str()), (403, Some("FORBIDDEN")));
    let (status, taken) = local("/local/sign-up", json!({"email": "ADA.work@example.com"}));
    assert_eq!((status, taken["code"].as_str()), (409, Some("EMAIL_TAKEN")));

    // sync-cognito-email runs too, against the local users' mirror in moto's
    // Cognito: the new primary signs in, and a suspended user is disabled there.
    let ada = found["profile"]["userId"].as_str().unwrap().to_owned();
    let until = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(500));
        }
    };
    until("Cognito's email follows the primary", &|| {
        local("/local/token", json!({"email": "ada.work@example.com"})).0 == 200
    });
    // With the switch, the former primary got its notice (sent through SES too).
    until("the former primary's notice reaches the outbox", &|| {
        with_subject(
            &outbox(&api, "ada@example.com"),
            "Your primary email address was changed",
        )
        .is_some()
    });
    let notices = outbox(&api, "ada@example.com");
    let notice = with_subject(&notices, "Your primary email address was changed").unwrap();
    let text = notice["text"].as_str().expect("the text");
    assert!(text.contains("If you did not"), "{text}");
    // No code to type in; the way back is a link to this API's own page.
    let (told, way_back) = text.split_once("If you did not").unwrap();
    assert!(!told.bytes().any(|b| b.is_ascii_digit()), "no code in a notice: {text}");
    assert!(way_back.contains(&format!("{api}/recovery#token=")), "{text}");
    let status_url = format!("{api}/admin/users/{ada}/status");
    let set_status = |status: &str| {
        answer(
            reqwest::blocking::Client::new()
                .put(&status_url)
                .bearer_auth(&admin)
                .json(&json!({ "status": status })),
        )
    };
    assert_eq!(set_status("suspended").0, 200);
    until("the suspended user is disabled in Cognito", &|| {
        local("/local/token", json!({"email": "ada.work@example.com"})).1["code"] == "NotAuthorizedException"
    });
    assert_eq!(set_status("active").0, 200);
    until("the re-activated user is enabled again", &|| {
        local("/local/token", json!({"email": "ada.work@example.com"})).0 == 200
    });

    // Orphans are repaired at sign-in: a user whose post-confirmation failed after
    // Cognito's retries, and AdminCreateUser users (no confirmation at all).
    let me = |user: &Value| get(&format!("{api}/me/account"), Some(token(user)));
    let find = |email: &str| get(&format!("{api}/admin/users?email={email}"), Some(&admin));
    let (status, _) = local(
        "/local/sign-up",
        json!({"email": "orphan@example.com", "simulatePostConfirmationFailure": true}),
    );
    assert_eq!(status, 201);
    assert_eq!(find("orphan%40example.com").0, 404, "confirmed in Cognito, no profile");
    let (status, token) = local("/local/token", json!({"email": "orphan@example.com"}));
    assert_eq!(status, 200, "{token}");
    let (status, account) = me(&token);
    assert_eq!(status, 200, "{account}");
    assert_eq!(account["emails"][0]["email"], "orphan@example.com");
    assert_eq!(
        (
            account["emails"][0]["isPrimary"].as_bool(),
            account["emails"][0]["isVerified"].as_bool()
        ),
        (Some(true), Some(true))
    );

    let (status, _) = local(
        "/local/admin-create-user",
        json!({"email": "made@example.com", "emailVerified": true}),
    );
    assert_eq!(status, 201);
    let (status, token) = local("/local/token", json!({"email": "made@example.com"}));
    assert_eq!(status, 200, "{token}");
    assert_eq!(
        me(&token).0,
        200,
        "verified at creation: a verified primary at the first sign-in"
    );

    let (status, _) = local(
        "/local/admin-create-user",
        json!({"email": "unverified@example.com", "emailVerified": false}),
    );
    assert_eq!(status, 201);
    let (status, token) = local("/local/token", json!({"email": "unverified@example.com"}));
    assert_eq!(status, 200, "{token}");
    assert_eq!(me(&token).0, 404, "no profile from an address Cognito has not verified");
    assert_eq!(
        local("/local/admin-verify-email", json!({"email": "unverified@example.com"})).0,
        200
    );
    let (status, token) = local("/local/token", json!({"email": "unverified@example.com"}));
    assert_eq!(status, 200, "{token}");
    let (status, account) = me(&token);
    assert_eq!(status, 200, "{account}");
    assert_eq!(account["emails"][0]["isVerified"], true);

    // The settings page and the outbox in headless Chromium, the whole tour,
    // on this same stack (a second one would cost minutes).
    crate::browser::tour(&browser, &api);

    // The contract, property-tested against this same stack, then the invariant
    // checker over its table.
    crate::schemathesis::run(&api, dev.ports[2], TABLE);

    // The SCIM RFCs' conformance suite (python-scim's scim2-tester, not this
    // project's), on a fresh organization of this same stack: 0 failures.
    let conformance = Command::new(workspace_root().join("scripts/scim-conformance"))
        .env("API", &api)
        .output()
        .expect("scripts/scim-conformance runs");
    let report = String::from_utf8_lossy(&conformance.stdout);
    eprintln!("{report}");
    assert!(
        conformance.status.success(),
        "scim2-tester found failures (make scim-conformance beside make dev repeats it):\n{report}\n{}",
        String::from_utf8_lossy(&conformance.stderr)
    );

    dev.interrupt();

    // Data survives a restart.
    // Within the suite's own time limit, so that a slow restart says where it stands.
    let dev = Dev::start(&state, Duration::from_secs(600));
    let (status, again) = get(
        &format!("{}/admin/users?email=grace%40example.com", dev.api()),
        Some(&admin),
    );
    assert_eq!(status, 200, "{again}");
    dev.interrupt();
}
