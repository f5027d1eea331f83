//! What a directory's request means to an account (issue 44's "what each
//! operation means"), decided from what the table holds. Pure: the store
//! reads the facts, asks these plans, and writes what they say with the
//! facts as conditions, so a change between the read and the write is a
//! lost race, read again.
//!
//! The words used throughout:
//! - An organization's **domain addresses** are addresses at its verified
//!   domains: the organization proved it holds them, so it may vouch for them.
//! - An account the organization **provisioned** (made by SCIM) is a
//!   **provisioned member** while its role is `member`: the directory manages
//!   its domain addresses, and, while the account is also the organization's
//!   **alone** (every verified address it holds one of the organization's
//!   domain addresses, and no other organization), its primary and its
//!   names, and may erase it.
//! - An account the directory found by a verified domain address is a
//!   **linked member**: the person's own. The directory may suspend,
//!   reactivate and remove its membership, never re-address or rename it.
//! - Admins and owners are the organization's owners' to change: a directory
//!   never adopts or changes them (an admin's token re-addressing the owner
//!   would hand the admin the owner's account, and with it the organization).
//!
//! Each of these is also a condition in the store's write (the membership's
//! role and `provisioned`), so a change between the plan and the write is
//! refused, not obeyed.

use std::collections::BTreeSet;

use super::error::ScimError;
use super::user::ScimUser;
use crate::domain::{EmailAddress, OrgDomain, Role, UserId};

/// Who holds an address, as its claim says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// Nobody: no claim, or one that lapsed.
    Free,
    /// An account holds it verified.
    Verified(UserId),
    /// An account is verifying it (a claim that lapses unless verified).
    Pending(UserId),
    /// Reserved to an account while a switch away from it can be undone:
    /// nobody else's, and no account to link by it.
    Reserved(UserId),
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
    /// The account that holds the primary verified joins by membership, as
    /// it is: a linked member's addresses are the person's, so the other
    /// addresses listed are not added (the answer shows what it holds).
    Link {
        /// The account.
        user: UserId,
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
        Holder::Verified(account) => Ok(CreatePlan::Link { user: account }),
        Holder::Reserved(_) => Err(taken()),
        // Claims being verified yield to verified addresses, as a sign-up's do.
        Holder::Free | Holder::Pending(_) => {
            if addresses
                .iter()
                .any(|a| matches!(holder(a), Holder::Verified(_) | Holder::Reserved(_)))
            {
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
    /// The member's role in this organization.
    pub role: Role,
}

/// What a directory may do to a member's account: what the organization gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// It made the account, a member: its domain addresses; its primary and
    /// names while the organization alone uses it; its erasure.
    Provisioned,
    /// It found the person's own account: suspend, reactivate, remove the
    /// membership; never re-address or rename.
    Linked,
    /// An admin or an owner: nothing beyond reading.
    Privileged,
}

impl AccountFacts {
    /// The directory's standing over the account.
    pub fn standing(&self) -> Standing {
        match (self.role, self.provisioned) {
            (Role::Owner | Role::Admin, _) => Standing::Privileged,
            (Role::Member, true) => Standing::Provisioned,
            (Role::Member, false) => Standing::Linked,
        }
    }

    /// Whether the directory manages the account's primary and names.
    pub fn managed(&self, domains: &Domains) -> bool {
        self.standing() == Standing::Provisioned && self.alone(domains)
    }

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

/// Whether an update stays within the directory's standing over the account
/// (`before` the User as shown, `after` as the directory wants it): `true`
/// when it writes, `false` when it is a no-op. A linked member's addresses
/// are the person's; an admin's or an owner's membership is not the
/// directory's to change at all (their names are ignored, as a linked
/// member's are: the person's own).
pub fn within_standing(facts: &AccountFacts, before: &ScimUser, after: &ScimUser) -> Result<bool, ScimError> {
    fn values(u: &ScimUser) -> Vec<&str> {
        let mut v: Vec<&str> = u.emails.iter().map(|e| e.value.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    let same_addresses = values(before) == values(after);
    match facts.standing() {
        Standing::Provisioned => Ok(true),
        Standing::Linked if same_addresses => Ok(true),
        Standing::Linked => Err(ScimError::bad_request(
            super::error::ScimType::Mutability,
            "emails: a linked member's addresses are the person's own; a directory changes the addresses only of accounts it provisioned",
        )),
        Standing::Privileged
            if same_addresses
                && before.active == after.active
                && before.user_name == after.user_name
                && before.external_id == after.external_id =>
        {
            Ok(false)
        }
        Standing::Privileged => Err(privileged()),
    }
}

/// The refusal of a change to an admin's or owner's membership.
pub fn privileged() -> ScimError {
    ScimError::bad_request(
        super::error::ScimType::Mutability,
        "an admin's or an owner's membership is the organization's owners' to change, never its directory's",
    )
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
        manages_profile: facts.managed(domains),
        ..UpdatePlan::default()
    };
    if facts.standing() != Standing::Provisioned {
        // The person's addresses, as shown: nothing of them is the directory's to write.
        return Ok(plan);
    }
    for address in wanted.iter().filter(|a| !shown.contains(a)) {
        match holder(address) {
            Holder::Verified(other) if other == *account => {}
            Holder::Verified(_) | Holder::Reserved(_) => {
                return Err(ScimError::uniqueness("an address listed belongs to another account"));
            }
            Holder::Free | Holder::Pending(_) => plan.added.push((*address).clone()),
        }
    }
    plan.removed = shown
        .iter()
        .filter(|a| !wanted.contains(a))
        .map(|a| (*a).clone())
        .collect();
    // The primary is the directory's only where it manages the account.
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

/// Plans a delete: an account the organization made, alone uses and holds
/// as a member is erased; a provisioned member's domain addresses leave with
/// the membership; a linked member keeps every address; an admin or an
/// owner is refused.
pub fn plan_delete(facts: &AccountFacts, domains: &Domains) -> Result<DeletePlan, ScimError> {
    match facts.standing() {
        Standing::Privileged => return Err(privileged()),
        Standing::Linked => return Ok(DeletePlan::Leave { removed: Vec::new() }),
        Standing::Provisioned if facts.alone(domains) => return Ok(DeletePlan::Erase),
        Standing::Provisioned => {}
    }
    let removed = facts
        .addresses
        .iter()
        .map(|(a, _)| a)
        .filter(|a| domains.covers(a) && **a != facts.primary)
        .cloned()
        .collect();
    Ok(DeletePlan::Leave { removed })
}

#[cfg(test)]
#[path = "provision_tests.rs"]
mod tests;
