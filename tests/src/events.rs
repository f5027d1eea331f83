//! The realistic events in `events/`, which tests build their requests from.

use std::path::PathBuf;

use serde_json::Value;

pub fn events_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../events")
}

/// An event file as JSON.
pub fn load(name: &str) -> Value {
    // Events drive handlers: whatever they log is captured.
    crate::logs::capture();
    let path = events_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Every event file name (without `.json`).
pub fn all_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(events_dir())
        .expect("events/ exists")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}
