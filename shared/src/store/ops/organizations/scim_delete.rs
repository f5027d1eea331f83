//! A directory's delete of a member (DELETE /Users/{id}), as the pure plan
//! ([`crate::scim::provision::plan_delete`]) decides it: an account the
//! organization made and alone uses is erased, in one write that holds it
//! alone; any other leaves the organization, its domain addresses other than
//! the primary removed first, the membership last, so that a delete cut
//! short and sent again finishes the work.

use crate::domain::{EmailAddress, Timestamp, UserId};
use crate::scim::ScimVersion;
use crate::scim::provision::Domains;
use crate::store::expr::{Update, and};
use crate::store::items::{MemberItem, attr};
use crate::store::keys;
use crate::store::ops::profile::read_changed;
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Deleter, Store, StoreError};

use super::ScimClient;
use super::directory::push_directory_removal;

impl Store {
    /// Erases `user`, whom the directory made and alone uses, if their
    /// membership is still at `version`: the account everywhere (Cognito's
    /// user follows from the table's stream, as an admin's delete does).
    /// `VersionMismatch` when the account changed since it was read, or is
    /// no longer the directory's alone: the caller reads and plans again.
    pub async fn scim_erase(
        &self,
        client: &ScimClient,
        user: &UserId,
        version: ScimVersion,
        domains: &Domains,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let member = self.member_at(client, user, version).await?;
        let by = Deleter::Directory {
            client: *client,
            member: &member,
            domains,
        };
        self.delete_user(user, by, now).await.map(|_| ())
    }

    /// Ends `user`'s membership, at `version`: each of `removed` (their
    /// addresses at the organization's domains, never the primary) first,
    /// then the membership, the directory's names and the member's count in
    /// one write; each write under the directory's power. An address that cannot go (the
    /// account suspended, the address made primary or Cognito's sign-in
    /// address meanwhile) stays with the person: the membership still ends.
    pub async fn scim_leave(
        &self,
        client: &ScimClient,
        user: &UserId,
        version: ScimVersion,
        removed: &[EmailAddress],
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let member = self.member_at(client, user, version).await?;
        // Refused before anything is removed: the membership's own write would refuse it after.
        if member.role != crate::domain::Role::Member {
            return Err(StoreError::RoleRequired);
        }
        if !removed.is_empty() {
            let records = self.list_emails(user).await?;
            for record in records.iter().filter(|r| !r.is_primary && removed.contains(&r.email)) {
                match self.remove_under_directory(client, &member, record.email_id, now).await {
                    Ok(()) => {}
                    Err(
                        StoreError::AccountInactive
                        | StoreError::NotFound
                        | StoreError::PrimaryEmail
                        | StoreError::SignInAddressPending,
                    ) => {
                        tracing::info!(user = %user, "a directory's leave kept an address it could not remove");
                    }
                    Err(other) => return Err(other),
                }
            }
        }
        retrying!({
            let member = self.member(client.org, user).await?;
            let plan = leave_plan(self.table(), client, &member)?;
            self.transact(&plan).await?;
            Ok(())
        })
    }

    /// The organization's half of `user`'s membership, if the directory has
    /// it at `version`'s membership half.
    async fn member_at(
        &self,
        client: &ScimClient,
        user: &UserId,
        version: ScimVersion,
    ) -> Result<MemberItem, StoreError> {
        let member = self.member(client.org, user).await?;
        if member.directory.is_none() {
            return Err(StoreError::MemberNotFound);
        }
        if member.version != version.membership {
            return Err(StoreError::VersionMismatch {
                current: member.version,
            });
        }
        Ok(member)
    }
}

/// The membership ended by its directory, and the member counts one
/// organization fewer.
fn leave_plan(table: &str, client: &ScimClient, member: &MemberItem) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    push_directory_removal(&mut plan, table, client, member, false)?;
    let count = plan::update(table, keys::profile_key(&member.user_id), |x| {
        let update = Update::default().set(x.add_from_zero(attr::ORGANIZATIONS, -1));
        (update, and([x.exists(keys::PK), x.gt(attr::ORGANIZATIONS, 0u32)]))
    })?;
    plan.push(count, read_changed);
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{OrgId, Role, ScimTokenId};
    use crate::store::items::{DirectoryIdentity, EntityType};
    use crate::store::plan::tests::assert_well_formed;

    fn client() -> ScimClient {
        ScimClient {
            org: OrgId::new(),
            token: ScimTokenId::from_bytes([1; 16]),
        }
    }

    fn member(client: &ScimClient, role: Role) -> MemberItem {
        MemberItem {
            entity_type: EntityType::Member,
            org_id: client.org,
            user_id: UserId::parse("u").unwrap(),
            role,
            joined_at: Timestamp::from_unix_millis(1_700_000_000_000),
            directory: Some(DirectoryIdentity {
                user_name: "Ada".into(),
                external_id: Some("e-1".into()),
                provisioned: true,
            }),
            version: 2,
            suspended: false,
        }
    }

    #[test]
    fn a_leave_ends_both_halves_releases_the_names_and_holds_the_directorys_power() {
        let client = client();
        let plan = leave_plan("t", &client, &member(&client, Role::Member)).unwrap();
        assert_well_formed(&plan);
        // Both halves, two names, the organization's counts, the token, the organization, the member's count.
        assert_eq!(plan.items().len(), 8);
    }

    #[test]
    fn a_directory_never_ends_an_admins_or_an_owners_membership() {
        let client = client();
        for role in [Role::Owner, Role::Admin] {
            let refused = leave_plan("t", &client, &member(&client, role)).unwrap_err();
            assert!(matches!(refused, StoreError::RoleRequired), "{refused:?}");
        }
    }
}
