//! The core crate's floors (docs/architecture.md, "The core crate's floors"),
//! beside the test that adding a function needs only its own files: each
//! module of `shared/src` imports only modules on lower floors, and only
//! `store/` sees the stored format (key strings, attribute names, items).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use integration_tests::lambda::workspace_root;

/// Every module of the core crate and its floor; a module may import only
/// modules on lower floors.
const FLOORS: &[(&str, u8)] = &[
    // The ground: no import from the crate.
    ("domain", 1),
    ("config", 1),
    ("deadline", 1),
    ("error", 1),
    // Values and clients that know the domain, the configuration and the deadline.
    ("catalog", 2),
    ("clock", 2),
    ("verification", 2),
    ("metrics", 2),
    ("identity", 2),
    ("address_policy", 2),
    ("events", 2),
    ("reconcile", 3),
    ("import", 3),
    ("audit", 3),
    ("mail", 3),
    ("bus", 3),
    ("verification_key", 3),
    ("secrets", 4),
    ("legacy_password", 4),
    ("store", 4),
    // What a function initialises once.
    ("app", 5),
    // The HTTP edge, then the handlers on top.
    ("http", 6),
    ("api", 7),
];

/// Paths into the store that name its stored format; only `store/` uses them.
const STORED_FORMAT: &[&str] = &["store::keys", "store::items", "store::limits"];

/// The lib.rs re-exports, by the module they come from.
const REEXPORTS: &[(&str, &str)] = &[
    ("App", "app"),
    ("Clients", "app"),
    ("Store", "store"),
    ("StoreError", "store"),
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("shared/src is readable") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate modules a file names (`crate::x`), and the paths it names into `crate::`.
fn imports(text: &str) -> (BTreeSet<String>, Vec<String>) {
    let mut modules = BTreeSet::new();
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        // `$crate::` in a macro is the crate too.
        let rest = &text[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let first = path.split("::").next().unwrap_or_default().to_owned();
        let module = REEXPORTS
            .iter()
            .find(|(name, _)| *name == first)
            .map_or(first, |(_, module)| (*module).to_owned());
        modules.insert(module);
        paths.push(path);
    }
    (modules, paths)
}

#[test]
fn every_module_imports_only_from_lower_floors_and_only_the_store_sees_the_stored_format() {
    let src = workspace_root().join("shared/src");
    let floors: BTreeMap<&str, u8> = FLOORS.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen_modules = BTreeSet::new();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if relative == "lib.rs" {
            continue;
        }
        let module = relative.split(['/', '.']).next().unwrap().to_owned();
        let Some(&floor) = floors.get(module.as_str()) else {
            wrong.push(format!("{relative}: module `{module}` has no floor in FLOORS"));
            continue;
        };
        seen_modules.insert(module.clone());
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests close a file; they may reach anything.
        let code = text.find("#[cfg(test)]").map_or(&text[..], |at| &text[..at]);
        let (modules, paths) = imports(code);
        for imported in modules.iter().filter(|m| **m != module) {
            match floors.get(imported.as_str()) {
                Some(&other) if other < floor => {}
                Some(&other) => wrong.push(format!(
                    "{relative} (floor {floor}) imports `{imported}` (floor {other})"
                )),
                None => wrong.push(format!("{relative} imports `{imported}`, which has no floor")),
            }
        }
        if module != "store" {
            for path in paths.iter().filter(|p| STORED_FORMAT.iter().any(|f| p.starts_with(f))) {
                wrong.push(format!("{relative} names the stored format: crate::{path}"));
            }
        }
    }
    let listed: BTreeSet<String> = floors.keys().map(|m| (*m).to_owned()).collect();
    assert_eq!(seen_modules, listed, "FLOORS lists exactly the crate's modules");
    assert!(wrong.is_empty(), "the floors are broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_layering_check_catches_an_arrow_back_up() {
    // The reader itself: an import of a higher floor and of the stored format.
    let (modules, paths) = imports("use crate::api::routes;\nlet k = crate::store::keys::PK;\n$crate::App");
    assert_eq!(
        modules,
        BTreeSet::from(["api".to_owned(), "store".to_owned(), "app".to_owned()])
    );
    assert!(paths.iter().any(|p| p.starts_with("store::keys")));
}
