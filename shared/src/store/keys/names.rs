//! The names of the stored format: the table's and the indexes' key
//! attributes and projections, every attribute an item holds, and an item
//! (or a key) as the SDK passes it.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

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
/// shard a fixed function of the sub ([`user_list_pk`](super::user_list_pk)), so sign-ups spread
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
pub const TTL: &str = attr::TTL;

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
        RESERVED_UNTIL = "reservedUntil",
        TOKEN_HASHES = "tokenHashes",
        RECOVERABLE_UNTIL = "recoverableUntil",
        TOKENS_VALID_AFTER = "tokensValidAfter",
        RECOVERIES = "recoveries",
        SIGN_IN_HELD = "signInHeld",
        ORG_ID = "orgId",
        NAME = "name",
        SLUG = "slug",
        ROLE = "role",
        OWNERS = "owners",
        ORGANIZATIONS = "organizations",
        JOINED_AT = "joinedAt",
        REQUESTED_AT = "requestedAt",
        ATTEMPTED_AT = "attemptedAt",
        MEMBERS_REMOVED = "membersRemoved",
        FAILED_TURNS = "failedTurns",
        TTL = "ttl",
        ENROLLMENT = "enrollment",
        DOMAINS = "domains",
        PENDING_UNTIL = "pendingUntil",
        VERIFIED_BY = "verifiedBy",
        RULES = "rules",
        SCIM_TOKENS = "scimTokens",
        TOKEN_HASH = "tokenHash",
        LAST_USED_AT = "lastUsedAt",
        DIRECTORY = "directory",
        SUSPENDED = "suspended",
        PROVISIONED = "provisioned",
        MEMBERS = "members",
        DIRECTORY_MEMBERS = "directoryMembers",
        SUSPENDED_MEMBERS = "suspendedMembers",
        EXACT = "exact",
        AFTER = "after",
        EVENTS = "events",
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

/// A stored item, or a key, as the SDK passes it: attribute name to value.
pub type Item = HashMap<String, AttributeValue>;

/// A key of the table: its partition and sort key.
pub(super) fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        (PK.to_owned(), AttributeValue::S(pk)),
        (SK.to_owned(), AttributeValue::S(sk)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys::EMAIL_SK_PREFIX;

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
}
