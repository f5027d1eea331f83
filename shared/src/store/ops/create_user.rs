//! A new user's write: profile, verified primary record and claim, and, for
//! an imported user, more records each with its claim, in one transaction,
//! idempotent across deliveries of the same sign-up and runs of the same import.

use crate::domain::{ImportKey, NewAccount, NewUser, Timestamp, UserId, UserStatus};
use crate::metrics::{self, Metric};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{self, ClaimItem, EmailItem, LegacyPasswordItem, ProfileItem, attr};
use crate::store::keys;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::{refused_or_raced, retrying, send_by_deadline};
use crate::store::{Created, Store, StoreError};

use super::claim::{NewClaim, push_new_claim};
use super::profile::read_changed;

/// Items one TransactWriteItems takes at most.
const MAX_TRANSACTION_ITEMS: usize = 100;

impl Store {
    /// Creates a confirmed user with a verified primary address. Idempotent: a
    /// repeated delivery for a user that exists succeeds and changes nothing.
    pub async fn create_user(&self, user: &NewUser, now: Timestamp) -> Result<Created, StoreError> {
        self.create_account(&NewAccount::signed_up(user.clone(), now), now)
            .await
    }

    /// Creates a user whole (the bulk import's): the profile with the
    /// account's status and creation time, the verified primary, and every
    /// other address, a verified one claimed for good, an unverified one until
    /// `VERIFICATION_TTL_SECONDS` from `now` (no code is sent). Idempotent as
    /// [`Store::create_user`]: a user that exists is `Existing`, unchanged.
    /// An address another user holds is `EmailTaken`, and nothing is written.
    pub async fn create_account(&self, account: &NewAccount, now: Timestamp) -> Result<Created, StoreError> {
        self.create_with(account, None, now).await
    }

    /// Records the import key of an account imported before keys were kept,
    /// when a re-run finds it: from then on its erasure is remembered. A
    /// deleted profile is left as it is (its erasure kept nothing). No new
    /// version: nothing a client sees changed (a delete that read the profile
    /// before conditions on the key's absence, and reads it again).
    pub async fn record_import_key(&self, user: &UserId, import_key: &ImportKey) -> Result<(), StoreError> {
        let mut x = Expr::default();
        let name = x.name(attr::IMPORT_KEY);
        let value = x.value(attr::IMPORT_KEY, import_key.as_str());
        let update = Update::default().set(format!("{name} = if_not_exists({name}, {value})"));
        let condition = and([x.exists(keys::PK), x.ne(attr::STATUS, UserStatus::Deleted)]);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::profile_key(user)))
            .update_expression(update.text())
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        match send_by_deadline!(&self.client, request) {
            Ok(_) => Ok(()),
            Err(err) if refused_or_raced(&err) => Ok(()),
            Err(err) => Err(err.into()),
        }
    }

    /// The write of [`Store::create_account`], with a pending user's legacy
    /// password hash when given (its own item, in the same transaction).
    pub(super) async fn create_with(
        &self,
        account: &NewAccount,
        legacy: Option<&LegacyPasswordItem>,
        now: Timestamp,
    ) -> Result<Created, StoreError> {
        self.create_joining(account, legacy, None, now).await
    }

    /// [`Store::create_with`], the account joining organizations in the same
    /// transaction when `joining` says so (a directory's new member).
    pub(in crate::store) async fn create_joining(
        &self,
        account: &NewAccount,
        legacy: Option<&LegacyPasswordItem>,
        joining: Option<&Joining<'_>>,
        now: Timestamp,
    ) -> Result<Created, StoreError> {
        let user = &account.user;
        let count = 1 + account.more.len();
        if count > self.config.max_emails_per_user as usize {
            return Err(StoreError::LimitReached);
        }
        let mut profile = ProfileItem::new(user, u32::try_from(count).unwrap_or(u32::MAX), now);
        profile.status = account.status;
        profile.created_at = account.created_at;
        profile.import_key.clone_from(&account.import_key);
        if let Some(joining) = joining {
            profile.organizations = joining.organizations;
        }
        let canonicalization = self.policy.canonicalization;
        let mut records = vec![EmailItem::verified_primary(
            &user.user_id,
            &user.email,
            canonicalization,
            account.created_at,
        )];
        for more in &account.more {
            records.push(EmailItem::imported(
                &user.user_id,
                &more.email,
                canonicalization,
                more.verified,
                unknown_code_hash()?,
                account.created_at,
            ));
        }
        let previous_forms: Vec<_> = records.iter().map(|r| self.policy.previous_form(&r.email)).collect();
        let claim_expiry = now.plus_seconds(self.config.verification_ttl_seconds);
        let mut held: Vec<Option<ClaimItem>> = vec![None; records.len()];
        let mut with_token = true;
        retrying!({
            let claims = records
                .iter()
                .zip(&held)
                .zip(&previous_forms)
                .map(|((record, held), previous)| {
                    NewClaim {
                        // Verified (the sign-up's address, or the operator's word):
                        // held for good, and any unverified claim yields to it.
                        expires_at: (!record.is_verified).then_some(claim_expiry),
                        live_claims_yield: record.is_verified,
                        held: held.as_ref(),
                        previous_form: previous.as_ref(),
                    }
                });
            let mut plan = plan(self.table(), &profile, records.iter().zip(claims), legacy, now)?;
            if let Some(joining) = joining {
                (joining.push)(&mut plan)?;
            }
            if !with_token {
                plan.client_request_token = None;
            }
            let mut result = self.transact(&plan).await;
            if matches!(result, Err(Rejection::TokenInUse)) {
                // An earlier delivery used the token with other timestamps, or is in
                // flight: go on without it, the conditions keep the write idempotent.
                with_token = false;
                plan.client_request_token = None;
                result = self.transact(&plan).await;
            }
            match result {
                Ok(()) => {
                    if held.iter().any(Option::is_some) {
                        metrics::count(Metric::TakeOvers);
                    }
                    Ok(Created::New)
                }
                Err(Rejection::UserExists) => Ok(Created::Existing),
                // A claim that may be taken over is remembered for the next
                // attempt, by the address it holds.
                Err(Rejection::TakeOver(claim)) => match self.held_at(&records, &claim).await? {
                    Some(at) => {
                        held[at] = Some(claim);
                        Err(Rejection::Again)
                    }
                    None => {
                        held.fill(None);
                        Err(Rejection::Retry)
                    }
                },
                // Any other retry forgets them: the next attempt reads afresh.
                Err(retry @ (Rejection::Retry | Rejection::Again)) => {
                    held.fill(None);
                    Err(retry)
                }
                Err(other) => Err(other),
            }
        })
    }

    /// Which of `records` the claim `claim` holds: the one record of a sign-up;
    /// for more, the one whose claim names the same holder now.
    async fn held_at(&self, records: &[EmailItem], claim: &ClaimItem) -> Result<Option<usize>, StoreError> {
        if records.len() == 1 {
            return Ok(Some(0));
        }
        for (at, record) in records.iter().enumerate() {
            if self.claim_on(&record.canonical()).await?.as_ref() == Some(claim) {
                return Ok(Some(at));
            }
        }
        Ok(None)
    }
}

/// What a new account joins in its own transaction: the count its profile
/// starts at, and the items of the memberships.
pub(in crate::store) struct Joining<'a> {
    /// How many organizations the profile counts from the start.
    pub organizations: u32,
    /// Adds the memberships' items to the account's transaction.
    pub push: &'a (dyn Fn(&mut TxPlan) -> Result<(), StoreError> + Send + Sync),
}

/// The hash an unverified imported record holds: of no code anyone was sent
/// (random, as unguessable as a keyed hash), so only a code its owner asks
/// for verifies it.
fn unknown_code_hash() -> Result<String, StoreError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| StoreError::Inconsistent("no randomness for a record"))?;
    Ok(hex::encode(bytes))
}

/// The profile, then each record and its claim, the first the primary, then
/// a pending user's legacy password.
fn plan<'a>(
    table: &str,
    profile: &ProfileItem,
    records: impl IntoIterator<Item = (&'a EmailItem, NewClaim<'a>)>,
    legacy: Option<&LegacyPasswordItem>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let new_profile = plan::put(table, items::profile_item(profile)?, |x| x.not_exists(keys::PK))?;
    plan.push(new_profile, |_| Ok(Rejection::UserExists));
    if let Some(import_key) = &profile.import_key {
        // Erased since the line was first imported: never created again.
        let never_erased = plan::check(table, keys::erased_import_key(import_key), |x| x.not_exists(keys::PK))?;
        plan.push(never_erased, |_| Ok(Rejection::Failed(StoreError::ErasedBefore)));
    }
    for (record, claim) in records {
        let new_record = plan::put(table, items::email_item(record)?, |x| x.not_exists(keys::PK))?;
        plan.push(new_record, read_changed);
        push_new_claim(&mut plan, table, record, claim, now)?;
    }
    if let Some(legacy) = legacy {
        let item = items::to_item(keys::legacy_password_key(&legacy.user_id), legacy)?;
        // Written with its profile, whose condition failing says the user exists.
        plan.push(plan::put(table, item, |x| x.not_exists(keys::PK))?, read_changed);
    }
    if plan.items().len() > MAX_TRANSACTION_ITEMS {
        // Take-overs and a moving policy add items: more than one transaction holds.
        return Err(StoreError::LimitReached);
    }
    plan.client_request_token = Some(token(table, &profile.user_id));
    Ok(plan)
}

/// Derived from the table and the user id, so every delivery of one sign-up shares
/// it. DynamoDB keeps tokens per account and region for ten minutes: the table
/// keeps a sign-up of the same user into another table (a test's, a second
/// stack's) from ever meeting this one's token.
fn token(table: &str, user: &UserId) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("create-user\0{table}\0{user}").as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address_policy::CanonicalEmail;
    use crate::domain::UserStatus;
    use crate::store::items::EntityType;
    use crate::store::keys::Item;
    use crate::store::ops::fixtures::{address, failed, new_user, now, user};
    use crate::store::plan::tests::assert_well_formed;
    use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

    fn put_of(item: &TransactWriteItem) -> &Put {
        item.put().expect("a Put")
    }

    fn s<'a>(item: &'a Item, k: &str) -> &'a str {
        item[k].as_s().unwrap()
    }

    fn sign_up(held: Option<&ClaimItem>) -> TxPlan {
        let profile = ProfileItem::new(&new_user(), 1, now());
        let record = EmailItem::verified_primary(
            &user(),
            &address(),
            crate::address_policy::Canonicalization::NONE,
            now(),
        );
        let claim = NewClaim {
            expires_at: None,
            live_claims_yield: true,
            held,
            previous_form: None,
        };
        plan("t", &profile, [(&record, claim)], None, now()).unwrap()
    }

    #[test]
    fn create_user_writes_profile_primary_and_claim() {
        let plan = sign_up(None);
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 3);
        assert_eq!(plan.client_request_token.as_deref(), Some(token("t", &user()).as_str()));

        let p = put_of(&plan.items()[0]);
        assert_eq!(p.condition_expression(), Some("attribute_not_exists(#PK)"));
        assert_eq!(p.item()[keys::PK], keys::profile_key(&user())[keys::PK]);
        assert_eq!(p.item()[keys::SK], keys::profile_key(&user())[keys::SK]);
        assert_eq!(s(p.item(), "entityType"), "User");
        assert_eq!(s(p.item(), "status"), "active");
        assert_eq!(p.item()["version"].as_n().unwrap(), "1");
        assert_eq!(p.item()["emailCount"].as_n().unwrap(), "1");
        assert!(!p.item().contains_key("phone"));

        let e = put_of(&plan.items()[1]);
        assert_eq!(
            s(e.item(), keys::GSI1PK),
            keys::email_gsi1pk(&crate::address_policy::Canonicalization::NONE.canonical(&address()))
        );
        assert_eq!(s(e.item(), "entityType"), "Email");
        assert_eq!(e.item()["isPrimary"].as_bool().unwrap(), &true);
        assert_eq!(e.item()["isVerified"].as_bool().unwrap(), &true);
        assert_eq!(s(e.item(), "verifiedAt"), "2026-11-21T10:00:00.000Z");

        let c = put_of(&plan.items()[2]);
        assert_eq!(
            c.item()[keys::PK],
            keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&address()))[keys::PK]
        );
        assert_eq!(
            c.item()[keys::SK],
            keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&address()))[keys::SK]
        );
        assert_eq!(s(c.item(), "entityType"), "EmailClaim");
        assert_eq!(s(c.item(), "userId"), "user-a");
        assert!(!c.item().contains_key("expiresAt"));
    }

    #[test]
    fn failures_read_as_exists_retry_or_the_claims_answer() {
        let plan = sign_up(None);
        let existing = crate::store::ops::fixtures::profile(UserStatus::Active, 1, 1);
        assert!(matches!(plan.read(0, Some(&existing)), Rejection::UserExists));
        assert!(matches!(plan.read(1, None), Rejection::Retry));
        let mine = items::claim_item(
            &crate::address_policy::Canonicalization::NONE.canonical(&address()),
            &EmailItem::verified_primary(
                &user(),
                &address(),
                crate::address_policy::Canonicalization::NONE,
                now(),
            )
            .claim(None),
        )
        .unwrap();
        assert!(matches!(failed(plan.read(2, Some(&mine))), StoreError::AlreadyAdded));
    }

    #[test]
    fn a_sign_up_takes_over_a_live_unverified_claim() {
        let held = ClaimItem {
            entity_type: EntityType::EmailClaim,
            user_id: UserId::parse("user-b").unwrap(),
            email_id: crate::domain::EmailId::new(),
            expires_at: Some(now().plus_seconds(60)),
            reserved_until: None,
            ttl: None,
        };
        let plan = sign_up(Some(&held));
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        // A live claim yields to a sign-up: no expiry in the condition.
        let claim = put_of(&plan.items()[2]);
        let condition = claim.condition_expression().unwrap();
        assert!(!condition.contains("#expiresAt <="), "{condition}");
        assert!(
            condition.contains("(attribute_not_exists(#reservedUntil) OR #reservedUntil <= :reservedUntil)"),
            "not while reserved to its holder: {condition}"
        );
    }

    fn imported(typed: &str, verified: bool) -> EmailItem {
        EmailItem::imported(
            &user(),
            &crate::domain::EmailAddress::parse(typed).unwrap(),
            crate::address_policy::Canonicalization::NONE,
            verified,
            "00".repeat(32),
            now(),
        )
    }

    fn claim_of(expires_at: Option<Timestamp>, previous_form: Option<&CanonicalEmail>) -> NewClaim<'_> {
        NewClaim {
            expires_at,
            live_claims_yield: expires_at.is_none(),
            held: None,
            previous_form,
        }
    }

    #[test]
    fn an_imported_user_writes_every_record_with_its_claim_in_one_transaction() {
        let mut profile = ProfileItem::new(&new_user(), 3, now());
        profile.status = UserStatus::Suspended;
        let primary = EmailItem::verified_primary(
            &user(),
            &address(),
            crate::address_policy::Canonicalization::NONE,
            now(),
        );
        let (work, old) = (
            imported("ada.work@example.com", true),
            imported("ada.old@example.com", false),
        );
        let expiry = now().plus_seconds(3_600);
        let records = [
            (&primary, claim_of(None, None)),
            (&work, claim_of(None, None)),
            (&old, claim_of(Some(expiry), None)),
        ];
        let plan = plan("t", &profile, records, None, now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 7);
        let p = put_of(&plan.items()[0]);
        assert_eq!(s(p.item(), "status"), "suspended");
        assert_eq!(p.item()["emailCount"].as_n().unwrap(), "3");

        let w = put_of(&plan.items()[3]);
        assert_eq!(w.item()["isPrimary"].as_bool().unwrap(), &false);
        assert_eq!(w.item()["isVerified"].as_bool().unwrap(), &true);
        assert!(!w.item().contains_key("verificationCodeHash"));
        assert!(!put_of(&plan.items()[4]).item().contains_key("expiresAt"));

        let o = put_of(&plan.items()[5]);
        assert_eq!(o.item()["isVerified"].as_bool().unwrap(), &false);
        assert!(o.item().contains_key("verificationCodeHash"));
        assert!(!o.item().contains_key("verifiedAt"));
        let c = put_of(&plan.items()[6]);
        assert_eq!(s(c.item(), "expiresAt"), expiry.to_string());
        assert_eq!(s(c.item(), "userId"), "user-a");

        // Another user's verified claim on any of the addresses: taken.
        let theirs = EmailItem::verified_primary(
            &UserId::parse("user-b").unwrap(),
            &old.email,
            crate::address_policy::Canonicalization::NONE,
            now(),
        );
        let theirs = items::claim_item(&old.canonical(), &theirs.claim(None)).unwrap();
        assert!(matches!(failed(plan.read(6, Some(&theirs))), StoreError::EmailTaken));
        assert!(matches!(plan.read(0, None), Rejection::UserExists));
    }

    #[test]
    fn a_write_beyond_one_transaction_is_refused() {
        let profile = ProfileItem::new(&new_user(), 49, now());
        let records: Vec<EmailItem> = (0..49).map(|i| imported(&format!("a{i}@example.com"), true)).collect();
        let forms: Vec<CanonicalEmail> = (0..49)
            .map(|i| {
                crate::address_policy::Canonicalization::NONE
                    .canonical(&crate::domain::EmailAddress::parse(&format!("a{i}.x@example.com")).unwrap())
            })
            .collect();
        let fits = plan(
            "t",
            &profile,
            records.iter().map(|r| (r, claim_of(None, None))),
            None,
            now(),
        )
        .unwrap();
        assert_eq!(fits.items().len(), 99);
        let moving = plan(
            "t",
            &profile,
            records.iter().zip(&forms).map(|(r, f)| (r, claim_of(None, Some(f)))),
            None,
            now(),
        );
        assert!(matches!(moving, Err(StoreError::LimitReached)));
    }

    #[test]
    fn token_is_derived_from_the_table_and_the_user_only() {
        let a = token("t", &user());
        assert_eq!(a, token("t", &user()));
        assert_ne!(a, token("t", &UserId::parse("user-b").unwrap()));
        assert_ne!(a, token("another-table", &user()));
        assert!(a.len() <= 36);
    }
}
