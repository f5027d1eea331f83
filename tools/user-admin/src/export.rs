//! `user-admin export`: every user that is not deleted, as JSON Lines in the
//! import's format, without secrets (no password, no code hash). A parallel
//! Scan of the profiles (`Store::scan_profiles`, the reconcile's: keys and
//! status only), then one Query of each live user's partition
//! (`Store::get_account`). Scanning every item and grouping them would read
//! the table once too, but a user's items may straddle two pages, and the
//! cursor would have to hold half a user.
//!
//! The cursor (a JSON file, written whole by rename) holds each segment's
//! position and the output's length when it was written: a resumed export
//! cuts the output back to that length and goes on from each position, so no
//! user is written twice or missed. Removed once the export is complete.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures::StreamExt;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use user_service::domain::{Account, UserStatus};
use user_service::import::{LineEmail, LineStatus, UserLine};
use user_service::reconcile::Snapshot;
use user_service::store::{Store, StoreError};

/// Partitions read at once in each segment.
const USERS_AT_ONCE: usize = 8;

/// Where an export stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    /// The output's length in bytes when the cursor was written.
    pub written: u64,
    /// Each segment's position: `None` before its first page.
    pub segments: Vec<SegmentAt>,
}

/// One segment's position.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SegmentAt {
    /// Every page read.
    pub done: bool,
    /// The key (`PK`, `SK`) to go on after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<(String, String)>,
}

/// The export's failures.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the table failed (after the SDK's retries).
    #[error("reading the table failed")]
    Store(#[from] StoreError),
    /// The output or the cursor could not be written.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The cursor is of an export with another number of segments.
    #[error("the cursor has {0} segments; resume with --segments {0}, or delete it to start again")]
    Segments(usize),
}

/// The line of one account: primary first, then the other addresses by
/// address, so an export of the same users is the same text. `None` for a
/// deleted user.
pub fn line_of(account: Account) -> Option<UserLine> {
    let status = match account.profile.status {
        UserStatus::Active => LineStatus::Active,
        UserStatus::Suspended => LineStatus::Suspended,
        UserStatus::Deleted => return None,
    };
    let mut emails: Vec<LineEmail> = account
        .emails
        .into_iter()
        .map(|e| LineEmail {
            address: e.email,
            verified: e.is_verified,
            primary: e.is_primary,
        })
        .collect();
    emails.sort_by(|a, b| {
        b.primary
            .cmp(&a.primary)
            .then(a.address.as_str().cmp(b.address.as_str()))
    });
    Some(UserLine {
        external_id: None,
        status,
        created_at: Some(account.profile.created_at),
        first_name: account.profile.first_name,
        last_name: account.profile.last_name,
        phone: account.profile.phone,
        emails,
        password: None,
    })
}

struct Output {
    file: std::fs::File,
    cursor: Cursor,
    cursor_path: PathBuf,
}

impl Output {
    /// Appends `text` and records `segment`'s new position, output first: a
    /// crash between the two leaves lines beyond the cursor's length, which a
    /// resume cuts off.
    fn commit(&mut self, text: &[u8], segment: usize, at: SegmentAt) -> Result<(), ExportError> {
        self.file
            .write_all(text)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| ExportError::Io("output".to_owned(), e))?;
        self.cursor.written += text.len() as u64;
        self.cursor.segments[segment] = at;
        save(&self.cursor_path, &self.cursor)
    }
}

/// Writes the cursor whole: a temporary file beside it, renamed over it.
fn save(path: &Path, cursor: &Cursor) -> Result<(), ExportError> {
    let io = |e: std::io::Error| ExportError::Io(path.display().to_string(), e);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    serde_json::to_writer(&mut file, cursor).map_err(|e| io(e.into()))?;
    file.as_file().sync_data().map_err(io)?;
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Exports every user of `store` to `out`, `segments` at once, resuming from
/// `cursor_path` when it exists. Returns how many users it wrote in this run.
pub async fn export(
    store: &Store,
    out: &Path,
    cursor_path: &Path,
    segments: u32,
    bar: &ProgressBar,
) -> Result<u64, ExportError> {
    let segments = segments.max(1);
    let io = |path: &Path| {
        let name = path.display().to_string();
        move |e: std::io::Error| ExportError::Io(name.clone(), e)
    };
    let cursor: Cursor = match std::fs::read(cursor_path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| io(cursor_path)(e.into()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Cursor {
            written: 0,
            segments: vec![SegmentAt::default(); segments as usize],
        },
        Err(e) => return Err(io(cursor_path)(e)),
    };
    if cursor.segments.len() != segments as usize {
        return Err(ExportError::Segments(cursor.segments.len()));
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(out)
        .map_err(io(out))?;
    // What a crash wrote past the cursor goes.
    file.set_len(cursor.written).map_err(io(out))?;
    file.seek(std::io::SeekFrom::End(0)).map_err(io(out))?;
    save(cursor_path, &cursor)?;
    let output = Mutex::new(Output {
        file,
        cursor: cursor.clone(),
        cursor_path: cursor_path.to_owned(),
    });
    let scans = cursor.segments.iter().enumerate().map(|(segment, at)| {
        let output = &output;
        let mut at = at.clone();
        async move {
            let mut exported = 0u64;
            while !at.done {
                let page = store.scan_profiles(segment as u32, segments, at.after.as_ref()).await?;
                let live = page
                    .profiles
                    .into_iter()
                    .filter(|p| p.snapshot == Some(Snapshot::Live))
                    .map(|p| async move {
                        match store.get_account(&p.user_id).await {
                            Ok(account) => Ok(line_of(account)),
                            // Deleted since the scan read it.
                            Err(StoreError::NotFound) => Ok(None),
                            Err(e) => Err(e),
                        }
                    });
                let lines: Vec<Option<UserLine>> = futures::stream::iter(live)
                    .buffered(USERS_AT_ONCE)
                    .collect::<Vec<_>>()
                    .await
                    .into_iter()
                    .collect::<Result<_, _>>()?;
                let mut text = String::new();
                for line in lines.into_iter().flatten() {
                    text.push_str(&serde_json::to_string(&line).unwrap_or_default());
                    text.push('\n');
                    exported += 1;
                }
                at = SegmentAt {
                    done: page.next.is_none(),
                    after: page.next,
                };
                output
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .commit(text.as_bytes(), segment, at.clone())?;
                bar.set_position(bar.position() + text.lines().count() as u64);
            }
            Ok::<u64, ExportError>(exported)
        }
    });
    let exported: u64 = futures::future::try_join_all(scans).await?.into_iter().sum();
    // Complete: the next export starts afresh.
    std::fs::remove_file(cursor_path).map_err(io(cursor_path))?;
    Ok(exported)
}
