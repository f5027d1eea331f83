//! `target/reliability/workload.json`: each test of the suite writes its own
//! section, so the workload and the faults may run in separate processes at once.

use std::io::{Read, Seek, Write};

use serde_json::Value;

/// Sets `section` of the suite's figures to `value`, keeping the other sections.
pub(crate) fn record(section: &str, value: Value) {
    let dir = integration_tests::workspace_root().join("target/reliability");
    std::fs::create_dir_all(&dir).expect("target/reliability");
    // The lock file serialises writers: nextest runs each test in its own process.
    let lock = std::fs::File::create(dir.join("workload.json.lock")).expect("lock file");
    lock.lock().expect("lock workload.json");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("workload.json"))
        .expect("workload.json");
    let mut text = String::new();
    file.read_to_string(&mut text).expect("read workload.json");
    let mut figures: Value = serde_json::from_str(&text).unwrap_or_else(|_| serde_json::json!({}));
    if !figures.is_object() {
        figures = serde_json::json!({});
    }
    figures[section] = value;
    file.set_len(0).expect("truncate workload.json");
    file.rewind().expect("rewind workload.json");
    file.write_all(serde_json::to_string_pretty(&figures).unwrap().as_bytes())
        .expect("write workload.json");
    lock.unlock().expect("unlock workload.json");
}
