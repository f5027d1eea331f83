//! `cargo run -p integration-tests --bin check-logs [DIR]`: after the suites, no
//! captured log line may carry PII (see `integration_tests::log_check`). Fails on
//! any finding, naming file and line with a masked hint, and on an empty
//! directory (the suites did not run). Figures go to target/reliability/logs.json.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::process::ExitCode;

use integration_tests::{log_check, logs};

fn main() -> ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(logs::dir);
    let started = std::time::Instant::now();
    let report = match log_check::check_dir(&dir) {
        Ok(report) => report,
        Err(err) => {
            eprintln!(
                "check-logs: cannot read {} ({err}): run the suites first (`make test`)",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    for finding in &report.findings {
        println!("{finding}");
    }
    let figures = integration_tests::workspace_root().join("target/reliability");
    let written = std::fs::create_dir_all(&figures).and_then(|()| {
        std::fs::write(
            figures.join("logs.json"),
            serde_json::to_string_pretty(&figures_of(&report, started.elapsed())).unwrap_or_default(),
        )
    });
    if let Err(err) = written {
        eprintln!("check-logs: writing {}/logs.json: {err}", figures.display());
    }
    eprintln!(
        "check-logs: {} files, {} lines ({} from the log sender), {} findings in {}",
        report.files,
        report.lines,
        report.sender_lines,
        report.findings.len(),
        dir.display()
    );
    if report.files == 0 || report.lines == 0 {
        eprintln!("check-logs: nothing was captured: run the suites first (`make test`)");
        return ExitCode::FAILURE;
    }
    if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The checker's figures, and how long the scan took (a figure, not a bound).
fn figures_of(report: &log_check::Report, took: std::time::Duration) -> serde_json::Value {
    let mut figures = report.to_json();
    figures["suite"] = "logs".into();
    figures["scan_ms"] = u64::try_from(took.as_millis()).unwrap_or(u64::MAX).into();
    figures
}
