//! The SCIM provisioning engine: what a directory's request does, across the
//! table and Cognito. It reads the facts, asks the pure plans
//! ([`crate::scim::provision`]), calls Cognito where an account is made, and
//! writes through one store method, whose conditions hold the facts. Store
//! errors become SCIM errors here, in one place.

use crate::domain::Timestamp;
use crate::identity::{IdentityError, UserPool};
use crate::scim::provision::{CreatePlan, DeletePlan, addresses_of, plan_create, plan_delete};
use crate::scim::{ScimError, ScimType, ScimUser};
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
        StoreError::AccountInactive => {
            ScimError::status(409, "the account is suspended by the service's administrators")
        }
        StoreError::ScimTokenInvalid | StoreError::OrganizationNotFound => {
            ScimError::status(401, "the bearer token is not a live SCIM token of an organization")
        }
        StoreError::MemberNotFound | StoreError::NotFound => ScimError::status(404, "no such User"),
        StoreError::RoleRequired => ScimError::bad_request(
            ScimType::Mutability,
            "active: an owner's access is the organization's owners' to change, not its directory's",
        ),
        StoreError::VersionMismatch { .. } => ScimError::status(412, "the User has changed since the version named"),
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
        CreatePlan::Link { user: account, added } => {
            if !added.is_empty() {
                // Adding addresses to an account someone already has is an
                // update's work (issue 44, next part); a create never does it.
                return Err(ScimError::bad_request(
                    ScimType::InvalidValue,
                    "emails: an existing account is linked by its own address; list only addresses it holds",
                )
                .into());
            }
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

/// A directory's PUT or PATCH of a member. With `If-Match`, a version other
/// than the member's is 412 and nothing is written; without, a change that
/// meets another is read and applied again (a PATCH never loses another's
/// update, as its write is conditioned on the versions it read).
pub async fn update(
    store: &Store,
    client: &ScimClient,
    id: &crate::domain::UserId,
    change: &Change,
    if_match: Option<&str>,
    now: Timestamp,
) -> Result<ScimMember, Refused> {
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
        let after = match change {
            Change::Replace(user) => user.clone(),
            Change::Patch(patch) => patch.apply(&current.user)?,
        };
        let (domains, holders) = store.scim_facts(client.org, &addresses_of(&after), now).await?;
        let listed = addresses_of(&after);
        let holder = |address: &crate::domain::EmailAddress| {
            listed
                .iter()
                .position(|a| a == address)
                .and_then(|at| holders.get(at).cloned())
                .unwrap_or(crate::scim::provision::Holder::Free)
        };
        let plan = crate::scim::provision::plan_update(&current.facts, &after, &domains, holder, id)?;
        if !plan.added.is_empty() || !plan.removed.is_empty() || plan.primary.is_some() {
            // A directory's change of addresses goes through the address
            // writes (the primary's switch and its way back): issue 44's next part.
            return Err(ScimError::bad_request(
                ScimType::Mutability,
                "emails: a change of addresses through SCIM is not served yet; the other attributes are",
            )
            .into());
        }
        match store
            .scim_update(client, &current, &after, plan.manages_profile, now)
            .await
        {
            Err(StoreError::VersionMismatch { .. }) if if_match.is_none() => {}
            Err(StoreError::VersionMismatch { .. }) => {
                return Err(ScimError::status(412, "the User has changed since the version named").into());
            }
            other => return Ok(other?),
        }
    }
    Err(scim_error(StoreError::Contended))
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
        let done = match plan_delete(&current.facts, &domains) {
            DeletePlan::Erase => store.scim_erase(client, id, current.version, &domains, now).await,
            DeletePlan::Leave { removed } => store.scim_leave(client, id, current.version, &removed, now).await,
        };
        match done {
            Err(StoreError::VersionMismatch { .. }) => {}
            Err(StoreError::RoleRequired) => {
                return Err(ScimError::bad_request(
                    ScimType::Mutability,
                    "an owner's membership is the organization's owners' to end, not its directory's",
                )
                .into());
            }
            other => return Ok(other?),
        }
    }
    Err(scim_error(StoreError::Contended))
}
