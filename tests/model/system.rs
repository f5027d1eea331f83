//! The system under test: the real `Store` on its own DynamoDB Local table, one
//! table per case, so cases are independent and the invariant checker's scan
//! reads only the case's items. Every outcome is read back into the model's terms.

use std::cell::RefCell;
use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, WriteRequest};
use integration_tests::{ddb, invariants};
use proptest_state_machine::StateMachineTest;
use tokio::runtime::Runtime;
use user_service::domain::{
    Account, Email, EmailAddress, EmailId, IfMatch, NewUser, PersonName, Phone, Profile, ProfilePatch, Timestamp,
    UserId, UserStatus,
};
use user_service::store::Deleter;
use user_service::store::items::{self, ClaimItem, EmailItem, ProfileItem};
use user_service::store::keys::{self, Item, ItemKind};
use user_service::store::limits::LimitItem;
use user_service::{Store, StoreError};

use crate::figures;
use crate::reference::{
    ADDRS, Code, EmailView, FIRST_NAMES, Fail, Model, Outcome, PHONES, ProfileView, Record, Snapshot, Spelling, Status,
    Transition, USERS, User, UserAddress, UserView, Value, recent,
};

thread_local! {
    /// Each worker thread drives its cases on its own runtime and client.
    static WORKER: RefCell<Option<(Runtime, Client)>> = const { RefCell::new(None) };
    /// Emptied tables of this thread's earlier cases.
    static TABLES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// A deliberate disagreement, for the test that proves shrinking works.
    static MUTANT: RefCell<Option<fn(&mut user_service::config::StoreConfig)>> = const { RefCell::new(None) };
}

/// Runs `work` on this thread's runtime.
fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    WORKER.with(|w| {
        let mut w = w.borrow_mut();
        let (rt, _) = w.get_or_insert_with(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            // Workers spread over the run's DynamoDB Local instances.
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let pool = ddb::endpoints();
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (rt, ddb::client_at(&pool[n % pool.len()]))
        });
        rt.block_on(work)
    })
}

fn client() -> Client {
    block_on(async {});
    WORKER.with(|w| w.borrow().as_ref().map(|(_, c)| c.clone()).unwrap())
}

/// Makes the store of every case on this thread differ from the model by `adjust`.
pub(crate) fn set_mutant(adjust: Option<fn(&mut user_service::config::StoreConfig)>) {
    MUTANT.with(|m| *m.borrow_mut() = adjust);
}

/// Whole seconds, so model times (seconds) and stored times (milliseconds) agree.
fn base_time() -> Timestamp {
    let start = integration_tests::start_time();
    Timestamp::from_unix_millis(start.unix_millis() / 1000 * 1000)
}

#[derive(Debug, Clone, Copy)]
enum CounterOf {
    CodesIssued(usize),
    CodesRequested(usize, usize),
    CodesSent(usize),
    WrongCodes(usize),
    UserAddress(usize, usize),
}

pub(crate) struct System {
    store: Store,
    users: Vec<UserId>,
    /// Each address as stored (normalised).
    addrs: Vec<String>,
    by_address: HashMap<String, usize>,
    /// Which user or address each counter item's key belongs to.
    counters: HashMap<(String, String), CounterOf>,
    /// The keys of the items the last scan found.
    keys: Vec<(String, String)>,
    /// The id of the latest record made for each address (stale ids stay: they
    /// must read as not found).
    ids: [Option<EmailId>; ADDRS],
    /// The last code issued to each address's latest record.
    codes: [Option<String>; ADDRS],
    issued: u32,
    base: Timestamp,
    now: i64,
}

impl System {
    fn at(&self, seconds: i64) -> Timestamp {
        self.base.plus_seconds(seconds)
    }

    fn seconds(&self, t: Timestamp) -> i64 {
        (t.unix_millis() - self.base.unix_millis()).div_euclid(1000)
    }

    fn spell(&self, addr: usize, spelling: Spelling) -> EmailAddress {
        let stored = &self.addrs[addr];
        let raw = match spelling {
            Spelling::Lower => stored.clone(),
            Spelling::Upper => stored.to_uppercase(),
            Spelling::Padded => format!("  {}\t", stored.to_uppercase()),
        };
        EmailAddress::parse(&raw).expect("pool addresses are valid")
    }

    fn addr_of(&self, email: &EmailAddress) -> usize {
        *self
            .by_address
            .get(email.as_str())
            .unwrap_or_else(|| panic!("the store returned an address outside the case's pool"))
    }

    fn email_id(&self, addr: usize) -> EmailId {
        // Never made: an id no record has.
        self.ids[addr].unwrap_or_default()
    }

    fn next_code(&mut self) -> String {
        self.issued += 1;
        format!("{}", 100_000 + self.issued)
    }

    fn profile(&self, p: Profile) -> ProfileView {
        ProfileView {
            email: p.email.as_ref().map(|e| self.addr_of(e)),
            first_name: p.first_name.map(|n| n.as_str().to_owned()),
            last_name: p.last_name.map(|n| n.as_str().to_owned()),
            phone: p.phone.map(|n| n.as_str().to_owned()),
            status: status(p.status),
            version: p.version,
            email_count: p.email_count,
            created_at: self.seconds(p.created_at),
            updated_at: self.seconds(p.updated_at),
        }
    }

    fn email(&self, e: &Email) -> EmailView {
        EmailView {
            created_at: self.seconds(e.created_at),
            addr: self.addr_of(&e.email),
            primary: e.is_primary,
            verified: e.is_verified,
            verified_at: e.verified_at.map(|t| self.seconds(t)),
        }
    }

    fn emails(&self, emails: &[Email]) -> Vec<EmailView> {
        let mut out: Vec<EmailView> = emails.iter().map(|e| self.email(e)).collect();
        out.sort();
        out
    }

    fn account(&self, a: Account) -> Value {
        let emails = self.emails(&a.emails);
        Value::Account(self.profile(a.profile), emails)
    }

    /// Runs one transition against the store.
    fn run(&mut self, t: &Transition) -> Outcome {
        let now = self.at(self.now);
        let store = self.store.clone();
        match *t {
            Transition::SignUp { user, addr, spelling } => {
                let new_user = NewUser {
                    user_id: self.users[user].clone(),
                    email: self.spell(addr, spelling),
                    first_name: Some(PersonName::parse("Ada").unwrap()),
                    last_name: Some(PersonName::parse("Lovelace").unwrap()),
                    phone: None,
                };
                let created = block_on(store.create_user(&new_user, now)).map_err(fail)?;
                let new = created == user_service::store::Created::New;
                if new {
                    let emails = block_on(store.list_emails(&self.users[user])).map_err(fail)?;
                    if let Some(e) = emails.iter().find(|e| e.email == new_user.email) {
                        self.ids[addr] = Some(e.email_id);
                    }
                }
                Ok(Value::Created { new })
            }
            Transition::UpdateProfile {
                user,
                expected_version,
                first_name,
                phone,
            } => {
                let patch = ProfilePatch {
                    first_name: first_name.map(|i| PersonName::parse(FIRST_NAMES[i]).unwrap()),
                    last_name: None,
                    phone: phone.map(|p| p.map(|i| Phone::parse(PHONES[i]).unwrap())),
                };
                let p = block_on(store.update_profile(
                    &self.users[user],
                    &IfMatch::Versions(vec![expected_version]),
                    &patch,
                    now,
                ));
                Ok(Value::Profile(self.profile(p.map_err(fail)?)))
            }
            Transition::AddEmail { user, addr, spelling } => {
                let code = self.next_code();
                let email = self.spell(addr, spelling);
                let added = block_on(store.add_email(&self.users[user], &email, &code_of(&code), now)).map_err(fail)?;
                self.ids[addr] = Some(added.email_id);
                self.codes[addr] = Some(code);
                Ok(Value::Email(self.email(&added)))
            }
            Transition::ResendCode { user, addr } => {
                let code = self.next_code();
                let id = self.email_id(addr);
                let sent_to = block_on(store.issue_code(&self.users[user], id, &code_of(&code), now)).map_err(fail)?;
                self.codes[addr] = Some(code);
                Ok(Value::Address(self.addr_of(&sent_to)))
            }
            Transition::Verify { user, addr, right_code } => {
                // Issued codes start at 100001: this one was never sent.
                let wrong = "000000".to_owned();
                let code = if right_code {
                    self.codes[addr].clone().unwrap_or(wrong)
                } else {
                    wrong
                };
                let id = self.email_id(addr);
                let e = block_on(store.verify_email(&self.users[user], id, &code_of(&code), now)).map_err(fail)?;
                Ok(Value::Email(self.email(&e)))
            }
            Transition::SetPrimary { user, addr } => {
                let p = block_on(store.set_primary(&self.users[user], self.email_id(addr), now)).map_err(fail)?;
                Ok(Value::Profile(self.profile(p)))
            }
            Transition::RemoveEmail { user, addr } => {
                block_on(store.remove_email(&self.users[user], self.email_id(addr), now)).map_err(fail)?;
                Ok(Value::Done)
            }
            Transition::DeleteAccount { user, expected_version } => {
                let p = block_on(store.delete_user(
                    &self.users[user],
                    Deleter::Owner(&IfMatch::Versions(vec![expected_version])),
                    now,
                ))
                .map_err(fail)?;
                Ok(Value::Profile(self.profile(p)))
            }
            Transition::SetStatus { user, status } => {
                let status = match status {
                    Status::Active => UserStatus::Active,
                    Status::Suspended => UserStatus::Suspended,
                    Status::Deleted => UserStatus::Deleted,
                };
                let p = block_on(store.set_status(&self.users[user], status, now)).map_err(fail)?;
                Ok(Value::Profile(self.profile(p)))
            }
            Transition::GetProfile { user } => {
                let p = block_on(store.get_profile(&self.users[user])).map_err(fail)?;
                Ok(Value::Profile(self.profile(p)))
            }
            Transition::GetAccount { user } => {
                let a = block_on(store.get_account(&self.users[user])).map_err(fail)?;
                Ok(self.account(a))
            }
            Transition::ListEmails { user } => {
                let emails = block_on(store.list_emails(&self.users[user])).map_err(fail)?;
                Ok(Value::Emails(self.emails(&emails)))
            }
            Transition::GetEmail { user, addr } => {
                let e = block_on(store.get_email(&self.users[user], self.email_id(addr))).map_err(fail)?;
                Ok(Value::Email(self.email(&e)))
            }
            Transition::CheckAvailability { addr, spelling } => {
                let free = block_on(store.is_available(&self.spell(addr, spelling), now)).map_err(fail)?;
                Ok(Value::Flag(free))
            }
            Transition::IsOwned { addr } => {
                let holder = block_on(store.verified_holder(&self.spell(addr, Spelling::Lower), now)).map_err(fail)?;
                Ok(Value::Flag(holder.is_some()))
            }
            Transition::FindByEmail { addr, spelling } => {
                let a = block_on(store.find_by_email(&self.spell(addr, spelling))).map_err(fail)?;
                Ok(self.account(a))
            }
            Transition::AdvanceClock { seconds } => {
                self.now += seconds;
                Ok(Value::Done)
            }
        }
    }

    /// Reads the whole case table back into the model's terms; keeps its keys
    /// for clearing the table at the end of the case.
    fn snapshot(&mut self) -> Snapshot {
        let items = block_on(invariants::scan(self.store.client(), &self.store.config().table_name));
        let now = self.now;
        let mut out = Snapshot::default();
        let mut claims: [Option<ClaimItem>; ADDRS] = Default::default();
        self.keys.clear();
        for item in items {
            let pk = keys::key_string(&item, keys::PK).unwrap_or_default().to_owned();
            let sk = keys::key_string(&item, keys::SK).unwrap_or_default().to_owned();
            self.keys.push((pk.clone(), sk.clone()));
            match keys::classify(&pk, &sk) {
                ItemKind::Profile => {
                    let p: ProfileItem = items::from_item(item).expect("a profile");
                    let u = self.user_of(&p.user_id);
                    out.users[u] = Some(User {
                        status: status(p.status),
                        version: p.version,
                        email: p.email.as_ref().map(|e| self.addr_of(e)),
                        first_name: p.first_name.map(|n| n.as_str().to_owned()),
                        last_name: p.last_name.map(|n| n.as_str().to_owned()),
                        phone: p.phone.map(|n| n.as_str().to_owned()),
                        email_count: p.email_count,
                        created_at: self.seconds(p.created_at),
                        updated_at: self.seconds(p.updated_at),
                        cognito_email: p.cognito_email.as_ref().map(|e| self.addr_of(e)),
                    });
                }
                ItemKind::Email => {
                    let r: EmailItem = items::from_item(item).expect("a record");
                    let a = self.addr_of(&r.email);
                    assert!(out.records[a].is_none(), "address {a} has two records");
                    let code = r.verification_code_hash.as_ref().map(|_| Code {
                        expires_at: r.verification_expires_at.map_or(i64::MIN, |t| self.seconds(t)),
                        attempts: r.verification_attempts.unwrap_or(0),
                        sent_at: r.verification_sent_at.map_or(i64::MIN, |t| self.seconds(t)),
                    });
                    out.records[a] = Some(Record {
                        owner: self.user_of(&r.user_id),
                        primary: r.is_primary,
                        verified: r.is_verified,
                        verified_at: r.verified_at.map(|t| self.seconds(t)),
                        created_at: self.seconds(r.created_at),
                        code,
                        claim_expires_at: None,
                        reserved_until: r.reserved_until.map(|t| self.seconds(t)),
                    });
                }
                // The model does not recover; a switch's undoing is the recovery suite's.
                ItemKind::PrimaryChange => {}
                ItemKind::Claim => {
                    let c: ClaimItem = items::from_item(item).expect("a claim");
                    let address = EmailAddress::parse(keys::claim_address(&pk).unwrap()).unwrap();
                    claims[self.addr_of(&address)] = Some(c);
                }
                ItemKind::Limit => {
                    let l: LimitItem = items::from_item(item).expect("a counter");
                    let events: Vec<i64> = l.events.iter().map(|t| t - self.base.unix_seconds()).collect();
                    let events = recent(&events, now);
                    match self.counters.get(&(pk, sk)).copied() {
                        Some(CounterOf::CodesIssued(a)) => out.codes_issued[a] = events,
                        Some(CounterOf::CodesRequested(u, a)) => out.codes_requested[u][a] = events,
                        Some(CounterOf::CodesSent(u)) => out.codes_sent[u] = events,
                        Some(CounterOf::WrongCodes(u)) => out.wrong_codes[u] = events,
                        Some(CounterOf::UserAddress(u, a)) => {
                            out.user_address[u][a] = UserAddress {
                                wrong_codes: events,
                                first_added_at: l.first_added_at.map(|t| self.seconds(t)),
                            }
                        }
                        None => panic!("a counter of no user or address of the case"),
                    }
                }
                ItemKind::Reconcile
                | ItemKind::LegacyPassword
                | ItemKind::ErasedImport
                | ItemKind::Organization
                | ItemKind::Member
                | ItemKind::Membership
                | ItemKind::SlugClaim
                | ItemKind::Purge
                | ItemKind::Invitation
                | ItemKind::OrgDomain
                | ItemKind::DomainClaim
                | ItemKind::ScimToken
                | ItemKind::DirectoryClaim
                | ItemKind::OrgCounts
                | ItemKind::ScimCursor
                | ItemKind::Unknown => {
                    panic!("an item the model never writes: {pk}/{sk}")
                }
            }
        }
        for (a, claim) in claims.into_iter().enumerate() {
            let Some(claim) = claim else { continue };
            out.claims[a] = Some(self.user_of(&claim.user_id));
            match out.records[a].as_mut() {
                Some(r) => r.claim_expires_at = claim.expires_at.map(|t| self.seconds(t)),
                None => {
                    let until = claim.reserved_until.map(|t| self.seconds(t));
                    assert!(
                        claim.is_reservation_only(),
                        "a claim of address {a} without a record reserves nothing"
                    );
                    out.reservations[a] = until;
                }
            }
        }
        out
    }

    fn user_of(&self, id: &UserId) -> usize {
        self.users
            .iter()
            .position(|u| u == id)
            .unwrap_or_else(|| panic!("an item of a user outside the case"))
    }

    fn user_view(&self, user: usize) -> UserView {
        let id = &self.users[user];
        let account = block_on(self.store.get_account(id))
            .map(|a| self.account(a))
            .map_err(fail);
        let stored = block_on(self.store.profile_status(id)).unwrap_or_else(|e| panic!("profile status: {e:?}"));
        UserView {
            account,
            status: stored.map(status),
        }
    }

    /// Deletes every item of the case, so the next case starts from an empty table.
    fn clear(&mut self) {
        let client = self.store.client().clone();
        let table = self.store.config().table_name.clone();
        let deletes: Vec<WriteRequest> = self
            .keys
            .drain(..)
            .map(|(pk, sk)| {
                let key = HashMap::from([
                    (keys::PK.to_owned(), AttributeValue::S(pk)),
                    (keys::SK.to_owned(), AttributeValue::S(sk)),
                ]);
                let delete = DeleteRequest::builder().set_key(Some(key)).build().unwrap();
                WriteRequest::builder().delete_request(delete).build()
            })
            .collect();
        for chunk in deletes.chunks(25) {
            let mut pending = HashMap::from([(table.clone(), chunk.to_vec())]);
            while !pending.is_empty() {
                let out = block_on(client.batch_write_item().set_request_items(Some(pending)).send())
                    .expect("clear the table");
                pending = out.unprocessed_items.unwrap_or_default();
                pending.retain(|_, v| !v.is_empty());
            }
        }
    }
}

fn code_of(raw: &str) -> user_service::verification::VerificationCode {
    user_service::verification::VerificationCode::parse(raw).unwrap()
}

fn status(s: UserStatus) -> Status {
    match s {
        UserStatus::Active => Status::Active,
        UserStatus::Suspended => Status::Suspended,
        UserStatus::Deleted => Status::Deleted,
    }
}

fn fail(e: StoreError) -> Fail {
    match e {
        StoreError::NotFound => Fail::NotFound,
        StoreError::AccountInactive => Fail::AccountInactive,
        StoreError::EmailTaken => Fail::EmailTaken,
        StoreError::AlreadyAdded => Fail::AlreadyAdded,
        StoreError::LimitReached => Fail::LimitReached,
        StoreError::NotVerified => Fail::NotVerified,
        StoreError::AlreadyVerified => Fail::AlreadyVerified,
        StoreError::PrimaryEmail => Fail::PrimaryEmail,
        StoreError::SignInAddressPending => Fail::SignInAddressPending,
        StoreError::VersionMismatch { current } => Fail::VersionMismatch(current),
        StoreError::VerificationFailed { attempts_left } => Fail::VerificationFailed(attempts_left),
        StoreError::VerificationExpired => Fail::VerificationExpired,
        StoreError::TooManyAttempts { retry_after_secs } => Fail::TooManyAttempts(retry_after_secs),
        StoreError::TooManyRequests { retry_after_secs } => Fail::TooManyRequests(retry_after_secs),
        other => Fail::Other(user_service::error::chain(&other)),
    }
}

pub(crate) struct StoreMachine;

impl StateMachineTest for StoreMachine {
    type SystemUnderTest = System;
    type Reference = Model;

    fn init_test(model: &Model) -> System {
        let client = client();
        // A table of an earlier case of this thread, emptied; or a new one.
        let table = TABLES
            .with(|t| t.borrow_mut().pop())
            .unwrap_or_else(|| figures::timed("create_table", || block_on(ddb::fresh_table(&client))));
        let mut config = model.config.clone();
        config.table_name = table;
        MUTANT.with(|m| {
            if let Some(adjust) = *m.borrow() {
                adjust(&mut config);
            }
        });
        let store = Store::new(client, config).with_key(ddb::test_key());
        // Fresh ids and addresses per case, so nothing of one case meets another's.
        let ns = uuid::Uuid::new_v4().simple().to_string();
        let addrs: Vec<String> = (0..ADDRS).map(|i| format!("m{i}.{}@example.com", &ns[..12])).collect();
        let users: Vec<UserId> = (0..USERS)
            .map(|i| UserId::parse(&format!("u{i}-{ns}")).unwrap())
            .collect();
        let key = ddb::test_key();
        let mut counters = HashMap::new();
        let key_of = |item: Item| {
            let s = |k: &str| keys::key_string(&item, k).unwrap().to_owned();
            (s(keys::PK), s(keys::SK))
        };
        for (a, address) in addrs.iter().enumerate() {
            let hash = key.address_hash(
                &user_service::address_policy::Canonicalization::NONE.canonical(&EmailAddress::parse(address).unwrap()),
            );
            counters.insert(key_of(keys::codes_issued_key(&hash)), CounterOf::CodesIssued(a));
            for (u, user) in users.iter().enumerate() {
                counters.insert(
                    key_of(keys::user_address_key(user, &hash)),
                    CounterOf::UserAddress(u, a),
                );
                counters.insert(
                    key_of(keys::codes_requested_key(user, &hash)),
                    CounterOf::CodesRequested(u, a),
                );
            }
        }
        for (u, user) in users.iter().enumerate() {
            counters.insert(key_of(keys::wrong_codes_key(user)), CounterOf::WrongCodes(u));
            counters.insert(key_of(keys::codes_sent_key(user)), CounterOf::CodesSent(u));
        }
        figures::case_started();
        System {
            store,
            users,
            by_address: addrs.iter().cloned().enumerate().map(|(i, a)| (a, i)).collect(),
            addrs,
            counters,
            keys: Vec::new(),
            ids: [None; ADDRS],
            codes: Default::default(),
            issued: 0,
            base: base_time(),
            now: 0,
        }
    }

    fn apply(mut sut: System, model: &Model, t: Transition) -> System {
        figures::transition(t.kind());
        let actual = figures::timed("operations", || sut.run(&t));
        assert_eq!(actual, model.expected, "outcome of {t:?} differs from the model");
        figures::outcome(match &actual {
            Ok(_) => "Ok".to_owned(),
            Err(e) => format!("{e:?}").split('(').next().unwrap_or_default().to_owned(),
        });
        // Reads and the clock store nothing: the scan after the last write still holds.
        if t.writes() {
            let stored = figures::timed("scans", || sut.snapshot());
            stored.assert_eq(&model.snapshot(), &format!("after {t:?}"));
        }
        sut
    }

    fn teardown(mut sut: System, model: Model) {
        figures::timed("final_checks", || {
            // The read paths once more, for every user the case made.
            for user in (0..USERS).filter(|u| model.users[*u].is_some()) {
                let (actual, expected) = (sut.user_view(user), model.user_view(user));
                assert_eq!(
                    actual, expected,
                    "user {user} differs from the model at the end of the case"
                );
            }
            let stored = sut.snapshot();
            stored.assert_eq(&model.snapshot(), "at the end of the case");
            let table = sut.store.config().table_name.clone();
            block_on(invariants::assert_holds(sut.store.client(), &table));
        });
        figures::timed("clear_table", || sut.clear());
        let table = sut.store.config().table_name.clone();
        TABLES.with(|t| t.borrow_mut().push(table));
    }
}
