//! Schemathesis against the contract and the running local API of `make dev`:
//! valid and invalid requests for every operation, with an admin's token. No
//! answer may be a 5xx, break its schema, carry an undocumented status or
//! header, or accept invalid data; afterwards the table must keep every rule.
//! `SCHEMATHESIS_MAX_EXAMPLES` sets the depth (10 per operation by default;
//! e.g. 500 for the long run). Figures go to target/reliability/contract.json.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use integration_tests::workspace_root;
use serde_json::{Value, json};

const DEFAULT_MAX_EXAMPLES: u32 = 10;

fn schemathesis() -> PathBuf {
    let bin = workspace_root().join(".venv/bin/schemathesis");
    assert!(
        bin.exists(),
        "schemathesis is not in .venv: `make tools` installs it (tools/requirements.txt)"
    );
    bin
}

fn max_examples() -> u32 {
    std::env::var("SCHEMATHESIS_MAX_EXAMPLES")
        .ok()
        .map(|v| v.parse().expect("SCHEMATHESIS_MAX_EXAMPLES is a number"))
        .unwrap_or(DEFAULT_MAX_EXAMPLES)
}

fn post(url: &str, body: &Value) -> (u16, Value) {
    let response = reqwest::blocking::Client::new().post(url).json(body).send().unwrap();
    (response.status().as_u16(), response.json().unwrap_or(Value::Null))
}

/// The local API serves the contract without a token, as openapi.yaml says it.
fn assert_served(api: &str) -> Value {
    let response = reqwest::blocking::get(format!("{api}/openapi.json")).expect("the local API answers");
    assert_eq!(response.status().as_u16(), 200, "GET /openapi.json needs no token");
    let served: Value = response.json().expect("JSON");
    let text = std::fs::read_to_string(workspace_root().join("openapi.yaml")).unwrap();
    let document: Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(served, document, "the local API serves openapi.yaml as JSON");
    served
}

/// The access token of a new user in the admin group (with an active profile).
fn admin_token(api: &str, email: &str) -> String {
    let (status, user) = post(&format!("{api}/local/sign-up"), &json!({"email": email}));
    assert_eq!(status, 201, "{user}");
    let (status, signed_in) = post(
        &format!("{api}/local/token"),
        &json!({"email": email, "groups": ["admin"]}),
    );
    assert_eq!(status, 200, "{signed_in}");
    signed_in["token"].as_str().expect("a token").to_owned()
}

/// Runs schemathesis against `api`, then the invariant checker against the
/// table of the dev stack's DynamoDB Local.
/// A SCIM token of a new organization `token`'s user makes, through the API.
fn scim_token(api: &str, token: &str) -> String {
    let client = reqwest::blocking::Client::new();
    let call = |path: &str, body: Value| {
        let response = client
            .post(format!("{api}{path}"))
            .bearer_auth(token)
            .json(&body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().unwrap_or(Value::Null);
        assert_eq!(status, 201, "POST {path}: {body}");
        body
    };
    let org = call(
        "/organizations",
        json!({ "name": "Schemathesis", "slug": "schemathesis" }),
    );
    let org = org["orgId"].as_str().expect("an orgId").to_owned();
    let made = call(
        &format!("/organizations/{org}/scim-tokens"),
        json!({ "name": "schemathesis" }),
    );
    made["token"].as_str().expect("a token").to_owned()
}

pub(crate) fn run(api: &str, ddb_port: u16, table: &str) {
    let bin = schemathesis();
    let document = assert_served(api);

    let user = admin_token(api, "schemathesis@example.com");
    let admin = admin_token(api, "schemathesis-admin@example.com");
    let directory = scim_token(api, &user);

    let out = workspace_root().join("target/reliability");
    std::fs::create_dir_all(&out).unwrap();
    let max_examples = max_examples();
    let started = Instant::now();
    // Schemathesis learns ids from answers and from the token (its `sub` fills
    // `userId`), so an admin calling every route soon suspends or deletes its
    // own account (which answers as documented) and then meets only 403s and
    // 404s. So: the user routes first (as an admin, who is a user too); DELETE
    // /me next, with GET /me for its ETag; the admin routes last, with a second
    // admin, finding the walkthrough's user from the parameter's example.
    // The SCIM routes take no access token: their own pass, with a SCIM
    // token of an organization the first user made.
    let passes: [(&str, &str, &[&str]); 4] = [
        (
            "user",
            &user,
            &[
                "--exclude-operation-id",
                "deleteAccount",
                "--exclude-operation-id",
                "setUserStatus",
                "--exclude-path-regex",
                "^/scim/",
            ],
        ),
        (
            "delete-account",
            &user,
            &[
                "--include-operation-id",
                "getProfile",
                "--include-operation-id",
                "deleteAccount",
            ],
        ),
        (
            "admin",
            &admin,
            &[
                "--include-operation-id",
                "findUserByEmail",
                "--include-operation-id",
                "setUserStatus",
            ],
        ),
        ("directory", &directory, &["--include-path-regex", "^/scim/"]),
    ];
    let mut runs = Vec::new();
    for (name, token, filter) in passes {
        let report = out.join(format!("schemathesis-{name}.json"));
        let events = out.join(format!("schemathesis-{name}.ndjson"));
        let _ = std::fs::remove_file(&report);
        let _ = std::fs::remove_file(&events);
        let output = Command::new(&bin)
            .arg("--config-file")
            .arg(workspace_root().join("schemathesis.toml"))
            .args(["--no-color", "run"])
            .arg(format!("{api}/openapi.json"))
            .args(["--url", api])
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--max-examples", &max_examples.to_string()])
            .args(filter)
            // A busy machine (or a debug build) may be slow; speed is not what this
            // tests. One worker: hypothesis's lambda descriptions (ast.parse) are
            // not thread-safe on Python 3.11 and fail a run now and then.
            .args(["--request-timeout", "120", "--workers", "1"])
            // No example database: hypothesis would write .hypothesis/ into the
            // repository, and cargo lambda watch would rebuild every function
            // mid-run (requests then wait minutes on a loaded machine).
            .args(["--generation-database", "none"])
            .args(["--report", "json,ndjson", "--report-json-path"])
            .arg(&report)
            .arg("--report-ndjson-path")
            .arg(&events)
            // Whatever else it writes stays out of the watched tree.
            .current_dir(&out)
            .output()
            .expect("schemathesis runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let summary: Value = std::fs::read_to_string(&report)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        runs.push((name, output, stdout, summary, tally(&events)));
    }
    let wall = started.elapsed();

    let documented: BTreeSet<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|k| k.as_str() != "parameters")
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    let operations = documented.len();
    let sum = |pointer: &str| -> u64 {
        runs.iter()
            .filter_map(|(_, _, _, s, _)| s.pointer(pointer)?.as_u64())
            .sum()
    };
    let mut tallied = Tally::default();
    for (_, _, _, _, tally) in &runs {
        tallied.checks_run += tally.checks_run;
        tallied.checks_failed += tally.checks_failed;
        for (status, count) in &tally.statuses {
            *tallied.statuses.entry(*status).or_default() += count;
        }
        tallied.answered.extend(tally.answered.iter().cloned());
    }
    let figures = json!({
        "suite": "contract",
        "schemathesis": runs[0].3["schemathesis_version"],
        // As printed: the seeds are 128-bit, beyond a JSON number's precision.
        "seeds": runs.iter().map(|(_, _, stdout, _, _)| seed(stdout)).collect::<Vec<_>>(),
        "max_examples_per_operation": max_examples,
        "operations_documented": operations,
        // Across the four passes: getProfile and findUserByEmail run twice.
        "operation_runs": sum("/operations/tested"),
        "test_cases_generated": sum("/test_cases/generated"),
        "test_cases_with_failures": sum("/test_cases/with_failures"),
        "unique_failures": sum("/test_cases/unique_failures"),
        "errored": sum("/test_cases/errored"),
        "checks_run": tallied.checks_run,
        "checks_failed": tallied.checks_failed,
        "responses_by_status": tallied.statuses,
        "wall_seconds": (wall.as_secs_f64() * 10.0).round() / 10.0,
    });
    std::fs::write(
        out.join("contract.json"),
        serde_json::to_string_pretty(&figures).unwrap(),
    )
    .unwrap();
    eprintln!(
        "contract: schemathesis ran {} operation tests over {} operations, {} test cases ({} examples per operation), {} checks, {} failures, {:.0} s",
        figures["operation_runs"],
        operations,
        figures["test_cases_generated"],
        max_examples,
        figures["checks_run"],
        figures["unique_failures"],
        wall.as_secs_f64()
    );
    for (name, output, stdout, _, _) in &runs {
        assert!(
            output.status.success(),
            "schemathesis ({name} pass) found disagreements with openapi.yaml:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let missing: Vec<&String> = documented.difference(&tallied.answered).collect();
    assert!(missing.is_empty(), "schemathesis never called {missing:?}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = aws_sdk_dynamodb::Client::from_conf(
            integration_tests::ddb::sdk_config_builder()
                .endpoint_url(format!("http://127.0.0.1:{ddb_port}"))
                .build(),
        );
        let violations = integration_tests::invariants::violations(&client, table).await;
        assert!(
            violations.is_empty(),
            "the table broke its rules after schemathesis:\n{}",
            violations.join("\n")
        );
    });
}

/// The seed schemathesis printed (`Seed: <n>`), to replay a run with `--seed`.
fn seed(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("Seed: "))
        .map(str::to_owned)
}

#[derive(Default)]
struct Tally {
    checks_run: u64,
    checks_failed: u64,
    statuses: BTreeMap<u16, u64>,
    /// Operations that got at least one answer (`GET /me`).
    answered: BTreeSet<String>,
}

/// Checks run and failed, and responses by status, from schemathesis's event
/// stream (each finished scenario records its checks and its interactions).
fn tally(events: &Path) -> Tally {
    let mut tally = Tally::default();
    let text = std::fs::read_to_string(events).unwrap_or_default();
    for event in text.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
        let recorder = &event["ScenarioFinished"]["recorder"];
        for checks in recorder["checks"].as_object().into_iter().flat_map(|m| m.values()) {
            for check in checks.as_array().into_iter().flatten() {
                tally.checks_run += 1;
                if check["status"] == "failure" {
                    tally.checks_failed += 1;
                }
            }
        }
        for interaction in recorder["interactions"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
        {
            if let Some(status) = interaction["response"]["status_code"].as_u64() {
                *tally.statuses.entry(status as u16).or_default() += 1;
                if let Some(label) = recorder["label"].as_str() {
                    tally.answered.insert(label.to_owned());
                }
            }
        }
    }
    tally
}
