//! A confirmed sign-up: profile, verified primary record and claim, in one
//! transaction, idempotent across deliveries of the same sign-up.

use crate::domain::{NewUser, Timestamp, UserId};
use crate::store::items::{self, ClaimItem, EmailItem, ProfileItem};
use crate::store::keys;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Created, Store, StoreError};

use super::claim::{NewClaim, after_claim_write, push_new_claim};
use super::profile::read_changed;

impl Store {
    /// Creates a confirmed user with a verified primary address. Idempotent: a
    /// repeated delivery for a user that exists succeeds and changes nothing.
    pub async fn create_user(&self, user: &NewUser, now: Timestamp) -> Result<Created, StoreError> {
        let profile = ProfileItem::new(user, 1, now);
        let record = EmailItem::verified_primary(&user.user_id, &user.email, self.policy.canonicalization, now);
        let previous_form = self.policy.previous_form(&user.email);
        let mut held: Option<ClaimItem> = None;
        let mut with_token = true;
        retrying!({
            let claim = NewClaim {
                expires_at: None,
                live_claims_yield: true,
                held: held.as_ref(),
                previous_form: previous_form.as_ref(),
            };
            let mut plan = plan(self.table(), &profile, &record, claim, now)?;
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
            match after_claim_write(result, &mut held) {
                Ok(()) => Ok(Created::New),
                Err(Rejection::UserExists) => Ok(Created::Existing),
                Err(other) => Err(other),
            }
        })
    }
}

fn plan(
    table: &str,
    profile: &ProfileItem,
    record: &EmailItem,
    claim: NewClaim<'_>,
    now: Timestamp,
) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let new_profile = plan::put(table, items::profile_item(profile)?, |x| x.not_exists(keys::PK))?;
    plan.push(new_profile, |_| Ok(Rejection::UserExists));
    let new_record = plan::put(table, items::email_item(record)?, |x| x.not_exists(keys::PK))?;
    plan.push(new_record, read_changed);
    push_new_claim(&mut plan, table, record, claim, now)?;
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
        plan("t", &profile, &record, claim, now()).unwrap()
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
        };
        let plan = sign_up(Some(&held));
        assert_well_formed(&plan);
        assert_eq!(plan.items().len(), 5);
        // A live claim yields to a sign-up: no expiry in the condition.
        let claim = put_of(&plan.items()[2]);
        assert!(!claim.condition_expression().unwrap().contains("<="));
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
