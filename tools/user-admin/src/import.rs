//! `user-admin import`: each line of a JSON Lines file becomes a Cognito user
//! and a profile with its addresses (docs/import-export.md). Lines are parsed
//! and checked in file order (the first line with an address keeps it);
//! Cognito and the table are then written several lines at once, Cognito's
//! creations paced. Idempotent: Cognito's user of an address is looked up when
//! it exists, and the table's write (`Store::create_account`) finds a profile
//! written already; so a re-run, with or without the report of the run before,
//! creates nobody twice and completes whoever a crash left half-done.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Mutex;

use futures::StreamExt;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use user_service::domain::{EmailAddress, ImportKey, Timestamp, UserId, UserStatus};
use user_service::import::{LineCode, LineError, UserLine, parse_line};
use user_service::legacy_password::{self, CostLimits};
use user_service::store::{Created, Store, StoreError};

use crate::cognito::{CallError, Creation, Pool};

/// Lines in flight at once: Cognito's pace, not this, bounds the rate; it
/// only hides each line's latency (three or four calls).
pub const LINES_AT_ONCE: usize = 16;

/// What became of one line, as the report writes it (JSON, one a line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The line's number in the file, from 1.
    pub line: u64,
    /// The user's `sub`, once imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<UserId>,
    /// What happened.
    pub outcome: Outcome,
    /// Why not, for a failed line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<LineError>,
}

/// What happened to a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Cognito's user and the profile were written now.
    Created,
    /// Both, or the profile, existed already (a re-run): completed, not duplicated.
    Existing,
    /// A dry run found nothing wrong with it.
    Valid,
    /// Not imported: `error` says why.
    Failed,
}

/// The run's counts, line by line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Lines read (blank lines are not counted).
    pub lines: u64,
    /// Imported now.
    pub created: u64,
    /// Found imported already.
    pub existing: u64,
    /// Valid, in a dry run.
    pub valid: u64,
    /// Skipped: the report of an earlier run has them done.
    pub skipped: u64,
    /// Refused, by code.
    pub failed: HashMap<LineCode, u64>,
    /// Lines that carried a password hash: pending users with `--pending`,
    /// otherwise checked and not used (forgot-password).
    pub with_password: u64,
    /// Whether lines with a password hash became pending users.
    pub pending: bool,
    /// Cognito calls throttled and tried again.
    pub throttled: u64,
}

impl Summary {
    /// Lines refused.
    pub fn failures(&self) -> u64 {
        self.failed.values().sum()
    }

    fn count(&mut self, entry: &Entry) {
        match (entry.outcome, &entry.error) {
            (Outcome::Created, _) => self.created += 1,
            (Outcome::Existing, _) => self.existing += 1,
            (Outcome::Valid, _) => self.valid += 1,
            (Outcome::Failed, Some(err)) => *self.failed.entry(err.code).or_default() += 1,
            (Outcome::Failed, None) => *self.failed.entry(LineCode::InvalidLine).or_default() += 1,
        }
    }

    /// The summary, one fact a line, codes in the docs' order.
    pub fn render(&self) -> String {
        let mut out = format!(
            "lines: {}\ncreated: {}\nexisting: {}\nvalid: {}\nskipped (done before): {}\nfailed: {}\n",
            self.lines,
            self.created,
            self.existing,
            self.valid,
            self.skipped,
            self.failures()
        );
        for code in LineCode::ALL {
            if let Some(n) = self.failed.get(code) {
                out.push_str(&format!("  {code}: {n}\n"));
            }
        }
        let use_of_hashes = if self.pending {
            "pending: they keep it at their first sign-in"
        } else {
            "not used: forgot-password; see --pending"
        };
        out.push_str(&format!(
            "with a password hash ({use_of_hashes}): {}\nCognito calls throttled and retried: {}\n",
            self.with_password, self.throttled
        ));
        out
    }
}

/// What the import writes to.
pub struct Target<'a> {
    /// The table.
    pub store: &'a Store,
    /// The user pool.
    pub pool: &'a Pool,
}

/// How a run goes.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Check every line, write nothing.
    pub dry_run: bool,
    /// Skip the lines the existing report has done.
    pub resume: bool,
    /// A line with a password hash becomes a pending user (no Cognito call)
    /// who migrates at their first sign-in, keeping their password.
    pub pending: bool,
    /// The run's time: a line without `createdAt` is created then, and an
    /// unverified address holds its claim from then.
    pub now: Timestamp,
}

/// The run's failures that stop it: not a line's.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input or the report could not be read or written.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
}

/// The lines an earlier report has done (imported or found imported).
pub fn done_in(report: &Path) -> Result<HashSet<u64>, ImportError> {
    let file = match std::fs::File::open(report) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(ImportError::Io(report.display().to_string(), e)),
    };
    let mut done = HashSet::new();
    for raw in std::io::BufReader::new(file).lines() {
        let raw = raw.map_err(|e| ImportError::Io(report.display().to_string(), e))?;
        // A line a kill cut short does not parse: that line is done again.
        if let Ok(entry) = serde_json::from_str::<Entry>(&raw)
            && matches!(entry.outcome, Outcome::Created | Outcome::Existing)
        {
            done.insert(entry.line);
        }
    }
    Ok(done)
}

/// Non-blank lines of `input`, for the progress bar.
pub fn count_lines(input: &Path) -> Result<u64, ImportError> {
    let file = std::fs::File::open(input).map_err(|e| ImportError::Io(input.display().to_string(), e))?;
    let mut n = 0;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| ImportError::Io(input.display().to_string(), e))?;
        n += u64::from(!line.trim().is_empty());
    }
    Ok(n)
}

/// A line parsed and checked, or refused, in file order.
enum Checked {
    Refused(Entry),
    Done,
    Ready(u64, Box<UserLine>),
}

/// Imports `input` (or checks it, `dry_run`) into `target`, writing each
/// line's entry to `report` as it is decided, flushed: a run killed at any
/// point leaves whole entries of the lines it finished.
pub async fn import(
    target: &Target<'_>,
    input: &Path,
    report: &Path,
    options: Options,
    bar: &ProgressBar,
) -> Result<Summary, ImportError> {
    let done = if options.resume {
        done_in(report)?
    } else {
        HashSet::new()
    };
    let file = std::fs::File::open(input).map_err(|e| ImportError::Io(input.display().to_string(), e))?;
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(options.resume)
        .write(true)
        .truncate(!options.resume)
        .open(report)
        .map_err(|e| ImportError::Io(report.display().to_string(), e))?;
    let out = Mutex::new(std::io::LineWriter::new(out));
    let summary = Mutex::new(Summary {
        pending: options.pending,
        ..Summary::default()
    });
    let policy = target.store.policy().clone();
    let max_emails = target.store.config().max_emails_per_user;
    let now = options.now;

    // Every address of every line read so far, by canonical form: the first
    // line with one keeps it. Read in order, before any line is written.
    let mut first_with: HashMap<String, u64> = HashMap::new();
    let mut number = 0u64;
    let checked = std::io::BufReader::new(file).lines().filter_map(|raw| {
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => return Some(Err(ImportError::Io(input.display().to_string(), e))),
        };
        number += 1;
        if raw.trim().is_empty() {
            return None;
        }
        let line = number;
        let refused = |error: LineError| Checked::Refused(failed(line, error));
        let parsed = match parse_line(&raw) {
            Ok(parsed) => parsed,
            Err(error) => return Some(Ok(refused(error))),
        };
        if parsed.password.is_some() {
            summary
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .with_password += 1;
        }
        if let Err(error) = parsed.check(&policy, max_emails) {
            return Some(Ok(refused(error)));
        }
        if options.pending
            && let Some(hash) = &parsed.password
            && legacy_password::check_cost(hash, &CostLimits::TRIGGER).is_err()
        {
            return Some(Ok(refused(LineError::at(LineCode::PasswordTooCostly, "password"))));
        }
        let forms = parsed.forms(&policy);
        if let Some(at) = forms
            .iter()
            .position(|f| first_with.get(f.as_str()).is_some_and(|&l| l != line))
        {
            return Some(Ok(refused(LineError::at_email(LineCode::DuplicateInFile, at))));
        }
        for form in forms {
            first_with.insert(form.as_str().to_owned(), line);
        }
        Some(Ok(if done.contains(&line) {
            Checked::Done
        } else {
            Checked::Ready(line, Box::new(parsed))
        }))
    });

    let mut entries = futures::stream::iter(checked)
        .map(|checked| async move {
            match checked? {
                Checked::Refused(entry) => Ok(Some(entry)),
                Checked::Done => Ok(None),
                Checked::Ready(line, parsed) if options.dry_run => {
                    Ok(Some(check_table(target, line, &parsed, now).await))
                }
                Checked::Ready(line, parsed) if options.pending && parsed.password.is_some() => {
                    Ok(Some(import_pending(target, line, &parsed, now).await))
                }
                Checked::Ready(line, parsed) => Ok(Some(import_line(target, line, &parsed, now).await)),
            }
        })
        .buffer_unordered(LINES_AT_ONCE);
    while let Some(entry) = entries.next().await {
        bar.inc(1);
        let Some(entry) = entry? else {
            summary
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .skipped += 1;
            continue;
        };
        let mut text = serde_json::to_string(&entry).unwrap_or_default();
        text.push('\n');
        out.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write_all(text.as_bytes())
            .map_err(|e| ImportError::Io(report.display().to_string(), e))?;
        summary
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .count(&entry);
    }
    drop(entries);
    out.into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .flush()
        .map_err(|e| ImportError::Io(report.display().to_string(), e))?;
    let mut summary = summary.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    summary.lines = summary.created + summary.existing + summary.valid + summary.skipped + summary.failures();
    summary.throttled = target.pool.throttled();
    Ok(summary)
}

fn failed(line: u64, error: LineError) -> Entry {
    Entry {
        line,
        sub: None,
        outcome: Outcome::Failed,
        error: Some(error),
    }
}

/// A dry run's look at the table: a person erased since an earlier import,
/// and an address another user holds in a way the import would not take over
/// (a verified claim; for an unverified address, any live claim). The line's
/// own person (imported before: the verified holder of its primary, which a
/// real run finds `existing`) holds nothing against it.
async fn check_table(target: &Target<'_>, line: u64, parsed: &UserLine, now: Timestamp) -> Entry {
    match checked_table(target, parsed, now).await {
        Ok(None) => Entry {
            line,
            sub: None,
            outcome: Outcome::Valid,
            error: None,
        },
        Ok(Some(error)) => failed(line, error),
        Err(_) => failed(line, LineError::new(LineCode::Unavailable)),
    }
}

async fn checked_table(
    target: &Target<'_>,
    parsed: &UserLine,
    now: Timestamp,
) -> Result<Option<LineError>, StoreError> {
    let Some(primary) = parsed.primary() else {
        return Ok(Some(LineError::at(LineCode::NoPrimary, "emails")));
    };
    let store = target.store;
    let import_key = store.import_key(&primary.address)?;
    if store.erased_import(&import_key).await? {
        return Ok(Some(LineError::at(LineCode::Erased, "emails")));
    }
    let own = store.line_holder(&primary.address, &import_key).await?;
    for (at, email) in parsed.emails.iter().enumerate() {
        let holders = store.claim_holders(&email.address, now).await?;
        let taken = holders
            .iter()
            .any(|(holder, verified)| Some(holder) != own.as_ref() && (*verified || !email.verified));
        if taken {
            return Ok(Some(LineError::at_email(LineCode::AddressOwned, at)));
        }
    }
    Ok(None)
}

/// One line: Cognito's user (created, or found), confirmed with a password
/// nobody knows (so forgot-password works), disabled when suspended,
/// then the profile and its addresses in one transaction. A user this run
/// created whose profile the table refuses is deleted again, so Cognito and
/// the table keep agreeing.
async fn import_line(target: &Target<'_>, line: u64, parsed: &UserLine, now: Timestamp) -> Entry {
    let Some(primary) = parsed.primary() else {
        return failed(line, LineError::at(LineCode::NoPrimary, "emails"));
    };
    let import_key = match unerased(target, &primary.address).await {
        Ok(import_key) => import_key,
        Err(error) => return failed(line, error),
    };
    let (user, created, password) = match target.pool.create(&primary.address).await {
        Ok(Creation::Created(user)) => (user, true, true),
        Ok(Creation::PasswordPending(user)) => (user, false, true),
        Ok(Creation::Existing(user)) => (user, false, false),
        Ok(Creation::Unconfirmed) => return failed(line, LineError::at(LineCode::CognitoConflict, "emails")),
        Err(err) => return failed(line, cognito_failure(&err)),
    };
    if password && let Err(err) = target.pool.set_unknown_password(&user).await {
        return failed(line, cognito_failure(&err));
    }
    if UserStatus::from(parsed.status) == UserStatus::Suspended
        && let Err(err) = target.pool.disable(&user).await
    {
        return failed(line, cognito_failure(&err));
    }
    let Some(mut account) = parsed.account(user.clone(), now) else {
        return failed(line, LineError::at(LineCode::NoPrimary, "emails"));
    };
    account.import_key = Some(import_key.clone());
    let error = match target.store.create_account(&account, now).await {
        Ok(Created::New) => {
            return Entry {
                line,
                sub: Some(user),
                outcome: if created { Outcome::Created } else { Outcome::Existing },
                error: None,
            };
        }
        Ok(Created::Existing) => return existing(target, line, user, &import_key).await,
        Err(StoreError::ErasedBefore) => LineError::at(LineCode::Erased, "emails"),
        Err(StoreError::EmailTaken | StoreError::AlreadyAdded) => LineError::at(LineCode::AddressOwned, "emails"),
        Err(StoreError::LimitReached) => LineError::at(LineCode::TooManyEmails, "emails"),
        // Throttled, unavailable, contended: a re-run completes it.
        Err(_) => return failed(line, LineError::new(LineCode::Unavailable)),
    };
    // Refused for good: nothing of the user stays in Cognito either, unless
    // Cognito had it before this run (then the report says so, and it stays).
    if created && target.pool.delete(&user).await.is_err() {
        return failed(line, LineError::new(LineCode::Unavailable));
    }
    failed(line, error)
}

/// One line with a password hash, `--pending`: the profile and its addresses
/// under the provisional id of the primary, and the hash apart, in one
/// transaction; no Cognito user until the migration trigger makes one.
async fn import_pending(target: &Target<'_>, line: u64, parsed: &UserLine, now: Timestamp) -> Entry {
    let Some(password) = &parsed.password else {
        return failed(line, LineError::at(LineCode::NoPrimary, "emails"));
    };
    let Some(mut account) = parsed.account(UserId::new_pending(), now) else {
        return failed(line, LineError::at(LineCode::NoPrimary, "emails"));
    };
    let import_key = match unerased(target, &account.user.email).await {
        Ok(import_key) => import_key,
        Err(error) => return failed(line, error),
    };
    account.import_key = Some(import_key.clone());
    let error = match target.store.create_pending_account(&account, password, now).await {
        Ok((user, Created::New)) => {
            return Entry {
                line,
                sub: Some(user),
                outcome: Outcome::Created,
                error: None,
            };
        }
        Ok((user, Created::Existing)) => return existing(target, line, user, &import_key).await,
        Err(StoreError::ErasedBefore) => LineError::at(LineCode::Erased, "emails"),
        Err(StoreError::EmailTaken | StoreError::AlreadyAdded) => LineError::at(LineCode::AddressOwned, "emails"),
        Err(StoreError::LimitReached) => LineError::at(LineCode::TooManyEmails, "emails"),
        Err(_) => LineError::new(LineCode::Unavailable),
    };
    failed(line, error)
}

/// The line's import key, once the table confirms its person was not erased
/// since an earlier import (the write checks it again, in the same transaction).
async fn unerased(target: &Target<'_>, primary: &EmailAddress) -> Result<ImportKey, LineError> {
    let unavailable = |_| LineError::new(LineCode::Unavailable);
    let import_key = target.store.import_key(primary).map_err(unavailable)?;
    match target.store.erased_import(&import_key).await {
        Ok(false) => Ok(import_key),
        Ok(true) => Err(LineError::at(LineCode::Erased, "emails")),
        Err(err) => Err(unavailable(err)),
    }
}

/// A line imported before: its profile records the import key from now on
/// (one imported before keys were kept gets it here), so its erasure is
/// remembered.
async fn existing(target: &Target<'_>, line: u64, user: UserId, import_key: &ImportKey) -> Entry {
    if target.store.record_import_key(&user, import_key).await.is_err() {
        return failed(line, LineError::new(LineCode::Unavailable));
    }
    Entry {
        line,
        sub: Some(user),
        outcome: Outcome::Existing,
        error: None,
    }
}

fn cognito_failure(err: &CallError) -> LineError {
    match err {
        CallError::Exhausted(..) => LineError::new(LineCode::Unavailable),
        CallError::Refused(..) => LineError::at(LineCode::CognitoConflict, "emails"),
    }
}
