//! A directory's names for a member (`userName`, `externalId`), claimed in
//! the organization's partition beside the member: every write that gives,
//! changes or ends a membership's directory identity puts or deletes the
//! claims in its own transaction, conditioned on the member's version, so a
//! claim always names the member that holds the name.

use crate::scim::{ExternalId, UserName};
use crate::store::StoreError;
use crate::store::expr::{Expr, and, or};
use crate::store::items::{self, DirectoryClaimItem, DirectoryIdentity, EntityType, MemberItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};

use crate::domain::{OrgId, Role, UserId};
use crate::store::items::OrgStatus;

use super::ScimClient;
use super::counts::{CountChange, push_counts};

/// The keys of the claims `identity` holds in `org`.
pub(in crate::store) fn claim_keys(org: OrgId, identity: &DirectoryIdentity) -> Vec<Item> {
    let mut keys = vec![keys::directory_name_key(org, &identity.user_name.to_lowercase())];
    if let Some(external) = &identity.external_id {
        keys.push(keys::directory_external_key(org, external));
    }
    keys
}

/// A condition that the organization's half of a membership is at the version read.
pub(in crate::store) fn at_version(x: &mut Expr, member: &MemberItem) -> String {
    if member.version == 0 {
        x.not_exists(attr::VERSION)
    } else {
        x.eq(attr::VERSION, member.version)
    }
}

/// The directory's standing over a membership, inside its write: a member,
/// never an admin or an owner (theirs is the owners' to change), and, where
/// `provisioned`, an account the directory made (a linked account's
/// addresses and names are the person's own).
pub(in crate::store) fn standing(x: &mut Expr, provisioned: bool) -> String {
    let member = x.eq(attr::ROLE, Role::Member);
    if provisioned {
        and([member, x.eq_in(attr::DIRECTORY, attr::PROVISIONED, true)])
    } else {
        member
    }
}

/// Deletes the claims of `member`'s directory identity, if it has one. A claim
/// already gone (an organization's purge) is no refusal.
pub(in crate::store) fn push_release(plan: &mut TxPlan, table: &str, member: &MemberItem) -> Result<(), StoreError> {
    let Some(identity) = &member.directory else {
        return Ok(());
    };
    for key in claim_keys(member.org_id, identity) {
        let delete = plan::delete(table, key, |x| {
            let theirs = x.eq(attr::USER_ID, member.user_id.as_str());
            or(x.not_exists(keys::PK), theirs)
        })?;
        plan.push(delete, |_| Ok(Rejection::Retry));
    }
    Ok(())
}

/// Claims each name of `identity` for `user` in `org`, on condition that the
/// name is free; a name taken is `DirectoryNameTaken`.
pub(in crate::store) fn push_claims(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    user: &UserId,
    identity: &DirectoryIdentity,
) -> Result<(), StoreError> {
    let claim = DirectoryClaimItem {
        entity_type: EntityType::DirectoryClaim,
        org_id: org,
        user_id: user.clone(),
    };
    for key in claim_keys(org, identity) {
        let put = plan::put(table, items::to_item(key, &claim)?, |x| x.not_exists(keys::PK))?;
        plan.push(put, |_| Ok(Rejection::Failed(StoreError::DirectoryNameTaken)));
    }
    Ok(())
}

/// A directory identity for a new member.
pub(in crate::store) fn identity(
    user_name: &UserName,
    external_id: Option<&ExternalId>,
    provisioned: bool,
) -> DirectoryIdentity {
    DirectoryIdentity {
        user_name: user_name.as_str().to_owned(),
        external_id: external_id.map(|e| e.as_str().to_owned()),
        provisioned,
    }
}

/// The directory's power, inside the write: its token live (not revoked) and
/// its organization active.
pub(in crate::store) fn push_directory_power(
    plan: &mut TxPlan,
    table: &str,
    client: &ScimClient,
) -> Result<(), StoreError> {
    let token = plan::check(table, keys::scim_token_key(client.org, client.token), |x| {
        x.exists(keys::PK)
    })?;
    plan.push(token, |_| Ok(Rejection::Failed(StoreError::ScimTokenInvalid)));
    let open = plan::check(table, keys::org_key(client.org), |x| {
        x.eq(attr::STATUS, OrgStatus::Active)
    })?;
    plan.push(open, |_| Ok(Rejection::Failed(StoreError::OrganizationNotFound)));
    Ok(())
}

/// A membership ended by its directory: both halves deleted, the
/// organization's at the version read and a member's (`provisioned`: one the
/// directory made, for an erasure), the directory's names released, and the
/// directory's power. Never an admin's or an owner's: a leaked token must
/// not remove those who can revoke it (`RoleRequired`). The member's count
/// of organizations is the caller's, beside its other changes to the profile.
pub(in crate::store) fn push_directory_removal(
    plan: &mut TxPlan,
    table: &str,
    client: &ScimClient,
    member: &MemberItem,
    provisioned: bool,
) -> Result<(), StoreError> {
    if member.role != Role::Member {
        return Err(StoreError::RoleRequired);
    }
    let ours = plan::delete(table, keys::member_key(member.org_id, &member.user_id), |x| {
        let standing = standing(x, provisioned);
        let version = at_version(x, member);
        and([standing, version])
    })?;
    plan.push(ours, read_member);
    let theirs = plan::delete(table, keys::membership_key(&member.user_id, member.org_id), |x| {
        x.eq(attr::ROLE, Role::Member)
    })?;
    plan.push(theirs, read_member);
    push_release(plan, table, member)?;
    push_counts(plan, table, member.org_id, CountChange::leave(member), None)?;
    push_directory_power(plan, table, client)
}

/// A member's half moved on (or went): gone, an admin or an owner now
/// (never the directory's), or another version (the caller reads again).
pub(in crate::store) fn read_member(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<MemberItem>(old)? {
        None => Rejection::Failed(StoreError::MemberNotFound),
        Some(m) if m.role != Role::Member => Rejection::Failed(StoreError::RoleRequired),
        Some(m) => Rejection::Failed(StoreError::VersionMismatch { current: m.version }),
    })
}
