//! The keys of a user's items and of what names an address: the profile
//! (with its place in the admin list), the email records, the claims, a
//! pending user's legacy password, what an erasure keeps of an import, and
//! the key nothing is stored under.

use aws_sdk_dynamodb::types::AttributeValue;

use super::names::{GSI1PK, GSI1SK, GSI2PK, GSI2SK, Item, USER_LIST_SHARDS, key};
use crate::address_policy::CanonicalEmail;
use crate::domain::{EmailId, ImportKey, Timestamp, UserId, UserStatus};

pub(super) const USER_PREFIX: &str = "USER#";
pub(super) const USER_LIST_PREFIX: &str = "USERS#";
pub(super) const EMAIL_PREFIX: &str = "EMAIL#";
pub(super) const PROFILE_SK: &str = "PROFILE";
pub(super) const CLAIM_SK: &str = "UNIQUE";
pub(super) const LEGACY_PASSWORD_PREFIX: &str = "PASSWORD#";
pub(super) const LEGACY_PASSWORD_SK: &str = "LEGACY";
pub(super) const ERASED_PREFIX: &str = "ERASED#";
pub(super) const ERASED_IMPORT_SK: &str = "IMPORT";

/// `SK` prefix shared by every email record of a user.
pub const EMAIL_SK_PREFIX: &str = EMAIL_PREFIX;

/// The partition holding a user's profile and email records, so one Query reads the account.
pub fn user_pk(user: &UserId) -> String {
    format!("{USER_PREFIX}{user}")
}

/// The sort key of one email record within its user's partition.
pub fn email_sk(email_id: EmailId) -> String {
    format!("{EMAIL_PREFIX}{email_id}")
}

/// The GSI1 key under which an address's email records are found: its
/// canonical form, so every spelling of one address finds the same records.
pub fn email_gsi1pk(email: &CanonicalEmail) -> String {
    format!("{EMAIL_PREFIX}{}", email.as_str())
}

/// The partition of an address's uniqueness claim: one item per canonical
/// address, so one holder of all its spellings.
pub fn claim_pk(email: &CanonicalEmail) -> String {
    format!("{EMAIL_PREFIX}{}", email.as_str())
}

const CONNECTION_PK: &str = "CONNECTION";

/// A key nothing is ever stored under: the read that opens a function's
/// connection to DynamoDB during init finds nothing there.
pub fn connection_key() -> Item {
    key(connection_pk(), CONNECTION_PK.to_owned())
}

/// The partition of `connection_key`, for functions granted Query but not GetItem.
pub fn connection_pk() -> String {
    CONNECTION_PK.to_owned()
}

/// Key of a user's profile item.
pub fn profile_key(user: &UserId) -> Item {
    key(user_pk(user), PROFILE_SK.to_owned())
}

/// Key of a user's profile item with its GSI2 keys, which follow its status
/// and creation time: what a profile is stored with.
pub fn profile_keys(user: &UserId, status: UserStatus, created_at: Timestamp) -> Item {
    let mut item = profile_key(user);
    item.insert(GSI2PK.to_owned(), AttributeValue::S(user_list_pk(status, user)));
    item.insert(GSI2SK.to_owned(), AttributeValue::S(user_list_sk(created_at, user)));
    item
}

/// The GSI2 shard of a user: the first byte of SHA-256 of the sub, modulo
/// [`USER_LIST_SHARDS`]. A hash, not the sub's own first digit: subs need not
/// be uniform, and a crafted one cannot choose its shard any better than by chance.
pub fn user_list_shard(user: &UserId) -> u8 {
    use sha2::Digest;
    sha2::Sha256::digest(user.as_str().as_bytes())[0] % USER_LIST_SHARDS
}

/// The GSI2 partition key of a profile: its status and its shard.
pub fn user_list_pk(status: UserStatus, user: &UserId) -> String {
    shard_pk(status, user_list_shard(user))
}

/// Every GSI2 partition key of a status, one per shard, in shard order.
pub fn user_list_pks(status: UserStatus) -> Vec<String> {
    (0..USER_LIST_SHARDS).map(|shard| shard_pk(status, shard)).collect()
}

fn shard_pk(status: UserStatus, shard: u8) -> String {
    format!("{USER_LIST_PREFIX}{}#{shard:02}", status.as_str())
}

/// The GSI2 sort key of a profile: its creation time (fixed width, so the
/// text sorts as the time), then the sub, which makes it unique.
pub fn user_list_sk(created_at: Timestamp, user: &UserId) -> String {
    format!("{created_at}#{user}")
}

/// A GSI2 sort key read back into its creation time and sub: `None` unless
/// it is exactly what [`user_list_sk`] writes for them (one spelling only).
pub fn parse_user_list_sk(sk: &str) -> Option<(Timestamp, UserId)> {
    let (created_at, user) = sk.split_once('#')?;
    let created_at = Timestamp::parse(created_at).ok()?;
    let user = UserId::parse(user).ok()?;
    (user_list_sk(created_at, &user) == sk).then_some((created_at, user))
}

/// Key of one email record of a user.
pub fn email_key(user: &UserId, email_id: EmailId) -> Item {
    key(user_pk(user), email_sk(email_id))
}

/// Key of the uniqueness claim of an address.
pub fn claim_key(email: &CanonicalEmail) -> Item {
    key(claim_pk(email), CLAIM_SK.to_owned())
}

/// Key of a pending user's legacy password hash: a partition of its own, so
/// no read of the user's partition (account, export, list) ever meets it.
pub fn legacy_password_key(user: &UserId) -> Item {
    key(format!("{LEGACY_PASSWORD_PREFIX}{user}"), LEGACY_PASSWORD_SK.to_owned())
}

/// Every key attribute (table and GSI1) of an email record.
pub fn email_record_keys(user: &UserId, email_id: EmailId, email: &CanonicalEmail) -> Item {
    let mut item = email_key(user, email_id);
    item.insert(GSI1PK.to_owned(), AttributeValue::S(email_gsi1pk(email)));
    item.insert(GSI1SK.to_owned(), AttributeValue::S(user_pk(user)));
    item
}

/// Key of what the erasure of an imported account keeps: its import key, in
/// the key alone.
pub fn erased_import_key(import_key: &ImportKey) -> Item {
    key(
        format!("{ERASED_PREFIX}{}", import_key.as_str()),
        ERASED_IMPORT_SK.to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn user_list_keys_are_exact_and_read_back() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let at = Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap();
        let keys = profile_keys(&user, UserStatus::Suspended, at);
        assert_eq!(s(&keys, "PK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(s(&keys, "SK"), "PROFILE");
        let shard = user_list_shard(&user);
        assert_eq!(s(&keys, "GSI2PK"), format!("USERS#suspended#{shard:02}"));
        assert_eq!(
            s(&keys, "GSI2SK"),
            "2026-11-21T10:00:00.000Z#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"
        );
        assert_eq!(parse_user_list_sk(&s(&keys, "GSI2SK")), Some((at, user.clone())));
        assert!(user_list_pks(UserStatus::Suspended).contains(&s(&keys, "GSI2PK")));
        assert_eq!(user_list_pks(UserStatus::Active)[7], "USERS#active#07");
        // One spelling only: another offset, precision or separator is no key.
        for forged in [
            "2026-11-21T10:00:00Z#u",
            "2026-11-21T11:00:00.000+01:00#u",
            "2026-11-21T10:00:00.000Z#u#v",
            "2026-11-21T10:00:00.000Z#",
            "#u",
            "",
        ] {
            assert_eq!(parse_user_list_sk(forged), None, "{forged}");
        }
    }

    #[test]
    fn subs_spread_evenly_over_the_shards() {
        let mut counts = [0u32; USER_LIST_SHARDS as usize];
        for n in 0..8000u32 {
            let user = UserId::parse(&format!("{n:08x}-2b7d-4b0e-9a57-0e0f0b1c2d3e")).unwrap();
            counts[usize::from(user_list_shard(&user))] += 1;
        }
        // 1,000 each on average; a hash keeps every shard within 15 % of it.
        assert!(counts.iter().all(|c| (850..=1150).contains(c)), "{counts:?}");
    }
}
