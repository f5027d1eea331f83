//! The SCIM provisioning engine: what a directory's request does, across the
//! table and Cognito. It reads the facts, asks the pure plans
//! ([`crate::scim::provision`]), calls Cognito where an account is made, and
//! writes through one store method, whose conditions hold the facts. Store
//! errors become SCIM errors here, in one place.

use crate::domain::Timestamp;
use crate::identity::{IdentityError, UserPool};
use crate::scim::provision::{AddressStep, CreatePlan, DeletePlan, addresses_of, plan_create, plan_delete};
use crate::scim::{ScimError, ScimUser, ScimVersion};
use crate::store::{DirectoryAccount, ScimClient, ScimMember, Store, StoreError};

/// Seconds a client is asked to wait after a 429 or a 503.
pub const RETRY_AFTER_SECS: u64 = 1;

/// A refused SCIM request, and how long to wait when waiting helps.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Refused {
    /// The SCIM error to answer.
    pub error: ScimError,
    /// `Retry-After`, for a 429 or a 503.
    pub retry_after_secs: Option<u64>,
}

impl From<ScimError> for Refused {
    fn from(error: ScimError) -> Self {
        Self {
            error,
            retry_after_secs: None,
        }
    }
}

impl From<StoreError> for Refused {
    fn from(err: StoreError) -> Self {
        scim_error(err)
    }
}

/// A store error as a SCIM client reads it. Details name the rule, never a value.
pub fn scim_error(err: StoreError) -> Refused {
    let error = match err {
        StoreError::DirectoryNameTaken => {
            ScimError::uniqueness("the userName or the externalId already names another member of the organization")
        }
        StoreError::EmailTaken => ScimError::uniqueness("an address listed belongs to another account"),
        StoreError::DomainNotVerified | StoreError::NotAllowed(_) => ScimError::invalid_value(
            "emails",
            "an address is outside the organization's verified domains or its address rules",
        ),
        StoreError::LimitReached => ScimError::invalid_value("emails", "more addresses than an account may hold"),
        StoreError::OrganizationLimitReached => {
            ScimError::status(409, "the account belongs to the most organizations it may")
        }
        StoreError::OrganizationFull => ScimError::status(409, "the organization has the most members it may"),
        StoreError::AccountInactive => {
            ScimError::status(409, "the account is suspended by the service's administrators")
        }
        StoreError::ScimTokenInvalid | StoreError::OrganizationNotFound => {
            ScimError::status(401, "the bearer token is not a live SCIM token of an organization")
        }
        StoreError::MemberNotFound | StoreError::NotFound => ScimError::status(404, "no such User"),
        // The membership's role or provenance, as the write found it.
        StoreError::RoleRequired => crate::scim::provision::privileged(),
        StoreError::VersionMismatch { .. } => ScimError::status(412, "the User has changed since the version named"),
        StoreError::TooManyRequests { retry_after_secs } => {
            return Refused {
                error: ScimError::status(
                    429,
                    "accounts are being made as fast as this service allows; retry shortly",
                ),
                retry_after_secs: Some(retry_after_secs),
            };
        }
        StoreError::TooManyScimAttempts { retry_after_secs } => {
            return Refused {
                error: ScimError::status(429, "too many requests whose token proved nothing"),
                retry_after_secs: Some(retry_after_secs),
            };
        }
        StoreError::Contended | StoreError::Unavailable(_) => {
            return Refused {
                error: ScimError::status(503, "the service is busy; retry shortly"),
                retry_after_secs: Some(RETRY_AFTER_SECS),
            };
        }
        other => {
            tracing::error!(error = %other, "a SCIM request failed");
            ScimError::status(500, "something went wrong on our side")
        }
    };
    Refused {
        error,
        retry_after_secs: None,
    }
}

/// Cognito's refusal: a throttle is a 429 (its quota is the account's, for
/// every user pool in the Region), anything else a 503.
fn cognito_error(err: &IdentityError) -> Refused {
    if err.is_throttled() {
        return Refused {
            error: ScimError::status(
                429,
                "accounts are being made as fast as the service allows; retry shortly",
            ),
            retry_after_secs: Some(RETRY_AFTER_SECS),
        };
    }
    tracing::error!(error = %err, "Cognito refused a SCIM create");
    Refused {
        error: ScimError::status(503, "the service is busy; retry shortly"),
        retry_after_secs: Some(RETRY_AFTER_SECS),
    }
}

/// A directory's create (POST /Users): a new account, made in Cognito then
/// written with its membership, or an existing account linked by its
/// verified address at the organization's domain.
pub async fn create(
    store: &Store,
    users: &UserPool,
    client: &ScimClient,
    user: &ScimUser,
    now: Timestamp,
) -> Result<ScimMember, Refused> {
    let addresses = addresses_of(user);
    let (domains, holders) = store.scim_facts(client.org, &addresses, now).await?;
    let holder = |address: &crate::domain::EmailAddress| {
        addresses
            .iter()
            .position(|a| a == address)
            .and_then(|at| holders.get(at).cloned())
            .unwrap_or(crate::scim::provision::Holder::Free)
    };
    match plan_create(user, &domains, holder)? {
        CreatePlan::NewAccount { primary, addresses } => {
            // Within the deployment's pace of directory-made accounts, before Cognito's quota.
            store.admit_scim_creation(client.org, now).await?;
            let made = users
                .create_verified(&primary)
                .await
                .map_err(|err| cognito_error(&err))?;
            let account = DirectoryAccount {
                user: &made.user,
                scim: user,
                primary: &primary,
                addresses: &addresses,
                provisioned: !made.signed_up,
            };
            let written = store.scim_create_account(client, &account, now).await;
            if written.is_err() && made.made_now {
                // A user this call made with no account in the table would hold
                // the address in Cognito, and no one could sign up with it.
                if let Err(err) = users.delete(&made.user).await {
                    tracing::error!(error = %err, user = %made.user, "a SCIM create's Cognito user outlived its refused write");
                }
            }
            Ok(written?)
        }
        CreatePlan::Link { user: account } => {
            let primary = user.primary_email().cloned().or_else(|| addresses.first().cloned());
            let primary = primary.ok_or_else(|| ScimError::invalid_value("emails", "a user needs an address"))?;
            Ok(store.scim_link(client, &account, user, &primary, now).await?)
        }
    }
}

/// A directory's change: the whole User (PUT) or operations on it (PATCH).
#[derive(Debug, Clone)]
pub enum Change {
    /// PUT: the User as it is to be.
    Replace(ScimUser),
    /// PATCH: applied to the User as read, then written as a PUT of its result.
    Patch(crate::scim::Patch),
}

/// Attempts at a change whose versions moved between its read and its write.
const CHANGE_ATTEMPTS: u32 = 5;

/// Waits before attempt `attempt` again: jittered, so two changes that met
/// do not meet again. False, without waiting, when the wait would pass the
/// invocation's deadline.
async fn paused(attempt: u32) -> bool {
    let pause = crate::store::retry::backoff(attempt);
    if crate::deadline::current_deadline().is_some_and(|d| !crate::store::retry::may_retry(attempt, pause, d)) {
        return false;
    }
    tokio::time::sleep(pause).await;
    true
}

/// A directory's PUT or PATCH of a member: its addresses first, one write
/// each (an addition, the primary's switch, a removal), then the names and
/// `active` in one write. Each write conditions what it was planned on, and
/// the User is read and the change applied again before each, so a PATCH
/// never loses another's update. With `If-Match`, a version other than the
/// member's, before or between these writes (beyond this change's own), is
/// 412: what was written stays, and the User shown by a read says what.
pub async fn update(
    store: &Store,
    client: &ScimClient,
    id: &crate::domain::UserId,
    change: &Change,
    if_match: Option<&str>,
    now: Timestamp,
) -> Result<ScimMember, Refused> {
    let stale = || Refused::from(ScimError::status(412, "the User has changed since the version named"));
    let mut progress = Progress {
        most_steps: 2 * store.config().max_emails_per_user + 1,
        ..Progress::default()
    };
    // The version this change expects to read next: the named one, then as its own writes move it.
    let mut expected: Option<ScimVersion> = None;
    // The User as this change makes it, once a write of it is made: a PATCH
    // applied again to what its own writes left would read otherwise (a
    // removed value no target, a filter matching the new value).
    let mut fixed: Option<ScimUser> = None;
    loop {
        let current = store.scim_member(client.org, id).await?;
        match (if_match, expected) {
            (Some(header), None) if !current.version.admitted_by(header)? => return Err(stale()),
            // Beyond the first read, the change's own address writes move the
            // addresses: the versions say whether anyone else wrote.
            (Some(_), Some(version)) if !version.same_versions(current.version) => return Err(stale()),
            _ => {}
        }
        let after = match (change, &fixed) {
            (_, Some(after)) | (Change::Replace(after), None) => after.clone(),
            (Change::Patch(patch), None) => patch.apply(&current.user)?,
        };
        if !crate::scim::provision::within_standing(&current.facts, &current.user, &after)? {
            // An admin's or owner's User as it is: nothing to write.
            return Ok(current);
        }
        let listed = addresses_of(&after);
        let (domains, holders) = store.scim_facts(client.org, &listed, now).await?;
        let holder = |address: &crate::domain::EmailAddress| {
            listed
                .iter()
                .position(|a| a == address)
                .and_then(|at| holders.get(at).cloned())
                .unwrap_or(crate::scim::provision::Holder::Free)
        };
        let plan = crate::scim::provision::plan_update(&current.facts, &after, &domains, holder, id)?;
        let Some(step) = plan.next_step(&current.facts.primary) else {
            match store
                .scim_update(client, &current, &after, plan.manages_profile, now)
                .await
            {
                Err(StoreError::VersionMismatch { .. }) if if_match.is_some() => return Err(stale()),
                Err(StoreError::VersionMismatch { .. }) => progress.met().await?,
                other => return Ok(other?),
            }
            continue;
        };
        let done = match &step {
            AddressStep::Add(address) => store.scim_add_address(client, id, address, now).await,
            AddressStep::Primary(address) => {
                store
                    .scim_set_primary(client, id, address, (current.version.profile, &domains), now)
                    .await
            }
            AddressStep::Remove(address) => store.scim_remove_address(client, id, address, now).await,
        };
        match done {
            Ok(()) => {
                progress.step()?;
                fixed = Some(after);
                let mut version = current.version;
                // A switch moves the profile's version; additions and removals move neither.
                if matches!(step, AddressStep::Primary(_)) {
                    version.profile += 1;
                }
                expected = Some(version);
                continue;
            }
            // The address became the account's meanwhile (a retry of this change).
            Err(StoreError::AlreadyAdded) => {
                progress.step()?;
                fixed = Some(after);
            }
            // Cognito still signs the user in with the former primary: the
            // stream's consumer moves it there, and then the removal may go.
            Err(StoreError::SignInAddressPending) => progress.wait_for_sign_in().await?,
            Err(StoreError::NotVerified) => {
                return Err(ScimError::invalid_value(
                    "emails",
                    "the primary must be an address the person verified, or one added by the directory",
                )
                .into());
            }
            // What the step was planned on moved: read, apply, plan again.
            Err(StoreError::VersionMismatch { .. } | StoreError::NotFound | StoreError::PrimaryEmail) => {
                if if_match.is_some() && expected.is_none() {
                    return Err(stale());
                }
                progress.met().await?;
            }
            Err(other) => return Err(other.into()),
        }
        expected = expected.or(Some(current.version));
    }
}

/// How far an update has gone: bounded, so that two changes that keep
/// meeting, or a removal that waits on Cognito, end in a 503 the client retries.
#[derive(Debug, Default)]
struct Progress {
    /// The most address writes one change makes: every address of an
    /// account added, the primary switched, every former one removed.
    most_steps: u32,
    /// Address writes made.
    steps: u32,
    /// Writes refused because what they were planned on moved.
    conflicts: u32,
    /// Reads of a removal that waits for Cognito's sign-in address.
    waits: u32,
}

/// How often a removal waits for Cognito: about 15 s at [`SIGN_IN_POLL`]
/// (the invocation's deadline, 25 s, bounds it too).
const MOST_WAITS: u32 = 60;
/// How long a removal waits between reads of Cognito's sign-in address.
const SIGN_IN_POLL: std::time::Duration = std::time::Duration::from_millis(250);

impl Progress {
    fn step(&mut self) -> Result<(), Refused> {
        self.steps += 1;
        self.within(self.steps <= self.most_steps)
    }

    /// A conflict: a jittered pause, unless there were too many or it would pass the deadline.
    async fn met(&mut self) -> Result<(), Refused> {
        self.conflicts += 1;
        self.within(self.conflicts < CHANGE_ATTEMPTS && paused(self.conflicts).await)
    }

    /// A removal waiting for Cognito: a poll's pause, a 503 once waited enough or at the deadline.
    async fn wait_for_sign_in(&mut self) -> Result<(), Refused> {
        self.waits += 1;
        if self.waits > MOST_WAITS || !polled().await {
            return Err(Refused {
                error: ScimError::status(
                    503,
                    "the former primary address leaves once sign-in has moved to the new one; retry shortly",
                ),
                retry_after_secs: Some(RETRY_AFTER_SECS),
            });
        }
        Ok(())
    }

    fn within(&self, bounded: bool) -> Result<(), Refused> {
        if bounded {
            Ok(())
        } else {
            Err(scim_error(StoreError::Contended))
        }
    }
}

/// A poll's wait, unless it would pass the invocation's deadline.
async fn polled() -> bool {
    if crate::deadline::current_deadline().is_some_and(|d| !crate::store::retry::may_retry(1, SIGN_IN_POLL, d)) {
        return false;
    }
    tokio::time::sleep(SIGN_IN_POLL).await;
    true
}

/// A directory's delete of a member: the account erased where the
/// organization made it and alone uses it, else the membership ended (its
/// domain addresses other than the primary removed). With `If-Match`, a
/// version other than the member's is 412 and nothing is written. A
/// delete that meets a change is read and planned again: the write's own
/// conditions decide, never the plan alone.
pub async fn delete(
    store: &Store,
    client: &ScimClient,
    id: &crate::domain::UserId,
    if_match: Option<&str>,
    now: Timestamp,
) -> Result<(), Refused> {
    for attempt in 0..CHANGE_ATTEMPTS {
        if attempt > 0 && !paused(attempt).await {
            break;
        }
        let current = store.scim_member(client.org, id).await?;
        if let Some(header) = if_match
            && !current.version.admitted_by(header)?
        {
            return Err(ScimError::status(412, "the User has changed since the version named").into());
        }
        let (domains, _) = store.scim_facts(client.org, &[], now).await?;
        let done = match plan_delete(&current.facts, &domains)? {
            DeletePlan::Erase => store.scim_erase(client, id, current.version, &domains, now).await,
            DeletePlan::Leave { removed } => store.scim_leave(client, id, current.version, &removed, now).await,
        };
        match done {
            Err(StoreError::VersionMismatch { .. }) => {}
            other => return Ok(other?),
        }
    }
    Err(scim_error(StoreError::Contended))
}
