//! A directory's change of a member's addresses, one address a write, each
//! the write the HTTP API makes for the same change (its claim, its count,
//! the primary's switch and its way back, a removal that waits for Cognito)
//! with the directory's power in the same transaction: the token live, the
//! organization active, the membership still the directory's at the version
//! read. An added address is verified on the organization's word, so its
//! domain must still be one the organization proved.

use crate::domain::{EmailAddress, EmailId, OrgDomain, Timestamp, UserId};
use crate::scim::provision::Domains;
use crate::store::expr::{Update, and};
use crate::store::items::{self, ClaimItem, EmailItem, MemberItem, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::ScimClient;
use super::directory::{at_version, push_directory_power, read_member, standing};
use super::scim_users::push_domains_held;
use crate::store::ops::claim::{NewClaim, after_claim_write, push_new_claim};
use crate::store::ops::profile::{active, read_changed, refusal};
use crate::store::ops::set_primary::{Held, Under};

impl Store {
    /// Adds `address`, at one of the organization's verified domains, to
    /// `user`, verified. A claim being verified by someone else yields to it,
    /// as to a sign-up; a verified or reserved one is `EmailTaken`; the
    /// account's own is `AlreadyAdded`.
    pub async fn scim_add_address(
        &self,
        client: &ScimClient,
        user: &UserId,
        address: &EmailAddress,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        self.policy.admit(address).map_err(StoreError::NotAllowed)?;
        let mut record = EmailItem::verified_primary(user, address, self.policy.canonicalization, now);
        record.is_primary = false;
        let previous_form = self.policy.previous_form(address);
        let max = self.config().max_emails_per_user;
        let table = self.table();
        let mut held: Option<ClaimItem> = None;
        retrying!({
            let member = self.directory_member(client, user).await?;
            let mut plan = TxPlan::new();
            let room = plan::update(table, keys::profile_key(user), |x| {
                let update = Update::default().set(x.add(attr::EMAIL_COUNT, 1));
                (update, and([active(x), x.lt(attr::EMAIL_COUNT, max)]))
            })?;
            plan.push(room, move |old| read_room(old, max));
            let put = plan::put(table, items::email_item(&record)?, |x| x.not_exists(keys::PK))?;
            plan.push(put, read_changed);
            let claim = NewClaim {
                expires_at: None,
                live_claims_yield: true,
                held: held.as_ref(),
                previous_form: previous_form.as_ref(),
            };
            push_new_claim(&mut plan, table, &record, claim, now)?;
            push_domains_held(&mut plan, table, client.org, &[OrgDomain::of(address)])?;
            push_held(&mut plan, table, client, &member)?;
            let result = self.transact(&plan).await;
            after_claim_write(result, &mut held)
        })
    }

    /// Makes `address`, one of `user`'s verified addresses, the primary, as
    /// the API's switch does (the former primary can undo it for the
    /// window), while the account is still as `planned` (the profile's
    /// version, and the organization's domains) found it the organization's
    /// alone: no other organization, no address outside the domains
    /// verified or added since. Otherwise `VersionMismatch`: plan again.
    pub async fn scim_set_primary(
        &self,
        client: &ScimClient,
        user: &UserId,
        address: &EmailAddress,
        planned: (u64, &Domains),
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let (version, domains) = planned;
        let moved = move || StoreError::VersionMismatch { current: version };
        let member = self.directory_member(client, user).await?;
        let records = self.list_emails(user).await?;
        if records.iter().any(|r| r.is_verified && !domains.covers(&r.email)) {
            return Err(moved());
        }
        let email_id = records
            .iter()
            .find(|r| r.email == *address)
            .map(|r| r.email_id)
            .ok_or(StoreError::NotFound)?;
        let theirs: Vec<EmailId> = records
            .iter()
            .filter(|r| !domains.covers(&r.email))
            .map(|r| r.email_id)
            .collect();
        let table = self.table();
        let push = |plan: &mut TxPlan| {
            push_held(plan, table, client, &member)?;
            // The person's own addresses, each still unverified.
            for id in &theirs {
                let check = plan::check(table, keys::email_key(user, *id), |x| x.eq(attr::IS_VERIFIED, false))?;
                plan.push(check, move |_| Ok(Rejection::Failed(moved())));
            }
            Ok(())
        };
        let under = Under {
            push: &push,
            most_organizations: Some(1),
            held: Some(Held {
                version,
                email_count: u32::try_from(records.len()).unwrap_or(u32::MAX),
            }),
        };
        self.switch_primary(user, email_id, Some(&under), now).await.map(|_| ())
    }

    /// Removes `address`, one of `user`'s addresses other than the primary,
    /// as the API's removal does: not while Cognito still signs the user in
    /// with it (`SignInAddressPending`), and a former primary's claim stays
    /// reserved to the account while its switch can be undone.
    pub async fn scim_remove_address(
        &self,
        client: &ScimClient,
        user: &UserId,
        address: &EmailAddress,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let member = self.directory_member(client, user).await?;
        let email_id = self
            .list_emails(user)
            .await?
            .into_iter()
            .find(|e| e.email == *address)
            .map(|e| e.email_id)
            .ok_or(StoreError::NotFound)?;
        self.remove_under_directory(client, &member, email_id, now).await
    }

    /// Removes `member`'s record `email_id` under the directory's power over
    /// them (the membership at the version read, the token, the organization).
    pub(super) async fn remove_under_directory(
        &self,
        client: &ScimClient,
        member: &MemberItem,
        email_id: EmailId,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let table = self.table();
        let push = |plan: &mut TxPlan| push_held(plan, table, client, member);
        let under = Under {
            push: &push,
            most_organizations: None,
            held: None,
        };
        self.remove_email_under(&member.user_id, email_id, Some(&under), now)
            .await
    }

    /// The organization's half of `user`'s membership, if its directory has it.
    pub(super) async fn directory_member(&self, client: &ScimClient, user: &UserId) -> Result<MemberItem, StoreError> {
        let member = self.member(client.org, user).await?;
        if member.directory.is_none() {
            return Err(StoreError::MemberNotFound);
        }
        Ok(member)
    }
}

/// The directory's power over `member`'s addresses: the token and the
/// organization, and the membership still its, at the version read, a
/// member the directory made (a linked member's addresses are the
/// person's, an admin's or an owner's never the directory's).
pub(super) fn push_held(
    plan: &mut TxPlan,
    table: &str,
    client: &ScimClient,
    member: &MemberItem,
) -> Result<(), StoreError> {
    let held = plan::check(table, keys::member_key(member.org_id, &member.user_id), |x| {
        let standing = standing(x, true);
        and([at_version(x, member), x.exists(attr::DIRECTORY), standing])
    })?;
    plan.push(held, read_member);
    push_directory_power(plan, table, client)
}

/// A failed count on the profile: its state, or no room; else it moved.
fn read_room(old: Option<&Item>, max: u32) -> Result<Rejection, StoreError> {
    let profile = plan::old::<ProfileItem>(old)?;
    if let Some(err) = refusal(profile.as_ref()) {
        return Ok(Rejection::Failed(err));
    }
    Ok(match profile {
        Some(p) if p.email_count >= max => Rejection::Failed(StoreError::LimitReached),
        _ => Rejection::Retry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{OrgId, Role, ScimTokenId};
    use crate::store::items::{DirectoryIdentity, EntityType};
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn the_directorys_power_holds_the_membership_at_its_version() {
        let client = ScimClient {
            org: OrgId::new(),
            token: ScimTokenId::from_bytes([1; 16]),
        };
        let member = MemberItem {
            entity_type: EntityType::Member,
            org_id: client.org,
            user_id: UserId::parse("u").unwrap(),
            role: Role::Member,
            joined_at: Timestamp::from_unix_millis(1_700_000_000_000),
            directory: Some(DirectoryIdentity {
                user_name: "ada".into(),
                external_id: None,
                provisioned: true,
            }),
            version: 3,
            suspended: false,
        };
        let mut plan = TxPlan::new();
        push_held(&mut plan, "t", &client, &member).unwrap();
        assert_well_formed(&plan);
        let check = plan.items()[0].condition_check().unwrap();
        assert!(check.condition_expression().contains("attribute_exists(#directory)"));
        assert_eq!(plan.items().len(), 3, "the membership, the token, the organization");
        let moved = items::to_item(keys::member_key(member.org_id, &member.user_id), &member).unwrap();
        assert!(matches!(
            plan.read(0, Some(&moved)),
            Rejection::Failed(StoreError::VersionMismatch { current: 3 })
        ));
        assert!(matches!(
            plan.read(0, None),
            Rejection::Failed(StoreError::MemberNotFound)
        ));
    }
}
