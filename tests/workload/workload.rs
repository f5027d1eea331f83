//! Many users at once on a small pool of shared addresses, through every user
//! route and the admin routes, against DynamoDB Local; then the invariant
//! checker, and cross-checks of the table against what the API shows.
//!
//! `WORKLOAD_SEED`, `WORKLOAD_USERS`, `WORKLOAD_OPERATIONS` and `WORKLOAD_TASKS`
//! set the run: 1,500 operations in `make test`, 5,000 in `make
//! workload-at-scale` (the long mode raises the counts further). The seed fixes each task's
//! choices, not the interleaving: outcomes differ from run to run, and every
//! one of them must be allowed.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use integration_tests::http::Reply;
use integration_tests::invariants;
use integration_tests::test_app::TestApp;
use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber;
use user_service::domain::{OrgId, Role, UserId};
use user_service::store::items::ClaimItem;
use user_service::store::keys::{self, ItemKind};

use crate::codes::CodeBook;
use crate::number;

/// Subs are lower-case UUIDs, as Cognito issues them.
const ADMIN: &str = "00000000-0000-4000-8000-0000000ad000";

#[derive(Debug, Clone, Copy)]
struct Settings {
    seed: u64,
    users: usize,
    operations: usize,
    tasks: usize,
}

impl Settings {
    fn from_env() -> Self {
        let mut random = [0u8; 8];
        getrandom_seed(&mut random);
        Self {
            seed: number("WORKLOAD_SEED", u64::from_le_bytes(random)),
            users: usize::try_from(number("WORKLOAD_USERS", 50)).unwrap().max(2),
            operations: usize::try_from(number("WORKLOAD_OPERATIONS", 1_500)).unwrap(),
            tasks: usize::try_from(number("WORKLOAD_TASKS", 48)).unwrap().max(1),
        }
    }
}

/// A fresh seed when none is given: uuid's randomness, to need no other crate.
fn getrandom_seed(out: &mut [u8; 8]) {
    out.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..8]);
}

/// Every route the workload drives; the admin's status changes are three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Op {
    GetProfile,
    GetAccount,
    UpdateProfile,
    ListEmails,
    AddEmail,
    GetEmail,
    SendVerification,
    VerifyEmail,
    SetPrimaryEmail,
    RemoveEmail,
    DeleteAccount,
    CheckEmail,
    FindUserByEmail,
    Suspend,
    Reactivate,
    AdminDelete,
    CreateOrganization,
    JoinOrganization,
    ListMembers,
    SetMemberRole,
    RemoveMember,
    DeleteOrganization,
    PurgeOrganizations,
    ClaimDomain,
    RemoveDomain,
}

/// How often each operation is chosen, relative to the others.
const WEIGHTS: &[(Op, u32)] = &[
    (Op::AddEmail, 200),
    (Op::VerifyEmail, 170),
    (Op::SendVerification, 80),
    (Op::SetPrimaryEmail, 90),
    (Op::RemoveEmail, 90),
    (Op::UpdateProfile, 80),
    (Op::GetProfile, 40),
    (Op::GetAccount, 40),
    (Op::ListEmails, 40),
    (Op::GetEmail, 40),
    (Op::CheckEmail, 40),
    (Op::FindUserByEmail, 30),
    (Op::Suspend, 15),
    (Op::Reactivate, 60),
    (Op::AdminDelete, 1),
    (Op::DeleteAccount, 1),
    (Op::CreateOrganization, 20),
    (Op::JoinOrganization, 60),
    (Op::ListMembers, 15),
    (Op::SetMemberRole, 50),
    (Op::RemoveMember, 30),
    (Op::DeleteOrganization, 10),
    (Op::PurgeOrganizations, 10),
    (Op::ClaimDomain, 20),
    (Op::RemoveDomain, 10),
];

const NOT_FOUND: (u16, &str) = (404, "NOT_FOUND");
const INACTIVE: (u16, &str) = (403, "ACCOUNT_INACTIVE");
/// Documented for every route that writes: a write that kept losing races
/// (or DynamoDB failing) after the store's bounded retries. Counted.
const UNAVAILABLE: (u16, &str) = (503, "SERVICE_UNAVAILABLE");
const NO_ORGANIZATION: (u16, &str) = (404, "ORGANIZATION_NOT_FOUND");
const ROLE_REQUIRED: (u16, &str) = (403, "ROLE_REQUIRED");
const LAST_OWNER: (u16, &str) = (409, "LAST_OWNER");
/// The slugs organizations are created with: fewer than the creations, so they race.
const SLUGS: usize = 8;
/// The domains organizations claim: fewer than the claims, so they race.
const DOMAINS: usize = 4;

impl Op {
    fn route(self) -> &'static str {
        match self {
            Self::GetProfile => "GET /me",
            Self::GetAccount => "GET /me/account",
            Self::UpdateProfile => "PATCH /me",
            Self::ListEmails => "GET /me/emails",
            Self::AddEmail => "POST /me/emails",
            Self::GetEmail => "GET /me/emails/{emailId}",
            Self::SendVerification => "POST /me/emails/{emailId}/verification",
            Self::VerifyEmail => "POST /me/emails/{emailId}/verify",
            Self::SetPrimaryEmail => "PUT /me/primary-email",
            Self::RemoveEmail => "DELETE /me/emails/{emailId}",
            Self::DeleteAccount => "DELETE /me",
            Self::CheckEmail => "GET /emails/availability",
            Self::FindUserByEmail => "GET /admin/users",
            Self::Suspend => "PUT /admin/users/{userId}/status suspended",
            Self::Reactivate => "PUT /admin/users/{userId}/status active",
            Self::AdminDelete => "PUT /admin/users/{userId}/status deleted",
            Self::CreateOrganization => "POST /organizations",
            Self::JoinOrganization => "join an organization (the store's join, as an accepted invitation)",
            Self::ListMembers => "GET /organizations/{orgId}/members",
            Self::SetMemberRole => "PUT /organizations/{orgId}/members/{userId}/role",
            Self::RemoveMember => "DELETE /organizations/{orgId}/members/{userId}",
            Self::DeleteOrganization => "DELETE /organizations/{orgId}",
            Self::PurgeOrganizations => "purge-organizations (the schedule)",
            Self::ClaimDomain => "POST /organizations/{orgId}/domains",
            Self::RemoveDomain => "DELETE /organizations/{orgId}/domains/{domain}",
        }
    }

    /// The success status, and the problems the route documents for what the
    /// workload sends (valid values, known or unknown ids, stale versions).
    fn allowed(self) -> (u16, &'static [(u16, &'static str)]) {
        match self {
            Self::GetProfile | Self::GetAccount | Self::ListEmails | Self::GetEmail => (200, &[NOT_FOUND]),
            // A deleted caller is not found here either. The check is counted in
            // a transaction on the caller's counter, which concurrent checks race for.
            Self::CheckEmail => (200, &[NOT_FOUND, UNAVAILABLE]),
            Self::FindUserByEmail => (200, &[NOT_FOUND]),
            Self::UpdateProfile => (200, &[NOT_FOUND, INACTIVE, (412, "VERSION_MISMATCH"), UNAVAILABLE]),
            Self::AddEmail => (
                201,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    (409, "EMAIL_TAKEN"),
                    (409, "EMAIL_ALREADY_ADDED"),
                    (409, "EMAIL_LIMIT_REACHED"),
                    (429, "TOO_MANY_REQUESTS"),
                    UNAVAILABLE,
                ],
            ),
            Self::SendVerification => (
                202,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    (409, "EMAIL_ALREADY_VERIFIED"),
                    (429, "TOO_MANY_REQUESTS"),
                    UNAVAILABLE,
                ],
            ),
            Self::VerifyEmail => (
                200,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    (400, "VERIFICATION_FAILED"),
                    (410, "VERIFICATION_EXPIRED"),
                    (429, "TOO_MANY_ATTEMPTS"),
                    (409, "EMAIL_ALREADY_VERIFIED"),
                    UNAVAILABLE,
                ],
            ),
            Self::SetPrimaryEmail => (200, &[NOT_FOUND, INACTIVE, (409, "EMAIL_NOT_VERIFIED"), UNAVAILABLE]),
            // No stream consumer runs here: a former primary stays Cognito's.
            Self::RemoveEmail => (
                204,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    (409, "PRIMARY_EMAIL"),
                    (409, "SIGN_IN_ADDRESS_PENDING"),
                    UNAVAILABLE,
                ],
            ),
            // The last owner of an organization closes nothing until another owner is made.
            Self::DeleteAccount => (
                204,
                &[NOT_FOUND, INACTIVE, (412, "VERSION_MISMATCH"), LAST_OWNER, UNAVAILABLE],
            ),
            Self::Suspend | Self::Reactivate => (200, &[NOT_FOUND, UNAVAILABLE]),
            Self::AdminDelete => (200, &[NOT_FOUND, LAST_OWNER, UNAVAILABLE]),
            Self::CreateOrganization => (
                201,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    (409, "SLUG_TAKEN"),
                    (409, "ORGANIZATION_LIMIT_REACHED"),
                    UNAVAILABLE,
                ],
            ),
            Self::JoinOrganization => (
                200,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    NO_ORGANIZATION,
                    (409, "ORGANIZATION_LIMIT_REACHED"),
                    UNAVAILABLE,
                ],
            ),
            Self::ListMembers => (200, &[NOT_FOUND, NO_ORGANIZATION, ROLE_REQUIRED, UNAVAILABLE]),
            Self::SetMemberRole => (
                200,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    NO_ORGANIZATION,
                    (404, "MEMBER_NOT_FOUND"),
                    ROLE_REQUIRED,
                    LAST_OWNER,
                    UNAVAILABLE,
                ],
            ),
            Self::RemoveMember => (
                204,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    NO_ORGANIZATION,
                    (404, "MEMBER_NOT_FOUND"),
                    ROLE_REQUIRED,
                    LAST_OWNER,
                    UNAVAILABLE,
                ],
            ),
            Self::DeleteOrganization => (202, &[NOT_FOUND, INACTIVE, NO_ORGANIZATION, ROLE_REQUIRED, UNAVAILABLE]),
            Self::PurgeOrganizations => (200, &[UNAVAILABLE]),
            Self::ClaimDomain => (
                201,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    NO_ORGANIZATION,
                    ROLE_REQUIRED,
                    (409, "DOMAIN_TAKEN"),
                    (409, "DOMAIN_LIMIT_REACHED"),
                    UNAVAILABLE,
                ],
            ),
            Self::RemoveDomain => (
                204,
                &[
                    NOT_FOUND,
                    INACTIVE,
                    NO_ORGANIZATION,
                    ROLE_REQUIRED,
                    (404, "DOMAIN_NOT_FOUND"),
                    UNAVAILABLE,
                ],
            ),
        }
    }
}

fn choose(rng: &mut TestRng) -> Op {
    let total: u32 = WEIGHTS.iter().map(|(_, w)| w).sum();
    let mut pick = rng.random_range(0..total);
    for &(op, weight) in WEIGHTS {
        if pick < weight {
            return op;
        }
        pick -= weight;
    }
    unreachable!("weights cover the range")
}

/// What the clients have learnt from replies: ids and versions to send next.
/// Not a model of the service; stale entries are the point.
#[derive(Default)]
struct Known {
    email_ids: HashMap<usize, Vec<String>>,
    versions: HashMap<usize, u64>,
    /// Every organization created so far, deleted ones too.
    orgs: Vec<String>,
}

struct World {
    app: TestApp,
    users: Vec<String>,
    pool: Vec<String>,
    known: Mutex<Known>,
    codes: CodeBook,
}

impl World {
    fn user(&self, i: usize) -> &str {
        &self.users[i]
    }

    fn learn_profile(&self, i: usize, reply: &Reply) {
        if let Some(version) = reply.body["version"].as_u64() {
            self.known.lock().unwrap().versions.insert(i, version);
        }
    }

    fn learn_emails(&self, i: usize, emails: &Value) {
        if let Some(list) = emails.as_array() {
            let ids = list
                .iter()
                .filter_map(|e| e["emailId"].as_str().map(str::to_owned))
                .collect();
            self.known.lock().unwrap().email_ids.insert(i, ids);
        }
    }

    /// One of the user's known ids, or now and then an id nobody has.
    fn email_id(&self, rng: &mut TestRng, i: usize) -> String {
        let known = self.known.lock().unwrap();
        match known.email_ids.get(&i) {
            Some(ids) if !ids.is_empty() && rng.random_range(0..20) != 0 => ids[rng.random_range(0..ids.len())].clone(),
            _ => uuid::Uuid::new_v4().to_string(),
        }
    }

    /// Mostly the shared pool; sometimes another user's sign-up address.
    fn address(&self, rng: &mut TestRng) -> String {
        if rng.random_range(0..10) == 0 {
            format!("user{}@example.com", rng.random_range(0..self.users.len()))
        } else {
            self.pool[rng.random_range(0..self.pool.len())].clone()
        }
    }

    /// One of the organizations created so far, or now and then one nobody has.
    fn org(&self, rng: &mut TestRng) -> String {
        let known = self.known.lock().unwrap();
        if known.orgs.is_empty() || rng.random_range(0..20) == 0 {
            return uuid::Uuid::now_v7().to_string();
        }
        known.orgs[rng.random_range(0..known.orgs.len())].clone()
    }

    fn role(rng: &mut TestRng) -> &'static str {
        ["owner", "admin", "member", "member"][rng.random_range(0..4)]
    }

    fn if_match(&self, i: usize) -> String {
        let version = self.known.lock().unwrap().versions.get(&i).copied().unwrap_or(1);
        format!("\"{version}\"")
    }

    async fn run(&self, rng: &mut TestRng, op: Op) -> Reply {
        let app = &self.app;
        let i = rng.random_range(0..self.users.len());
        let sub = self.user(i);
        match op {
            Op::GetProfile => {
                let reply = app.get_profile(sub).await;
                self.learn_profile(i, &reply);
                reply
            }
            Op::GetAccount => {
                let reply = app.get_account(sub).await;
                if reply.status == 200 {
                    self.learn_emails(i, &reply.body["emails"]);
                    self.known
                        .lock()
                        .unwrap()
                        .versions
                        .insert(i, reply.body["profile"]["version"].as_u64().unwrap());
                }
                reply
            }
            Op::ListEmails => {
                let reply = app.list_emails(sub).await;
                if reply.status == 200 {
                    self.learn_emails(i, &reply.body["emails"]);
                }
                reply
            }
            Op::UpdateProfile => {
                let names = ["Ada", "Grace", "Edsger", "Barbara"];
                let body = json!({ "firstName": names[rng.random_range(0..names.len())] });
                let reply = app.update_profile(sub, &self.if_match(i), body).await;
                self.learn_profile(i, &reply);
                reply
            }
            Op::AddEmail => {
                let reply = app.add_email(sub, &self.address(rng)).await;
                if reply.status == 201 {
                    let id = reply.body["emailId"].as_str().unwrap().to_owned();
                    self.known.lock().unwrap().email_ids.entry(i).or_default().push(id);
                }
                reply
            }
            Op::GetEmail => app.get_email(sub, &self.email_id(rng, i)).await,
            Op::SendVerification => app.send_verification(sub, &self.email_id(rng, i)).await,
            Op::VerifyEmail => {
                let email_id = self.email_id(rng, i);
                let code = match self.codes.code_for(&email_id) {
                    // One in six a wrong code: a digit changed.
                    Some(code) if rng.random_range(0..6) != 0 => code,
                    Some(code) => {
                        let last = code.as_bytes()[5] - b'0';
                        format!("{}{}", &code[..5], (last + 1) % 10)
                    }
                    None => format!("{:06}", rng.random_range(0..1_000_000)),
                };
                app.verify_email(sub, &email_id, &code).await
            }
            Op::SetPrimaryEmail => {
                let reply = app.set_primary_email(sub, &self.email_id(rng, i)).await;
                self.learn_profile(i, &reply);
                reply
            }
            Op::RemoveEmail => app.remove_email(sub, &self.email_id(rng, i)).await,
            Op::DeleteAccount => app.delete_account(sub, &self.if_match(i)).await,
            Op::CheckEmail => app.check_email(sub, &self.address(rng)).await,
            Op::FindUserByEmail => app.find_user_by_email(ADMIN, &self.address(rng)).await,
            Op::Suspend => app.set_user_status(ADMIN, sub, "suspended").await,
            Op::Reactivate => app.set_user_status(ADMIN, sub, "active").await,
            Op::AdminDelete => app.set_user_status(ADMIN, sub, "deleted").await,
            Op::CreateOrganization => {
                let slug = format!("org-{}", rng.random_range(0..SLUGS));
                let reply = app.create_organization(sub, "Acme", &slug).await;
                if reply.status == 201 {
                    let org = reply.body["orgId"].as_str().unwrap().to_owned();
                    self.known.lock().unwrap().orgs.push(org);
                }
                reply
            }
            Op::JoinOrganization => {
                let org = OrgId::parse(&self.org(rng)).expect("an organization id");
                let role: Role = serde_json::from_value(json!(Self::role(rng))).expect("a role");
                let user = UserId::parse_sub(sub).expect("a sub");
                let joined = app.store.join_organization(org, &user, role, app.clock.now()).await;
                // The store's answer as the route that will call it answers.
                let response = match joined {
                    Ok(_) => user_service::http::response::empty(lambda_http::http::StatusCode::OK),
                    Err(err) => user_service::http::Problem::from(&err).into_response(),
                };
                Reply::from(response)
            }
            Op::ListMembers => app.list_members(sub, &self.org(rng), &[]).await,
            Op::SetMemberRole => {
                let target = self.user(rng.random_range(0..self.users.len())).to_owned();
                app.set_member_role(sub, &self.org(rng), &target, Self::role(rng)).await
            }
            Op::RemoveMember => {
                // Half the time, leaving.
                let target = if rng.random_range(0..2) == 0 {
                    sub.to_owned()
                } else {
                    self.user(rng.random_range(0..self.users.len())).to_owned()
                };
                app.remove_member(sub, &self.org(rng), &target).await
            }
            Op::DeleteOrganization => app.delete_organization(sub, &self.org(rng), "*").await,
            Op::ClaimDomain => {
                let domain = format!("d{}.example", rng.random_range(0..DOMAINS));
                app.claim_domain(sub, &self.org(rng), &domain).await
            }
            Op::RemoveDomain => {
                let domain = format!("d{}.example", rng.random_range(0..DOMAINS));
                app.remove_domain(sub, &self.org(rng), &domain).await
            }
            Op::PurgeOrganizations => {
                let response = match app.purge_organizations().await {
                    Ok(_) => user_service::http::response::empty(lambda_http::http::StatusCode::OK),
                    Err(_) => user_service::http::Problem::unavailable().into_response(),
                };
                Reply::from(response)
            }
        }
    }
}

/// The outcome as the mix counts it: `201` or `409 EMAIL_TAKEN`.
fn outcome(reply: &Reply) -> String {
    match reply.body["code"].as_str() {
        Some(code) if reply.status >= 400 => format!("{} {code}", reply.status),
        _ => reply.status.to_string(),
    }
}

/// Whether the reply is one the route allows, problems well-formed.
fn allowed(op: Op, reply: &Reply) -> bool {
    let (success, problems) = op.allowed();
    if reply.status == success {
        return true;
    }
    let Some(code) = reply.body["code"].as_str() else {
        return false;
    };
    let is_problem =
        reply.header("content-type") == Some("application/problem+json") && reply.body["status"] == json!(reply.status);
    // 429 and 503 tell the client when to come back.
    let says_when = !matches!(reply.status, 429 | 503) || reply.header("retry-after").is_some();
    is_problem && says_when && problems.contains(&(reply.status, code))
}

#[derive(Default)]
struct Tally {
    mix: BTreeMap<Op, BTreeMap<String, u64>>,
    refused: Vec<String>,
    operations: usize,
}

impl Tally {
    fn merge(&mut self, other: Self) {
        for (op, outcomes) in other.mix {
            let mine = self.mix.entry(op).or_default();
            for (outcome, n) in outcomes {
                *mine.entry(outcome).or_default() += n;
            }
        }
        self.refused.extend(other.refused);
        self.operations += other.operations;
    }

    fn count(&self, pred: impl Fn(&str) -> bool) -> u64 {
        self.mix
            .values()
            .flat_map(|m| m.iter())
            .filter(|(o, _)| pred(o))
            .map(|(_, n)| n)
            .sum()
    }
}

async fn task(world: Arc<World>, seed: u64, index: usize, operations: usize) -> Tally {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    seed_bytes[8..16].copy_from_slice(&(index as u64).to_le_bytes());
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut tally = Tally::default();
    for n in 0..operations {
        // A minute passes now and then: new codes may be sent, old ones expire.
        if rng.random_range(0..150) == 0 {
            world.app.clock.advance(61);
        }
        // The rare erasures and deletions run at least once each, whatever the dice say.
        let op = match (index, n == operations / 2) {
            (0, true) => Op::AdminDelete,
            (1, true) => Op::DeleteAccount,
            (2, true) => Op::DeleteOrganization,
            (3, true) => Op::PurgeOrganizations,
            _ => choose(&mut rng),
        };
        let reply = world.run(&mut rng, op).await;
        if !allowed(op, &reply) && tally.refused.len() < 20 {
            tally
                .refused
                .push(format!("{} -> {} {}", op.route(), reply.status, reply.body));
        }
        *tally.mix.entry(op).or_default().entry(outcome(&reply)).or_default() += 1;
        tally.operations += 1;
    }
    tally
}

/// What the table holds, checked against what the API shows: every claimed
/// address is on its owner's list and found for its owner by the admin search;
/// every listed address is claimed by the user listing it; an active user's
/// profile names its verified primary address.
async fn cross_check(world: &World) -> Vec<String> {
    let app = &world.app;
    let mut out = Vec::new();
    let mut claims: HashMap<String, ClaimItem> = HashMap::new();
    for item in invariants::scan(app.store.client(), &app.store.config().table_name).await {
        let pk = keys::key_string(&item, keys::PK).unwrap_or_default().to_owned();
        let sk = keys::key_string(&item, keys::SK).unwrap_or_default().to_owned();
        if keys::classify(&pk, &sk) == ItemKind::Claim {
            let claim: ClaimItem = serde_dynamo::from_item(item).unwrap();
            claims.insert(keys::claim_address(&pk).unwrap().to_owned(), claim);
        }
    }
    for (address, claim) in &claims {
        // A removed former primary's claim only reserves it for a recovery:
        // on no list, found by no search (the invariant checker holds it).
        if claim.is_reservation_only() {
            continue;
        }
        let owner = claim.user_id.as_str();
        let listed = app.list_emails(owner).await;
        let on_list = listed.body["emails"].as_array().is_some_and(|l| {
            l.iter()
                .any(|e| e["email"] == *address && e["emailId"] == claim.email_id.to_string())
        });
        if !on_list {
            out.push(format!(
                "claim of {address}: not on its owner's list ({})",
                listed.status
            ));
        }
        let found = app.find_user_by_email(ADMIN, address).await;
        if found.body["profile"]["userId"] != *owner {
            out.push(format!("claim of {address}: the admin search finds {}", found.body));
        }
    }
    for (i, user) in world.users.iter().enumerate() {
        let account = app.get_account(user).await;
        if account.status == 404 {
            continue;
        }
        if account.status != 200 {
            out.push(format!("user {i}: GET /me/account answers {}", account.status));
            continue;
        }
        let emails = account.body["emails"].as_array().unwrap();
        for e in emails {
            let address = e["email"].as_str().unwrap();
            if claims.get(address).is_none_or(|c| c.user_id.as_str() != user) {
                out.push(format!("user {i}: lists an address it holds no claim of"));
            }
        }
        let listed = app.list_emails(user).await;
        if listed.body["emails"] != account.body["emails"] {
            out.push(format!("user {i}: GET /me/emails differs from GET /me/account"));
        }
        let profile = &account.body["profile"];
        if profile["status"] == "active" {
            let primaries: Vec<&Value> = emails.iter().filter(|e| e["isPrimary"] == true).collect();
            let primary_ok =
                primaries.len() == 1 && primaries[0]["isVerified"] == true && primaries[0]["email"] == profile["email"];
            if !primary_ok {
                out.push(format!(
                    "user {i}: active, but its primary address is not one verified address named by the profile"
                ));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_users_on_shared_addresses_keep_every_rule() {
    let settings = Settings::from_env();
    eprintln!(
        "workload: seed {} (WORKLOAD_SEED={} reproduces the choices), {} users, {} operations, {} tasks",
        settings.seed, settings.seed, settings.users, settings.operations, settings.tasks
    );
    let app = TestApp::spawn().await;
    let codes = CodeBook::default();
    let dispatch = codes.dispatch();

    app.sign_up(ADMIN, "admin@example.com")
        .with_subscriber(dispatch.clone())
        .await;
    let users: Vec<String> = (0..settings.users)
        .map(|i| format!("00000000-0000-4000-9000-{i:012}"))
        .collect();
    let addresses: Vec<String> = (0..settings.users).map(|i| format!("user{i}@example.com")).collect();
    let sign_ups = users
        .iter()
        .zip(&addresses)
        .map(|(user, email)| app.sign_up(user, email));
    futures::future::join_all(sign_ups)
        .with_subscriber(dispatch.clone())
        .await;

    // Fewer addresses than users: most adds and verifications race for one.
    let pool = (0..(settings.users / 2).max(4))
        .map(|k| format!("shared{k}@pool.example.com"))
        .collect();
    let world = Arc::new(World {
        app,
        users,
        pool,
        known: Mutex::default(),
        codes,
    });

    let started = std::time::Instant::now();
    let handles: Vec<_> = (0..settings.tasks)
        .map(|t| {
            let share = settings.operations / settings.tasks + usize::from(t < settings.operations % settings.tasks);
            tokio::spawn(task(world.clone(), settings.seed, t, share).with_subscriber(dispatch.clone()))
        })
        .collect();
    let mut tally = Tally::default();
    for handle in handles {
        tally.merge(handle.await.expect("a workload task panicked"));
    }
    let seconds = started.elapsed().as_secs_f64();

    let app = &world.app;
    let violations = invariants::violations(app.store.client(), &app.store.config().table_name).await;
    let cross = cross_check(&world).with_subscriber(dispatch.clone()).await;

    let ops_per_second = tally.operations as f64 / seconds;
    let unavailable = tally.count(|o| o.starts_with("503"));
    let server_errors = tally.count(|o| o.starts_with('5'));
    let mix: serde_json::Map<String, Value> = tally
        .mix
        .iter()
        .map(|(op, outcomes)| (op.route().to_owned(), json!(outcomes)))
        .collect();
    let mut by_outcome: BTreeMap<String, u64> = BTreeMap::new();
    for outcomes in tally.mix.values() {
        for (o, n) in outcomes {
            *by_outcome.entry(o.clone()).or_default() += n;
        }
    }
    crate::figures::record(
        "workload",
        json!({
            "seed": settings.seed,
            "users": settings.users,
            "addresses_in_pool": world.pool.len(),
            "operations": tally.operations,
            "tasks": settings.tasks,
            "seconds": (seconds * 100.0).round() / 100.0,
            "operations_per_second": ops_per_second.round(),
            "outcomes": by_outcome,
            "mix_by_route": mix,
            "service_unavailable_503": unavailable,
            "disallowed_replies": tally.refused.len(),
            "violations": violations.len(),
            "cross_check_failures": cross.len(),
            "log_lines": world.codes.line_count(),
        }),
    );
    eprintln!(
        "workload: {} operations by {} users from {} tasks in {seconds:.1} s ({ops_per_second:.0} ops/s); \
         {} succeeded, {unavailable} answered 503, {} violations; outcomes {by_outcome:?}",
        tally.operations,
        settings.users,
        settings.tasks,
        tally.count(|o| o.starts_with('2')),
        violations.len(),
    );

    assert_eq!(tally.operations, settings.operations);
    assert!(
        tally.refused.is_empty(),
        "replies no route allows:\n{}",
        tally.refused.join("\n")
    );
    assert_eq!(server_errors, unavailable, "no 5xx but the documented 503");
    assert!(
        violations.is_empty(),
        "the table breaks its rules:\n{}",
        violations.join("\n")
    );
    assert!(
        cross.is_empty(),
        "the API and the table disagree:\n{}",
        cross.join("\n")
    );
    // The run exercised what it claims to: every route answered, and the races
    // on shared addresses happened.
    assert_eq!(
        tally.mix.len(),
        WEIGHTS.len(),
        "every operation ran: {:?}",
        tally.mix.keys()
    );
    for wanted in ["201", "409 EMAIL_TAKEN"] {
        assert!(by_outcome.contains_key(wanted), "no {wanted} in {by_outcome:?}");
    }
    assert!(
        tally.mix[&Op::VerifyEmail].contains_key("200"),
        "some verifications succeeded: {:?}",
        tally.mix[&Op::VerifyEmail]
    );
}
