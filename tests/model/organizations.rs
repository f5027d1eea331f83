//! Organizations as a state machine: random sequences of creations, joins,
//! role changes, removals, deletions, purges and users' own lifecycle, over
//! three users and two slugs, each step's outcome checked against a small
//! reference model, the memberships compared after every step, and the
//! invariant checker at the end of each case (at least one owner, both halves
//! of every membership, one organization per slug, the users' counts).
//!
//! `ORG_MODEL_CASES` sets the number of cases (default 50, as `make test`
//! runs it; `make model-at-scale` runs 300).

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::Config;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use user_service::Store;
use user_service::config::StoreConfig;
use user_service::domain::{
    Actor, EmailAddress, IfMatch, NewOrganization, NewUser, OrgId, OrgName, Role, Slug, Timestamp, UserId, UserStatus,
};
use user_service::store::items::{MemberItem, OrgStatus, OrganizationItem};
use user_service::store::keys::{self, ItemKind};
use user_service::{StoreError, store::Deleter};

use integration_tests::{ddb, invariants};

const USERS: usize = 3;
const SLUGS: usize = 2;
/// Organizations a case can make: the slots transitions name.
const ORGS: usize = 3;
/// Organizations per user: low, so the limit is reached.
const MAX_ORGS: u32 = 2;

const ROLES: [Role; 3] = [Role::Owner, Role::Admin, Role::Member];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Active,
    Suspended,
    Deleted,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct OrgModel {
    slug: usize,
    deleting: bool,
    members: BTreeMap<usize, Role>,
}

impl OrgModel {
    fn owners(&self) -> usize {
        self.members.values().filter(|r| **r == Role::Owner).count()
    }
}

/// What an operation answered, as the model and the store both say it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Ok,
    Unchanged,
    Refused(&'static str),
}

#[derive(Debug, Clone)]
enum Transition {
    Create {
        user: usize,
        slug: usize,
    },
    Join {
        org: usize,
        user: usize,
        role: Role,
    },
    SetRole {
        actor: usize,
        org: usize,
        target: usize,
        role: Role,
    },
    Remove {
        actor: usize,
        org: usize,
        target: usize,
    },
    Delete {
        actor: usize,
        org: usize,
    },
    Purge,
    CloseAccount {
        user: usize,
    },
    Suspend {
        user: usize,
    },
    Reactivate {
        user: usize,
    },
}

#[derive(Debug, Clone)]
struct Model {
    users: [Standing; USERS],
    /// Organizations in creation order; gone once purged.
    orgs: Vec<Option<OrgModel>>,
    expected: Outcome,
}

impl Model {
    fn count(&self, user: usize) -> u32 {
        let n = self
            .orgs
            .iter()
            .flatten()
            .filter(|o| o.members.contains_key(&user))
            .count();
        u32::try_from(n).unwrap()
    }

    fn live(&self, org: usize) -> Option<&OrgModel> {
        self.orgs.get(org).and_then(Option::as_ref).filter(|o| !o.deleting)
    }

    /// A profile's refusal of a write, as `profile::refusal` reads it.
    fn refusal(&self, user: usize) -> Option<&'static str> {
        match self.users[user] {
            Standing::Deleted => Some("NotFound"),
            Standing::Suspended => Some("AccountInactive"),
            Standing::Active => None,
        }
    }

    /// What `org_and_mine` and `allowed` say before any write.
    fn admitted(&self, actor: usize, org: usize, power: &[Role]) -> Result<&OrgModel, &'static str> {
        if self.users[actor] == Standing::Deleted {
            return Err("NotFound");
        }
        let o = self.live(org).ok_or("OrganizationNotFound")?;
        match o.members.get(&actor) {
            None => Err("OrganizationNotFound"),
            Some(role) if power.contains(role) => Ok(o),
            Some(_) => Err("RoleRequired"),
        }
    }

    fn step(&mut self, t: &Transition) -> Outcome {
        const MANAGE: &[Role] = &[Role::Owner, Role::Admin];
        const OWN: &[Role] = &[Role::Owner];
        const ANY: &[Role] = &[Role::Owner, Role::Admin, Role::Member];
        let refused = Outcome::Refused;
        match *t {
            Transition::Create { user, slug } => {
                let taken = self.orgs.iter().flatten().any(|o| o.slug == slug && !o.deleting);
                if taken {
                    return refused("SlugTaken");
                }
                if let Some(err) = self.refusal(user) {
                    return refused(err);
                }
                if self.count(user) >= MAX_ORGS {
                    return refused("OrganizationLimitReached");
                }
                self.orgs.push(Some(OrgModel {
                    slug,
                    deleting: false,
                    members: BTreeMap::from([(user, Role::Owner)]),
                }));
                Outcome::Ok
            }
            // In the write's order: the member already there, then the
            // joining profile, then the organization.
            Transition::Join { org, user, role } => {
                let made = self.orgs.get(org).and_then(Option::as_ref);
                if made.is_some_and(|o| o.members.contains_key(&user)) {
                    return Outcome::Unchanged;
                }
                if let Some(err) = self.refusal(user) {
                    return refused(err);
                }
                if self.count(user) >= MAX_ORGS {
                    return refused("OrganizationLimitReached");
                }
                match self.orgs.get_mut(org).and_then(Option::as_mut) {
                    Some(o) if !o.deleting => {
                        o.members.insert(user, role);
                        Outcome::Ok
                    }
                    _ => refused("OrganizationNotFound"),
                }
            }
            Transition::SetRole {
                actor,
                org,
                target,
                role,
            } => {
                let before = self.live(org).and_then(|o| o.members.get(&target).copied());
                let power = match before {
                    Some(from) if from == Role::Owner || role == Role::Owner => OWN,
                    _ => MANAGE,
                };
                let o = match self.admitted(actor, org, MANAGE) {
                    Ok(o) => o,
                    Err(e) => return refused(e),
                };
                let Some(from) = o.members.get(&target).copied() else {
                    return refused("MemberNotFound");
                };
                if !power.contains(&o.members[&actor]) {
                    return refused("RoleRequired");
                }
                if from == role {
                    return match self.refusal(actor) {
                        Some(e) => refused(e),
                        None => Outcome::Ok,
                    };
                }
                if from == Role::Owner && o.owners() <= 1 {
                    return refused("LastOwner");
                }
                if let Some(e) = self.refusal(actor) {
                    return refused(e);
                }
                self.orgs[org].as_mut().unwrap().members.insert(target, role);
                Outcome::Ok
            }
            Transition::Remove { actor, org, target } => {
                let own = actor == target;
                let from = self.live(org).and_then(|o| o.members.get(&target).copied());
                let power = if from == Some(Role::Owner) { OWN } else { MANAGE };
                let o = match self.admitted(actor, org, if own { ANY } else { MANAGE }) {
                    Ok(o) => o,
                    Err(e) => return refused(e),
                };
                let Some(from) = o.members.get(&target).copied() else {
                    return refused("MemberNotFound");
                };
                if !own && !power.contains(&o.members[&actor]) {
                    return refused("RoleRequired");
                }
                let last = from == Role::Owner && o.owners() <= 1;
                if own {
                    // The leaver's own count comes before the owners' in the write.
                    if let Some(e) = self.refusal(actor) {
                        return refused(e);
                    }
                    if last {
                        return refused("LastOwner");
                    }
                } else {
                    if last {
                        return refused("LastOwner");
                    }
                    if let Some(e) = self.refusal(actor) {
                        return refused(e);
                    }
                }
                self.orgs[org].as_mut().unwrap().members.remove(&target);
                Outcome::Ok
            }
            Transition::Delete { actor, org } => {
                if let Err(e) = self.admitted(actor, org, OWN) {
                    return refused(e);
                }
                if let Some(e) = self.refusal(actor) {
                    return refused(e);
                }
                self.orgs[org].as_mut().unwrap().deleting = true;
                Outcome::Ok
            }
            Transition::Purge => {
                for slot in &mut self.orgs {
                    if slot.as_ref().is_some_and(|o| o.deleting) {
                        *slot = None;
                    }
                }
                Outcome::Ok
            }
            Transition::CloseAccount { user } => {
                match self.users[user] {
                    Standing::Deleted => return refused("NothingToMatch"),
                    Standing::Suspended => return refused("AccountInactive"),
                    Standing::Active => {}
                }
                let last = self
                    .orgs
                    .iter()
                    .flatten()
                    .any(|o| !o.deleting && o.members.get(&user) == Some(&Role::Owner) && o.owners() <= 1);
                if last {
                    return refused("LastOwner");
                }
                for o in self.orgs.iter_mut().flatten() {
                    o.members.remove(&user);
                }
                self.users[user] = Standing::Deleted;
                Outcome::Ok
            }
            Transition::Suspend { user } => self.set(user, Standing::Suspended),
            Transition::Reactivate { user } => self.set(user, Standing::Active),
        }
    }

    fn set(&mut self, user: usize, to: Standing) -> Outcome {
        match self.users[user] {
            Standing::Deleted => Outcome::Refused("NotFound"),
            now if now == to => Outcome::Unchanged,
            _ => {
                self.users[user] = to;
                Outcome::Ok
            }
        }
    }
}

impl ReferenceStateMachine for Model {
    type State = Model;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<Model> {
        Just(Model {
            users: [Standing::Active; USERS],
            orgs: Vec::new(),
            expected: Outcome::Ok,
        })
        .boxed()
    }

    fn transitions(_state: &Model) -> BoxedStrategy<Transition> {
        let user = 0..USERS;
        let org = 0..ORGS;
        let role = proptest::sample::select(ROLES.to_vec());
        prop_oneof![
            3 => (user.clone(), 0..SLUGS).prop_map(|(user, slug)| Transition::Create { user, slug }),
            5 => (org.clone(), user.clone(), role.clone()).prop_map(|(org, user, role)| Transition::Join { org, user, role }),
            5 => (user.clone(), org.clone(), user.clone(), role)
                .prop_map(|(actor, org, target, role)| Transition::SetRole { actor, org, target, role }),
            3 => (user.clone(), org.clone(), user.clone())
                .prop_map(|(actor, org, target)| Transition::Remove { actor, org, target }),
            1 => (user.clone(), org).prop_map(|(actor, org)| Transition::Delete { actor, org }),
            1 => Just(Transition::Purge),
            1 => user.clone().prop_map(|user| Transition::CloseAccount { user }),
            1 => user.clone().prop_map(|user| Transition::Suspend { user }),
            2 => user.prop_map(|user| Transition::Reactivate { user }),
        ]
        .boxed()
    }

    fn apply(mut state: Model, t: &Transition) -> Model {
        state.expected = state.step(t);
        state
    }

    /// A case makes at most `ORGS` organizations: the slots transitions name.
    fn preconditions(state: &Model, t: &Transition) -> bool {
        !matches!(t, Transition::Create { .. }) || state.orgs.len() < ORGS
    }
}

struct System {
    runtime: tokio::runtime::Runtime,
    store: Store,
    users: Vec<UserId>,
    slugs: Vec<String>,
    /// The organizations made, in creation order (the model's slots).
    orgs: Vec<OrgId>,
}

impl System {
    fn org(&self, slot: usize) -> OrgId {
        // A slot not yet made: an id nobody has.
        self.orgs.get(slot).copied().unwrap_or_else(OrgId::new)
    }

    fn run(&mut self, t: &Transition) -> Outcome {
        let now = Timestamp::now();
        let store = &self.store;
        let member = |u: usize| Actor::Member(self.users[u].clone());
        if let Transition::Create { user, slug } = *t {
            let new = NewOrganization {
                name: OrgName::parse("Acme").unwrap(),
                slug: Slug::parse(&self.slugs[slug]).unwrap(),
            };
            let made = self
                .runtime
                .block_on(store.create_organization(&self.users[user], &new, now));
            return match made {
                Ok(org) => {
                    self.orgs.push(org.org_id);
                    Outcome::Ok
                }
                Err(err) => Outcome::Refused(name(&err)),
            };
        }
        let result: Result<Outcome, StoreError> = self.runtime.block_on(async {
            match *t {
                Transition::Create { .. } => unreachable!("made above"),
                Transition::Join { org, user, role } => store
                    .join_organization(self.org(org), &self.users[user], role, now)
                    .await
                    .map(|joined| if joined { Outcome::Ok } else { Outcome::Unchanged }),
                Transition::SetRole {
                    actor,
                    org,
                    target,
                    role,
                } => store
                    .set_member_role(&member(actor), self.org(org), &self.users[target], role)
                    .await
                    .map(|_| Outcome::Ok),
                Transition::Remove { actor, org, target } => store
                    .remove_member(&member(actor), self.org(org), &self.users[target])
                    .await
                    .map(|()| Outcome::Ok),
                Transition::Delete { actor, org } => store
                    .delete_organization(&member(actor), self.org(org), &IfMatch::Any, now)
                    .await
                    .map(|()| Outcome::Ok),
                Transition::Purge => {
                    let stop = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
                    for org in store.pending_purges().await? {
                        assert!(store.purge_organization(org, stop).await?.finished);
                    }
                    Ok(Outcome::Ok)
                }
                Transition::CloseAccount { user } => store
                    .delete_user(&self.users[user], Deleter::Owner(&IfMatch::Any), now)
                    .await
                    .map(|_| Outcome::Ok),
                Transition::Suspend { user } | Transition::Reactivate { user } => {
                    let to = if matches!(t, Transition::Suspend { .. }) {
                        UserStatus::Suspended
                    } else {
                        UserStatus::Active
                    };
                    let before = store.profile_status(&self.users[user]).await?;
                    match before {
                        Some(UserStatus::Deleted) | None => Err(StoreError::NotFound),
                        Some(now_is) if now_is == to => Ok(Outcome::Unchanged),
                        Some(_) => store.set_status(&self.users[user], to, now).await.map(|_| Outcome::Ok),
                    }
                }
            }
        });
        match result {
            Ok(outcome) => outcome,
            Err(err) => Outcome::Refused(name(&err)),
        }
    }

    /// Every organization's members and roles, and whether it is deleting, by slot.
    fn memberships(&self) -> Vec<Option<(bool, BTreeMap<usize, Role>)>> {
        let items = self
            .runtime
            .block_on(invariants::scan(self.store.client(), &self.store.config().table_name));
        let mut orgs: BTreeMap<OrgId, (bool, BTreeMap<usize, Role>)> = BTreeMap::new();
        for item in items {
            let pk = keys::key_string(&item, keys::PK).unwrap_or_default().to_owned();
            let sk = keys::key_string(&item, keys::SK).unwrap_or_default().to_owned();
            match keys::classify(&pk, &sk) {
                ItemKind::Organization => {
                    let o: OrganizationItem = serde_dynamo::from_item(item).unwrap();
                    orgs.entry(o.org_id).or_default().0 = o.status == OrgStatus::Deleting;
                }
                ItemKind::Member => {
                    let m: MemberItem = serde_dynamo::from_item(item).unwrap();
                    let user = self.users.iter().position(|u| *u == m.user_id).unwrap();
                    orgs.entry(m.org_id).or_default().1.insert(user, m.role);
                }
                _ => {}
            }
        }
        self.orgs.iter().map(|id| orgs.remove(id)).collect()
    }
}

/// The store's error as the model names it.
fn name(err: &StoreError) -> &'static str {
    match err {
        StoreError::NotFound => "NotFound",
        StoreError::NothingToMatch => "NothingToMatch",
        StoreError::AccountInactive => "AccountInactive",
        StoreError::OrganizationNotFound => "OrganizationNotFound",
        StoreError::MemberNotFound => "MemberNotFound",
        StoreError::RoleRequired => "RoleRequired",
        StoreError::LastOwner => "LastOwner",
        StoreError::SlugTaken => "SlugTaken",
        StoreError::OrganizationLimitReached => "OrganizationLimitReached",
        other => panic!("an error the model never expects: {other:?}"),
    }
}

thread_local! {
    /// Emptied tables of this thread's earlier cases: a CreateTable costs
    /// DynamoDB Local more than emptying a case's few items, and a case's ids
    /// are its own either way.
    static TABLES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct Machine;

impl StateMachineTest for Machine {
    type SystemUnderTest = System;
    type Reference = Model;

    fn init_test(_model: &Model) -> System {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ns = uuid::Uuid::new_v4().simple().to_string();
        let client = ddb::client();
        // A table of an earlier case of this thread, emptied; or a new one.
        let table = TABLES
            .with(|t| t.borrow_mut().pop())
            .unwrap_or_else(|| runtime.block_on(ddb::fresh_table(&client)));
        let mut config = StoreConfig::new(table);
        config.max_organizations_per_user = MAX_ORGS;
        let store = Store::new(client, config).with_key(ddb::test_key());
        let users: Vec<UserId> = (0..USERS)
            .map(|_| UserId::parse_sub(&uuid::Uuid::new_v4().to_string()).unwrap())
            .collect();
        for (i, user) in users.iter().enumerate() {
            let new = NewUser {
                user_id: user.clone(),
                email: EmailAddress::parse(&format!("o{i}.{}@example.com", &ns[..12])).unwrap(),
                first_name: None,
                last_name: None,
                phone: None,
            };
            runtime.block_on(store.create_user(&new, Timestamp::now())).unwrap();
        }
        System {
            runtime,
            store,
            users,
            slugs: (0..SLUGS).map(|i| format!("s{i}-{}", &ns[..12])).collect(),
            orgs: Vec::new(),
        }
    }

    fn apply(mut sut: System, model: &Model, t: Transition) -> System {
        let actual = sut.run(&t);
        assert_eq!(actual, model.expected, "outcome of {t:?} differs from the model");
        let stored = sut.memberships();
        let expected: Vec<Option<(bool, BTreeMap<usize, Role>)>> = model
            .orgs
            .iter()
            .map(|o| o.as_ref().map(|o| (o.deleting, o.members.clone())))
            .collect();
        assert_eq!(stored, expected, "the organizations after {t:?} differ from the model");
        sut
    }

    fn teardown(sut: System, _model: Model) {
        let table = sut.store.config().table_name.clone();
        sut.runtime
            .block_on(invariants::assert_holds(sut.store.client(), &table));
        sut.runtime.block_on(ddb::empty_table(sut.store.client(), &table));
        TABLES.with(|t| t.borrow_mut().push(table));
    }
}

prop_state_machine! {
    #![proptest_config(Config {
        cases: std::env::var("ORG_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(50),
        failure_persistence: None,
        max_shrink_iters: 2_048,
        .. Config::default()
    })]

    #[test]
    fn organizations_follow_the_model(sequential 1..24 => Machine);
}
