//! Transaction builders: pure functions from domain values to the items of one
//! TransactWriteItems, each with the role its condition plays. No network here;
//! `cancel` reads a cancellation back through the roles.

use aws_sdk_dynamodb::types::{
    ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use crate::domain::{EmailAddress, EmailId, Timestamp, UserId, UserStatus};
use crate::keys::{self, Item};

use super::error::StoreError;
use super::expr::Expr;
use super::items::{self, ClaimItem, EmailItem, ProfileItem, attr};
use super::limits::{self, Counter, LimitItem};

/// What a failed condition at one position of a transaction means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A profile written only if absent: failing means the user exists.
    NewProfile,
    /// The caller's profile: exists and is active.
    ActiveProfile,
    /// The caller's profile: exists, is active and has room for another address.
    ProfileWithRoom { max_emails: u32 },
    /// The caller's profile: exists, is active and is at the version read before.
    ProfileAtVersion { version: u64 },
    /// A new record with a fresh id: failing means a concurrent writer got there first.
    NewRecord,
    /// The claim of an address being added by `user`. A confirmed sign-up proved
    /// ownership through Cognito, so any unverified claim yields to it; an added
    /// address waits until the other user's code has expired.
    NewClaim { user: UserId, live_claims_yield: bool },
    /// Something read just before, changed by a concurrent writer since: retry.
    ReadBefore,
    /// The caller's unverified record holding the code being checked.
    RecordToVerify {
        max_attempts: u32,
        resend_interval_seconds: i64,
    },
    /// The caller's unverified record receiving a new code.
    RecordToResend { resend_after: Timestamp },
    /// The caller's record becoming primary.
    NewPrimary,
    /// The caller's record being removed.
    RecordToRemove,
    /// The claim that belongs to the caller's record.
    OwnClaim,
    /// A rate-limit counter, pinned to the version seen: failing means it moved.
    Limit(Counter),
}

/// One TransactWriteItems: its items and, position by position, their roles.
#[derive(Debug, Clone)]
pub struct TxPlan {
    pub items: Vec<TransactWriteItem>,
    pub roles: Vec<Role>,
    /// Idempotency token: DynamoDB runs a repeated request with it only once.
    pub client_request_token: Option<String>,
}

impl TxPlan {
    fn new() -> Self {
        Self {
            items: Vec::new(),
            roles: Vec::new(),
            client_request_token: None,
        }
    }

    fn push(&mut self, item: TransactWriteItem, role: Role) {
        self.items.push(item);
        self.roles.push(role);
    }
}

const ALL_OLD: ReturnValuesOnConditionCheckFailure = ReturnValuesOnConditionCheckFailure::AllOld;

/// Finishes a conditioned write builder: condition, names, values, and ALL_OLD
/// on failure so `cancel` can read the item as it was.
macro_rules! conditioned {
    ($builder:expr, $condition:expr, $expr:expr) => {
        $builder
            .condition_expression($condition)
            .set_expression_attribute_names($expr.names_or_none())
            .set_expression_attribute_values($expr.values_or_none())
            .return_values_on_condition_check_failure(ALL_OLD)
            .build()?
    };
}

/// One conditioned item of a transaction.
enum Write<'a> {
    Put(Item),
    Update(Item, &'a str),
    Delete(Item),
    Check(Item),
}

fn write(table: &str, write: Write<'_>, condition: &str, expr: &Expr) -> Result<TransactWriteItem, StoreError> {
    let item = TransactWriteItem::builder();
    let item = match write {
        Write::Put(value) => item.put(conditioned!(
            Put::builder().table_name(table).set_item(Some(value)),
            condition,
            expr
        )),
        Write::Update(key, update) => {
            let builder = Update::builder()
                .table_name(table)
                .set_key(Some(key))
                .update_expression(update);
            item.update(conditioned!(builder, condition, expr))
        }
        Write::Delete(key) => item.delete(conditioned!(
            Delete::builder().table_name(table).set_key(Some(key)),
            condition,
            expr
        )),
        Write::Check(key) => item.condition_check(conditioned!(
            ConditionCheck::builder().table_name(table).set_key(Some(key)),
            condition,
            expr
        )),
    };
    Ok(item.build())
}

fn put(table: &str, item: Item, condition: &str, expr: &Expr) -> Result<TransactWriteItem, StoreError> {
    write(table, Write::Put(item), condition, expr)
}

fn update(table: &str, key: Item, update: &str, condition: &str, expr: &Expr) -> Result<TransactWriteItem, StoreError> {
    write(table, Write::Update(key, update), condition, expr)
}

fn delete(table: &str, key: Item, condition: &str, expr: &Expr) -> Result<TransactWriteItem, StoreError> {
    write(table, Write::Delete(key), condition, expr)
}

fn check(table: &str, key: Item, condition: &str, expr: &Expr) -> Result<TransactWriteItem, StoreError> {
    write(table, Write::Check(key), condition, expr)
}

const ACTIVE_PROFILE: &str = "attribute_exists(#pk) AND #status = :active";

fn active_profile_check(table: &str, user: &UserId) -> Result<TransactWriteItem, StoreError> {
    let expr = Expr::names(&[attr::STATUS])
        .with_pk()
        .s(":active", UserStatus::Active.as_str());
    check(table, keys::profile_key(user), ACTIVE_PROFILE, &expr)
}

/// The claim write of a new address: either the address is free, or it takes
/// over the held claim and, in the same transaction, removes the holder's record.
fn push_claim(
    plan: &mut TxPlan,
    table: &str,
    record: &EmailItem,
    claim_expires_at: Option<Timestamp>,
    live_claims_yield: bool,
    held: Option<&ClaimItem>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let claim = items::claim_item(&record.email, &record.claim(claim_expires_at))?;
    let new_claim = Role::NewClaim {
        user: record.user_id.clone(),
        live_claims_yield,
    };
    let Some(held) = held else {
        let expr = Expr::default().with_pk();
        plan.push(put(table, claim, "attribute_not_exists(#pk)", &expr)?, new_claim);
        return Ok(());
    };
    let mut condition = "#userId = :heldBy AND #emailId = :heldEmail AND attribute_exists(#expiresAt)".to_owned();
    let mut expr = Expr::names(&[attr::USER_ID, attr::EMAIL_ID, attr::EXPIRES_AT])
        .s(":heldBy", held.user_id.as_str())
        .s(":heldEmail", held.email_id.to_string());
    if !live_claims_yield {
        // Expired means not live: `expiresAt <= now`, as `ClaimItem::is_live` reads it.
        condition.push_str(" AND #expiresAt <= :now");
        expr = expr.t(":now", now);
    }
    plan.push(put(table, claim, &condition, &expr)?, new_claim);

    let unverified = Expr::names(&[attr::IS_VERIFIED]).with_pk().b(":false", false);
    plan.push(
        delete(
            table,
            keys::email_key(&held.user_id, held.email_id),
            "attribute_exists(#pk) AND #isVerified = :false",
            &unverified,
        )?,
        Role::ReadBefore,
    );
    let decrement = Expr::names(&[attr::EMAIL_COUNT]).with_pk().n(":one", 1);
    plan.push(
        update(
            table,
            keys::profile_key(&held.user_id),
            "SET #emailCount = #emailCount - :one",
            "attribute_exists(#pk)",
            &decrement,
        )?,
        Role::ReadBefore,
    );
    Ok(())
}

/// A confirmed sign-up: profile, verified primary record and claim, in one transaction.
pub fn create_user(
    table: &str,
    profile: &ProfileItem,
    record: &EmailItem,
    held: Option<&ClaimItem>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let absent = Expr::default().with_pk();
    plan.push(
        put(
            table,
            items::profile_item(profile)?,
            "attribute_not_exists(#pk)",
            &absent,
        )?,
        Role::NewProfile,
    );
    plan.push(
        put(table, items::email_item(record)?, "attribute_not_exists(#pk)", &absent)?,
        Role::NewRecord,
    );
    push_claim(&mut plan, table, record, None, true, held, now)?;
    plan.client_request_token = Some(create_user_token(table, &profile.user_id));
    Ok(plan)
}

/// Derived from the table and the user id, so every delivery of one sign-up shares
/// it. DynamoDB keeps tokens per account and region for ten minutes: the table
/// keeps a sign-up of the same user into another table (a test's, a second
/// stack's) from ever meeting this one's token.
pub fn create_user_token(table: &str, user: &UserId) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("create-user\0{table}\0{user}").as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// One counter write of a transaction: the counter, its key, the item as seen,
/// and what to count.
#[derive(Debug, Clone)]
pub struct CounterWrite<'a> {
    pub counter: Counter,
    pub key: Item,
    pub seen: Option<&'a LimitItem>,
    /// The event to count, or `None` to put the item back with only `first_added_at` changed.
    pub event: Option<Timestamp>,
    pub first_added_at: Option<Timestamp>,
}

fn push_count(plan: &mut TxPlan, table: &str, write: CounterWrite<'_>, now: Timestamp) -> Result<(), StoreError> {
    let item = limits::count(table, write.key, write.seen, write.event, write.first_added_at, now)?;
    plan.push(item, Role::Limit(write.counter));
    Ok(())
}

fn push_room_check(
    plan: &mut TxPlan,
    table: &str,
    counter: Counter,
    key: Item,
    seen: Option<&LimitItem>,
) -> Result<(), StoreError> {
    plan.push(limits::check(table, key, seen)?, Role::Limit(counter));
    Ok(())
}

/// A new unverified address: count it on the profile, write the record and its
/// claim (held until `claim_expires_at`), and count the code it is sent.
pub fn add_email(
    table: &str,
    record: &EmailItem,
    claim_expires_at: Timestamp,
    max_emails: u32,
    held: Option<&ClaimItem>,
    counters: Vec<CounterWrite<'_>>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let room = Expr::names(&[attr::STATUS, attr::EMAIL_COUNT])
        .with_pk()
        .s(":active", UserStatus::Active.as_str())
        .n(":max", max_emails)
        .n(":one", 1);
    plan.push(
        update(
            table,
            keys::profile_key(&record.user_id),
            "SET #emailCount = #emailCount + :one",
            "attribute_exists(#pk) AND #status = :active AND #emailCount < :max",
            &room,
        )?,
        Role::ProfileWithRoom { max_emails },
    );
    let absent = Expr::default().with_pk();
    plan.push(
        put(table, items::email_item(record)?, "attribute_not_exists(#pk)", &absent)?,
        Role::NewRecord,
    );
    push_claim(&mut plan, table, record, Some(claim_expires_at), false, held, now)?;
    for counter in counters {
        push_count(&mut plan, table, counter, now)?;
    }
    Ok(plan)
}

/// The right code: the record becomes verified and its claim permanent.
#[allow(clippy::too_many_arguments)]
pub fn verify_email(
    table: &str,
    user: &UserId,
    email_id: EmailId,
    email: &EmailAddress,
    code_hash: &str,
    (max_attempts, resend_interval_seconds): (u32, i64),
    guess_limits: [(Counter, Item, Option<&LimitItem>); 2],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    plan.push(active_profile_check(table, user)?, Role::ActiveProfile);
    let expr = Expr::names(&[
        attr::IS_VERIFIED,
        attr::VERIFIED_AT,
        attr::CODE_HASH,
        attr::CODE_EXPIRES_AT,
        attr::CODE_ATTEMPTS,
        attr::CODE_SENT_AT,
    ])
    .b(":true", true)
    .b(":false", false)
    .t(":now", now)
    .s(":hash", code_hash)
    .n(":max", max_attempts);
    plan.push(
        update(
            table,
            keys::email_key(user, email_id),
            "SET #isVerified = :true, #verifiedAt = :now \
             REMOVE #verificationCodeHash, #verificationExpiresAt, #verificationAttempts, #verificationSentAt",
            "#isVerified = :false AND #verificationCodeHash = :hash \
             AND #verificationAttempts < :max AND #verificationExpiresAt > :now",
            &expr,
        )?,
        Role::RecordToVerify {
            max_attempts,
            resend_interval_seconds,
        },
    );
    plan.push(
        own_claim_update(table, user, email_id, email, "REMOVE #expiresAt")?,
        Role::OwnClaim,
    );
    // A right code past a guess limit is refused like a wrong one: over the limit,
    // an answer must tell nothing about the code.
    for (counter, key, seen) in guess_limits {
        push_room_check(&mut plan, table, counter, key, seen)?;
    }
    Ok(plan)
}

fn own_claim_update(
    table: &str,
    user: &UserId,
    email_id: EmailId,
    email: &EmailAddress,
    update_expression: &str,
) -> Result<TransactWriteItem, StoreError> {
    let expr = Expr::names(&[attr::USER_ID, attr::EMAIL_ID, attr::EXPIRES_AT])
        .s(":me", user.as_str())
        .s(":emailId", email_id.to_string());
    update(
        table,
        keys::claim_key(email),
        update_expression,
        "#userId = :me AND #emailId = :emailId AND attribute_exists(#expiresAt)",
        &expr,
    )
}

/// A wrong code: count the attempt against the same code that was checked, and
/// against the user's rolling limits.
pub fn count_failed_attempt(
    table: &str,
    user: &UserId,
    email_id: EmailId,
    code_hash: &str,
    (max_attempts, resend_interval_seconds): (u32, i64),
    counters: Vec<CounterWrite<'_>>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    plan.push(active_profile_check(table, user)?, Role::ActiveProfile);
    let expr = Expr::names(&[attr::IS_VERIFIED, attr::CODE_HASH, attr::CODE_ATTEMPTS])
        .b(":false", false)
        .s(":hash", code_hash)
        .n(":max", max_attempts)
        .n(":one", 1);
    plan.push(
        update(
            table,
            keys::email_key(user, email_id),
            "SET #verificationAttempts = #verificationAttempts + :one",
            "#isVerified = :false AND #verificationCodeHash = :hash AND #verificationAttempts < :max",
            &expr,
        )?,
        Role::RecordToVerify {
            max_attempts,
            resend_interval_seconds,
        },
    );
    for counter in counters {
        push_count(&mut plan, table, counter, now)?;
    }
    Ok(plan)
}

/// A new code for an unverified address, counted against the address's limit.
/// The claim is left as it is: a resend never extends how long an unverified
/// address is held.
#[allow(clippy::too_many_arguments)]
pub fn issue_code(
    table: &str,
    user: &UserId,
    email_id: EmailId,
    code_hash: &str,
    expires_at: Timestamp,
    resend_after: Timestamp,
    codes_issued: CounterWrite<'_>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    plan.push(active_profile_check(table, user)?, Role::ActiveProfile);
    let expr = Expr::names(&[
        attr::IS_VERIFIED,
        attr::CODE_HASH,
        attr::CODE_EXPIRES_AT,
        attr::CODE_ATTEMPTS,
        attr::CODE_SENT_AT,
    ])
    .with_pk()
    .b(":false", false)
    .s(":hash", code_hash)
    .t(":expiresAt", expires_at)
    .n(":zero", 0)
    .t(":now", now)
    .t(":resendAfter", resend_after);
    plan.push(
        update(
            table,
            keys::email_key(user, email_id),
            "SET #verificationCodeHash = :hash, #verificationExpiresAt = :expiresAt, \
             #verificationAttempts = :zero, #verificationSentAt = :now",
            "attribute_exists(#pk) AND #isVerified = :false \
             AND (attribute_not_exists(#verificationSentAt) OR #verificationSentAt <= :resendAfter)",
            &expr,
        )?,
        Role::RecordToResend { resend_after },
    );
    push_count(&mut plan, table, codes_issued, now)?;
    Ok(plan)
}

/// Switch the primary address: old off, new on, profile follows, all or nothing.
pub fn set_primary(
    table: &str,
    profile: &ProfileItem,
    old_primary: EmailId,
    new_primary: &EmailItem,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let user = &profile.user_id;
    let expr = Expr::names(&[attr::EMAIL, attr::VERSION, attr::UPDATED_AT, attr::STATUS])
        .s(":email", new_primary.email.as_str())
        .n(":one", 1)
        .t(":now", now)
        .s(":active", UserStatus::Active.as_str())
        .n(":version", profile.version);
    plan.push(
        update(
            table,
            keys::profile_key(user),
            "SET #email = :email, #version = #version + :one, #updatedAt = :now",
            "#status = :active AND #version = :version",
            &expr,
        )?,
        Role::ProfileAtVersion {
            version: profile.version,
        },
    );
    let demote = Expr::names(&[attr::IS_PRIMARY]).b(":true", true).b(":false", false);
    plan.push(
        update(
            table,
            keys::email_key(user, old_primary),
            "SET #isPrimary = :false",
            "#isPrimary = :true",
            &demote,
        )?,
        Role::ReadBefore,
    );
    let promote = Expr::names(&[attr::IS_PRIMARY, attr::IS_VERIFIED])
        .with_pk()
        .b(":true", true)
        .b(":false", false);
    plan.push(
        update(
            table,
            keys::email_key(user, new_primary.email_id),
            "SET #isPrimary = :true",
            "attribute_exists(#pk) AND #isVerified = :true AND #isPrimary = :false",
            &promote,
        )?,
        Role::NewPrimary,
    );
    Ok(plan)
}

/// Remove a non-primary address and release its claim.
pub fn remove_email(table: &str, record: &EmailItem) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let user = &record.user_id;
    let expr = Expr::names(&[attr::STATUS, attr::EMAIL_COUNT])
        .with_pk()
        .s(":active", UserStatus::Active.as_str())
        .n(":one", 1);
    plan.push(
        update(
            table,
            keys::profile_key(user),
            "SET #emailCount = #emailCount - :one",
            ACTIVE_PROFILE,
            &expr,
        )?,
        Role::ActiveProfile,
    );
    let not_primary = Expr::names(&[attr::IS_PRIMARY]).with_pk().b(":true", true);
    plan.push(
        delete(
            table,
            keys::email_key(user, record.email_id),
            "attribute_exists(#pk) AND #isPrimary <> :true",
            &not_primary,
        )?,
        Role::RecordToRemove,
    );
    plan.push(own_claim_delete(table, record)?, Role::OwnClaim);
    Ok(plan)
}

fn own_claim_delete(table: &str, record: &EmailItem) -> Result<TransactWriteItem, StoreError> {
    let expr = Expr::names(&[attr::USER_ID, attr::EMAIL_ID])
        .s(":me", record.user_id.as_str())
        .s(":emailId", record.email_id.to_string());
    delete(
        table,
        keys::claim_key(&record.email),
        "#userId = :me AND #emailId = :emailId",
        &expr,
    )
}

/// Delete a user: status deleted, the profile erased, every record and claim
/// released, in one transaction.
/// The profile's version and count pin the set of records read just before.
pub fn delete_user(
    table: &str,
    profile: &ProfileItem,
    records: &[EmailItem],
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let expr = Expr::names(&[
        attr::STATUS,
        attr::EMAIL_COUNT,
        attr::VERSION,
        attr::UPDATED_AT,
        attr::EMAIL,
        attr::FIRST_NAME,
        attr::LAST_NAME,
        attr::PHONE,
    ])
    .s(":deleted", UserStatus::Deleted.as_str())
    .n(":zero", 0)
    .n(":one", 1)
    .t(":now", now)
    .n(":version", profile.version)
    .n(":count", profile.email_count);
    plan.push(
        update(
            table,
            keys::profile_key(&profile.user_id),
            // Erasure in the same write that releases the addresses.
            "SET #status = :deleted, #emailCount = :zero, #version = #version + :one, #updatedAt = :now \
             REMOVE #email, #firstName, #lastName, #phone",
            "#version = :version AND #emailCount = :count",
            &expr,
        )?,
        Role::ReadBefore,
    );
    let exists = Expr::default().with_pk();
    for record in records {
        plan.push(
            delete(
                table,
                keys::email_key(&record.user_id, record.email_id),
                "attribute_exists(#pk)",
                &exists,
            )?,
            Role::ReadBefore,
        );
        plan.push(own_claim_delete(table, record)?, Role::ReadBefore);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{NewUser, PersonName};

    fn now() -> Timestamp {
        Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap()
    }

    fn user() -> UserId {
        UserId::parse("user-a").unwrap()
    }

    fn address() -> EmailAddress {
        EmailAddress::parse("ada@example.com").unwrap()
    }

    fn new_user() -> NewUser {
        NewUser {
            user_id: user(),
            email: address(),
            first_name: Some(PersonName::parse("Ada").unwrap()),
            last_name: None,
            phone: None,
        }
    }

    fn put_of(item: &TransactWriteItem) -> &Put {
        item.put().expect("a Put")
    }

    fn s<'a>(item: &'a Item, k: &str) -> &'a str {
        item[k].as_s().unwrap()
    }

    #[test]
    fn create_user_writes_profile_primary_and_claim() {
        let profile = ProfileItem::new(&new_user(), 1, now());
        let record = EmailItem::verified_primary(&user(), &address(), now());
        let plan = create_user("t", &profile, &record, None, now()).unwrap();
        assert_eq!(
            plan.roles,
            vec![
                Role::NewProfile,
                Role::NewRecord,
                Role::NewClaim {
                    user: user(),
                    live_claims_yield: true
                }
            ]
        );
        assert_eq!(
            plan.client_request_token.as_deref(),
            Some(create_user_token("t", &user()).as_str())
        );

        let p = put_of(&plan.items[0]);
        assert_eq!(p.condition_expression(), Some("attribute_not_exists(#pk)"));
        assert_eq!(s(p.item(), "PK"), "USER#user-a");
        assert_eq!(s(p.item(), "SK"), "PROFILE");
        assert_eq!(s(p.item(), "entityType"), "User");
        assert_eq!(s(p.item(), "status"), "active");
        assert_eq!(p.item()["version"].as_n().unwrap(), "1");
        assert_eq!(p.item()["emailCount"].as_n().unwrap(), "1");
        assert!(!p.item().contains_key("phone"));

        let e = put_of(&plan.items[1]);
        assert_eq!(s(e.item(), "GSI1PK"), "EMAIL#ada@example.com");
        assert_eq!(s(e.item(), "entityType"), "Email");
        assert_eq!(e.item()["isPrimary"].as_bool().unwrap(), &true);
        assert_eq!(e.item()["isVerified"].as_bool().unwrap(), &true);
        assert_eq!(s(e.item(), "verifiedAt"), "2026-11-21T10:00:00.000Z");

        let c = put_of(&plan.items[2]);
        assert_eq!(s(c.item(), "PK"), "EMAIL#ada@example.com");
        assert_eq!(s(c.item(), "SK"), "UNIQUE");
        assert_eq!(s(c.item(), "entityType"), "EmailClaim");
        assert_eq!(s(c.item(), "userId"), "user-a");
        assert!(!c.item().contains_key("expiresAt"));
    }

    #[test]
    fn token_is_derived_from_the_table_and_the_user_only() {
        let a = create_user_token("t", &user());
        assert_eq!(a, create_user_token("t", &user()));
        assert_ne!(a, create_user_token("t", &UserId::parse("user-b").unwrap()));
        assert_ne!(a, create_user_token("another-table", &user()));
        assert!(a.len() <= 36);
    }

    #[test]
    fn add_email_takeover_removes_the_holders_record_in_the_same_transaction() {
        let expires = now().plus_seconds(86_400);
        let record = EmailItem::unverified(&user(), EmailId::new(), &address(), "h".into(), expires, now());
        let holder = UserId::parse("user-b").unwrap();
        let held = ClaimItem {
            entity_type: items::EntityType::EmailClaim,
            user_id: holder.clone(),
            email_id: EmailId::new(),
            expires_at: Some(now().plus_seconds(-1)),
        };
        let claim_expires = now().plus_seconds(3_600);
        let counter = CounterWrite {
            counter: Counter::CodesIssued,
            key: keys::codes_issued_key("h"),
            seen: None,
            event: Some(now()),
            first_added_at: None,
        };
        let plan = add_email("t", &record, claim_expires, 10, Some(&held), vec![counter], now()).unwrap();
        assert_eq!(plan.items.len(), 6);
        assert_eq!(plan.roles[5], Role::Limit(Counter::CodesIssued));
        assert_eq!(plan.roles[0], Role::ProfileWithRoom { max_emails: 10 });
        let claim = put_of(&plan.items[2]);
        assert!(claim.condition_expression().unwrap().contains("#expiresAt <= :now"));
        // The claim is held until the claim's own expiry, not the code's.
        assert_eq!(s(claim.item(), "expiresAt"), &claim_expires.to_string());
        let del = plan.items[3].delete().unwrap();
        assert_eq!(s(del.key(), "PK"), "USER#user-b");
        assert_eq!(del.key()["SK"].as_s().unwrap(), &format!("EMAIL#{}", held.email_id));
        let dec = plan.items[4].update().unwrap();
        assert_eq!(dec.update_expression(), "SET #emailCount = #emailCount - :one");
        assert_eq!(s(dec.key(), "PK"), "USER#user-b");

        let record_put = put_of(&plan.items[1]);
        assert!(record_put.item().contains_key("verificationCodeHash"));
        assert_eq!(record_put.item()["verificationAttempts"].as_n().unwrap(), "0");
    }

    #[test]
    fn set_primary_flips_both_records_and_bumps_the_profile() {
        let profile = ProfileItem::new(&new_user(), 2, now());
        let old = EmailId::new();
        let mut next = EmailItem::verified_primary(&user(), &EmailAddress::parse("b@example.com").unwrap(), now());
        next.is_primary = false;
        let plan = set_primary("t", &profile, old, &next, now()).unwrap();
        let p = plan.items[0].update().unwrap();
        assert!(p.update_expression().contains("#version = #version + :one"));
        assert_eq!(
            p.condition_expression(),
            Some("#status = :active AND #version = :version")
        );
        assert_eq!(
            plan.items[1].update().unwrap().condition_expression(),
            Some("#isPrimary = :true")
        );
        assert!(
            plan.items[2]
                .update()
                .unwrap()
                .condition_expression()
                .unwrap()
                .contains("#isVerified = :true")
        );
    }

    #[test]
    fn delete_user_releases_every_record_and_claim() {
        let profile = ProfileItem::new(&new_user(), 2, now());
        let a = EmailItem::verified_primary(&user(), &address(), now());
        let b = EmailItem::unverified(
            &user(),
            EmailId::new(),
            &EmailAddress::parse("b@example.com").unwrap(),
            "h".into(),
            now(),
            now(),
        );
        let plan = delete_user("t", &profile, &[a, b], now()).unwrap();
        assert_eq!(plan.items.len(), 5);
        let claims: Vec<&str> = plan
            .items
            .iter()
            .filter_map(|i| i.delete())
            .map(|d| d.key()["PK"].as_s().unwrap().as_str())
            .filter(|pk| pk.starts_with("EMAIL#"))
            .collect();
        assert_eq!(claims, vec!["EMAIL#ada@example.com", "EMAIL#b@example.com"]);
    }
}
