//! `cargo xtask template` writes the parts of template.yaml and samconfig.toml
//! that follow from the function catalog and the business metrics (the functions,
//! the alarms, the dashboard, the watch list); `cargo xtask docs` writes the
//! docs' tables that follow from the catalog, the configuration and the
//! template's parameters. `--check` fails when they are stale, and `make test`
//! runs both. Everything outside the marked regions is hand-written.

mod alarms;
mod dashboard;
mod docs;
mod regions;
mod template;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use user_service::catalog::FUNCTIONS;

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
    /// Write the docs' generated tables: docs/api.md's routes, and
    /// docs/configuration.md's environment variables and stack parameters.
    Docs {
        /// Change nothing; fail, with what differs, when a page is not current.
        #[arg(long)]
        check: bool,
    },
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
            "samconfig.toml",
            Region::toml("watch-exclude"),
            template::watch_exclude(FUNCTIONS),
        ),
    ]
}

/// Every generated table of the docs, rendered now.
fn generated_docs() -> Result<Vec<(&'static str, Region, String)>, RegionError> {
    let template =
        std::fs::read_to_string(workspace_root().join("template.yaml")).map_err(|source| RegionError::Io {
            file: "template.yaml".to_owned(),
            source,
        })?;
    let parameters = docs::parameters(&template).map_err(|reason| RegionError::Source {
        file: "template.yaml".to_owned(),
        reason,
    })?;
    Ok(vec![
        (
            "docs/api.md",
            Region::markdown("routes", "shared/src/catalog.rs"),
            docs::routes(FUNCTIONS),
        ),
        (
            "docs/configuration.md",
            Region::markdown("variables", "shared/src/config.rs (VARIABLES)"),
            docs::variables(),
        ),
        (
            "docs/configuration.md",
            Region::markdown("parameters", "template.yaml's Parameters"),
            parameters,
        ),
    ])
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

#[allow(clippy::print_stdout)]
fn main() -> ExitCode {
    let (task, check, regions, edit) = match Cli::parse().task {
        Task::Template { check } => (
            "template",
            check,
            Ok(generated()),
            "edit shared/src/catalog.rs, not the generated blocks",
        ),
        Task::Docs { check } => (
            "docs",
            check,
            generated_docs(),
            "edit shared/src/catalog.rs, shared/src/config.rs or template.yaml's Parameters, not the generated tables",
        ),
    };
    match regions.and_then(|regions| run(check, regions)) {
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
        let stale = run(true, generated()).unwrap();
        assert!(stale.is_empty(), "not current: {stale:?}; run `cargo xtask template`");
    }

    /// The same check as `cargo xtask docs --check`.
    #[test]
    fn generated_docs_are_current() {
        let stale = run(true, generated_docs().unwrap()).unwrap();
        assert!(stale.is_empty(), "not current: {stale:?}; run `cargo xtask docs`");
    }
}
