//! `user-admin`, the operators' tool (never deployed): the bulk import of
//! users from JSON Lines and the export of every user in the same format
//! (docs/import-export.md). The library is what the binary runs, with the
//! clients given, so tests point it at DynamoDB Local and moto.

pub mod cognito;
pub mod export;
pub mod import;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar on stderr (drawn only on a terminal) of `len` steps with
/// rate and time left, or a counter with its rate when `len` is unknown.
pub fn progress(what: &'static str, len: Option<u64>) -> ProgressBar {
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    let template = if len.is_some() {
        "{prefix} [{bar:40}] {pos}/{len} ({per_sec}, {eta} left)"
    } else {
        "{prefix} {pos} users ({per_sec})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(what);
    bar
}
