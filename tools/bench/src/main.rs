//! `make bench`: size, cold start, latency and memory of the release binaries
//! (the deployed profile: LTO, one codegen unit, stripped), each started once
//! behind `cargo lambda watch --only-lambda-apis` on 127.0.0.1 against DynamoDB
//! Local, invoked through the Lambda invoke endpoint with the events in events/.
//!
//! Figures are for this machine and DynamoDB Local; they compare builds and
//! changes, they are not AWS numbers. Never part of `make test`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use integration_tests::lambda::{Build, Watch, function_env, workspace_root};
use integration_tests::{ddb, events};
use local_api::invoke::Lambda;
use serde_json::{Value, json};
use user_service::catalog;

const ROUNDS: usize = 100;

struct Bench {
    /// Kept for its lifetime: dropping it stops the functions.
    _watch: Watch,
    lambda: Lambda,
}

impl Bench {
    fn start(table: String) -> Self {
        let watch = Watch::start_with(&environment(table), Build::Release);
        let lambda = Lambda::new(watch.port);
        Self { _watch: watch, lambda }
    }

    async fn invoke(&self, function: &str, event: &Value) -> (Duration, Value) {
        let start = Instant::now();
        let body = self
            .lambda
            .invoke(function, event)
            .await
            .unwrap_or_else(|e| panic!("{function}: {e}"));
        (start.elapsed(), body)
    }

    /// First invocation of a fresh process (its init ran at start; the first request
    /// pays the SDK's lazy set-up), then `rounds` warm calls.
    async fn measure(&self, function: &str, mut event_for: impl FnMut(usize, &Value) -> Value) -> Sample {
        let mut last = Value::Null;
        let (cold, body) = self.invoke(function, &event_for(0, &last)).await;
        last = body;
        let mut warm = Vec::with_capacity(ROUNDS);
        for i in 1..=ROUNDS {
            let (took, body) = self.invoke(function, &event_for(i, &last)).await;
            warm.push(took);
            last = body;
        }
        warm.sort();
        Sample { cold, warm, last }
    }
}

struct Sample {
    cold: Duration,
    warm: Vec<Duration>,
    last: Value,
}

impl Sample {
    fn pct(&self, p: f64) -> Duration {
        let i = ((self.warm.len() as f64 - 1.0) * p).round() as usize;
        self.warm[i]
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// Peak resident memory (VmHWM) of the running process of `binary`, in KiB.
fn peak_rss_kib(binary: &str) -> Option<u64> {
    let suffix = format!("target/release/{binary}");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if String::from_utf8_lossy(first).ends_with(&suffix) {
            let status = std::fs::read_to_string(entry.path().join("status")).ok()?;
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            return line.split_whitespace().nth(1)?.parse().ok();
        }
    }
    None
}

fn set_body(event: &mut Value, body: Value) {
    event["body"] = json!(body.to_string());
}

fn environment(table: String) -> Vec<(&'static str, String)> {
    function_env(table, &[("MAX_EMAILS_PER_USER", "49"), ("RUST_LOG", "warn")])
}

#[tokio::main]
async fn main() {
    // A first round builds the release binaries and runs every function once, on a
    // scratch table; the measured round then starts fresh processes.
    let build = Instant::now();
    {
        let scratch = Bench::start(ddb::fresh_table(&ddb::client()).await);
        for f in catalog::FUNCTIONS {
            // Any answer will do: this round only starts the processes.
            let _ = scratch.lambda.invoke(f.name, &events::load(f.name)).await;
        }
    }
    println!(
        "release build and warm-up of {} functions: {:.0} s",
        catalog::FUNCTIONS.len(),
        build.elapsed().as_secs_f64()
    );
    let table = ddb::fresh_table(&ddb::client()).await;
    let bench = Bench::start(table);

    let mut results: BTreeMap<&str, Sample> = BTreeMap::new();
    let confirm = events::load("post-confirmation");
    results.insert(
        "post-confirmation",
        bench.measure("post-confirmation", |_, _| confirm.clone()).await,
    );
    let admin_confirm = {
        let mut e = confirm.clone();
        e["userName"] = json!("9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c");
        e["request"]["userAttributes"]["sub"] = e["userName"].clone();
        e["request"]["userAttributes"]["email"] = json!("grace@example.com");
        e
    };
    bench.invoke("post-confirmation", &admin_confirm).await;
    let mut free = events::load("pre-sign-up");
    free["request"]["userAttributes"]["email"] = json!("free@example.com");
    results.insert("pre-sign-up", bench.measure("pre-sign-up", |_, _| free.clone()).await);

    for name in [
        "get-profile",
        "get-account",
        "list-emails",
        "check-email",
        "find-user-by-email",
    ] {
        let event = events::load(name);
        results.insert(name, bench.measure(name, |_, _| event.clone()).await);
    }

    let patch = events::load("update-profile");
    let sample = bench
        .measure("update-profile", |i, _| {
            let mut e = patch.clone();
            e["headers"]["if-match"] = json!(format!("\"{}\"", i + 1));
            set_body(&mut e, json!({ "firstName": format!("Ada{i}") }));
            e
        })
        .await;
    assert_eq!(sample.last["statusCode"], 200, "{}", sample.last);
    results.insert("update-profile", sample);

    // Add and remove in turns, so the account never fills up.
    let add = events::load("add-email");
    let remove = events::load("remove-email");
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    for i in 0..=ROUNDS {
        let mut e = add.clone();
        set_body(&mut e, json!({ "email": format!("bench{i}@example.com") }));
        let (took, added) = bench.invoke("add-email", &e).await;
        assert_eq!(added["statusCode"], 201, "{added}");
        adds.push(took);
        let id = serde_json::from_str::<Value>(added["body"].as_str().unwrap()).unwrap()["emailId"].clone();
        let mut e = remove.clone();
        e["pathParameters"]["emailId"] = id;
        let (took, removed) = bench.invoke("remove-email", &e).await;
        assert_eq!(removed["statusCode"], 204, "{removed}");
        removes.push(took);
    }
    for (name, mut times) in [("add-email", adds), ("remove-email", removes)] {
        let cold = times.remove(0);
        times.sort();
        results.insert(
            name,
            Sample {
                cold,
                warm: times,
                last: Value::Null,
            },
        );
    }

    println!();
    println!("| function | cold first call ms | warm p50 ms | warm p95 ms | warm max ms | peak RSS MiB | binary MiB |");
    println!("|---|---|---|---|---|---|---|");
    for (name, s) in &results {
        let binary = name.split(' ').next().unwrap_or(name);
        let size = std::fs::metadata(workspace_root().join("target/release").join(binary))
            .map(|m| m.len())
            .unwrap_or(0);
        let rss = peak_rss_kib(binary)
            .map(|k| format!("{:.1}", k as f64 / 1024.0))
            .unwrap_or_else(|| "?".into());
        println!(
            "| {name} | {} | {} | {} | {} | {rss} | {:.2} |",
            ms(s.cold),
            ms(s.pct(0.5)),
            ms(s.pct(0.95)),
            ms(*s.warm.last().unwrap()),
            size as f64 / 1_048_576.0
        );
    }
    println!();
    println!(
        "{ROUNDS} warm calls each, through cargo lambda watch's invoke endpoint, against DynamoDB Local on this machine."
    );
    println!("Binary sizes: release profile (LTO, codegen-units=1, strip) for the host architecture.");
}
