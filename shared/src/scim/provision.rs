//! What a directory's request means to an account (issue 44's "what each
//! operation means"), decided from what the table holds. Pure: the store
//! reads the facts, asks these plans, and writes what they say with the
//! facts as conditions, so a change between the read and the write is a
//! lost race, read again.
//!
//! The words used throughout:
//! - An organization's **domain addresses** are addresses at its verified
//!   domains: the organization proved it holds them, so it may vouch for them.
//! - An account is the organization's **alone** when every verified address
//!   it holds is one of the organization's domain addresses and it belongs to
//!   no other organization. Only then does the directory manage its profile
//!   and its primary, and only if the organization also **provisioned** it
//!   (made it by SCIM) may the directory erase it.

use std::collections::BTreeSet;

use super::error::ScimError;
use super::user::ScimUser;
use crate::domain::{EmailAddress, OrgDomain, UserId};

/// Who holds an address, as its claim says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// Nobody: no claim, or one that lapsed.
    Free,
    /// An account holds it verified.
    Verified(UserId),
    /// An account is verifying it (a claim that lapses unless verified).
    Pending(UserId),
}

/// The organization's verified domains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Domains(pub BTreeSet<OrgDomain>);

impl Domains {
    /// Whether `address` is one of the organization's domain addresses.
    pub fn covers(&self, address: &EmailAddress) -> bool {
        self.0.contains(&OrgDomain::of(address))
    }
}

/// What a create (POST /Users) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreatePlan {
    /// A new account: a Cognito user made without mail, a profile whose
    /// primary is `primary`, every address verified (each is a domain
    /// address), and a membership the organization provisioned.
    NewAccount {
        /// The primary address.
        primary: EmailAddress,
        /// Every address, the primary among them.
        addresses: Vec<EmailAddress>,
    },
    /// The account that holds the primary verified joins by membership; the
    /// free domain addresses listed are added to it, verified.
    Link {
        /// The account.
        user: UserId,
        /// The addresses to add.
        added: Vec<EmailAddress>,
    },
}

fn outside_domains() -> ScimError {
    ScimError::invalid_value(
        "emails",
        "every address must be at one of the organization's verified domains; others are never taken on a directory's word",
    )
}

/// The addresses a created user lists: `emails`, or, with none, the
/// `userName` when it is an address (Okta's login, Entra ID's UPN).
pub fn addresses_of(user: &ScimUser) -> Vec<EmailAddress> {
    let mut addresses: Vec<EmailAddress> = user.emails.iter().map(|e| e.value.clone()).collect();
    if addresses.is_empty()
        && let Ok(address) = EmailAddress::parse(user.user_name.as_str())
    {
        addresses.push(address);
    }
    addresses
}

/// Plans a create. `holder` says who holds each address listed.
pub fn plan_create(
    user: &ScimUser,
    domains: &Domains,
    holder: impl Fn(&EmailAddress) -> Holder,
) -> Result<CreatePlan, ScimError> {
    let addresses = addresses_of(user);
    let primary = match (user.primary_email(), addresses.as_slice()) {
        (Some(primary), _) => primary.clone(),
        (None, [first, ..]) => first.clone(),
        (None, []) => return Err(ScimError::invalid_value("emails", "a user needs an address")),
    };
    if !addresses.iter().all(|a| domains.covers(a)) {
        return Err(outside_domains());
    }
    let taken = || ScimError::uniqueness("an address listed belongs to another account");
    match holder(&primary) {
        Holder::Verified(account) => {
            let mut added = Vec::new();
            for address in addresses.iter().filter(|a| **a != primary) {
                match holder(address) {
                    Holder::Verified(other) if other == account => {}
                    Holder::Verified(_) => return Err(taken()),
                    // A claim being verified yields to a verified address, as at sign-up.
                    Holder::Free | Holder::Pending(_) => added.push(address.clone()),
                }
            }
            Ok(CreatePlan::Link { user: account, added })
        }
        // Claims being verified yield to verified addresses, as a sign-up's do.
        Holder::Free | Holder::Pending(_) => {
            if addresses.iter().any(|a| matches!(holder(a), Holder::Verified(_))) {
                return Err(taken());
            }
            Ok(CreatePlan::NewAccount { primary, addresses })
        }
    }
}

/// What the table holds of an account a directory changes or deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountFacts {
    /// The account's addresses: each, and whether it is verified.
    pub addresses: Vec<(EmailAddress, bool)>,
    /// The primary address.
    pub primary: EmailAddress,
    /// How many organizations it belongs to, this one included.
    pub organizations: u32,
    /// Whether this organization made it by SCIM.
    pub provisioned: bool,
}

impl AccountFacts {
    /// Whether the account is the organization's alone (see the module's words).
    pub fn alone(&self, domains: &Domains) -> bool {
        self.organizations <= 1
            && self
                .addresses
                .iter()
                .filter(|(_, verified)| *verified)
                .all(|(a, _)| domains.covers(a))
    }
}

/// The addresses a directory sees of an account: its domain addresses. A
/// person's other addresses are not the organization's business.
pub fn shown_addresses<'a>(facts: &'a AccountFacts, domains: &Domains) -> Vec<&'a EmailAddress> {
    facts
        .addresses
        .iter()
        .map(|(a, _)| a)
        .filter(|a| domains.covers(a))
        .collect()
}

/// What an update (PUT, or PATCH as the PUT of its result) does to the account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdatePlan {
    /// Whether the names and phone are the directory's to change: the account is the organization's alone.
    pub manages_profile: bool,
    /// Domain addresses to add to the account, verified.
    pub added: Vec<EmailAddress>,
    /// Domain addresses to remove from the account.
    pub removed: Vec<EmailAddress>,
    /// The new primary, when the directory changes it.
    pub primary: Option<EmailAddress>,
}

/// One write of an update's addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressStep {
    /// A domain address added, verified.
    Add(EmailAddress),
    /// The primary switched to a verified address.
    Primary(EmailAddress),
    /// An address other than the primary removed.
    Remove(EmailAddress),
}

impl UpdatePlan {
    /// The next write of the plan's addresses, or `None` when only the
    /// names and `active` are left. Removals other than of the primary
    /// (`primary`, the account's now) come first, so that an account at its
    /// most addresses has room for the new; then additions, so that a new
    /// primary exists before the switch; the former primary goes last, so
    /// that the account never holds no verified primary.
    pub fn next_step(&self, primary: &EmailAddress) -> Option<AddressStep> {
        if let Some(address) = self.removed.iter().find(|a| *a != primary) {
            return Some(AddressStep::Remove(address.clone()));
        }
        if let Some(address) = self.added.first() {
            return Some(AddressStep::Add(address.clone()));
        }
        if let Some(address) = &self.primary {
            return Some(AddressStep::Primary(address.clone()));
        }
        self.removed.first().map(|a| AddressStep::Remove(a.clone()))
    }
}

/// Plans the addresses and the profile of an update from `before` (the
/// resource as shown) to `after` (as the directory wants it).
pub fn plan_update(
    facts: &AccountFacts,
    after: &ScimUser,
    domains: &Domains,
    holder: impl Fn(&EmailAddress) -> Holder,
    account: &UserId,
) -> Result<UpdatePlan, ScimError> {
    let wanted: Vec<&EmailAddress> = after.emails.iter().map(|e| &e.value).collect();
    if !wanted.iter().all(|a| domains.covers(a)) {
        return Err(outside_domains());
    }
    let shown = shown_addresses(facts, domains);
    let mut plan = UpdatePlan {
        manages_profile: facts.alone(domains),
        ..UpdatePlan::default()
    };
    for address in wanted.iter().filter(|a| !shown.contains(a)) {
        match holder(address) {
            Holder::Verified(other) if other == *account => {}
            Holder::Verified(_) => return Err(ScimError::uniqueness("an address listed belongs to another account")),
            Holder::Free | Holder::Pending(_) => plan.added.push((*address).clone()),
        }
    }
    plan.removed = shown
        .iter()
        .filter(|a| !wanted.contains(a))
        .map(|a| (*a).clone())
        .collect();
    // The primary is the directory's only where the account is the organization's alone.
    let asked = after.primary_email().filter(|p| **p != facts.primary);
    if plan.manages_profile {
        plan.primary = asked.cloned();
    }
    if wanted.is_empty() && facts.alone(domains) {
        // Required (RFC 7644 section 3.5.2.2): a person's own account may
        // lose its last work address; an account the organization alone
        // uses has no other.
        return Err(ScimError::bad_request(
            super::error::ScimType::Mutability,
            "`emails` is required: replace it, never remove it",
        ));
    }
    let primary_after = plan.primary.as_ref().unwrap_or(&facts.primary);
    if plan.removed.contains(primary_after) {
        return Err(ScimError::invalid_value(
            "emails",
            "the primary address stays until another is made primary (a user has exactly one verified primary)",
        ));
    }
    Ok(plan)
}

/// What a delete (DELETE /Users/{id}) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeletePlan {
    /// The organization made the account and is its only use: it is erased
    /// everywhere, as an admin's delete erases it (the table, then Cognito).
    Erase,
    /// The membership ends; the organization's domain addresses other than
    /// the primary leave the account, which the person keeps.
    Leave {
        /// The domain addresses removed.
        removed: Vec<EmailAddress>,
    },
}

/// Plans a delete.
pub fn plan_delete(facts: &AccountFacts, domains: &Domains) -> DeletePlan {
    if facts.provisioned && facts.alone(domains) {
        return DeletePlan::Erase;
    }
    let removed = facts
        .addresses
        .iter()
        .map(|(a, _)| a)
        .filter(|a| domains.covers(a) && **a != facts.primary)
        .cloned()
        .collect();
    DeletePlan::Leave { removed }
}

#[cfg(test)]
#[path = "provision_tests.rs"]
mod tests;
