//! `cargo xtask canonicalize`: moves a live table to another
//! `EMAIL_CANONICALIZATION`. A survey scans every email record and groups them
//! by the form the new policy gives them; a group of more than one record is a
//! collision (two accounts, or one account twice, would share one claim),
//! listed by `sub` and email id. The migration refuses while any exists; then
//! it moves each record whose form changes, one transaction each
//! (`Store::move_claim`), paced. Every move is atomic and conditioned on what
//! was read, so a run cut short leaves a consistent table, and a re-run
//! (which surveys again) finishes the job.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use user_service::address_policy::{CanonicalEmail, Canonicalization};
use user_service::domain::{EmailAddress, EmailId, UserId};
use user_service::reconcile::Pace;
use user_service::store::{Moved, ScannedRecord, Store, StoreError};

/// Items a scan page evaluates at most.
const SCAN_PAGE_ITEMS: i32 = 1_000;
/// Moves in flight at once; the pace bounds their rate. At 20-30 ms a move
/// (a read, then a transaction) 32 allow about 1,000 a second.
const MOVES_AT_ONCE: usize = 32;

/// One record of a collision group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The owner's `sub`.
    pub user_id: UserId,
    /// The record.
    pub email_id: EmailId,
    /// Whether the owner verified it.
    pub verified: bool,
    /// The address as typed, for records the survey read (printed only with `--show-addresses`).
    pub email: Option<EmailAddress>,
}

/// Records the new policy would put on one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// The form they share.
    pub form: CanonicalEmail,
    /// Every record on it: two or more.
    pub holders: Vec<Holder>,
}

/// What the survey found.
#[derive(Debug, Default)]
pub struct Survey {
    /// Email records in the table.
    pub records: u64,
    /// Records whose form changes, with the form they move to.
    pub moving: Vec<(ScannedRecord, CanonicalEmail)>,
    /// Groups that would share a claim; the migration refuses while any exists.
    pub collisions: Vec<Collision>,
}

/// What a migration did, record by record.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Moved to the new form.
    pub moved: u64,
    /// On the new form already.
    pub already: u64,
    /// Changed by their user since the survey: a re-run moves them.
    pub changed: u64,
    /// Another claim took the new form since the survey: to resolve, then re-run.
    pub collided: u64,
    /// Without their claim (the invariant checker's to explain).
    pub no_claim: u64,
}

impl Tally {
    /// Whether every record is on the new form.
    pub fn is_complete(&self) -> bool {
        self.changed == 0 && self.collided == 0 && self.no_claim == 0
    }
}

/// A 128-bit fingerprint of a form: the survey keeps this, not the address,
/// for every record that stays where it is.
fn fingerprint(form: &CanonicalEmail) -> u128 {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, form.as_str().as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest.as_ref()[..16]);
    u128::from_le_bytes(bytes)
}

#[derive(Default)]
struct Groups {
    records: u64,
    /// Forms of the records that stay: claims already on them.
    settled: HashSet<u128>,
    /// Records that move, by the fingerprint of their new form.
    moving: HashMap<u128, Vec<(ScannedRecord, CanonicalEmail)>>,
}

/// Scans every email record (`segments` at once) and groups them by the form
/// `to` gives them. Memory: about 32 bytes a record that stays and 250 a
/// record that moves (1.3 GB for 10M users of whom a third move).
pub async fn survey(
    store: &Store,
    to: Canonicalization,
    segments: u32,
    bar: &ProgressBar,
) -> Result<Survey, StoreError> {
    let groups = Mutex::new(Groups::default());
    let segments = segments.max(1);
    let scans = (0..segments).map(|segment| {
        let groups = &groups;
        async move {
            let mut after = None;
            loop {
                let page = store
                    .scan_email_records(segment, segments, SCAN_PAGE_ITEMS, after)
                    .await?;
                bar.inc(page.records.len() as u64);
                let mut groups = groups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                for record in page.records {
                    groups.records += 1;
                    let form = to.canonical(&record.email);
                    let key = fingerprint(&form);
                    if form == record.canonical {
                        groups.settled.insert(key);
                    } else {
                        groups.moving.entry(key).or_default().push((record, form));
                    }
                }
                drop(groups);
                match page.next {
                    Some(next) => after = Some(next),
                    None => return Ok::<(), StoreError>(()),
                }
            }
        }
    });
    futures::future::try_join_all(scans).await?;
    let groups = groups.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut survey = Survey {
        records: groups.records,
        ..Survey::default()
    };
    for (key, records) in groups.moving {
        // Two records that stay never share a form: their claims are distinct
        // now. A collision always has a record that moves.
        if records.len() == 1 && !groups.settled.contains(&key) {
            survey.moving.extend(records);
            continue;
        }
        let form = records[0].1.clone();
        let mut holders: Vec<Holder> = records
            .iter()
            .map(|(record, _)| Holder {
                user_id: record.user_id.clone(),
                email_id: record.email_id,
                verified: record.is_verified,
                email: Some(record.email.clone()),
            })
            .collect();
        if groups.settled.contains(&key)
            && let Some((user_id, email_id, verified)) = store.claim_holder(&form).await?
        {
            holders.push(Holder {
                user_id,
                email_id,
                verified,
                email: None,
            });
        }
        holders.sort_by(|a, b| (a.user_id.as_str(), a.email_id).cmp(&(b.user_id.as_str(), b.email_id)));
        survey.collisions.push(Collision { form, holders });
    }
    survey
        .moving
        .sort_by(|a, b| a.0.user_id.as_str().cmp(b.0.user_id.as_str()));
    survey.collisions.sort_by(|a, b| a.form.as_str().cmp(b.form.as_str()));
    Ok(survey)
}

/// Moves every record of `moving` to its new form, at most `per_second`
/// moves a second. Refuses nothing: the caller surveys first.
pub async fn migrate(
    store: &Store,
    moving: &[(ScannedRecord, CanonicalEmail)],
    per_second: f64,
    bar: &ProgressBar,
) -> Result<Tally, StoreError> {
    let pace = Pace::new(per_second);
    let mut outcomes = futures::stream::iter(moving)
        .map(|(record, to)| {
            let pace = &pace;
            async move {
                // No deadline: the pace only spaces the moves.
                let _ = pace.take(None).await;
                store.move_claim(record, to).await
            }
        })
        .buffer_unordered(MOVES_AT_ONCE);
    let mut tally = Tally::default();
    while let Some(outcome) = outcomes.next().await {
        match outcome? {
            Moved::Done => tally.moved += 1,
            Moved::Already => tally.already += 1,
            Moved::Changed => tally.changed += 1,
            Moved::Collision => tally.collided += 1,
            Moved::NoClaim => tally.no_claim += 1,
        }
        bar.inc(1);
    }
    Ok(tally)
}

/// A progress bar on stderr (drawn only on a terminal) of `len` steps, or of
/// none when `len` is unknown.
pub fn progress(what: &'static str, len: Option<u64>) -> ProgressBar {
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    let template = if len.is_some() {
        "{prefix} [{bar:40}] {pos}/{len} ({per_sec}, {eta} left)"
    } else {
        "{prefix} {pos} records ({per_sec})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(what);
    bar
}

/// The survey's report, one line a fact; addresses only when `show_addresses`.
pub fn report(survey: &Survey, show_addresses: bool) -> String {
    let mut out = format!(
        "records: {}\nto move: {}\ncollisions: {}\n",
        survey.records,
        survey.moving.len(),
        survey.collisions.len()
    );
    for (n, collision) in survey.collisions.iter().enumerate() {
        let form = if show_addresses {
            collision.form.as_str().to_owned()
        } else {
            "(hidden; --show-addresses prints it)".to_owned()
        };
        out.push_str(&format!(
            "collision {}: {} records on {form}\n",
            n + 1,
            collision.holders.len()
        ));
        for holder in &collision.holders {
            let address = match (&holder.email, show_addresses) {
                (Some(email), true) => format!(" address={}", email.as_str()),
                _ => String::new(),
            };
            out.push_str(&format!(
                "  sub={} emailId={} verified={}{address}\n",
                holder.user_id, holder.email_id, holder.verified
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(user: &str, typed: &str) -> ScannedRecord {
        let email = EmailAddress::parse(typed).unwrap();
        ScannedRecord {
            user_id: UserId::parse(user).unwrap(),
            email_id: EmailId::new(),
            canonical: Canonicalization::NONE.canonical(&email),
            email,
            is_verified: true,
        }
    }

    #[test]
    fn the_report_names_holders_by_sub_and_email_id_and_hides_addresses_unless_asked() {
        let gmail = Canonicalization::parse("gmail").unwrap();
        let a = record("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e", "a.da@gmail.com");
        let survey = Survey {
            records: 2,
            moving: vec![],
            collisions: vec![Collision {
                form: gmail.canonical(&a.email),
                holders: vec![Holder {
                    user_id: a.user_id.clone(),
                    email_id: a.email_id,
                    verified: true,
                    email: Some(a.email.clone()),
                }],
            }],
        };
        let hidden = report(&survey, false);
        assert!(!hidden.contains('@'), "{hidden}");
        assert!(
            hidden.contains(&format!("sub={} emailId={}", a.user_id, a.email_id)),
            "{hidden}"
        );
        assert!(hidden.contains("collisions: 1"));
        let shown = report(&survey, true);
        assert!(
            shown.contains("on ada@gmail.com") && shown.contains("address=a.da@gmail.com"),
            "{shown}"
        );
    }

    #[test]
    fn fingerprints_tell_forms_apart() {
        let none = Canonicalization::NONE;
        let a = none.canonical(&EmailAddress::parse("ada@gmail.com").unwrap());
        let b = none.canonical(&EmailAddress::parse("a.da@gmail.com").unwrap());
        assert_ne!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
    }
}
