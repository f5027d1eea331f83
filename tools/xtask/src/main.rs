//! `cargo xtask template` writes the parts of template.yaml and samconfig.toml
//! that follow from the function catalog and the business metrics (the functions,
//! the alarms, the dashboard, the watch list); `cargo xtask docs` writes the
//! docs' tables that follow from the catalog, the configuration and the
//! template's parameters. `--check` fails when they are stale, and `make test`
//! runs both. Everything outside the marked regions is hand-written.

mod alarms;
mod crates;
mod dashboard;
mod docs;
mod regions;
mod settings;
mod template;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use user_service::address_policy::Canonicalization;
use user_service::catalog::FUNCTIONS;
use xtask::{backfill, canonicalize};

use crate::regions::{Region, RegionError};

#[derive(Parser)]
#[command(about = "Project tasks that follow from the function catalog")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Write template.yaml's per-function blocks, alarms and dashboard, and
    /// samconfig.toml's watch list.
    Template {
        /// Change nothing; fail, with what differs, when a file is not current.
        #[arg(long)]
        check: bool,
    },
    /// Write the docs' generated tables (docs/api.md's routes,
    /// docs/configuration.md's variables and parameters, docs/events.md's
    /// catalogue) and the events' JSON Schemas (schemas/events/).
    Docs {
        /// Change nothing; fail, with what differs, when a page is not current.
        #[arg(long)]
        check: bool,
    },
    /// Move a live table to another EMAIL_CANONICALIZATION (docs/address-policy.md):
    /// survey the email records, refuse while any collide, then move each
    /// record's claim and GSI1 key, paced. Safe to stop and run again.
    Canonicalize(Canonicalize),
    /// File the profiles written before GSI2 (the admin list) existed: a
    /// parallel scan for profiles without their GSI2 keys, one conditioned
    /// write each, paced (docs/deploy.md). Safe to stop and run again.
    BackfillUserIndex(BackfillUserIndex),
    /// Publish again the table stream records publish-events gave up on:
    /// reads each message of its on-failure queue, the records of its range
    /// from the stream (within its 24 hours), and puts their events on the bus
    /// with the ids they first had (docs/events.md). Safe to run again.
    ReplayEvents(ReplayEvents),
}

#[derive(clap::Args)]
struct ReplayEvents {
    /// publish-events' on-failure queue: the stack's EventFailureQueueUrl output.
    #[arg(long)]
    queue_url: String,
    /// The table (the stack's TableName output): a message naming another
    /// stream than its own is kept, never read.
    #[arg(long, env = "TABLE_NAME")]
    table: String,
    /// The stack's bus: its EventBusName output.
    #[arg(long)]
    event_bus: String,
    /// The events' source: the stack's EventSource output.
    #[arg(long)]
    event_source: String,
    /// Add the address to email.* events: only where the stack has EventsIncludeAddresses=true.
    #[arg(long)]
    include_addresses: bool,
    /// Delete a message whose range holds a record that cannot be read, once
    /// the rest is published (by default it stays on the queue).
    #[arg(long)]
    drop_unreadable: bool,
}

#[derive(clap::Args)]
struct BackfillUserIndex {
    /// The table; defaults to TABLE_NAME. The endpoint and credentials are the
    /// standard AWS environment (AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local).
    #[arg(long, env = "TABLE_NAME")]
    table: String,
    /// Profiles filed a second at most: each is one UpdateItem of the profile
    /// (1 write unit) and its new GSI2 entry (1 more); 32 run at once.
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
    /// Segments of the parallel scan.
    #[arg(long, default_value_t = 4)]
    segments: u32,
}

#[derive(clap::Args)]
struct Canonicalize {
    /// The policy to move to: the EMAIL_CANONICALIZATION the stack will be deployed with.
    #[arg(long, value_parser = parse_canonicalization)]
    to: Canonicalization,
    /// Only survey: list the collisions (exit 1 if any) and count the records to move.
    #[arg(long)]
    dry_run: bool,
    /// The table; defaults to TABLE_NAME. The endpoint and credentials are the
    /// standard AWS environment (AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local).
    #[arg(long, env = "TABLE_NAME")]
    table: String,
    /// Moves a second at most: each is one transaction of 3 items (6 write
    /// units) after one read; 32 run at once, so about 1,000 a second is the most.
    #[arg(long, default_value_t = 50.0)]
    rate: f64,
    /// Move every record that collides with nothing, list the collisions and
    /// exit 1, instead of refusing to start: for collisions that take long to
    /// resolve (or that someone keeps making) while the table is moving.
    #[arg(long)]
    skip_collisions: bool,
    /// Segments of the survey's parallel scan.
    #[arg(long, default_value_t = 4)]
    segments: u32,
    /// Print the addresses of colliding records (personal data: off by default).
    #[arg(long)]
    show_addresses: bool,
}

fn parse_canonicalization(raw: &str) -> Result<Canonicalization, String> {
    Canonicalization::parse(raw).map_err(|e| e.0.to_owned())
}

fn workspace_root() -> PathBuf {
    // tools/xtask → the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every generated region, with its content rendered from the catalog now.
fn generated() -> Vec<(&'static str, Region, String)> {
    vec![
        (
            "template.yaml",
            Region::yaml("functions", "shared/src/catalog.rs; edit the catalog"),
            template::functions(FUNCTIONS),
        ),
        (
            "template.yaml",
            Region::yaml(
                "alarms",
                "shared/src/catalog.rs and tools/xtask/src/alarms.rs; edit those",
            ),
            alarms::render(&alarms::all(FUNCTIONS)),
        ),
        (
            "template.yaml",
            Region::yaml(
                "dashboard",
                "shared/src/catalog.rs, shared/src/metrics.rs and tools/xtask/src/dashboard.rs; edit those",
            ),
            dashboard::render(FUNCTIONS),
        ),
        (
            "template.yaml",
            Region::yaml("memory-conditions", "shared/src/catalog.rs; edit the catalog"),
            template::memory_conditions(FUNCTIONS),
        ),
        (
            "template.yaml",
            Region::yaml("event-schemas", "shared/src/events/catalogue.rs; edit the catalogue"),
            template::event_schemas(),
        ),
        (
            "template.yaml",
            Region::yaml("parameters", "shared/src/config/settings.rs; edit the settings"),
            settings::parameters(),
        ),
        (
            "template.yaml",
            Region::yaml_at("globals", "shared/src/config/settings.rs; edit the settings", 8),
            settings::globals(),
        ),
        (
            "scripts/dev",
            Region::shell("settings", "shared/src/config/settings.rs; edit the settings"),
            settings::dev_pass_through(),
        ),
        (
            "samconfig.toml",
            Region::toml("watch-exclude"),
            template::watch_exclude(FUNCTIONS),
        ),
        (
            "shared/src/api/routes/mod.rs",
            Region::rust("routes"),
            crates::routes(FUNCTIONS),
        ),
        (
            "shared/src/api/events/mod.rs",
            Region::rust("events"),
            crates::events(FUNCTIONS),
        ),
    ]
}

/// Every generated table of the docs, rendered now.
fn generated_docs() -> Vec<(&'static str, Region, String)> {
    vec![
        (
            "docs/api.md",
            Region::markdown("routes", "shared/src/catalog.rs"),
            docs::routes(FUNCTIONS),
        ),
        (
            "docs/configuration.md",
            Region::markdown("variables", "shared/src/config/settings.rs"),
            settings::variables_table(),
        ),
        (
            "docs/configuration.md",
            Region::markdown("parameters", "shared/src/config/settings.rs"),
            settings::parameters_table(),
        ),
        (
            "docs/architecture.md",
            Region::markdown("items", "shared/src/store/keys/table.rs"),
            docs::items(),
        ),
        (
            "docs/events.md",
            Region::markdown("catalogue", "shared/src/events/catalogue.rs"),
            docs::events(),
        ),
    ]
}

/// Whole generated files (the events' JSON Schemas): the paths of those
/// stale, each written unless `check`.
fn run_files(check: bool, files: Vec<(String, String)>) -> Result<Vec<String>, RegionError> {
    let root = workspace_root();
    let mut stale = Vec::new();
    for (file, content) in files {
        let path = root.join(&file);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(content.as_str()) {
            continue;
        }
        stale.push(file.clone());
        if !check {
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, content));
            written.map_err(|source| RegionError::Io { file, source })?;
        }
    }
    Ok(stale)
}

fn run(check: bool, regions: Vec<(&'static str, Region, String)>) -> Result<Vec<String>, RegionError> {
    let root = workspace_root();
    let mut stale = Vec::new();
    for (file, region, content) in regions {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|source| RegionError::Io {
            file: file.to_owned(),
            source,
        })?;
        let updated = region.replace(file, &text, &content)?;
        if updated != text {
            stale.push(format!("{file} ({})", region.name));
            if !check {
                std::fs::write(&path, updated).map_err(|source| RegionError::Io {
                    file: file.to_owned(),
                    source,
                })?;
            }
        }
    }
    Ok(stale)
}

/// `cargo xtask replay-events`: 0 when the queue is left empty, 1 when a
/// message stays (an unreadable record, a range past the stream's 24 hours),
/// 2 when the queue, the stream or the bus could not be used.
#[allow(clippy::print_stdout)]
fn replay_events(args: ReplayEvents) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("replay-events: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let sdk = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        let personal = if args.include_addresses {
            user_service::events::Personal::Addresses
        } else {
            user_service::events::Personal::None
        };
        let bus = user_service::bus::Bus::new(
            aws_sdk_eventbridge::Client::new(&sdk),
            &args.event_bus,
            &args.event_source,
            personal,
        );
        let described = aws_sdk_dynamodb::Client::new(&sdk)
            .describe_table()
            .table_name(&args.table)
            .send()
            .await;
        let Some(stream_arn) = described.ok().and_then(|d| d.table?.latest_stream_arn) else {
            eprintln!("replay-events: the table {} or its stream could not be read", args.table);
            return ExitCode::from(2);
        };
        let sources = xtask::replay::Sources {
            streams: xtask::replay::streams_client(&sdk),
            stream_arn,
            sqs: aws_sdk_sqs::Client::new(&sdk),
            queue_url: args.queue_url,
        };
        match xtask::replay::replay(&sources, &bus, args.drop_unreadable).await {
            Ok(report) => {
                println!(
                    "replay-events: {} messages; {} records published ({} events); {} unreadable; {} past the stream's 24 hours; \
                     {} not this table's; {} not read to their end; {} left on the queue",
                    report.messages,
                    report.published_records,
                    report.events,
                    report.unreadable_records,
                    report.expired,
                    report.foreign,
                    report.incomplete,
                    report.kept
                );
                if report.kept == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
            }
            Err(e) => {
                eprintln!("replay-events: {}", user_service::error::chain(&e));
                ExitCode::from(2)
            }
        }
    })
}

/// Runs `task` on the store of `table` (the endpoint and credentials from the
/// standard AWS environment); 2 when the runtime or the client settings fail.
fn on_table(task: &str, table: &str, run: impl AsyncFnOnce(user_service::store::Store) -> ExitCode) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{task}: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let timeouts = match user_service::config::ClientTimeouts::from_lookup(|k| std::env::var(k).ok()) {
            Ok(timeouts) => timeouts,
            Err(e) => {
                eprintln!("{task}: {e}");
                return ExitCode::from(2);
            }
        };
        let client = user_service::store::dynamodb_client(timeouts).await;
        run(user_service::store::Store::new(
            client,
            user_service::config::StoreConfig::new(table),
        ))
        .await
    })
}

/// `cargo xtask canonicalize`: 0 when done (or, with `--dry-run`, when nothing
/// collides), 1 when collisions or unfinished moves remain, 2 when the
/// migration refused to start for collisions or could not reach the table.
#[allow(clippy::print_stdout)]
fn canonicalize(args: Canonicalize) -> ExitCode {
    on_table("canonicalize", &args.table.clone(), async move |store| {
        let bar = canonicalize::progress("survey", None);
        let survey = match canonicalize::survey(&store, args.to, args.segments, &bar).await {
            Ok(survey) => survey,
            Err(e) => {
                eprintln!("canonicalize: the survey failed: {}", user_service::error::chain(&e));
                return ExitCode::from(2);
            }
        };
        bar.finish_and_clear();
        print!("{}", canonicalize::report(&survey, args.show_addresses));
        let collided = !survey.collisions.is_empty();
        if collided {
            eprintln!(
                "canonicalize: {} collisions; each needs all but one of its records removed (by their users, or by deleting an account)",
                survey.collisions.len()
            );
            if args.dry_run {
                return ExitCode::FAILURE;
            }
            if !args.skip_collisions {
                eprintln!(
                    "canonicalize: the migration does not start while any exists (--skip-collisions moves the rest)"
                );
                return ExitCode::from(2);
            }
        }
        if args.dry_run {
            return ExitCode::SUCCESS;
        }
        let bar = canonicalize::progress("move", Some(survey.moving.len() as u64));
        let tally = match canonicalize::migrate(&store, &survey.moving, args.rate, &bar).await {
            Ok(tally) => tally,
            Err(e) => {
                eprintln!(
                    "canonicalize: stopped: {}; run it again to go on",
                    user_service::error::chain(&e)
                );
                return ExitCode::FAILURE;
            }
        };
        bar.finish_and_clear();
        println!(
            "moved: {}\nalready: {}\nchanged since the survey: {}\ncollided since the survey: {}\nwithout their claim: {}",
            tally.moved, tally.already, tally.changed, tally.collided, tally.no_claim
        );
        if tally.is_complete() && !collided {
            ExitCode::SUCCESS
        } else {
            eprintln!("canonicalize: not every record moved; run it again (a dry run lists new collisions)");
            ExitCode::FAILURE
        }
    })
}

/// `cargo xtask backfill-user-index`: 0 when every profile is filed, 1 when
/// some changed under every attempt or the run stopped (run it again), 2 when
/// it could not start.
#[allow(clippy::print_stdout)]
fn backfill_user_index(args: BackfillUserIndex) -> ExitCode {
    on_table("backfill-user-index", &args.table, async |store| {
        let bar = canonicalize::progress("file", None);
        let tally = match backfill::backfill(&store, args.segments, args.rate, &bar).await {
            Ok(tally) => tally,
            Err(e) => {
                eprintln!(
                    "backfill-user-index: stopped: {}; run it again to go on",
                    user_service::error::chain(&e)
                );
                return ExitCode::FAILURE;
            }
        };
        bar.finish_and_clear();
        print!("{}", backfill::report(&tally));
        if tally.is_complete() {
            ExitCode::SUCCESS
        } else {
            eprintln!("backfill-user-index: not every profile is filed; run it again");
            ExitCode::FAILURE
        }
    })
}

#[allow(clippy::print_stdout)]
fn main() -> ExitCode {
    let (task, check, regions, edit) = match Cli::parse().task {
        Task::Canonicalize(args) => return canonicalize(args),
        Task::BackfillUserIndex(args) => return backfill_user_index(args),
        Task::ReplayEvents(args) => return replay_events(args),
        Task::Template { check } => (
            "template",
            check,
            generated(),
            "edit shared/src/catalog.rs, shared/src/events/catalogue.rs or shared/src/config/settings.rs, not the generated blocks",
        ),
        Task::Docs { check } => (
            "docs",
            check,
            generated_docs(),
            "edit shared/src/catalog.rs, shared/src/events/catalogue.rs or shared/src/config/settings.rs, not the generated tables",
        ),
    };
    let files = if task == "docs" {
        docs::event_schemas()
    } else {
        crates::function_crates(FUNCTIONS)
    };
    let outcome = run(check, regions).and_then(|mut stale| {
        stale.extend(run_files(check, files)?);
        Ok(stale)
    });
    match outcome {
        Ok(stale) if stale.is_empty() => {
            println!("{task}: generated regions are current");
            ExitCode::SUCCESS
        }
        Ok(stale) if check => {
            eprintln!(
                "{task}: not current: {}. Run `cargo xtask {task}` and commit the result; {edit}.",
                stale.join(", ")
            );
            ExitCode::FAILURE
        }
        Ok(stale) => {
            println!("{task}: rewrote {}", stale.join(", "));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{task}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same check as `cargo xtask template --check`, so a stale region also
    /// fails the test suite, naming the command that fixes it.
    #[test]
    fn generated_regions_are_current() {
        let mut stale = run(true, generated()).unwrap();
        stale.extend(run_files(true, crates::function_crates(FUNCTIONS)).unwrap());
        assert!(stale.is_empty(), "not current: {stale:?}; run `cargo xtask template`");
    }

    /// The same check as `cargo xtask docs --check`, the events' schemas included.
    #[test]
    fn generated_docs_are_current() {
        let mut stale = run(true, generated_docs()).unwrap();
        stale.extend(run_files(true, docs::event_schemas()).unwrap());
        assert!(stale.is_empty(), "not current: {stale:?}; run `cargo xtask docs`");
    }
}
