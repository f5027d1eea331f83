//! Size per function: the stripped `bootstrap` and its deployment zip, for
//! arm64 (what deploys) and x86_64, in the release profile.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use integration_tests::workspace_root;

use crate::plan::Plan;
use crate::programs::{FLOOR_HELLO, FLOOR_SDK};

pub(crate) struct SizeRow {
    pub(crate) name: String,
    /// (stripped binary, zip) in bytes, for x86_64 and for arm64.
    pub(crate) x86_64: Option<(u64, u64)>,
    pub(crate) arm64: Option<(u64, u64)>,
}

const ARM64: &str = "aarch64-unknown-linux-gnu";

/// Every binary the bench builds: the catalog's functions and the two floors.
pub(crate) fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = user_service::catalog::FUNCTIONS.iter().map(|f| f.name).collect();
    names.extend([FLOOR_HELLO, FLOOR_SDK]);
    names
}

/// The size of `binary` and of a zip holding it as `bootstrap`, as Lambda stores
/// a custom runtime's package (deflate, the default level, as `cargo lambda build
/// --output-format zip` and `sam build` make it).
fn sizes(binary: &Path, out: &Path) -> Option<(u64, u64)> {
    let size = std::fs::metadata(binary).ok()?.len();
    let bytes = std::fs::read(binary).ok()?;
    let zip_path = out.join("bootstrap.zip");
    let file = std::fs::File::create(&zip_path).ok()?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o755);
    zip.start_file("bootstrap", options).ok()?;
    zip.write_all(&bytes).ok()?;
    zip.finish().ok()?;
    let zipped = std::fs::metadata(&zip_path).ok()?.len();
    let _ = std::fs::remove_file(&zip_path);
    Some((size, zipped))
}

/// Builds the arm64 binaries with cargo-lambda (full mode only), then measures.
/// The smoke measures the debug binaries for the host, zipping one.
pub(crate) fn measure(plan: &Plan, build: bool) -> Vec<SizeRow> {
    let root = workspace_root();
    let arm64 = !plan.smoke && build_arm64(build);
    names()
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let host = plan.binary(name);
            let x86_64 = if plan.smoke && i > 0 {
                std::fs::metadata(&host).ok().map(|m| (m.len(), 0))
            } else {
                sizes(&host, &plan.out)
            };
            let arm64 = if arm64 {
                // cargo-lambda moves each binary to target/lambda/<name>/bootstrap.
                sizes(&root.join("target/lambda").join(name).join("bootstrap"), &plan.out)
            } else {
                None
            };
            SizeRow {
                name: name.to_owned(),
                x86_64,
                arm64,
            }
        })
        .collect()
}

fn build_arm64(build: bool) -> bool {
    if !build {
        return workspace_root().join("target/lambda").exists();
    }
    // As scripts/sam-check does: the aarch64 standard library, where rustup can add it.
    let _ = Command::new("rustup").args(["target", "add", ARM64]).status();
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(workspace_root())
        .args(["lambda", "build", "--release", "--target", ARM64]);
    for name in names() {
        cargo.args(["-p", name]);
    }
    println!("bench: building the arm64 binaries with cargo-lambda (release profile)");
    match cargo.status() {
        Ok(s) if s.success() => true,
        _ => {
            println!("bench: the arm64 build failed (needs cargo-lambda: `make tools`); x86_64 sizes only");
            false
        }
    }
}
