//! The docs stay true: every `make` target, `cargo xtask` subcommand, script
//! and environment variable that README.md and docs/ name exists; every
//! relative link resolves, anchors included; `make help` lists every target;
//! the README stays a landing page. The generated tables are checked by
//! `cargo xtask docs --check` (and xtask's own test).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use integration_tests::workspace_root;

/// README.md and the pages of docs/ (not docs/bench/, which `make bench` writes).
fn pages() -> Vec<(PathBuf, String)> {
    let root = workspace_root();
    let mut paths = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/ exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

fn name(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The words that follow `prefix` (letters, digits, `-`, `_`, `.`, `/`).
fn words_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.match_indices(prefix)
        .filter(|(at, _)| {
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '/')
        })
        .map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches(['.', '/'])
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn make_targets() -> BTreeSet<String> {
    let makefile = std::fs::read_to_string(workspace_root().join("Makefile")).unwrap();
    makefile
        .lines()
        .filter_map(|l| l.split_once(':').map(|(t, _)| t))
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_make_target_xtask_task_and_script_named_exists() {
    let targets = make_targets();
    let xtask = std::fs::read_to_string(workspace_root().join("tools/xtask/src/main.rs")).unwrap();
    let tasks: BTreeSet<String> = xtask[xtask.find("enum Task").expect("xtask's tasks")..]
        .lines()
        .take_while(|l| *l != "}")
        // A variant: `Name {` or `Name(Args),`.
        .filter_map(|l| {
            l.strip_prefix("    ")
                .and_then(|l| l.strip_suffix(" {").or_else(|| l.split_once('(').map(|(name, _)| name)))
        })
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        // clap's name: `ReplayEvents` → `replay-events`.
        .map(|name| {
            name.chars().enumerate().fold(String::new(), |mut out, (i, c)| {
                if c.is_ascii_uppercase() && i > 0 {
                    out.push('-');
                }
                out.push(c.to_ascii_lowercase());
                out
            })
        })
        .collect();
    assert!(
        ["template", "docs", "canonicalize", "replay-events"]
            .iter()
            .all(|t| tasks.contains(*t)),
        "{tasks:?}"
    );
    let mut wrong = Vec::new();
    for (path, text) in pages() {
        // A target as a reader types it: in code (`make x`, or a command line).
        let typed: Vec<&str> = words_after(&text, "`make ")
            .into_iter()
            .chain(
                text.lines()
                    .filter_map(|l| l.trim_start().strip_prefix("make "))
                    .filter_map(|l| l.split_whitespace().next()),
            )
            .collect();
        for target in typed {
            if !targets.contains(target) {
                wrong.push(format!("{}: `make {target}` is no target", name(&path)));
            }
        }
        for task in words_after(&text, "cargo xtask ") {
            if !tasks.contains(task) {
                wrong.push(format!("{}: `cargo xtask {task}` is no task", name(&path)));
            }
        }
        for script in words_after(&text, "scripts/") {
            if !workspace_root().join("scripts").join(script).exists() {
                wrong.push(format!("{}: scripts/{script} does not exist", name(&path)));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The repository's tracked files that are not Markdown: where a name the
/// docs give must also stand.
fn tracked_code() -> String {
    let root = workspace_root();
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git lists the tracked files");
    String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter(|f| !f.is_empty() && !f.ends_with(".md") && !f.ends_with(".svg") && !f.ends_with(".png"))
        .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Names the docs give that belong to others: AWS's own constants, and the
/// placeholders of a shell recipe.
const NOT_OURS: &[&str] = &[
    // Cognito's sign-in challenge, in the TOTP sign-in recipe.
    "CONFIRM_SIGN_IN_WITH_TOTP_CODE",
    // DynamoDB Streams' iterator type, and a replay recipe's placeholders.
    "AT_SEQUENCE_NUMBER",
    "STREAM_ARN",
    "SHARD_ID",
    // Lambda's init report line, and CloudWatch's alarm state.
    "INIT_REPORT",
    "INSUFFICIENT_DATA",
    // rustc's own switch, for the AddressSanitizer fuzzing recipe.
    "RUSTC_BOOTSTRAP",
    // Cognito's CSV import: a user status, and one of the job's hashing algorithms.
    "RESET_REQUIRED",
    "PBKDF2_SHA256",
    // Cognito's admin sign-in flow, which also hands the migration trigger a password.
    "ADMIN_USER_PASSWORD_AUTH",
];

#[test]
fn every_variable_and_code_named_stands_in_the_code() {
    // Environment variables and codes are SHOUTING_SNAKE_CASE: each the docs
    // name must be read or written somewhere outside the docs.
    let code = tracked_code();
    let mut wrong = BTreeSet::new();
    for (path, text) in pages() {
        let mut word = String::new();
        for c in text.chars().chain([' ']) {
            if c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' {
                word.push(c);
                continue;
            }
            let shouting = word.contains('_')
                && word.starts_with(|c: char| c.is_ascii_uppercase())
                && !word.ends_with('_')
                && !c.is_ascii_lowercase();
            if shouting && !code.contains(&word) && !NOT_OURS.contains(&word.as_str()) {
                wrong.insert(format!("{}: {word} stands nowhere in the code", name(&path)));
            }
            word.clear();
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.into_iter().collect::<Vec<_>>().join("\n"));
}

/// GitHub's anchor for a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_anchors_included() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, text) in pages() {
        let dir = path.parent().unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() { path.clone() } else { dir.join(file) };
            // Lossy: a link may name an image, whose anchors are none.
            let Ok(linked) = std::fs::read(&file)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .or_else(|e| if file.is_dir() { Ok(String::new()) } else { Err(e) })
            else {
                wrong.push(format!("{}: {target}: no such file", name(&path)));
                continue;
            };
            if !anchor.is_empty() && !anchors(&linked).contains(anchor) {
                wrong.push(format!("{}: {target}: no such heading", name(&path)));
            }
        }
    }
    assert!(checked > 20, "only {checked} links read");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn make_help_lists_every_target_a_reader_may_type() {
    let makefile = std::fs::read_to_string(workspace_root().join("Makefile")).unwrap();
    let phony: BTreeSet<String> = makefile
        .lines()
        .find_map(|l| l.strip_prefix(".PHONY:"))
        .expect("the Makefile names its targets")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let help = std::process::Command::new("make")
        .args(["--no-print-directory", "help"])
        .current_dir(workspace_root())
        .output()
        .expect("make runs");
    assert!(help.status.success());
    let listed: BTreeSet<String> = String::from_utf8_lossy(&help.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("make "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, phony, "make help lists the .PHONY targets");
    assert_eq!(phony, make_targets().intersection(&phony).cloned().collect());
}

#[test]
fn the_readme_is_a_landing_page() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 150,
        "README.md is {} lines",
        readme.lines().count()
    );
    assert!(readme.contains("```mermaid"), "the architecture diagram");
    for command in ["make dev", "make test"] {
        assert!(readme.contains(command), "{command}");
    }
    for (path, _) in pages().iter().filter(|(p, _)| !p.ends_with("README.md")) {
        let page = name(path);
        assert!(readme.contains(&format!("]({page})")), "README.md links {page}");
    }
}
