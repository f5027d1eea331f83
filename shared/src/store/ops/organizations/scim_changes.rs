//! A directory's change of a member it provisioned or linked: its names
//! (`userName`, `externalId`), `active` (the membership suspended or not),
//! and, where the account is the organization's alone, the person's names
//! and phone. One transaction, conditioned on both versions the change was
//! planned on: the member's and, when it writes the profile, the profile's.
//! A change of either in between is `VersionMismatch`: the caller reads
//! again (a PATCH re-applied), or answers 412 to an `If-Match`.

use crate::domain::{IfMatch, ProfilePatch, Role, Timestamp};
use crate::scim::ScimUser;
use crate::store::expr::{Update, or};
use crate::store::items::{self, DirectoryClaimItem, DirectoryIdentity, EntityType, MemberItem, attr};
use crate::store::keys;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::{Store, StoreError};

use super::ScimClient;
use super::counts::{CountChange, push_counts};
use super::directory::{at_version, claim_keys, push_directory_power, read_member, standing};
use super::scim_users::ScimMember;
use crate::store::ops::update_profile::{read_failure, write};

impl Store {
    /// Writes `after` over `current` (both as the directory sees them): the
    /// directory's names and `active` always, the profile's names and phone
    /// when `manages_profile`. Addresses are not changed here.
    pub async fn scim_update(
        &self,
        client: &ScimClient,
        current: &ScimMember,
        after: &ScimUser,
        manages_profile: bool,
        now: Timestamp,
    ) -> Result<ScimMember, StoreError> {
        let member = self.member(client.org, &current.id).await?;
        let Some(before) = member.directory.clone() else {
            return Err(StoreError::MemberNotFound);
        };
        if member.version != current.version.membership {
            return Err(StoreError::VersionMismatch {
                current: member.version,
            });
        }
        // An admin's or an owner's membership is the organization's owners'
        // to change, never its directory's: a leaked token could otherwise
        // lock every owner out, and with them the power to revoke it.
        if member.role != Role::Member {
            return Err(StoreError::RoleRequired);
        }
        let identity = DirectoryIdentity {
            user_name: after.user_name.as_str().to_owned(),
            external_id: after.external_id.as_ref().map(|e| e.as_str().to_owned()),
            provisioned: before.provisioned,
        };
        let patch = manages_profile
            .then(|| profile_change(&current.user, after))
            .filter(|p| !p.is_empty())
            .map(|change| ProfileChange {
                email_count: u32::try_from(current.facts.addresses.len()).unwrap_or(u32::MAX),
                ..change
            });
        let change = MemberChange {
            identity: &identity,
            suspended: !after.active,
        };
        let plan = update_plan(
            self.table(),
            client,
            &member,
            &change,
            patch.as_ref(),
            current.version.profile,
            now,
        )?;
        match self.transact(&plan).await {
            Ok(()) => {}
            Err(Rejection::Failed(err)) => return Err(err),
            Err(_) => {
                return Err(StoreError::VersionMismatch {
                    current: member.version,
                });
            }
        }
        self.scim_member(client.org, &current.id).await
    }
}

/// What the directory changes of a profile it manages: the names and the
/// phone that differ, and the names it removed (RFC 7644: unassigned).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ProfileChange {
    patch: ProfilePatch,
    cleared_given_name: bool,
    cleared_family_name: bool,
    /// The account's addresses as planned: the names are the directory's
    /// only while the organization alone uses it, so an address added since
    /// (or another organization joined) reads again.
    email_count: u32,
}

impl ProfileChange {
    fn is_empty(&self) -> bool {
        self.patch.is_empty() && !self.cleared_given_name && !self.cleared_family_name
    }
}

fn profile_change(before: &ScimUser, after: &ScimUser) -> ProfileChange {
    ProfileChange {
        patch: ProfilePatch {
            first_name: after
                .given_name
                .clone()
                .filter(|n| Some(n) != before.given_name.as_ref()),
            last_name: after
                .family_name
                .clone()
                .filter(|n| Some(n) != before.family_name.as_ref()),
            phone: (after.phone != before.phone).then(|| after.phone.clone()),
        },
        cleared_given_name: before.given_name.is_some() && after.given_name.is_none(),
        cleared_family_name: before.family_name.is_some() && after.family_name.is_none(),
        email_count: 0,
    }
}

/// What a directory's change writes on the member's half.
struct MemberChange<'a> {
    /// The directory's names for the member.
    identity: &'a DirectoryIdentity,
    /// Whether the membership is suspended (`active: false`).
    suspended: bool,
}

/// The member's half at its version with the new identity; the names'
/// claims moved where they changed; the profile at its version when it
/// changes; the token and the organization.
fn update_plan(
    table: &str,
    client: &ScimClient,
    member: &MemberItem,
    change: &MemberChange<'_>,
    patch: Option<&ProfileChange>,
    profile_version: u64,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let identity = change.identity;
    let suspended = change.suspended;
    let mut plan = TxPlan::new();
    let value: aws_sdk_dynamodb::types::AttributeValue =
        serde_dynamo::to_attribute_value(identity).map_err(StoreError::Corrupt)?;
    let update = plan::update(table, keys::member_key(member.org_id, &member.user_id), |x| {
        let name = x.name(attr::DIRECTORY);
        let value = x.value(attr::DIRECTORY, value.clone());
        let mut update = Update::default()
            .set(format!("{name} = {value}"))
            .set(x.add_from_zero(attr::VERSION, 1));
        update = if suspended {
            update.set(x.eq(attr::SUSPENDED, true))
        } else {
            update.remove(x.name(attr::SUSPENDED))
        };
        // The person's names are written only on an account the directory made.
        let standing = standing(x, patch.is_some());
        (update, crate::store::expr::and([at_version(x, member), standing]))
    })?;
    plan.push(update, read_member);
    // Names that changed: the old claim released, the new one taken.
    let before = member
        .directory
        .as_ref()
        .map(|d| claim_keys(member.org_id, d))
        .unwrap_or_default();
    let after = claim_keys(member.org_id, identity);
    for key in before.iter().filter(|k| !after.contains(k)) {
        let delete = plan::delete(table, key.clone(), |x| x.eq(attr::USER_ID, member.user_id.as_str()))?;
        plan.push(delete, |_| Ok(Rejection::Retry));
    }
    let claim = DirectoryClaimItem {
        entity_type: EntityType::DirectoryClaim,
        org_id: member.org_id,
        user_id: member.user_id.clone(),
    };
    for key in after.iter().filter(|k| !before.contains(k)) {
        let put = plan::put(table, items::to_item(key.clone(), &claim)?, |x| x.not_exists(keys::PK))?;
        plan.push(put, |_| Ok(Rejection::Failed(StoreError::DirectoryNameTaken)));
    }
    if let Some(change) = patch {
        let precondition = IfMatch::Versions(vec![profile_version]);
        let update = plan::update(table, keys::profile_key(&member.user_id), |x| {
            let (mut update, condition) = write(x, &precondition, &change.patch, now);
            let alone = crate::store::expr::and([
                x.eq(attr::EMAIL_COUNT, change.email_count),
                or(x.not_exists(attr::ORGANIZATIONS), x.le(attr::ORGANIZATIONS, 1u32)),
            ]);
            let condition = crate::store::expr::and([condition, alone]);
            if change.cleared_given_name {
                update = update.remove(x.name(attr::FIRST_NAME));
            }
            if change.cleared_family_name {
                update = update.remove(x.name(attr::LAST_NAME));
            }
            (update, condition)
        })?;
        plan.push(update, move |old| {
            Ok(Rejection::Failed(read_failure(
                old,
                &IfMatch::Versions(vec![profile_version]),
            )))
        });
    }
    if member.suspended != suspended {
        let moved = CountChange {
            suspended: if suspended { 1 } else { -1 },
            ..CountChange::default()
        };
        push_counts(&mut plan, table, member.org_id, moved, None)?;
    }
    push_directory_power(&mut plan, table, client)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{OrgId, UserId};
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_rename_moves_its_claim_in_the_write_that_conditions_both_versions() {
        let now = crate::store::ops::fixtures::now();
        let client = ScimClient {
            org: OrgId::new(),
            token: crate::domain::ScimTokenId::from_bytes([1; 16]),
        };
        let identity = |name: &str| DirectoryIdentity {
            user_name: name.into(),
            external_id: Some("e".into()),
            provisioned: true,
        };
        let member = MemberItem {
            entity_type: EntityType::Member,
            org_id: client.org,
            user_id: UserId::parse("u").unwrap(),
            role: Role::Member,
            joined_at: now,
            directory: Some(identity("ada")),
            version: 4,
            suspended: false,
        };
        let patch = ProfileChange {
            patch: ProfilePatch {
                first_name: Some(crate::domain::PersonName::parse("Ada").unwrap()),
                ..Default::default()
            },
            cleared_family_name: true,
            ..Default::default()
        };
        let plan = update_plan(
            "t",
            &client,
            &member,
            &MemberChange {
                identity: &identity("lovelace"),
                suspended: true,
            },
            Some(&patch),
            7,
            now,
        )
        .unwrap();
        assert_well_formed(&plan);
        // The member, the old name released, the new one taken, the profile,
        // the suspended count, the token, the organization.
        assert_eq!(plan.items().len(), 7);
        let profile = plan.items()[3].update().unwrap();
        assert!(
            profile.update_expression().contains("REMOVE #lastName"),
            "a removed name is unassigned"
        );
        assert!(matches!(
            plan.read(2, None),
            Rejection::Failed(StoreError::DirectoryNameTaken)
        ));
        assert!(matches!(
            plan.read(0, None),
            Rejection::Failed(StoreError::MemberNotFound)
        ));
        // The same names: no claim moves.
        let plan = update_plan(
            "t",
            &client,
            &member,
            &MemberChange {
                identity: &identity("ada"),
                suspended: false,
            },
            None,
            7,
            now,
        )
        .unwrap();
        assert_eq!(plan.items().len(), 3);
    }
}
