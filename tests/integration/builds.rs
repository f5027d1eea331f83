//! One build of the dependency tree serves every command: the functions alone
//! (`cargo build --bins`, `cargo lambda watch`, `sam build`), `cargo xtask`,
//! and the workspace (`make test`) resolve the same features, through
//! tools/workspace-hack. A feature the workspace turns on that the functions do
//! not would compile the SDKs a second time, and deploy other code than was tested.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use integration_tests::workspace_root;

/// Every package `cargo tree` resolves with `args`, and its features.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let out = Command::new("cargo")
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--format", "{p} [{f}]"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, rest)) = line.split_once(" [") else {
            continue;
        };
        // `name vX.Y.Z`, without the path or `(proc-macro)` after it.
        let package = package.split(' ').take(2).collect::<Vec<_>>().join(" ");
        let listed = rest.split(']').next().unwrap_or_default();
        packages
            .entry(package)
            .or_default()
            .extend(listed.split(',').filter(|f| !f.is_empty()).map(str::to_owned));
    }
    packages
}

/// Features `cargo tree` lists that name a dependency of other platforms
/// alone: no Linux build passes them to the compiler, so they change nothing
/// here (the functions' build after the workspace's compiles nothing).
const OTHER_PLATFORMS: &[(&str, &str)] = &[("tokio", "windows-sys")];

/// What `part` resolves otherwise than the workspace does, package by package.
fn differences(
    workspace: &BTreeMap<String, BTreeSet<String>>,
    part: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    part.iter()
        .filter_map(|(package, features)| {
            let whole = workspace.get(package)?;
            let name = package.split(' ').next().unwrap_or_default();
            let missing: Vec<&String> = whole
                .symmetric_difference(features)
                .filter(|f| !OTHER_PLATFORMS.contains(&(name, f.as_str())))
                .collect();
            (!missing.is_empty()).then(|| format!("{package}: {missing:?} differ"))
        })
        .collect()
}

#[test]
fn the_functions_and_xtask_build_with_the_workspaces_features() {
    let workspace = features(&["--workspace", "--all-targets", "-e", "normal,build,dev"]);
    assert!(workspace.len() > 200, "{} packages resolved", workspace.len());
    let functions = features(&["-e", "normal,build"]);
    assert!(
        functions.keys().any(|p| p.starts_with("get-profile ")),
        "the functions are the default members"
    );
    let xtask = features(&["-p", "xtask", "-e", "normal,build"]);
    let mut wrong = differences(&workspace, &functions);
    wrong.extend(
        differences(&workspace, &xtask)
            .into_iter()
            .map(|d| format!("xtask: {d}")),
    );
    assert!(
        wrong.is_empty(),
        "add these to tools/workspace-hack/Cargo.toml (target features under [dependencies], \
         build scripts' and proc macros' under [build-dependencies]):\n{}",
        wrong.join("\n")
    );
}
