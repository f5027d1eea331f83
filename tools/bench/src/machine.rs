//! The machine and the toolchain the figures were taken on: the CPU, cores
//! and memory, the kernel, the locked crates that decide the figures, and
//! DynamoDB Local's package. Read for the report's header and the hashes section.

use std::process::Command;

/// The first line a program prints (its stdout, else its stderr), or "not found".
pub(crate) fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout })
                .trim()
                .to_owned()
        })
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "not found".to_owned())
}

/// Versions of the locked crates that decide the figures.
pub(crate) fn locked_versions() -> String {
    let lock = std::fs::read_to_string(integration_tests::workspace_root().join("Cargo.lock")).unwrap_or_default();
    let mut found = Vec::new();
    for name in [
        "aws-config",
        "aws-sdk-dynamodb",
        "aws-smithy-runtime",
        "lambda_runtime",
        "lambda_http",
        "tokio",
        "rustls",
    ] {
        let needle = format!("name = \"{name}\"\nversion = \"");
        if let Some(at) = lock.find(&needle) {
            let rest = &lock[at + needle.len()..];
            found.push(format!("{name} {}", rest.split('"').next().unwrap_or("?")));
        }
    }
    found.join(", ")
}

/// The DynamoDB Local package scripts/ddb-local pins.
pub(crate) fn ddb_local_version() -> String {
    std::fs::read_to_string(integration_tests::workspace_root().join("scripts/ddb-local"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PACKAGE=").map(|p| p.trim_matches('"').to_owned()))
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// The CPU's model name.
pub(crate) fn cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// The machine in one line: CPU, cores, memory, kernel.
pub(crate) fn machine() -> String {
    let cpu = cpu();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or_else(|| "?".to_owned(), |k| format!("{:.0} GiB", k as f64 / 1_048_576.0));
    format!("{cpu}, {cores} cores, {mem}, {}", command_line("uname", &["-sr"]))
}
