//! Deleting a user: status deleted, the profile erased, every record and claim
//! released, in one transaction. The profile's version and count pin the set of
//! records read just before.

use crate::domain::Role;
use crate::domain::{IfMatch, Profile, Timestamp, UserId, UserStatus};
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and, or};
use crate::store::items::{
    self, ClaimItem, EmailItem, EntityType, ErasedImportItem, MemberItem, OrgStatus, OrganizationItem, ProfileItem,
    UserItems, attr,
};
use crate::store::keys;
use crate::store::plan::{self, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Deleter, Store, StoreError};

use super::claim::push_own_claim_delete;
use super::organizations::{push_directory_removal, remove_for_erasure};
use super::profile::{push_acting_admin_check, read_changed, read_deletable, read_profile, visible, writable};

impl Store {
    /// Deletes a user: every address released and the profile erased (no address,
    /// names or phone) in one transaction, under the conditions `by` calls for.
    pub async fn delete_user(&self, user: &UserId, by: Deleter<'_>, now: Timestamp) -> Result<Profile, StoreError> {
        retrying!({
            let items = self.user_items(user).await?;
            let kept = self.kept_for_recovery(&items).await?;
            let profile = match by {
                Deleter::Admin(_) | Deleter::System | Deleter::GoneFromCognito | Deleter::Directory { .. } => {
                    visible(items.profile.ok_or(StoreError::NotFound)?)?
                }
                Deleter::Owner(precondition) => {
                    let profile = match writable(items.profile) {
                        // `If-Match: *` with no current profile fails (RFC 9110 13.1.1).
                        Err(StoreError::NotFound) if *precondition == IfMatch::Any => {
                            return Err(StoreError::NothingToMatch.into());
                        }
                        other => other?,
                    };
                    // The write pins the version read, so it matches when it lands.
                    if !precondition.matches(profile.version) {
                        return Err(StoreError::VersionMismatch {
                            current: profile.version,
                        }
                        .into());
                    }
                    profile
                }
            };
            // Each membership goes in a transaction of its own first (a user
            // may hold more than one transaction can), the last-owner rule in
            // each; the erasure's own write then requires that none is left.
            if let Deleter::Directory { member, domains, .. } = by {
                // The directory's one membership goes in the erasure's own
                // write; anything else using the account means it is not the
                // directory's to erase: the caller plans again.
                let alone = items.memberships.len() == 1
                    && items.memberships[0].org_id == member.org_id
                    && items
                        .emails
                        .iter()
                        .filter(|r| r.is_verified)
                        .all(|r| domains.covers(&r.email));
                if !alone {
                    return Err(StoreError::VersionMismatch {
                        current: profile.version,
                    }
                    .into());
                }
            } else {
                self.leave_every_organization(&items.memberships, by).await?;
            }
            self.drop_invitations_to(&items.emails).await?;
            let mut plan = plan(self.table(), &profile, &items.emails, now, by)?;
            push_kept_for_recovery(&mut plan, self.table(), &kept)?;
            self.transact(&plan).await?;
            metrics::count(Metric::UsersDeleted);
            Ok(Profile {
                email: None,
                first_name: None,
                last_name: None,
                phone: None,
                status: UserStatus::Deleted,
                version: profile.version + 1,
                updated_at: now,
                email_count: 0,
                ..profile.into_domain()
            })
        })
    }
}

impl Store {
    /// Removes a user's memberships before their erasure. Unless Cognito no
    /// longer has the user, the last owner of an organization refuses the
    /// whole erasure before anything is removed (and each removal's own
    /// condition still holds the rule, should an owner leave meanwhile).
    async fn leave_every_organization(&self, memberships: &[MemberItem], by: Deleter<'_>) -> Result<(), StoreError> {
        let forced = matches!(by, Deleter::GoneFromCognito);
        if !forced {
            for owned in memberships.iter().filter(|m| m.role == Role::Owner) {
                let org: Option<OrganizationItem> = self
                    .get(keys::org_key(owned.org_id))
                    .await?
                    .map(items::from_item)
                    .transpose()?;
                if org.is_some_and(|o| o.status == OrgStatus::Active && o.owners <= 1) {
                    return Err(StoreError::LastOwner);
                }
            }
        }
        for membership in memberships {
            remove_for_erasure(self, membership, forced).await?;
        }
        Ok(())
    }
}

/// What a user's switches keep for their undoing: the switches, and the
/// claims that only reserve a removed former primary (read just before, as
/// the erasure's own). The stream erases whatever one transaction cannot hold.
struct Kept {
    switches: Vec<(UserId, u64)>,
    reservations: Vec<EmailItem>,
}

impl Store {
    async fn kept_for_recovery(&self, items: &UserItems) -> Result<Kept, StoreError> {
        let mut reservations = Vec::new();
        for switch in &items.changes {
            let former = &switch.former;
            if items.emails.iter().any(|r| r.canonical() == former.canonical()) {
                continue;
            }
            let claim: Option<ClaimItem> = self
                .get(keys::claim_key(&former.canonical()))
                .await?
                .map(items::from_item)
                .transpose()?;
            if claim.is_some_and(|c| {
                c.user_id == former.user_id && c.email_id == former.email_id && c.is_reservation_only()
            }) {
                reservations.push(former.clone());
            }
        }
        Ok(Kept {
            switches: items.changes.iter().map(|c| (c.user_id.clone(), c.version)).collect(),
            reservations,
        })
    }
}

/// The switches and reservations, as many as the transaction has room for.
fn push_kept_for_recovery(plan: &mut TxPlan, table: &str, kept: &Kept) -> Result<(), StoreError> {
    for former in &kept.reservations {
        if plan.items().len() >= plan::MAX_ITEMS {
            return Ok(());
        }
        let release = plan::delete(table, keys::claim_key(&former.canonical()), |x| {
            and([
                x.eq(attr::USER_ID, &former.user_id),
                x.eq(attr::EMAIL_ID, former.email_id),
                x.not_exists(attr::EXPIRES_AT),
            ])
        })?;
        plan.push(release, read_changed);
    }
    for (user, version) in &kept.switches {
        if plan.items().len() >= plan::MAX_ITEMS {
            return Ok(());
        }
        let forget = plan::delete(table, keys::change_key(user, *version), |x| x.exists(keys::PK))?;
        plan.push(forget, read_changed);
    }
    Ok(())
}

/// An admin (or the system) may delete a suspended user, so a profile that
/// moved under the delete is read again; the user's own delete needs it active.
/// An admin's delete also checks the admin's own profile is active.
fn plan(
    table: &str,
    profile: &ProfileItem,
    records: &[EmailItem],
    now: Timestamp,
    by: Deleter<'_>,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let erase = plan::update(table, keys::profile_key(&profile.user_id), |x| {
        // Erasure in the same write that releases the addresses.
        let update = Update::default()
            .set(x.eq(attr::STATUS, UserStatus::Deleted))
            .set(x.eq(keys::GSI2PK, keys::user_list_pk(UserStatus::Deleted, &profile.user_id)))
            .set(x.eq(attr::EMAIL_COUNT, 0u32))
            .set(x.add(attr::VERSION, 1))
            .set(x.eq(attr::UPDATED_AT, now))
            .remove(x.name(attr::EMAIL))
            .remove(x.name(attr::FIRST_NAME))
            .remove(x.name(attr::LAST_NAME))
            .remove(x.name(attr::PHONE))
            .remove(x.name(attr::COGNITO_EMAIL))
            .remove(x.name(attr::SYNC_REQUESTED_AT))
            .remove(x.name(attr::IMPORT_KEY))
            .remove(x.name(attr::RECOVERIES));
        let update = match by {
            Deleter::GoneFromCognito => update.set(x.eq(attr::GONE_FROM_COGNITO, true)),
            // The directory's membership ends in this same write.
            Deleter::Directory { .. } => update.set(x.eq(attr::ORGANIZATIONS, 0u32)),
            _ => update,
        };
        let mut condition = and([
            x.eq(attr::VERSION, profile.version),
            x.eq(attr::EMAIL_COUNT, profile.email_count),
            // Every membership removed just before (a directory's one goes
            // in this write); a join since reads again.
            if matches!(by, Deleter::Directory { .. }) {
                x.eq(attr::ORGANIZATIONS, 1u32)
            } else {
                or(x.not_exists(attr::ORGANIZATIONS), x.eq(attr::ORGANIZATIONS, 0u32))
            },
        ]);
        if profile.import_key.is_none() {
            // A re-run of the import may record the key without a new version:
            // read again, so that the erasure keeps it.
            condition = and([condition, x.not_exists(attr::IMPORT_KEY)]);
        }
        (update, condition)
    })?;
    match by {
        Deleter::Owner(_) => plan.push(erase, read_profile),
        Deleter::Admin(_) | Deleter::System | Deleter::GoneFromCognito | Deleter::Directory { .. } => {
            plan.push(erase, read_deletable);
        }
    }
    if let Deleter::Directory { client, member, .. } = by {
        push_directory_removal(&mut plan, table, &client, member, true)?;
    }
    if let Deleter::Admin(admin) = by {
        push_acting_admin_check(&mut plan, table, admin)?;
    }
    if let Some(import_key) = &profile.import_key {
        // All the erasure keeps of an imported account: so that no re-run of
        // the import brings the person back. Put again by a repeated delete.
        let kept = ErasedImportItem {
            entity_type: EntityType::ErasedImport,
            erased_at: now,
        };
        let item = items::to_item(keys::erased_import_key(import_key), &kept)?;
        plan.push(
            plan::put(table, item, |x| or(x.exists(keys::PK), x.not_exists(keys::PK)))?,
            read_changed,
        );
    }
    if profile.user_id.is_pending() {
        // A pending user's legacy hash goes with them; it may be absent (an
        // account imported without one), so the Delete asks nothing of it.
        let forget = plan::delete(table, keys::legacy_password_key(&profile.user_id), |x| {
            or(x.exists(keys::PK), x.not_exists(keys::PK))
        })?;
        plan.push(forget, read_changed);
    }
    for record in records {
        // A directory's erasure holds the account's other addresses
        // unverified: one verified since makes it the person's too.
        let outside = match by {
            Deleter::Directory { domains, .. } => !domains.covers(&record.email),
            _ => false,
        };
        let delete = plan::delete(table, keys::email_key(&record.user_id, record.email_id), |x| {
            if outside {
                and([x.exists(keys::PK), x.eq(attr::IS_VERIFIED, false)])
            } else {
                x.exists(keys::PK)
            }
        })?;
        plan.push(delete, read_changed);
        push_own_claim_delete(&mut plan, table, record)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailAddress, EmailId};
    use crate::store::ops::fixtures::{address, new_user, now, user};
    use crate::store::plan::Rejection;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn delete_user_releases_every_record_and_claim() {
        let profile = ProfileItem::new(&new_user(), 2, now());
        let a = EmailItem::verified_primary(
            &user(),
            &address(),
            crate::address_policy::Canonicalization::NONE,
            now(),
        );
        let b_address = EmailAddress::parse("b@example.com").unwrap();
        let b = EmailItem::unverified(
            &user(),
            EmailId::new(),
            &b_address,
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            now(),
            now(),
        );
        let plan = plan("t", &profile, &[a.clone(), b.clone()], now(), Deleter::System).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        // The erased profile moves to the deleted users' GSI2 key in the same write.
        let erase = plan.items()[0].update().unwrap();
        assert!(erase.update_expression().contains("#GSI2PK = :GSI2PK"));
        assert_eq!(
            erase.expression_attribute_values().unwrap()[":GSI2PK"].as_s().unwrap(),
            &keys::user_list_pk(UserStatus::Deleted, &user())
        );
        // An admin's delete carries one more item: the admin's own profile, active.
        let admin = UserId::parse("admin-a").unwrap();
        let by_admin = super::plan("t", &profile, &[a, b], now(), Deleter::Admin(&admin)).unwrap();
        assert_well_formed(&by_admin);
        assert_eq!(by_admin.items().len(), 6);
        let at = by_admin
            .items()
            .iter()
            .position(|i| i.condition_check().is_some())
            .unwrap();
        let check = by_admin.items()[at].condition_check().unwrap();
        assert_eq!(check.key(), &keys::profile_key(&admin));
        assert!(matches!(
            by_admin.read(
                at,
                Some(&crate::store::ops::fixtures::profile(UserStatus::Suspended, 1, 2))
            ),
            Rejection::Failed(StoreError::AdminInactive)
        ));
        let claims: Vec<_> = plan
            .items()
            .iter()
            .filter_map(|i| i.delete())
            .map(|d| d.key().clone())
            .filter(|key| {
                keys::classify(
                    keys::key_string(key, keys::PK).unwrap(),
                    keys::key_string(key, keys::SK).unwrap(),
                ) == keys::ItemKind::Claim
            })
            .collect();
        assert_eq!(
            claims,
            vec![
                keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&address())),
                keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&b_address))
            ]
        );
        // A profile without an import key: the erase also conditions on its
        // absence (a re-run of the import may record one without a version).
        assert!(
            erase
                .condition_expression()
                .unwrap()
                .contains("attribute_not_exists(#importKey)"),
            "{:?}",
            erase.condition_expression()
        );
        let imported = ProfileItem {
            import_key: Some(crate::domain::ImportKey::parse(&"0a".repeat(16)).unwrap()),
            ..profile.clone()
        };
        let kept = super::plan("t", &imported, &[], now(), Deleter::System).unwrap();
        assert_well_formed(&kept);
        let marker = kept.items()[1].put().expect("the erased import's marker");
        assert_eq!(
            marker.item()[keys::PK].as_s().unwrap(),
            &format!("ERASED#{}", "0a".repeat(16))
        );
        assert_eq!(marker.item().len(), 4, "its key, entityType and erasedAt alone");
        // A profile that moved since it was read: read again.
        assert!(matches!(
            plan.read(0, Some(&crate::store::ops::fixtures::profile(UserStatus::Active, 3, 2))),
            Rejection::Retry
        ));
        assert!(matches!(plan.read(1, None), Rejection::Retry));
    }
}
