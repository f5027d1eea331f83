//! `make bench`: cold start, warm latency, instructions, DynamoDB requests,
//! size, memory and scale of the functions, each beside its floor, and the
//! migration trigger's legacy password checks per hash format, in one run.
//!
//! The bench is its own Lambda Runtime API: it spawns each function's binary
//! as Lambda spawns an execution environment, against DynamoDB Local behind a
//! loopback proxy (plain HTTP, or TLS with a CA of its own). Beside get-profile
//! it runs the two Rust floors (`tools/bench/floors`: a lambda_runtime
//! hello-world, and one GetItem with a client from `aws_config::load_from_env`)
//! and the same GetItem in Python 3.11 + boto3 under awslambdaric. Only ratios
//! are stable on a shared machine, so every comparison is made in the same run.
//!
//! `--smoke` runs every section with the debug binaries the tests built, a few
//! iterations and no thresholds, without Python or valgrind: it is part of
//! `make test`. Never a timed test: figures are reported, not asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

mod callgrind;
mod capacity;
mod charts;
mod cost;
mod cpu;
mod emf;
mod event_delay;
mod hashes;
mod machine;
mod plan;
mod programs;
mod proxy;
mod reconcile_sim;
mod report;
mod requests;
mod runtime;
mod scale;
mod sizes;
mod stats;
mod tuning;
mod user;

use std::future::Future;
use std::path::PathBuf;

use clap::Parser;
use integration_tests::workspace_root;
use integration_tests::{ddb, events};
use serde_json::{Value, json};
use user_service::Store;
use user_service::domain::{EmailAddress, Timestamp, UserId};

use crate::callgrind::{callgrind, callgrind_cold, cold_cpu_ms};
use crate::plan::{BENCH_CODES_PER_USER, Plan};
use crate::programs::{FLOOR_HELLO, FLOOR_SDK, GET_PROFILE_AT_INIT, PYTHON, check_answer, profile_event};
use crate::proxy::{Proxy, Tls};
use crate::report::Report;
use crate::runtime::Environment;
use crate::stats::Sample;
use crate::user::{ADA, ADA_EMAIL, seed_user, with_sub};

#[derive(Debug, Parser)]
#[command(about = "Cold start, warm latency, requests, size, memory and scale of the functions")]
struct Args {
    /// The test command's smoke: debug binaries, a few iterations, no Python, no valgrind.
    #[arg(long)]
    smoke: bool,
    /// Where the report and charts go (git-ignored).
    #[arg(long, default_value = "bench-report")]
    out: PathBuf,
    /// Spawns per program for the cold start.
    #[arg(long)]
    spawns: Option<usize>,
    /// Warm invocations per function.
    #[arg(long)]
    warm: Option<usize>,
    /// Users in the large table of the scale section.
    #[arg(long)]
    users: Option<usize>,
    /// Skip building (the binaries are already built with the release profile).
    #[arg(long)]
    no_build: bool,
    /// Keep Nagle's algorithm on the Runtime API's sockets (Lambda's has it off),
    /// to see what an emulator that leaves it on adds to every invocation.
    #[arg(long)]
    nagle: bool,
    /// Only these sections (cold, warm, tuning, callgrind, requests, hashes, size, memory, scale, metrics, reconcile, events, cost).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

fn build(plan: &Plan) {
    let root = workspace_root();
    let names = sizes::names();
    let mut cargo = std::process::Command::new("cargo");
    cargo.current_dir(&root).arg("build");
    if !plan.smoke {
        cargo.arg("--release");
    }
    for name in names.iter().chain([&emf::PROBE, &hashes::PROBE]) {
        cargo.args(["-p", name]);
    }
    println!(
        "bench: building {} binaries{}",
        names.len(),
        if plan.smoke { "" } else { " (release profile)" }
    );
    assert!(cargo.status().unwrap().success(), "the build failed");
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    runtime::NAGLE.store(args.nagle, std::sync::atomic::Ordering::Relaxed);
    let smoke = args.smoke;
    let root = workspace_root();
    let plan = Plan {
        smoke,
        spawns: args.spawns.unwrap_or(if smoke { 3 } else { 30 }),
        warm: args.warm.unwrap_or(if smoke { 20 } else { 1000 }),
        users: args.users.unwrap_or(if smoke { 500 } else { 100_000 }),
        bin_dir: root.join("target").join(if smoke { "debug" } else { "release" }),
        out: if args.out.is_absolute() {
            args.out.clone()
        } else {
            root.join(&args.out)
        },
        only: args.only.clone(),
    };
    std::fs::create_dir_all(&plan.out).unwrap();
    // Arithmetic, not a measurement: it needs no binary and no database, so
    // `--only reconcile` ends after it.
    let reconcile = plan.runs("reconcile").then(reconcile_sim::section);
    if !plan.only.is_empty() && plan.only.iter().all(|s| s == "reconcile") {
        let mut report = Report::new(&plan);
        report.reconcile(reconcile.unwrap_or_default());
        println!("bench: report in {}", report.write().unwrap().display());
        return;
    }
    // The cost model is arithmetic too: with the committed measurements it
    // needs no binary and no database either.
    if !plan.only.is_empty() && plan.only.iter().all(|s| s == "cost" || s == "reconcile") {
        let mut report = Report::new(&plan);
        report.reconcile(reconcile.unwrap_or_default());
        report.cost(cost::section(&cost::Inputs::Committed).unwrap());
        println!("bench: report in {}", report.write().unwrap().display());
        return;
    }
    if !args.no_build {
        build(&plan);
    }
    let mut report = Report::new(&plan);
    report.reconcile(reconcile.unwrap_or_default());

    let store = ddb::store_with(|c| c.max_codes_per_user = BENCH_CODES_PER_USER).await;
    let table = store.config().table_name.clone();
    seed_user(&store, ADA, ADA_EMAIL).await;
    let upstream = ddb::endpoint();
    let tls = Tls::new(&plan.out).unwrap();
    let plain = Proxy::start(upstream.clone(), None).await.unwrap();
    let secure = Proxy::start(upstream.clone(), Some(&tls)).await.unwrap();

    let mut programs = vec![FLOOR_HELLO, FLOOR_SDK, "get-profile"];
    if !smoke {
        programs.push(PYTHON);
    }

    if plan.runs("cold") {
        let mut cold_programs = programs.clone();
        cold_programs.insert(3, GET_PROFILE_AT_INIT);
        for (transport, proxy, ca) in [("http", &plain, None), ("https", &secure, Some(tls.ca_file.as_path()))] {
            for program in &cold_programs {
                let launch = match *program {
                    PYTHON => plan.python(&table, &proxy.url, ca),
                    GET_PROFILE_AT_INIT => {
                        let mut launch = plan.launch("get-profile", &table, &proxy.url, ca);
                        launch.label = GET_PROFILE_AT_INIT.to_owned();
                        launch.env(user_service::config::DYNAMODB_CONNECT_AT_INIT.name(), "true")
                    }
                    name => plan.launch(name, &table, &proxy.url, ca),
                };
                let event = profile_event(program, ADA);
                let mut init = Vec::new();
                let mut first = Vec::new();
                let mut total = Vec::new();
                for _ in 0..plan.spawns {
                    let env = Environment::start(&launch).await.unwrap();
                    let (took, answer) = env.invoke(&event).await.unwrap();
                    check_answer(program, &answer).unwrap();
                    init.push(env.init);
                    first.push(took);
                    total.push(env.init + took);
                    env.terminate().await;
                }
                println!(
                    "bench: cold {transport} {program}: {}",
                    Sample::new(total.clone()).p50_ms()
                );
                report.cold(
                    transport,
                    program,
                    Sample::new(init),
                    Sample::new(first),
                    Sample::new(total),
                );
            }
        }
    }
    // Written after every section: a long section later loses nothing.
    report.write().unwrap();

    if plan.runs("tuning") {
        let figures = tuning::measure(&plan, &store, &secure, &tls).await;
        let json = serde_json::to_string_pretty(&figures).unwrap();
        std::fs::write(plan.out.join("tuning.json"), json + "\n").unwrap();
        let rates = cost::lambda_rates().unwrap();
        report.tuning(tuning::render(&figures, &rates, &plan.out));
    }
    report.write().unwrap();

    if plan.runs("warm") || plan.runs("memory") {
        warm(&plan, &mut report, &store, &plain, &programs).await;
    }
    report.write().unwrap();

    if plan.runs("callgrind") && !smoke {
        for program in [FLOOR_HELLO, FLOOR_SDK, "get-profile"] {
            let event = profile_event(program, ADA);
            let warm = callgrind(&plan, &plan.launch(program, &table, &plain.url, None), &event).await;
            let over_tls = plan.launch(program, &table, &secure.url, Some(tls.ca_file.as_path()));
            let cold = callgrind_cold(&plan, &over_tls, &event).await;
            let cpu = cold_cpu_ms(&over_tls, &event, 31).await;
            println!(
                "bench: callgrind {program}: {warm} instructions per warm invocation, {cold} per cold start, {cpu:.2} ms of CPU per cold start"
            );
            report.instructions(program, warm, cold, cpu);
        }
    }
    report.write().unwrap();

    if plan.runs("requests") {
        let (rows, beside) = requests::count(&plan, &plain).await;
        report.requests(rows, beside);
    }
    report.write().unwrap();

    if plan.runs("hashes") {
        let rows = hashes::run(&plan, &plain).await;
        report.hashes(rows);
    }
    report.write().unwrap();

    if plan.runs("metrics") {
        let rows = emf::measure(&plan);
        for row in &rows {
            println!(
                "bench: metrics, {}: {} bytes, {:.0} ns{}",
                row.invocation,
                row.bytes,
                row.ns,
                row.instructions
                    .map(|i| format!(", {i} instructions"))
                    .unwrap_or_default()
            );
        }
        report.metrics(rows, emf::pairs());
    }
    report.write().unwrap();

    if plan.runs("scale") {
        let rows = scale::run(&plan, &plain).await;
        report.scale(rows);
    }
    report.write().unwrap();

    if plan.runs("events") {
        report.events(event_delay::section(&plan).await);
    }

    if plan.runs("size") {
        let rows = sizes::measure(&plan, !args.no_build);
        report.sizes(rows);
    }

    if plan.runs("cost") {
        let section = cost::section(&report.cost_inputs()).unwrap();
        report.cost(section);
    }

    let written = report.write().unwrap();
    println!("bench: report in {}", written.display());
    drop((plain, secure));
}

/// Warm latency of get-profile, get-account and an add/remove cycle, each beside
/// the same operation made in-process with the store; and memory after them.
async fn warm(plan: &Plan, report: &mut Report, store: &Store, proxy: &Proxy, programs: &[&str]) {
    let table = &store.config().table_name;
    // get-profile beside the floors and Python, each in one environment.
    for program in programs {
        let launch = match *program {
            PYTHON => plan.python(table, &proxy.url, None),
            name => plan.launch(name, table, &proxy.url, None),
        };
        let event = profile_event(program, ADA);
        let env = Environment::start(&launch).await.unwrap();
        let mut times = Vec::with_capacity(plan.warm);
        let mut rss_at_100 = None;
        for i in 0..=plan.warm {
            let (took, answer) = env.invoke(&event).await.unwrap();
            check_answer(program, &answer).unwrap();
            if i > 0 {
                times.push(took);
            }
            if i == 100.min(plan.warm / 10) {
                rss_at_100 = env.memory_kib("VmRSS:");
            }
        }
        let rss_end = env.memory_kib("VmRSS:");
        let peak = env.memory_kib("VmHWM:");
        report.warm("get-profile", program, Sample::new(times));
        report.memory(program, peak, rss_at_100, rss_end);
        env.terminate().await;
    }
    // The same GetItem, made in-process.
    let user = UserId::parse(ADA).unwrap();
    let direct = proxied_store(store, &proxy.url);
    let times = in_process(plan.warm, |_| direct.get_profile(&user)).await;
    report.warm("get-profile", "in-process store", times);

    // get-account.
    let launch = plan.launch("get-account", table, &proxy.url, None);
    let env = Environment::start(&launch).await.unwrap();
    let event = with_sub(events::load("get-account"), ADA);
    let mut times = Vec::new();
    for i in 0..=plan.warm {
        let (took, answer) = env.invoke(&event).await.unwrap();
        assert_eq!(answer["statusCode"], 200, "{answer}");
        if i > 0 {
            times.push(took);
        }
    }
    report.warm("get-account", "get-account", Sample::new(times));
    env.terminate().await;
    let times = in_process(plan.warm, |_| direct.get_account(&user)).await;
    report.warm("get-account", "in-process store", times);

    // add-email then remove-email, in turns, so the account never fills up.
    let add = plan.launch("add-email", table, &proxy.url, None);
    let remove = plan.launch("remove-email", table, &proxy.url, None);
    let (add, remove) = (
        Environment::start(&add).await.unwrap(),
        Environment::start(&remove).await.unwrap(),
    );
    let add_event = with_sub(events::load("add-email"), ADA);
    let remove_event = with_sub(events::load("remove-email"), ADA);
    let mut cycles = Vec::new();
    for i in 0..=plan.warm {
        let mut e = add_event.clone();
        e["body"] = json!(json!({ "email": format!("bench{i}@example.com") }).to_string());
        let (added_in, added) = add.invoke(&e).await.unwrap();
        assert_eq!(added["statusCode"], 201, "{added}");
        let id: Value = serde_json::from_str(added["body"].as_str().unwrap()).unwrap();
        let mut e = remove_event.clone();
        e["pathParameters"]["emailId"] = id["emailId"].clone();
        let (removed_in, removed) = remove.invoke(&e).await.unwrap();
        assert_eq!(removed["statusCode"], 204, "{removed}");
        if i > 0 {
            cycles.push(added_in + removed_in);
        }
    }
    report.warm("add+remove email", "add-email + remove-email", Sample::new(cycles));
    add.terminate().await;
    remove.terminate().await;
    let cycles = in_process(plan.warm, |i| {
        let (direct, user) = (&direct, &user);
        async move {
            let email = EmailAddress::parse(&format!("direct{i}@example.com")).unwrap();
            let code = user_service::verification::VerificationCode::generate().unwrap();
            let added = direct.add_email(user, &email, &code, Timestamp::now()).await?;
            direct.remove_email(user, added.email_id, Timestamp::now()).await
        }
    })
    .await;
    report.warm("add+remove email", "in-process store", cycles);
}

/// `rounds` timings of `call`, after one untimed call (its connection).
async fn in_process<T, E, F>(rounds: usize, mut call: impl FnMut(usize) -> F) -> Sample
where
    E: std::fmt::Debug,
    F: Future<Output = Result<T, E>>,
{
    let mut times = Vec::with_capacity(rounds);
    for i in 0..=rounds {
        let start = tokio::time::Instant::now();
        call(i).await.unwrap();
        if i > 0 {
            times.push(start.elapsed());
        }
    }
    Sample::new(times)
}

/// The same store, reached through the proxy.
pub(crate) fn proxied_store(store: &Store, url: &str) -> Store {
    let client = aws_sdk_dynamodb::Client::from_conf(ddb::sdk_config_builder().endpoint_url(url).build());
    Store::new(client, store.config().clone()).with_key(ddb::test_key())
}
