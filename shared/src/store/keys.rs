//! The stored format: the single-table key schema, and the name of every
//! attribute an item holds. This is the only module that spells key attribute
//! names, prefixes and attribute names: they are what other tools read.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::address_policy::CanonicalEmail;
use crate::domain::{EmailId, LimitKind, Timestamp, UserId, UserStatus};
use crate::reconcile::Snapshot;

/// The table's partition key: `USER#<sub>` for a user's items, `EMAIL#<address>` for a claim, `LIMIT#…` for counters.
pub const PK: &str = "PK";
/// The table's sort key: which item of the partition (`PROFILE`, `EMAIL#<id>`, `UNIQUE`, …).
pub const SK: &str = "SK";
/// The index that finds an address's email records across users, for the look-up by address.
pub const GSI1: &str = "GSI1";
/// GSI1's partition key, on email records only: `EMAIL#<address>`.
pub const GSI1PK: &str = "GSI1PK";
/// GSI1's sort key: the record owner's `USER#<sub>`.
pub const GSI1SK: &str = "GSI1SK";

/// The index that lists users by status in creation order, for the admin list.
/// Sparse: only profiles carry its keys.
pub const GSI2: &str = "GSI2";
/// GSI2's partition key, on profiles only: `USERS#<status>#<shard>`, the
/// shard a fixed function of the sub ([`user_list_pk`]), so sign-ups spread
/// over [`USER_LIST_SHARDS`] partition keys per status.
pub const GSI2PK: &str = "GSI2PK";
/// GSI2's sort key: `<createdAt>#<sub>`, which sorts in creation order.
pub const GSI2SK: &str = "GSI2SK";
/// How many GSI2 partition keys each status is spread over: at 1,000 sign-ups
/// a second, 125 writes a second each, an eighth of one partition's 1,000.
pub const USER_LIST_SHARDS: u8 = 8;

/// Key attributes of the table, as (name, key type) pairs: HASH then RANGE.
pub const TABLE_KEYS: [(&str, &str); 2] = [(PK, "HASH"), (SK, "RANGE")];
/// Key attributes of GSI1.
pub const GSI1_KEYS: [(&str, &str); 2] = [(GSI1PK, "HASH"), (GSI1SK, "RANGE")];
/// What GSI1 copies besides the keys (projection INCLUDE): only what its one reader,
/// the look-up by address, uses to pick the owner. Verification data never goes there.
pub const GSI1_PROJECTED: [&str; 3] = [attr::USER_ID, attr::IS_VERIFIED, attr::CREATED_AT];
/// Key attributes of GSI2.
pub const GSI2_KEYS: [(&str, &str); 2] = [(GSI2PK, "HASH"), (GSI2SK, "RANGE")];
/// What GSI2 copies besides the keys (projection INCLUDE): what the admin list
/// shows of each user, so a page is one Query per shard and no GetItem. No
/// phone, counters, Cognito or verification data.
pub const GSI2_PROJECTED: [&str; 6] = [
    attr::USER_ID,
    attr::EMAIL,
    attr::FIRST_NAME,
    attr::LAST_NAME,
    attr::STATUS,
    attr::CREATED_AT,
];
/// The attribute DynamoDB's Time to Live reads (epoch seconds): rate-limit items expire by it.
pub const TTL: &str = "ttl";

/// The attribute names items are stored with (camelCase).
pub mod attr {
    macro_rules! attributes {
        ($($name:ident = $value:literal),* $(,)?) => {
            $(#[doc = $value] pub const $name: &str = $value;)*
            /// Every name above, for tests that check expressions use only these.
            #[cfg(test)]
            pub const ALL: &[&str] = &[$($name),*];
        };
    }

    attributes!(
        STATUS = "status",
        VERSION = "version",
        EMAIL = "email",
        EMAIL_COUNT = "emailCount",
        UPDATED_AT = "updatedAt",
        FIRST_NAME = "firstName",
        LAST_NAME = "lastName",
        PHONE = "phone",
        USER_ID = "userId",
        EMAIL_ID = "emailId",
        IS_PRIMARY = "isPrimary",
        IS_VERIFIED = "isVerified",
        PRIMARY_VERSION = "primaryVersion",
        VERIFIED_AT = "verifiedAt",
        CODE_HASH = "verificationCodeHash",
        CODE_EXPIRES_AT = "verificationExpiresAt",
        CODE_ATTEMPTS = "verificationAttempts",
        CODE_SENT_AT = "verificationSentAt",
        EXPIRES_AT = "expiresAt",
        CREATED_AT = "createdAt",
        ENTITY_TYPE = "entityType",
        GONE_FROM_COGNITO = "goneFromCognito",
        COGNITO_EMAIL = "cognitoEmail",
        CANONICAL_EMAIL = "canonicalEmail",
        SYNC_REQUESTED_AT = "syncRequestedAt",
        PASSWORD_HASH = "passwordHash",
        WRONG_PASSWORDS = "wrongPasswords",
        IMPORT_KEY = "importKey",
    );
}

/// The attribute names of the reconcile's own items (its checkpoint and
/// snapshot chunks), which no serde item type describes.
pub mod reconcile_attr {
    /// The checkpoint, as JSON: the pass under way and the last one complete.
    pub const STATE: &str = "state";
    /// The run holding the checkpoint's lease (its request id).
    pub const LEASE_OWNER: &str = "leaseOwner";
    /// When the lease lapses, and another run may take it.
    pub const LEASE_UNTIL: &str = "leaseUntil";
    /// A snapshot chunk's subs, 16 bytes each.
    pub const SUBS: &str = "subs";
    /// A partition's progress: which of its snapshot's subs Cognito listed, a bit each.
    pub const LISTED: &str = "listed";
    /// Requests for a pass at once, counted on the checkpoint item with no lease.
    pub const PASS_REQUESTS: &str = "passRequests";
}

const USER_PREFIX: &str = "USER#";
const USER_LIST_PREFIX: &str = "USERS#";
const EMAIL_PREFIX: &str = "EMAIL#";
const PROFILE_SK: &str = "PROFILE";
const CLAIM_SK: &str = "UNIQUE";
const LIMIT_PREFIX: &str = "LIMIT#";
const LIMIT_USER_PREFIX: &str = "LIMIT#USER#";
const LIMIT_ADDRESS_PREFIX: &str = "LIMIT#ADDRESS#";
const CODES_ISSUED_SK: &str = "CODES_ISSUED";
const WRONG_CODES_SK: &str = "WRONG_CODES";
const AVAILABILITY_CHECKS_SK: &str = "AVAILABILITY_CHECKS";
const EXPORTS_SK: &str = "EXPORTS";
const CODES_SENT_SK: &str = "CODES_SENT";
const CODES_TO_SK_PREFIX: &str = "CODES_TO#";
const ADDRESS_SK_PREFIX: &str = "ADDRESS#";
const LEGACY_PASSWORD_PREFIX: &str = "PASSWORD#";
const LEGACY_PASSWORD_SK: &str = "LEGACY";
const ERASED_PREFIX: &str = "ERASED#";
const ERASED_IMPORT_SK: &str = "IMPORT";

/// `SK` prefix shared by every email record of a user.
pub const EMAIL_SK_PREFIX: &str = EMAIL_PREFIX;

/// A stored item, or a key, as the SDK passes it: attribute name to value.
pub type Item = HashMap<String, AttributeValue>;

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

fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        (PK.to_owned(), AttributeValue::S(pk)),
        (SK.to_owned(), AttributeValue::S(sk)),
    ])
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

/// Key of the codes issued for one address, named by its keyed hash (never the address).
pub fn codes_issued_key(address_hash: &str) -> Item {
    key(
        format!("{LIMIT_ADDRESS_PREFIX}{address_hash}"),
        CODES_ISSUED_SK.to_owned(),
    )
}

/// Key of the wrong codes one user sent, for any address.
pub fn wrong_codes_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), WRONG_CODES_SK.to_owned())
}

/// Key of the availability checks one user made, for any address.
pub fn availability_checks_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), AVAILABILITY_CHECKS_SK.to_owned())
}

/// Key of the exports of their own account one user made.
pub fn exports_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), EXPORTS_SK.to_owned())
}

/// The partition of one user's own counters (`LIMIT#USER#<sub>`), read whole by the export.
pub fn user_limits_pk(user: &UserId) -> String {
    format!("{LIMIT_USER_PREFIX}{user}")
}

/// Which of a user's counters a sort key of `user_limits_pk` names; `None`
/// for one this service does not write. The keyed address hash in some of
/// them is dropped: it is not the user's to see (it names the address by a
/// key only the service holds).
pub fn user_limit_kind(sk: &str) -> Option<LimitKind> {
    Some(match sk {
        CODES_SENT_SK => LimitKind::CodesSent,
        WRONG_CODES_SK => LimitKind::WrongCodes,
        AVAILABILITY_CHECKS_SK => LimitKind::AvailabilityChecks,
        EXPORTS_SK => LimitKind::Exports,
        _ if sk.starts_with(CODES_TO_SK_PREFIX) => LimitKind::CodesSentToAnAddress,
        _ if sk.starts_with(ADDRESS_SK_PREFIX) => LimitKind::AnAddress,
        _ => return None,
    })
}

/// Key of the codes one user had sent, to any address.
pub fn codes_sent_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), CODES_SENT_SK.to_owned())
}

/// Key of the codes one user had sent to one address, by its keyed hash.
pub fn codes_requested_key(user: &UserId, address_hash: &str) -> Item {
    key(
        format!("{LIMIT_USER_PREFIX}{user}"),
        format!("{CODES_TO_SK_PREFIX}{address_hash}"),
    )
}

/// Key of what one user did with one address (first add, wrong codes), by its keyed hash.
pub fn user_address_key(user: &UserId, address_hash: &str) -> Item {
    key(
        format!("{LIMIT_USER_PREFIX}{user}"),
        format!("{ADDRESS_SK_PREFIX}{address_hash}"),
    )
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

const RECONCILE_PK: &str = "RECONCILE";
const CHECKPOINT_SK: &str = "CHECKPOINT";
const PASS_PREFIX: &str = "RECONCILE#PASS#";
const LIVE_SK_PREFIX: &str = "LIVE#";
const PARTITION_SK_PREFIX: &str = "PARTITION#";
const DELETED_SK_PREFIX: &str = "DELETED#";

fn snapshot_label(snapshot: Snapshot) -> &'static str {
    match snapshot {
        Snapshot::Live => LIVE_SK_PREFIX,
        Snapshot::Deleted => DELETED_SK_PREFIX,
    }
}

/// Key of the reconcile's checkpoint: where the pass stands, and its lease.
pub fn reconcile_checkpoint_key() -> Item {
    key(RECONCILE_PK.to_owned(), CHECKPOINT_SK.to_owned())
}

/// The partition of one pass's snapshot of live subs.
pub fn snapshot_pk(pass: &str) -> String {
    format!("{PASS_PREFIX}{pass}")
}

/// The sort-key prefixes of the snapshot chunks that may hold subs starting
/// with `prefix`: a chunk's bucket is 0 to 2 hex digits, so the chunks of
/// each narrower bucket the prefix starts with, and those of every bucket at
/// least as long that starts with it.
pub fn snapshot_sk_prefixes(snapshot: Snapshot, prefix: &str) -> Vec<String> {
    const WIDEST: usize = crate::reconcile::MAX_PREFIX_DIGITS;
    let label = snapshot_label(snapshot);
    let mut out: Vec<String> = (0..prefix.len().min(WIDEST + 1))
        .map(|digits| format!("{label}{}#", &prefix[..digits]))
        .collect();
    if prefix.len() <= WIDEST {
        out.push(format!("{label}{prefix}"));
    }
    out
}

/// Key of one snapshot chunk: its subs' bucket (their first 0 to 2 hex
/// digits, ended by `#`), then the scan segment and that segment's chunk
/// number, so a run that writes a chunk again after a crash overwrites it.
pub fn snapshot_chunk_key(pass: &str, snapshot: Snapshot, bucket: &str, segment: u32, chunk: u32) -> Item {
    key(
        snapshot_pk(pass),
        format!("{}{bucket}#{segment:03}#{chunk:06}", snapshot_label(snapshot)),
    )
}

/// Key of what the erasure of an imported account keeps: its import key, in
/// the key alone.
pub fn erased_import_key(import_key: &crate::domain::ImportKey) -> Item {
    key(
        format!("{ERASED_PREFIX}{}", import_key.as_str()),
        ERASED_IMPORT_SK.to_owned(),
    )
}

/// Key of a partition's progress between runs in one pass (its prefix, `""`
/// for the one partition of a small pool): beside the pass's snapshot, and
/// removed by TTL with it.
pub fn partition_progress_key(pass: &str, prefix: &str) -> Item {
    key(snapshot_pk(pass), format!("{PARTITION_SK_PREFIX}{prefix}"))
}

/// What kind of item a stored key addresses, told from the key alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A user's profile (`USER#…`, `PROFILE`).
    Profile,
    /// One email record of a user (`USER#…`, `EMAIL#…`).
    Email,
    /// An address's uniqueness claim (`EMAIL#…`, `UNIQUE`).
    Claim,
    /// A rate-limit counter (`LIMIT#…`): no address in it, never in GSI1.
    Limit,
    /// The reconcile's checkpoint, or a snapshot chunk of live subs: no address in it.
    Reconcile,
    /// A pending user's legacy password hash (`PASSWORD#…`, `LEGACY`).
    LegacyPassword,
    /// What an erasure keeps of an imported account (`ERASED#…`, `IMPORT`): its import key alone.
    ErasedImport,
    /// A key this service does not write: readers skip it, the invariant checks report it.
    Unknown,
}

/// The kind of a stored item, from its `PK` and `SK` alone, so readers can tell a partition's items apart.
pub fn classify(pk: &str, sk: &str) -> ItemKind {
    match (pk.starts_with(USER_PREFIX), pk.starts_with(EMAIL_PREFIX)) {
        (true, _) if sk == PROFILE_SK => ItemKind::Profile,
        (true, _) if sk.starts_with(EMAIL_PREFIX) => ItemKind::Email,
        (_, true) if sk == CLAIM_SK => ItemKind::Claim,
        _ if pk.starts_with(LIMIT_PREFIX) => ItemKind::Limit,
        _ if pk == RECONCILE_PK || pk.starts_with(PASS_PREFIX) => ItemKind::Reconcile,
        _ if pk.starts_with(LEGACY_PASSWORD_PREFIX) && sk == LEGACY_PASSWORD_SK => ItemKind::LegacyPassword,
        _ if pk.starts_with(ERASED_PREFIX) && sk == ERASED_IMPORT_SK => ItemKind::ErasedImport,
        _ => ItemKind::Unknown,
    }
}

/// The user a profile's or an email record's partition key names.
pub fn user_of_pk(pk: &str) -> Option<&str> {
    pk.strip_prefix(USER_PREFIX)
}

/// The address a claim's partition key names.
pub fn claim_address(pk: &str) -> Option<&str> {
    pk.strip_prefix(EMAIL_PREFIX)
}

/// The string value of a key attribute of a stored item.
pub fn key_string<'a>(item: &'a Item, attribute: &str) -> Option<&'a str> {
    item.get(attribute).and_then(|v| v.as_s().ok()).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_finds_the_chunks_of_every_bucket_width_that_can_hold_it() {
        let live = Snapshot::Live;
        assert_eq!(snapshot_sk_prefixes(live, ""), ["LIVE#"]);
        assert_eq!(snapshot_sk_prefixes(live, "a"), ["LIVE##", "LIVE#a"]);
        assert_eq!(snapshot_sk_prefixes(live, "ab"), ["LIVE##", "LIVE#a#", "LIVE#ab"]);
        assert_eq!(snapshot_sk_prefixes(live, "abc"), ["LIVE##", "LIVE#a#", "LIVE#ab#"]);
        assert_eq!(snapshot_sk_prefixes(Snapshot::Deleted, "a"), ["DELETED##", "DELETED#a"]);
        // The two snapshots never read each other's chunks.
        let deleted = s(&snapshot_chunk_key("p", Snapshot::Deleted, "", 1, 2), SK);
        assert!(
            !snapshot_sk_prefixes(live, "")
                .iter()
                .any(|p| deleted.starts_with(p.as_str()))
        );
        let sk = |bucket: &str| s(&snapshot_chunk_key("p", live, bucket, 1, 2), SK);
        let found = |prefix: &str, bucket: &str| {
            snapshot_sk_prefixes(live, prefix)
                .iter()
                .any(|p| sk(bucket).starts_with(p.as_str()))
        };
        for (prefix, bucket, wanted) in [
            ("", "", true),
            ("", "ab", true),
            ("a", "", true),
            ("a", "a", true),
            ("a", "ab", true),
            ("a", "b", false),
            ("a", "ba", false),
            ("ab", "a", true),
            ("ab", "ab", true),
            ("ab", "ac", false),
            ("abc", "ab", true),
            ("abc", "a", true),
            ("abc", "ac", false),
        ] {
            assert_eq!(found(prefix, bucket), wanted, "{prefix} in {bucket}");
        }
    }

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn stored_key_strings_are_exact() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let email_id = EmailId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
        let email = crate::address_policy::Canonicalization::NONE
            .canonical(&crate::domain::EmailAddress::parse("Ada@Example.com").unwrap());

        let profile = profile_key(&user);
        assert_eq!(s(&profile, "PK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(s(&profile, "SK"), "PROFILE");
        assert_eq!(profile.len(), 2);

        let record = email_record_keys(&user, email_id, &email);
        assert_eq!(s(&record, "PK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(s(&record, "SK"), "EMAIL#0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(s(&record, "GSI1PK"), "EMAIL#ada@example.com");
        assert_eq!(s(&record, "GSI1SK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");

        let claim = claim_key(&email);
        assert_eq!(s(&claim, "PK"), "EMAIL#ada@example.com");
        assert_eq!(s(&claim, "SK"), "UNIQUE");
        assert_eq!(claim.len(), 2);

        assert_eq!(s(&codes_issued_key("ab12"), "PK"), "LIMIT#ADDRESS#ab12");
        assert_eq!(s(&codes_issued_key("ab12"), "SK"), "CODES_ISSUED");
        assert_eq!(
            s(&wrong_codes_key(&user), "PK"),
            "LIMIT#USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"
        );
        assert_eq!(s(&wrong_codes_key(&user), "SK"), "WRONG_CODES");
        assert_eq!(s(&codes_sent_key(&user), "SK"), "CODES_SENT");
        assert_eq!(s(&codes_requested_key(&user, "ab12"), "SK"), "CODES_TO#ab12");
        assert_eq!(
            s(&codes_requested_key(&user, "ab12"), "PK"),
            s(&codes_sent_key(&user), "PK")
        );
        assert_eq!(s(&user_address_key(&user, "ab12"), "SK"), "ADDRESS#ab12");
        assert_eq!(s(&exports_key(&user), "SK"), "EXPORTS");
        assert_eq!(s(&exports_key(&user), "PK"), user_limits_pk(&user));
        assert_eq!(s(&codes_sent_key(&user), "PK"), user_limits_pk(&user));
    }

    #[test]
    fn every_counter_of_a_user_has_a_kind() {
        let user = UserId::parse("u").unwrap();
        let kind = |item: Item| user_limit_kind(&s(&item, SK));
        assert_eq!(kind(codes_sent_key(&user)), Some(LimitKind::CodesSent));
        assert_eq!(kind(wrong_codes_key(&user)), Some(LimitKind::WrongCodes));
        assert_eq!(
            kind(availability_checks_key(&user)),
            Some(LimitKind::AvailabilityChecks)
        );
        assert_eq!(kind(exports_key(&user)), Some(LimitKind::Exports));
        assert_eq!(
            kind(codes_requested_key(&user, "ab12")),
            Some(LimitKind::CodesSentToAnAddress)
        );
        assert_eq!(kind(user_address_key(&user, "ab12")), Some(LimitKind::AnAddress));
        assert_eq!(user_limit_kind("SOMETHING_ELSE"), None);
    }

    #[test]
    fn schema_names_are_exact() {
        assert_eq!((PK, SK, GSI1, GSI1PK, GSI1SK), ("PK", "SK", "GSI1", "GSI1PK", "GSI1SK"));
        assert_eq!(EMAIL_SK_PREFIX, "EMAIL#");
        assert_eq!(TABLE_KEYS, [("PK", "HASH"), ("SK", "RANGE")]);
        assert_eq!(GSI1_KEYS, [("GSI1PK", "HASH"), ("GSI1SK", "RANGE")]);
        assert_eq!(GSI1_PROJECTED, ["userId", "isVerified", "createdAt"]);
        assert_eq!((GSI2, GSI2PK, GSI2SK), ("GSI2", "GSI2PK", "GSI2SK"));
        assert_eq!(GSI2_KEYS, [("GSI2PK", "HASH"), ("GSI2SK", "RANGE")]);
        assert_eq!(
            GSI2_PROJECTED,
            ["userId", "email", "firstName", "lastName", "status", "createdAt"]
        );
        assert_eq!(TTL, "ttl");
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

    #[test]
    fn keys_classify_back() {
        assert_eq!(classify("USER#u", "PROFILE"), ItemKind::Profile);
        assert_eq!(classify("USER#u", "EMAIL#x"), ItemKind::Email);
        assert_eq!(classify("EMAIL#a@b.co", "UNIQUE"), ItemKind::Claim);
        assert_eq!(classify("LIMIT#USER#u", "WRONG_CODES"), ItemKind::Limit);
        assert_eq!(classify("LIMIT#ADDRESS#h", "CODES_ISSUED"), ItemKind::Limit);
        assert_eq!(classify("ORDER#1", "X"), ItemKind::Unknown);
        let erased = erased_import_key(&crate::domain::ImportKey::parse(&"ab".repeat(16)).unwrap());
        assert_eq!(classify(&s(&erased, PK), &s(&erased, SK)), ItemKind::ErasedImport);
    }
}
