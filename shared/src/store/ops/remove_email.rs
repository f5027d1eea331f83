//! Removing a non-primary address: the profile counts one fewer, the record
//! goes and its claim is released, in one transaction. Not while Cognito still
//! signs the user in with it (a switch of the primary not yet applied there):
//! Cognito's password reset would go on mailing it, so whoever kept that mailbox
//! could take the account over. A former primary whose switch can still be
//! undone keeps its claim, reserved to the account, until the window ends.

use crate::domain::{EmailId, Timestamp, UserId};
use crate::metrics::{self, Metric};
use crate::store::expr::{Update, and, or};
use crate::store::items::{EmailItem, ProfileItem, attr};
use crate::store::keys::{self, Item};
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Store, StoreError};

use super::claim::{push_own_claim_delete, push_own_claim_reserve};
use super::profile::{active, refusal};
use super::set_primary::Under;

impl Store {
    /// Removes a non-primary address and frees it for others.
    pub async fn remove_email(&self, user: &UserId, email_id: EmailId, now: Timestamp) -> Result<(), StoreError> {
        self.remove_email_under(user, email_id, None, now).await
    }

    /// [`Store::remove_email`], under a power's checks (`under`), pushed into its transaction.
    pub(in crate::store) async fn remove_email_under(
        &self,
        user: &UserId,
        email_id: EmailId,
        under: Option<&Under<'_>>,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_primary {
                return Err(StoreError::PrimaryEmail.into());
            }
            let mut plan = plan(self.table(), &record, now)?;
            if let Some(under) = under {
                (under.push)(&mut plan)?;
            }
            self.transact(&plan).await?;
            metrics::count(Metric::EmailsRemoved);
            Ok(())
        })
    }
}

/// A failed count on the profile: its state, or Cognito still holds the
/// address; else it moved under the request.
fn read_profile(record: EmailItem) -> impl Fn(Option<&Item>) -> Result<Rejection, StoreError> + Send + Sync {
    move |old| {
        let profile = plan::old::<ProfileItem>(old)?;
        if let Some(err) = refusal(profile.as_ref()) {
            return Ok(Rejection::Failed(err));
        }
        Ok(match profile.and_then(|p| p.cognito_email) {
            Some(held) if held == record.email => Rejection::Failed(StoreError::SignInAddressPending),
            _ => Rejection::Retry,
        })
    }
}

/// A failed removal: the record is gone or became primary; else it changed.
fn read_record(old: Option<&Item>) -> Result<Rejection, StoreError> {
    Ok(match plan::old::<EmailItem>(old)? {
        None => Rejection::Failed(StoreError::NotFound),
        Some(record) if record.is_primary => Rejection::Failed(StoreError::PrimaryEmail),
        Some(_) => Rejection::Retry,
    })
}

fn plan(table: &str, record: &EmailItem, now: Timestamp) -> Result<TxPlan, StoreError> {
    let mut plan = TxPlan::new();
    let user = &record.user_id;
    let count = plan::update(table, keys::profile_key(user), |x| {
        let not_cognitos = or(
            x.not_exists(attr::COGNITO_EMAIL),
            x.ne(attr::COGNITO_EMAIL, &record.email),
        );
        (
            Update::default().set(x.add(attr::EMAIL_COUNT, -1)),
            and([active(x), not_cognitos]),
        )
    })?;
    plan.push(count, read_profile(record.clone()));
    let delete = plan::delete(table, keys::email_key(user, record.email_id), |x| {
        and([x.exists(keys::PK), x.ne(attr::IS_PRIMARY, true)])
    })?;
    plan.push(delete, read_record);
    match record.reserved_until.filter(|until| *until > now) {
        Some(until) => push_own_claim_reserve(&mut plan, table, record, until)?,
        None => push_own_claim_delete(&mut plan, table, record)?,
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailAddress, UserStatus};
    use crate::store::items;
    use crate::store::ops::fixtures::{failed, now, profile, user};
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn removal_counts_down_deletes_and_releases() {
        let address = EmailAddress::parse("b@example.com").unwrap();
        let record = EmailItem::unverified(
            &user(),
            EmailId::new(),
            &address,
            crate::address_policy::Canonicalization::NONE,
            "h".into(),
            now(),
            now(),
        );
        let plan = plan("t", &record, now()).unwrap();
        assert_well_formed(&plan);
        assert_eq!(
            plan.items()[2].delete().unwrap().key(),
            &keys::claim_key(&crate::address_policy::Canonicalization::NONE.canonical(&address))
        );
        let suspended = profile(UserStatus::Suspended, 2, 2);
        assert!(matches!(
            failed(plan.read(0, Some(&suspended))),
            StoreError::AccountInactive
        ));
        assert!(matches!(failed(plan.read(1, None)), StoreError::NotFound));
        let mut primary = record.clone();
        primary.is_primary = true;
        let item = items::email_item(&primary).unwrap();
        assert!(matches!(failed(plan.read(1, Some(&item))), StoreError::PrimaryEmail));
        assert!(matches!(plan.read(2, None), Rejection::Retry));
        // Cognito still signs the user in with it: refused until the switch lands.
        let mut holder = profile(UserStatus::Active, 2, 2);
        holder.insert(
            attr::COGNITO_EMAIL.to_owned(),
            aws_sdk_dynamodb::types::AttributeValue::S(address.as_str().to_owned()),
        );
        assert!(matches!(
            failed(plan.read(0, Some(&holder))),
            StoreError::SignInAddressPending
        ));
        assert!(
            plan.items()[0]
                .update()
                .unwrap()
                .condition_expression()
                .unwrap()
                .contains("attribute_not_exists(#cognitoEmail) OR #cognitoEmail <> :cognitoEmail")
        );
    }
}
