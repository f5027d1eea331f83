//! The bench's Markdown report and charts.
//!
//! By concern: `results` (what the sections gathered), `goals` (the issue's
//! goals, met or missed), `markdown` (report.md), `figures` (the charts).

mod figures;
mod goals;
mod markdown;
mod results;

use std::path::PathBuf;

pub(crate) use results::Report;

impl Report {
    /// Writes report.md and the charts into the output folder.
    pub(crate) fn write(&self) -> std::io::Result<PathBuf> {
        let md = self.markdown();
        self.charts()?;
        let path = self.out.join("report.md");
        std::fs::write(&path, md)?;
        Ok(path)
    }
}
