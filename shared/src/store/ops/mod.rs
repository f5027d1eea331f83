//! The writes, one module each: the operation, the plan of its write (items and
//! conditions) and the reading of each item's failure into the domain error,
//! side by side, with unit tests of the plan. `profile` and `claim` hold the
//! conditioned items several writes share, each with its reading.

mod claim;
mod profile;

mod add_email;
mod canonicalize;
mod check_availability;
mod cognito_email;
mod counted_read;
mod create_user;
mod delete_user;
mod export_account;
mod holds;
mod issue_code;
mod migration;
mod organizations;
mod reconcile;
mod recovery;
mod recovery_links;
mod remove_email;
mod set_primary;
mod set_status;
mod source_slots;
mod update_profile;
mod user_index;
mod verify_email;

pub use canonicalize::{Moved, RecordPage, ScannedRecord};
pub use cognito_email::{BATCH_GET_KEYS, SignInSettled, SignInView};
pub use holds::{HeldAccount, Hold};
pub use migration::{Adopted, MAX_WRONG_PASSWORDS, PasswordSlot, PendingUser, Slot, password_admitted};
pub use organizations::{
    DirectoryAccount, InvitationPage, Invited, MadeScimToken, MemberPage, MyOrganization, Purged, ScimClient,
    ScimMember, ScimPage, Suggestion,
};
pub(super) use profile::visible;
pub use reconcile::{ChunkAt, ScanPage, ScannedProfile};
pub use recovery::Recovered;
pub use recovery_links::{MAX_TOKENS_PER_CHANGE, RECOVERY_GUESSES_PER_SOURCE};
pub use set_status::StatusSet;
pub use user_index::{Filed, UnlistedPage, UnlistedProfile};

#[cfg(test)]
mod fixtures {
    use crate::domain::{EmailAddress, NewUser, PersonName, Timestamp, UserId, UserStatus};
    use crate::store::StoreError;
    use crate::store::items::{self, ProfileItem};
    use crate::store::keys::Item;
    use crate::store::plan::Rejection;

    pub(super) fn now() -> Timestamp {
        Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap()
    }

    pub(super) fn user() -> UserId {
        UserId::parse("user-a").unwrap()
    }

    pub(super) fn address() -> EmailAddress {
        EmailAddress::parse("ada@example.com").unwrap()
    }

    pub(super) fn new_user() -> NewUser {
        NewUser {
            user_id: user(),
            email: address(),
            first_name: Some(PersonName::parse("Ada").unwrap()),
            last_name: None,
            phone: None,
        }
    }

    /// A stored profile of `user()` in `status`, with `count` addresses, at `version`.
    pub(super) fn profile(status: UserStatus, count: u32, version: u64) -> Item {
        let mut p = ProfileItem::new(&new_user(), count, now());
        p.status = status;
        p.version = version;
        items::profile_item(&p).unwrap()
    }

    /// An active organization created by `user()`, with `owners` owners.
    pub(super) fn organization(owners: u32) -> crate::store::items::OrganizationItem {
        use crate::domain::{OrgId, OrgName, Slug};
        use crate::store::items::{EntityType, OrgStatus, OrganizationItem};
        OrganizationItem {
            entity_type: EntityType::Organization,
            domains: 0,
            scim_tokens: 0,
            rules: Default::default(),
            org_id: OrgId::new(),
            name: OrgName::parse("Acme").unwrap(),
            slug: Slug::parse("acme").unwrap(),
            status: OrgStatus::Active,
            version: 1,
            owners,
            created_by: user(),
            created_at: now(),
            updated_at: now(),
        }
    }

    /// A pending invitation of a fresh organization to `address()`, in `role`,
    /// sent once at `now()` and lapsing an hour later.
    pub(super) fn invitation(role: crate::domain::Role) -> crate::store::items::InvitationItem {
        use crate::domain::{InvitationId, OrgId};
        use crate::store::items::{EntityType, InvitationItem};
        InvitationItem {
            entity_type: EntityType::Invitation,
            org_id: OrgId::new(),
            invitation_id: InvitationId::from_bytes([3; 16]),
            email: address(),
            role,
            invited_by: UserId::parse("inviter").unwrap(),
            created_at: now(),
            sent_at: now(),
            expires_at: now().plus_seconds(3_600),
            token_hash: "h".into(),
            version: 1,
            ttl: 0,
        }
    }

    pub(super) fn failed(r: Rejection) -> StoreError {
        match r {
            Rejection::Failed(e) => e,
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
