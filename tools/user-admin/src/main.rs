//! `user-admin import FILE` and `user-admin export`: see docs/import-export.md.
//! `user-admin holds` and `user-admin release-hold SUB`: the accounts a
//! recovery holds from signing in, and finishing one by hand (docs/operations.md).
//! The table, the pool and the address policy come from the same environment
//! as the functions' (TABLE_NAME, USER_POOL_ID, EMAIL_CANONICALIZATION, …);
//! endpoints and credentials from the standard AWS environment.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use user_admin::cognito::Pool;
use user_admin::import::{Options, Target};
use user_admin::{export, import, progress};
use user_service::Store;
use user_service::address_policy::AddressPolicy;
use user_service::config::{ClientTimeouts, StoreConfig};
use user_service::domain::Timestamp;
use user_service::identity::UserPool;
use user_service::reconciler::{HoldEnded, finish_hold};

/// Cognito's default quota of the UserCreation category (AdminCreateUser,
/// SignUp, …) is 50 requests a second per account: the import keeps to 20,
/// leaving the rest to the service's own sign-ups.
const DEFAULT_RATE: f64 = 20.0;

#[derive(Parser)]
#[command(about = "Bulk import and export of users (docs/import-export.md)")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Import the users of a JSON Lines file (schemas/import/user.json): a
    /// Cognito user (no message, no password: forgot-password gives one) and a
    /// profile with its addresses each. Safe to stop and run again.
    Import(ImportArgs),
    /// Write every user that is not deleted as JSON Lines in the import's
    /// format, without secrets. Stopped, run it again with the same cursor to go on.
    Export(ExportArgs),
    /// List the recoveries whose hold on sign-in is not lifted yet, oldest
    /// first: sub, when, and whether the profile is still held by it.
    Holds(HoldsArgs),
    /// Finish one held recovery by hand, as the stream consumer would:
    /// Cognito's address, every session signed out, a new password required,
    /// then the hold lifted. Never lifts a hold without those steps.
    ReleaseHold(ReleaseHoldArgs),
}

#[derive(clap::Args)]
struct HoldsArgs {
    /// The table.
    #[arg(long, env = "TABLE_NAME")]
    table: String,
}

#[derive(clap::Args)]
struct ReleaseHoldArgs {
    /// The held account's sub.
    sub: String,
    /// The table.
    #[arg(long, env = "TABLE_NAME")]
    table: String,
    /// The user pool (the stack's UserPoolId output).
    #[arg(long, env = "USER_POOL_ID")]
    user_pool_id: String,
}

#[derive(clap::Args)]
struct ImportArgs {
    /// The JSON Lines file, one user a line.
    file: PathBuf,
    /// Check every line (format, the table's rules, the address policy,
    /// addresses twice in the file or held in the table); write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Users created a second at most (Cognito's UserCreation quota is 50 by default, shared with sign-ups).
    #[arg(long, default_value_t = DEFAULT_RATE)]
    rate: f64,
    /// Where each line's outcome goes (JSON Lines: line, sub, outcome, error); FILE.report.jsonl by default.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Skip the lines the report of an earlier run has done, and add to it.
    /// Without it the report starts afresh; the import is idempotent either way.
    #[arg(long)]
    resume: bool,
    /// Lines with a password hash become pending users: no Cognito user now;
    /// at their first sign-in the migration trigger checks the password
    /// against the hash and Cognito keeps it (the stack's
    /// LegacyPasswordMigration=on; docs/migration.md). Lines without one are
    /// imported as usual.
    #[arg(long)]
    pending: bool,
    /// The table.
    #[arg(long, env = "TABLE_NAME")]
    table: String,
    /// The user pool (the stack's UserPoolId output).
    #[arg(long, env = "USER_POOL_ID")]
    user_pool_id: String,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The output file.
    #[arg(long)]
    out: PathBuf,
    /// Where the export stands, to resume it; OUT.cursor by default. Removed when complete.
    #[arg(long)]
    cursor: Option<PathBuf>,
    /// Segments of the parallel scan.
    #[arg(long, default_value_t = 4)]
    segments: u32,
    /// The table.
    #[arg(long, env = "TABLE_NAME")]
    table: String,
}

fn with_suffix(path: &std::path::Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// An operator's batch is not inside a Cognito trigger's 5 s: unless the
/// environment says otherwise, a call may take as long as a slow network or a
/// busy emulator needs, rather than fail the line for a re-run.
const TOOL_TIMEOUTS_MS: [(&str, &str); 2] = [
    (user_service::config::DYNAMODB_ATTEMPT_TIMEOUT_MS.name(), "10000"),
    (user_service::config::DYNAMODB_OPERATION_TIMEOUT_MS.name(), "60000"),
];

async fn store(table: &str) -> Result<(Store, aws_config::SdkConfig), String> {
    let env = |name: &str| {
        if name == "TABLE_NAME" {
            return Some(table.to_owned());
        }
        std::env::var(name).ok().or_else(|| {
            TOOL_TIMEOUTS_MS
                .iter()
                .find(|(var, _)| *var == name)
                .map(|(_, ms)| (*ms).to_owned())
        })
    };
    let config = StoreConfig::from_lookup(env).map_err(|e| e.to_string())?;
    let policy = AddressPolicy::from_lookup(env).map_err(|e| e.to_string())?;
    let timeouts = ClientTimeouts::from_lookup(env).map_err(|e| e.to_string())?;
    let sdk = user_service::store::sdk_config(timeouts).await;
    let client = aws_sdk_dynamodb::Client::new(&sdk);
    Ok((Store::new(client, config).with_policy(policy), sdk))
}

async fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.task {
        Task::Import(args) => {
            let (store, sdk) = store(&args.table).await?;
            // The service's key names each line's person by a keyed hash: what
            // an erasure keeps, so that no re-run brings an erased person back.
            let key = user_service::secrets::verification_key(|name| std::env::var(name).ok(), &sdk)
                .await
                .map_err(|e| e.to_string())?;
            let store = store.with_key(key);
            let pool = Pool::new(
                aws_sdk_cognitoidentityprovider::Client::new(&sdk),
                args.user_pool_id,
                args.rate,
            );
            let report = args.report.unwrap_or_else(|| with_suffix(&args.file, ".report.jsonl"));
            let total = import::count_lines(&args.file).map_err(|e| e.to_string())?;
            let bar = progress(if args.dry_run { "checking" } else { "importing" }, Some(total));
            let options = Options {
                dry_run: args.dry_run,
                resume: args.resume,
                pending: args.pending,
                now: user_service::domain::Timestamp::now(),
            };
            let summary = import::import(
                &Target {
                    store: &store,
                    pool: &pool,
                },
                &args.file,
                &report,
                options,
                &bar,
            )
            .await
            .map_err(|e| e.to_string())?;
            bar.finish();
            eprintln!("{}report: {}", summary.render(), report.display());
            Ok(if summary.failures() == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Task::Export(args) => {
            let (store, _) = store(&args.table).await?;
            let cursor = args.cursor.unwrap_or_else(|| with_suffix(&args.out, ".cursor"));
            let bar = progress("exporting", None);
            let exported = export::export(&store, &args.out, &cursor, args.segments, &bar)
                .await
                .map_err(|e| user_service::error::chain(&e))?;
            bar.finish();
            eprintln!("exported: {exported} users to {}", args.out.display());
            Ok(ExitCode::SUCCESS)
        }
        // Boxed: each holds its clients across its calls.
        Task::Holds(args) => Box::pin(holds(args)).await,
        Task::ReleaseHold(args) => Box::pin(release_hold(args)).await,
    }
}

async fn holds(args: HoldsArgs) -> Result<ExitCode, String> {
    let (store, _) = store(&args.table).await?;
    Box::pin(list_holds(&store))
        .await
        .map_err(|e| user_service::error::chain(&e))?;
    Ok(ExitCode::SUCCESS)
}

async fn release_hold(args: ReleaseHoldArgs) -> Result<ExitCode, String> {
    let (store, sdk) = store(&args.table).await?;
    let user = user_service::domain::UserId::parse_sub(&args.sub).map_err(|e| e.to_string())?;
    let pool = UserPool::new(aws_sdk_cognitoidentityprovider::Client::new(&sdk), args.user_pool_id);
    let Some(held) = store
        .sign_in_hold(&user)
        .await
        .map_err(|e| user_service::error::chain(&e))?
    else {
        eprintln!("{user}: no recovery holds this account");
        return Ok(ExitCode::SUCCESS);
    };
    match Box::pin(finish_hold(&store, &pool, &held.hold)).await {
        Ok(HoldEnded::Finished) => {
            eprintln!("{user}: released; Cognito asks for a new password at the next sign-in");
            Ok(ExitCode::SUCCESS)
        }
        Ok(HoldEnded::Stale) => {
            eprintln!("{user}: no recovery holds this account any more");
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => Err(format!("{user}: not released: {}", user_service::error::chain(&err))),
    }
}

/// Lists every hold item on stderr, as the tool's other reports, oldest
/// first: the sub, the recovery's time, and whether the profile is still
/// held by it (`stale` otherwise: the reconcile deletes it). Each line names
/// a sub, never an address.
async fn list_holds(store: &Store) -> Result<(), user_service::StoreError> {
    let now = Timestamp::now();
    let mut after = None;
    loop {
        let page = store.held_recoveries(now.plus_seconds(1), after.as_ref(), 100).await?;
        for hold in &page {
            let held = store
                .sign_in_hold(&hold.user)
                .await?
                .is_some_and(|held| held.hold == *hold);
            let at = Timestamp::from_unix_millis(hold.recovered_at.saturating_mul(1_000));
            let minutes = (now.unix_seconds() - hold.recovered_at) / 60;
            eprintln!(
                "{}\t{at}\t{minutes} min\t{}",
                hold.user,
                if held { "held" } else { "stale" }
            );
        }
        if page.len() < 100 {
            return Ok(());
        }
        after = page.last().cloned();
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("user-admin: {message}");
            ExitCode::from(2)
        }
    }
}
