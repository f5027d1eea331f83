//! The reference model: the store's rules as plain Rust over a few users and
//! addresses, with time as whole seconds. Each transition computes the outcome
//! the store must give (the value, or the exact domain error) and the state after.
//!
//! Precedence of errors, where several apply, is the store's documented order:
//! the caller's record before the account (a record of another user is not
//! found), limits before the account where the store reads them first. It is
//! written here once, per operation, as the spec of what a client sees.

use proptest::prelude::*;
use proptest_state_machine::ReferenceStateMachine;
use user_service::config::{CODES_NEVER_CROWDED_OUT, StoreConfig};

pub(crate) const USERS: usize = 3;
/// Shared addresses: every user may try every one, so claims collide often.
pub(crate) const ADDRS: usize = 5;
/// The rolling window of every rate limit.
pub(crate) const WINDOW: i64 = 86_400;

pub(crate) const FIRST_NAMES: [&str; 3] = ["Grace", "Alan", "Edsger"];
pub(crate) const PHONES: [&str; 2] = ["+14155550100", "+442071838750"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Active,
    Suspended,
    Deleted,
}

/// How an address is spelled in a request; the store must treat all alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spelling {
    Lower,
    Upper,
    /// Upper case with surrounding blanks.
    Padded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) status: Status,
    pub(crate) version: u64,
    pub(crate) email: Option<usize>,
    pub(crate) first_name: Option<String>,
    pub(crate) last_name: Option<String>,
    pub(crate) phone: Option<String>,
    pub(crate) email_count: u32,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    /// The address Cognito signs the user in with: the sign-up's, as nothing
    /// here runs the stream consumer that would move it to a new primary.
    pub(crate) cognito_email: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Code {
    pub(crate) expires_at: i64,
    pub(crate) attempts: u32,
    pub(crate) sent_at: i64,
}

/// The one record of an address (every address belongs to at most one user)
/// together with its claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) owner: usize,
    pub(crate) primary: bool,
    pub(crate) verified: bool,
    pub(crate) verified_at: Option<i64>,
    pub(crate) created_at: i64,
    pub(crate) code: Option<Code>,
    /// `None` once verified: the claim is permanent.
    pub(crate) claim_expires_at: Option<i64>,
    /// Until when a switch away from it can be undone: removed before then,
    /// its claim stays, reserved to its owner.
    pub(crate) reserved_until: Option<i64>,
}

impl Record {
    fn claim_live(&self, now: i64) -> bool {
        self.claim_expires_at.is_none_or(|at| at > now)
    }
}

/// A user and an address: wrong codes, and when the user first added it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserAddress {
    pub(crate) wrong_codes: Vec<i64>,
    pub(crate) first_added_at: Option<i64>,
}

/// A domain failure, with the payload a client sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    NotFound,
    AccountInactive,
    EmailTaken,
    AlreadyAdded,
    LimitReached,
    NotVerified,
    AlreadyVerified,
    PrimaryEmail,
    SignInAddressPending,
    VersionMismatch(u64),
    VerificationFailed(u32),
    VerificationExpired,
    TooManyAttempts(u64),
    TooManyRequests(u64),
    /// Anything else (infrastructure, inconsistency): never predicted.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProfileView {
    pub(crate) email: Option<usize>,
    pub(crate) first_name: Option<String>,
    pub(crate) last_name: Option<String>,
    pub(crate) phone: Option<String>,
    pub(crate) status: Status,
    pub(crate) version: u64,
    pub(crate) email_count: u32,
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct EmailView {
    pub(crate) created_at: i64,
    pub(crate) addr: usize,
    pub(crate) primary: bool,
    pub(crate) verified: bool,
    pub(crate) verified_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Created {
        new: bool,
    },
    Profile(ProfileView),
    Email(EmailView),
    /// Sorted by (created_at, address): records made in the same instant have
    /// no order the model can know.
    Emails(Vec<EmailView>),
    Account(ProfileView, Vec<EmailView>),
    Address(usize),
    Flag(bool),
    Done,
}

pub(crate) type Outcome = Result<Value, Fail>;

/// What a user looks like from outside: the account (or not found) and the
/// stored status (a deleted profile stays, erased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserView {
    pub(crate) account: Outcome,
    pub(crate) status: Option<Status>,
}

/// What an address looks like from outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AddressView {
    pub(crate) available: bool,
    pub(crate) owned: bool,
    /// The holder through GSI1, if any.
    pub(crate) holder: Option<usize>,
}

#[derive(Debug, Clone)]
pub(crate) enum Transition {
    SignUp {
        user: usize,
        addr: usize,
        spelling: Spelling,
    },
    UpdateProfile {
        user: usize,
        expected_version: u64,
        first_name: Option<usize>,
        phone: Option<Option<usize>>,
    },
    AddEmail {
        user: usize,
        addr: usize,
        spelling: Spelling,
    },
    ResendCode {
        user: usize,
        addr: usize,
    },
    Verify {
        user: usize,
        addr: usize,
        right_code: bool,
    },
    SetPrimary {
        user: usize,
        addr: usize,
    },
    RemoveEmail {
        user: usize,
        addr: usize,
    },
    DeleteAccount {
        user: usize,
        expected_version: u64,
    },
    SetStatus {
        user: usize,
        status: Status,
    },
    GetProfile {
        user: usize,
    },
    GetAccount {
        user: usize,
    },
    ListEmails {
        user: usize,
    },
    GetEmail {
        user: usize,
        addr: usize,
    },
    CheckAvailability {
        addr: usize,
        spelling: Spelling,
    },
    IsOwned {
        addr: usize,
    },
    FindByEmail {
        addr: usize,
        spelling: Spelling,
    },
    AdvanceClock {
        seconds: i64,
    },
}

impl Transition {
    /// The operation's name, for the figures.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::SignUp { .. } => "create_user",
            Self::UpdateProfile { .. } => "update_profile",
            Self::AddEmail { .. } => "add_email",
            Self::ResendCode { .. } => "issue_code",
            Self::Verify { right_code: true, .. } => "verify_email(right)",
            Self::Verify { right_code: false, .. } => "verify_email(wrong)",
            Self::SetPrimary { .. } => "set_primary",
            Self::RemoveEmail { .. } => "remove_email",
            Self::DeleteAccount { .. } => "delete_user",
            Self::SetStatus {
                status: Status::Active, ..
            } => "set_status(active)",
            Self::SetStatus {
                status: Status::Suspended,
                ..
            } => "set_status(suspended)",
            Self::SetStatus {
                status: Status::Deleted,
                ..
            } => "set_status(deleted)",
            Self::GetProfile { .. } => "get_profile",
            Self::GetAccount { .. } => "get_account",
            Self::ListEmails { .. } => "list_emails",
            Self::GetEmail { .. } => "get_email",
            Self::CheckAvailability { .. } => "is_available",
            Self::IsOwned { .. } => "is_owned",
            Self::FindByEmail { .. } => "find_by_email",
            Self::AdvanceClock { .. } => "advance_clock",
        }
    }

    /// Whether the transition may change what is stored.
    pub(crate) fn writes(&self) -> bool {
        matches!(
            self,
            Self::SignUp { .. }
                | Self::UpdateProfile { .. }
                | Self::AddEmail { .. }
                | Self::ResendCode { .. }
                | Self::Verify { .. }
                | Self::SetPrimary { .. }
                | Self::RemoveEmail { .. }
                | Self::DeleteAccount { .. }
                | Self::SetStatus { .. }
        )
    }
}

/// Everything stored, in the model's terms: what a scan of the case's table
/// must show. Counters hold only the events inside the window ending now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) users: [Option<User>; USERS],
    pub(crate) records: [Option<Record>; ADDRS],
    /// The holder each address's claim names.
    pub(crate) claims: [Option<usize>; ADDRS],
    /// Until when the claim of an address removed from its owner reserves it.
    pub(crate) reservations: [Option<i64>; ADDRS],
    pub(crate) codes_issued: [Vec<i64>; ADDRS],
    pub(crate) codes_requested: [[Vec<i64>; ADDRS]; USERS],
    pub(crate) codes_sent: [Vec<i64>; USERS],
    pub(crate) wrong_codes: [Vec<i64>; USERS],
    pub(crate) user_address: [[UserAddress; ADDRS]; USERS],
}

impl Snapshot {
    /// Fails with the first part that differs from `expected`.
    pub(crate) fn assert_eq(&self, expected: &Snapshot, when: &str) {
        for u in 0..USERS {
            assert_eq!(self.users[u], expected.users[u], "profile of user {u} {when}");
            assert_eq!(
                self.wrong_codes[u], expected.wrong_codes[u],
                "wrong codes of user {u} {when}"
            );
            assert_eq!(
                self.codes_sent[u], expected.codes_sent[u],
                "codes sent by user {u} {when}"
            );
            for a in 0..ADDRS {
                assert_eq!(
                    self.codes_requested[u][a], expected.codes_requested[u][a],
                    "codes user {u} sent to address {a} {when}"
                );
                assert_eq!(
                    self.user_address[u][a], expected.user_address[u][a],
                    "counter of user {u} and address {a} {when}"
                );
            }
        }
        for a in 0..ADDRS {
            assert_eq!(self.records[a], expected.records[a], "record of address {a} {when}");
            assert_eq!(self.claims[a], expected.claims[a], "claim of address {a} {when}");
            assert_eq!(
                self.reservations[a], expected.reservations[a],
                "reservation of address {a} {when}"
            );
            assert_eq!(
                self.codes_issued[a], expected.codes_issued[a],
                "codes issued to address {a} {when}"
            );
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub(crate) config: StoreConfig,
    /// Seconds since the case's start.
    pub(crate) now: i64,
    pub(crate) users: [Option<User>; USERS],
    pub(crate) records: [Option<Record>; ADDRS],
    /// An address removed while a switch away from it could be undone: its
    /// owner, and until when its claim reserves it to them.
    pub(crate) reserved: [Option<(usize, i64)>; ADDRS],
    pub(crate) codes_issued: [Vec<i64>; ADDRS],
    pub(crate) codes_requested: [[Vec<i64>; ADDRS]; USERS],
    pub(crate) codes_sent: [Vec<i64>; USERS],
    pub(crate) wrong_codes: [Vec<i64>; USERS],
    pub(crate) user_address: [[UserAddress; ADDRS]; USERS],
    /// The outcome the last transition must have had.
    pub(crate) expected: Outcome,
}

/// The events still inside the window ending at `now`.
pub(crate) fn recent(events: &[i64], now: i64) -> Vec<i64> {
    events.iter().copied().filter(|t| *t > now - WINDOW).collect()
}

/// Room for one more event under `cap`, or the seconds until the window frees a slot.
fn admit(events: &[i64], cap: u32, now: i64) -> Result<(), u64> {
    let events = recent(events, now);
    let cap = cap as usize;
    if events.len() < cap {
        return Ok(());
    }
    let blocking = events[events.len() - cap.max(1)];
    Err(u64::try_from(blocking + WINDOW - now).unwrap_or(0).max(1))
}

fn left(events: &[i64], cap: u32, now: i64) -> u32 {
    cap.saturating_sub(recent(events, now).len() as u32)
}

fn secs(from: i64, to: i64) -> u64 {
    u64::try_from(to - from).unwrap_or(0)
}

/// Limits small enough that short sequences reach them.
pub(crate) fn tight() -> StoreConfig {
    StoreConfig {
        max_emails_per_user: 2,
        verification_ttl_seconds: 3_600,
        code_ttl_seconds: 900,
        verification_max_attempts: 2,
        max_wrong_codes_per_address: 3,
        max_wrong_codes_per_user: 4,
        max_codes_per_address: 3,
        max_codes_per_user_address: 3,
        max_codes_per_user: 4,
        resend_interval_seconds: 60,
        ..StoreConfig::new("model")
    }
}

/// Other small limits, with a code that outlives the claim's hold.
pub(crate) fn mixed() -> StoreConfig {
    StoreConfig {
        max_emails_per_user: 3,
        verification_ttl_seconds: 600,
        code_ttl_seconds: 900,
        verification_max_attempts: 3,
        max_wrong_codes_per_address: 4,
        max_wrong_codes_per_user: 6,
        max_codes_per_address: 4,
        max_codes_per_user_address: 3,
        max_codes_per_user: 6,
        resend_interval_seconds: 120,
        ..StoreConfig::new("model")
    }
}

/// One guess per code and few a day: the refusals of guessing, reached quickly.
pub(crate) fn guesses() -> StoreConfig {
    StoreConfig {
        max_emails_per_user: 3,
        verification_ttl_seconds: 3_600,
        code_ttl_seconds: 120,
        verification_max_attempts: 1,
        max_wrong_codes_per_address: 2,
        max_wrong_codes_per_user: 3,
        max_codes_per_address: 2,
        max_codes_per_user_address: 3,
        max_codes_per_user: 5,
        resend_interval_seconds: 60,
        ..StoreConfig::new("model")
    }
}

/// The production defaults.
pub(crate) fn defaults() -> StoreConfig {
    StoreConfig::new("model")
}

impl Model {
    pub(crate) fn new(config: StoreConfig) -> Self {
        Self {
            config,
            now: 0,
            users: Default::default(),
            records: Default::default(),
            reserved: Default::default(),
            codes_issued: Default::default(),
            codes_requested: Default::default(),
            codes_sent: Default::default(),
            wrong_codes: Default::default(),
            user_address: Default::default(),
            expected: Ok(Value::Done),
        }
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        let now = self.now;
        let mut user_address: [[UserAddress; ADDRS]; USERS] = Default::default();
        for (u, row) in self.user_address.iter().enumerate() {
            for (a, window) in row.iter().enumerate() {
                user_address[u][a] = UserAddress {
                    wrong_codes: recent(&window.wrong_codes, now),
                    first_added_at: window.first_added_at,
                };
            }
        }
        Snapshot {
            users: self.users.clone(),
            records: self.records.clone(),
            claims: std::array::from_fn(|a| {
                self.records[a]
                    .as_ref()
                    .map(|r| r.owner)
                    .or(self.reserved[a].map(|(owner, _)| owner))
            }),
            reservations: std::array::from_fn(|a| self.reserved[a].map(|(_, until)| until)),
            codes_issued: std::array::from_fn(|a| recent(&self.codes_issued[a], now)),
            codes_requested: std::array::from_fn(|u| std::array::from_fn(|a| recent(&self.codes_requested[u][a], now))),
            codes_sent: std::array::from_fn(|u| recent(&self.codes_sent[u], now)),
            wrong_codes: std::array::from_fn(|u| recent(&self.wrong_codes[u], now)),
            user_address,
        }
    }

    fn refusal(&self, user: usize) -> Option<Fail> {
        match self.users[user].as_ref().map(|u| u.status) {
            None | Some(Status::Deleted) => Some(Fail::NotFound),
            Some(Status::Suspended) => Some(Fail::AccountInactive),
            Some(Status::Active) => None,
        }
    }

    fn visible(&self, user: usize) -> Result<&User, Fail> {
        match &self.users[user] {
            Some(u) if u.status != Status::Deleted => Ok(u),
            _ => Err(Fail::NotFound),
        }
    }

    /// The record of `addr` if `user` holds it.
    fn own_record(&self, user: usize, addr: usize) -> Result<&Record, Fail> {
        self.records[addr]
            .as_ref()
            .filter(|r| r.owner == user)
            .ok_or(Fail::NotFound)
    }

    pub(crate) fn profile_view(&self, user: usize) -> Option<ProfileView> {
        self.users[user].as_ref().map(|u| ProfileView {
            email: u.email,
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
            phone: u.phone.clone(),
            status: u.status,
            version: u.version,
            email_count: u.email_count,
            created_at: u.created_at,
            updated_at: u.updated_at,
        })
    }

    pub(crate) fn email_view(&self, addr: usize) -> Option<EmailView> {
        self.records[addr].as_ref().map(|r| EmailView {
            created_at: r.created_at,
            addr,
            primary: r.primary,
            verified: r.verified,
            verified_at: r.verified_at,
        })
    }

    pub(crate) fn emails_of(&self, user: usize) -> Vec<EmailView> {
        let mut emails: Vec<EmailView> = (0..ADDRS)
            .filter(|a| self.records[*a].as_ref().is_some_and(|r| r.owner == user))
            .filter_map(|a| self.email_view(a))
            .collect();
        emails.sort();
        emails
    }

    fn account(&self, user: usize) -> Outcome {
        self.visible(user)?;
        let profile = self.profile_view(user).ok_or(Fail::NotFound)?;
        Ok(Value::Account(profile, self.emails_of(user)))
    }

    pub(crate) fn user_view(&self, user: usize) -> UserView {
        UserView {
            account: self.account(user),
            status: self.users[user].as_ref().map(|u| u.status),
        }
    }

    pub(crate) fn address_view(&self, addr: usize) -> AddressView {
        let record = self.records[addr].as_ref();
        let reserved = self.reserved[addr].filter(|(_, until)| *until > self.now);
        AddressView {
            available: record.is_none_or(|r| !r.claim_live(self.now)) && reserved.is_none(),
            // A reservation makes the address its account's, removed or added back unverified.
            owned: record.is_some_and(|r| r.verified) || self.is_reserved(addr),
            holder: record.map(|r| r.owner),
        }
    }

    fn user_mut(&mut self, user: usize) -> &mut User {
        self.users[user].as_mut().expect("the model checked the user exists")
    }

    /// Whether the address is reserved to a user for a recovery, removed or
    /// added back unverified.
    fn is_reserved(&self, addr: usize) -> bool {
        let now = self.now;
        self.reserved[addr].is_some_and(|(_, until)| until > now)
            || self.records[addr]
                .as_ref()
                .is_some_and(|r| !r.verified && r.reserved_until.is_some_and(|until| until > now))
    }

    /// Removes an unverified record another user's claim takes over.
    fn take_over(&mut self, addr: usize) {
        if let Some(old) = self.records[addr].take() {
            self.user_mut(old.owner).email_count -= 1;
        }
    }

    fn erase(&mut self, user: usize) -> Outcome {
        for record in &mut self.records {
            if record.as_ref().is_some_and(|r| r.owner == user) {
                *record = None;
            }
        }
        for reservation in &mut self.reserved {
            if reservation.is_some_and(|(owner, _)| owner == user) {
                *reservation = None;
            }
        }
        let now = self.now;
        let u = self.user_mut(user);
        u.status = Status::Deleted;
        u.email_count = 0;
        u.email = None;
        u.first_name = None;
        u.last_name = None;
        u.phone = None;
        u.cognito_email = None;
        u.version += 1;
        u.updated_at = now;
        Ok(Value::Profile(self.profile_view(user).expect("just erased")))
    }

    fn profile_value(&self, user: usize) -> Outcome {
        Ok(Value::Profile(self.profile_view(user).ok_or(Fail::NotFound)?))
    }

    fn sign_up(&mut self, user: usize, addr: usize) -> Outcome {
        // Idempotent: a repeated delivery finds the user, whatever its status.
        if self.users[user].is_some() {
            return Ok(Value::Created { new: false });
        }
        if self.records[addr].as_ref().is_some_and(|r| r.verified) || self.is_reserved(addr) {
            return Err(Fail::EmailTaken);
        }
        // A confirmed sign-up takes over any unverified claim, live or not,
        // and a lapsed reservation.
        self.take_over(addr);
        self.reserved[addr] = None;
        let now = self.now;
        self.users[user] = Some(User {
            status: Status::Active,
            version: 1,
            email: Some(addr),
            first_name: Some("Ada".into()),
            last_name: Some("Lovelace".into()),
            phone: None,
            email_count: 1,
            created_at: now,
            updated_at: now,
            cognito_email: Some(addr),
        });
        self.records[addr] = Some(Record {
            owner: user,
            primary: true,
            verified: true,
            verified_at: Some(now),
            created_at: now,
            code: None,
            claim_expires_at: None,
            reserved_until: None,
        });
        Ok(Value::Created { new: true })
    }

    fn update_profile(
        &mut self,
        user: usize,
        expected: u64,
        first: Option<usize>,
        phone: Option<Option<usize>>,
    ) -> Outcome {
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        let now = self.now;
        let u = self.user_mut(user);
        if u.version != expected {
            return Err(Fail::VersionMismatch(u.version));
        }
        if let Some(first) = first {
            u.first_name = Some(FIRST_NAMES[first].into());
        }
        if let Some(phone) = phone {
            u.phone = phone.map(|p| PHONES[p].into());
        }
        u.version += 1;
        u.updated_at = now;
        self.profile_value(user)
    }

    /// The daily caps on codes: the requester's, the pair's, and the address's
    /// past the requester's first codes there.
    fn admit_code(&self, user: usize, addr: usize) -> Result<(), Fail> {
        let (now, c) = (self.now, &self.config);
        let mine = &self.codes_requested[user][addr];
        let mut waits = vec![
            admit(&self.codes_sent[user], c.max_codes_per_user, now),
            admit(mine, c.max_codes_per_user_address, now),
        ];
        if recent(mine, now).len() >= CODES_NEVER_CROWDED_OUT as usize {
            waits.push(admit(&self.codes_issued[addr], c.max_codes_per_address, now));
        }
        match waits.into_iter().filter_map(Result::err).max() {
            Some(wait) => Err(Fail::TooManyRequests(wait)),
            None => Ok(()),
        }
    }

    /// Wrong codes spent on a new code before it is sent: all but one once the
    /// address's count is full.
    fn attempts_spent(&self, addr: usize) -> u32 {
        let full = recent(&self.codes_issued[addr], self.now).len() >= self.config.max_codes_per_address as usize;
        if full {
            self.config.verification_max_attempts - 1
        } else {
            0
        }
    }

    fn count_code(&mut self, user: usize, addr: usize) {
        let now = self.now;
        self.codes_issued[addr].push(now);
        self.codes_requested[user][addr].push(now);
        self.codes_sent[user].push(now);
    }

    fn add_email(&mut self, user: usize, addr: usize) -> Outcome {
        let now = self.now;
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        match &self.records[addr] {
            Some(r) if r.owner == user => return Err(Fail::AlreadyAdded),
            Some(r) if r.verified || r.claim_live(now) => return Err(Fail::EmailTaken),
            _ => {}
        }
        // Reserved to another: taken; to the caller, theirs to take back.
        let reservation = self.reserved[addr];
        if reservation.is_some_and(|(owner, _)| owner != user) && self.is_reserved(addr) {
            return Err(Fail::EmailTaken);
        }
        self.admit_code(user, addr)?;
        if self.user_mut(user).email_count >= self.config.max_emails_per_user {
            return Err(Fail::LimitReached);
        }
        self.take_over(addr);
        self.reserved[addr] = None;
        let reserved_until = reservation
            .filter(|(owner, until)| *owner == user && *until > now)
            .map(|(_, until)| until);
        let window = &mut self.user_address[user][addr];
        // The hold runs from the first add in the last 24 hours.
        let first_added = window.first_added_at.filter(|f| f + WINDOW > now).unwrap_or(now);
        window.first_added_at = Some(first_added);
        let attempts = self.attempts_spent(addr);
        self.count_code(user, addr);
        self.records[addr] = Some(Record {
            owner: user,
            primary: false,
            verified: false,
            verified_at: None,
            created_at: now,
            code: Some(Code {
                expires_at: now + self.config.code_ttl_seconds,
                attempts,
                sent_at: now,
            }),
            claim_expires_at: Some(first_added + self.config.verification_ttl_seconds),
            reserved_until,
        });
        self.user_mut(user).email_count += 1;
        Ok(Value::Email(self.email_view(addr).expect("just added")))
    }

    fn resend(&mut self, user: usize, addr: usize) -> Outcome {
        let now = self.now;
        let record = self.own_record(user, addr)?;
        if record.verified {
            return Err(Fail::AlreadyVerified);
        }
        let sent_at = record.code.as_ref().map(|c| c.sent_at);
        self.admit_code(user, addr)?;
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        let interval = self.config.resend_interval_seconds;
        if let Some(sent) = sent_at.filter(|sent| *sent > now - interval) {
            return Err(Fail::TooManyRequests(secs(now, sent + interval).max(1)));
        }
        let attempts = self.attempts_spent(addr);
        self.count_code(user, addr);
        let expires_at = now + self.config.code_ttl_seconds;
        if let Some(r) = self.records[addr].as_mut() {
            r.code = Some(Code {
                expires_at,
                attempts,
                sent_at: now,
            });
        }
        Ok(Value::Address(addr))
    }

    fn verify(&mut self, user: usize, addr: usize, right: bool) -> Outcome {
        let now = self.now;
        let config = self.config.clone();
        let record = self.own_record(user, addr)?;
        if record.verified {
            return Ok(Value::Email(self.email_view(addr).expect("held")));
        }
        let code = record.code.clone().ok_or(Fail::VerificationExpired)?;
        if code.attempts >= config.verification_max_attempts {
            let next = secs(now, code.sent_at + config.resend_interval_seconds).max(1);
            return Err(Fail::TooManyAttempts(next));
        }
        if code.expires_at <= now {
            return Err(Fail::VerificationExpired);
        }
        admit(&self.wrong_codes[user], config.max_wrong_codes_per_user, now).map_err(Fail::TooManyAttempts)?;
        admit(
            &self.user_address[user][addr].wrong_codes,
            config.max_wrong_codes_per_address,
            now,
        )
        .map_err(Fail::TooManyAttempts)?;
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        let r = self.records[addr].as_mut().expect("held");
        if right {
            r.verified = true;
            r.verified_at = Some(now);
            r.code = None;
            r.claim_expires_at = None;
            return Ok(Value::Email(self.email_view(addr).expect("held")));
        }
        if let Some(c) = r.code.as_mut() {
            c.attempts += 1;
        }
        self.wrong_codes[user].push(now);
        self.user_address[user][addr].wrong_codes.push(now);
        // Wrong codes still allowed after this one, by the tightest limit.
        let attempts_left = (config.verification_max_attempts - code.attempts - 1)
            .min(left(&self.wrong_codes[user], config.max_wrong_codes_per_user, now))
            .min(left(
                &self.user_address[user][addr].wrong_codes,
                config.max_wrong_codes_per_address,
                now,
            ));
        Err(Fail::VerificationFailed(attempts_left))
    }

    fn set_primary(&mut self, user: usize, addr: usize) -> Outcome {
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        let record = self.own_record(user, addr)?;
        if record.primary {
            return self.profile_value(user);
        }
        if !record.verified {
            return Err(Fail::NotVerified);
        }
        let now = self.now;
        let until = now + self.config.address_recovery_seconds;
        for r in self.records.iter_mut().flatten().filter(|r| r.owner == user) {
            if r.primary {
                r.reserved_until = Some(until);
            }
            r.primary = false;
        }
        if let Some(r) = self.records[addr].as_mut() {
            r.primary = true;
        }
        let u = self.user_mut(user);
        u.email = Some(addr);
        u.version += 1;
        u.updated_at = now;
        self.profile_value(user)
    }

    fn remove(&mut self, user: usize, addr: usize) -> Outcome {
        if self.own_record(user, addr)?.primary {
            return Err(Fail::PrimaryEmail);
        }
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        if self.user_mut(user).cognito_email == Some(addr) {
            return Err(Fail::SignInAddressPending);
        }
        let now = self.now;
        if let Some(until) = self.records[addr]
            .take()
            .and_then(|r| r.reserved_until)
            .filter(|u| *u > now)
        {
            self.reserved[addr] = Some((user, until));
        }
        self.user_mut(user).email_count -= 1;
        Ok(Value::Done)
    }

    fn delete_account(&mut self, user: usize, expected: u64) -> Outcome {
        if let Some(fail) = self.refusal(user) {
            return Err(fail);
        }
        let version = self.user_mut(user).version;
        if version != expected {
            return Err(Fail::VersionMismatch(version));
        }
        self.erase(user)
    }

    fn set_status(&mut self, user: usize, status: Status) -> Outcome {
        let current = self.visible(user)?.status;
        if status == Status::Deleted {
            return self.erase(user);
        }
        if current != status {
            let now = self.now;
            let u = self.user_mut(user);
            u.status = status;
            u.version += 1;
            u.updated_at = now;
        }
        self.profile_value(user)
    }

    fn step(&mut self, t: &Transition) -> Outcome {
        match *t {
            Transition::SignUp { user, addr, .. } => self.sign_up(user, addr),
            Transition::UpdateProfile {
                user,
                expected_version,
                first_name,
                phone,
            } => self.update_profile(user, expected_version, first_name, phone),
            Transition::AddEmail { user, addr, .. } => self.add_email(user, addr),
            Transition::ResendCode { user, addr } => self.resend(user, addr),
            Transition::Verify { user, addr, right_code } => self.verify(user, addr, right_code),
            Transition::SetPrimary { user, addr } => self.set_primary(user, addr),
            Transition::RemoveEmail { user, addr } => self.remove(user, addr),
            Transition::DeleteAccount { user, expected_version } => self.delete_account(user, expected_version),
            Transition::SetStatus { user, status } => self.set_status(user, status),
            Transition::GetProfile { user } => {
                self.visible(user)?;
                self.profile_value(user)
            }
            Transition::GetAccount { user } => self.account(user),
            // An account always has its primary: no address means no account.
            Transition::ListEmails { user } => match self.emails_of(user) {
                emails if emails.is_empty() => Err(Fail::NotFound),
                emails => Ok(Value::Emails(emails)),
            },
            Transition::GetEmail { user, addr } => {
                self.own_record(user, addr)?;
                Ok(Value::Email(self.email_view(addr).expect("held")))
            }
            Transition::CheckAvailability { addr, .. } => Ok(Value::Flag(self.address_view(addr).available)),
            Transition::IsOwned { addr } => Ok(Value::Flag(self.address_view(addr).owned)),
            Transition::FindByEmail { addr, .. } => match self.address_view(addr).holder {
                Some(holder) => self.account(holder),
                None => Err(Fail::NotFound),
            },
            Transition::AdvanceClock { seconds } => {
                self.now += seconds;
                Ok(Value::Done)
            }
        }
    }
}

/// One of `likely` three times in four (when there is any), else `otherwise`.
fn biased<T: Clone + std::fmt::Debug + 'static>(likely: Vec<T>, otherwise: BoxedStrategy<T>) -> BoxedStrategy<T> {
    if likely.is_empty() {
        return otherwise;
    }
    prop_oneof![3 => proptest::sample::select(likely), 1 => otherwise].boxed()
}

fn spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        3 => Just(Spelling::Lower),
        1 => Just(Spelling::Upper),
        1 => Just(Spelling::Padded),
    ]
}

impl ReferenceStateMachine for Model {
    type State = Model;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<Model> {
        prop_oneof![
            3 => Just(tight()),
            2 => Just(guesses()),
            2 => Just(mixed()),
            1 => Just(defaults()),
        ]
        .prop_map(Model::new)
        .boxed()
    }

    fn transitions(state: &Model) -> BoxedStrategy<Transition> {
        // Mostly users and records that exist, so sequences reach deep states
        // (limits, takeovers, expiries); sometimes any, for the not-found paths.
        let any_user = (0..USERS).boxed();
        let any_addr = (0..ADDRS).boxed();
        let any_pair = (any_user.clone(), any_addr.clone()).boxed();
        let existing: Vec<usize> = (0..USERS).filter(|u| state.visible(*u).is_ok()).collect();
        // Sign-ups first: until users exist, most operations can only be refused.
        let sign_up_weight = match existing.len() {
            0 => 24,
            n if n < USERS => 4,
            _ => 1,
        };
        let user = biased(existing, any_user.clone());
        let held: Vec<(usize, usize)> = (0..ADDRS)
            .filter_map(|a| state.records[a].as_ref().map(|r| (r.owner, a)))
            .collect();
        let pending: Vec<(usize, usize)> = (0..ADDRS)
            .filter_map(|a| state.records[a].as_ref().filter(|r| !r.verified).map(|r| (r.owner, a)))
            .collect();
        let held = biased(held, any_pair.clone());
        let pending = biased(pending, held.clone());
        // Versions near the current one: right, stale, and ahead.
        let versions: Vec<u64> = state
            .users
            .iter()
            .map(|u| u.as_ref().map_or(1, |u| u.version))
            .collect();
        let version_of = move |user: usize, skew: i64| versions[user].saturating_add_signed(skew).max(1);
        let version_of2 = version_of.clone();
        let skew = prop_oneof![4 => Just(0i64), 1 => Just(-1i64), 1 => Just(1i64)];
        prop_oneof![
            sign_up_weight => (any_user.clone(), any_addr.clone(), spelling())
                .prop_map(|(user, addr, spelling)| Transition::SignUp { user, addr, spelling }),
            2 => (
                user.clone(),
                skew.clone(),
                proptest::option::of(0..FIRST_NAMES.len()),
                proptest::option::of(proptest::option::of(0..PHONES.len())),
            )
                .prop_map(move |(user, skew, first_name, phone)| Transition::UpdateProfile {
                    user,
                    expected_version: version_of(user, skew),
                    first_name,
                    phone,
                }),
            6 => (user.clone(), any_addr.clone(), spelling())
                .prop_map(|(user, addr, spelling)| Transition::AddEmail { user, addr, spelling }),
            3 => pending.clone().prop_map(|(user, addr)| Transition::ResendCode { user, addr }),
            7 => (pending, any::<bool>())
                .prop_map(|((user, addr), right_code)| Transition::Verify { user, addr, right_code }),
            3 => held.clone().prop_map(|(user, addr)| Transition::SetPrimary { user, addr }),
            3 => held.clone().prop_map(|(user, addr)| Transition::RemoveEmail { user, addr }),
            1 => (user.clone(), skew).prop_map(move |(user, skew)| Transition::DeleteAccount {
                user,
                expected_version: version_of2(user, skew),
            }),
            2 => (
                any_user.clone(),
                prop_oneof![3 => Just(Status::Suspended), 3 => Just(Status::Active), 1 => Just(Status::Deleted)],
            )
                .prop_map(|(user, status)| Transition::SetStatus { user, status }),
            1 => any_user.clone().prop_map(|user| Transition::GetProfile { user }),
            1 => user.clone().prop_map(|user| Transition::GetAccount { user }),
            1 => any_user.prop_map(|user| Transition::ListEmails { user }),
            1 => held.prop_map(|(user, addr)| Transition::GetEmail { user, addr }),
            1 => (any_addr.clone(), spelling())
                .prop_map(|(addr, spelling)| Transition::CheckAvailability { addr, spelling }),
            1 => any_addr.clone().prop_map(|addr| Transition::IsOwned { addr }),
            1 => (any_addr, spelling()).prop_map(|(addr, spelling)| Transition::FindByEmail { addr, spelling }),
            // Past the resend interval, a code's life, a claim's hold, a day.
            3 => prop_oneof![
                Just(1i64),
                Just(61),
                Just(121),
                Just(601),
                Just(901),
                Just(3_601),
                Just(86_401),
            ]
            .prop_map(|seconds| Transition::AdvanceClock { seconds }),
        ]
        .boxed()
    }

    fn apply(mut state: Model, t: &Transition) -> Model {
        state.expected = state.step(t);
        state
    }
}
