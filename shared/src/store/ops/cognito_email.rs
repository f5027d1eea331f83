//! What Cognito signs a user in with, as confirmed by whoever set it there: the
//! stream consumer after a switch of the primary, or the reconcile's repair of
//! a switch that never reached Cognito. Removing an address waits for it.

use crate::domain::{EmailAddress, UserId, UserStatus};
use crate::store::expr::{Update, and};
use crate::store::items::attr;
use crate::store::keys;
use crate::store::{Store, StoreError};

impl Store {
    /// Records that Cognito now signs `user` in with `email`. Not a change of the
    /// profile the user sees: its version stays. A deleted or missing profile is
    /// `NotFound` and nothing is written: no address goes back into an erased one.
    pub async fn confirm_cognito_email(&self, user: &UserId, email: &EmailAddress) -> Result<(), StoreError> {
        self.update_profile_item(
            user,
            |x| {
                let update = Update::default().set(x.eq(attr::COGNITO_EMAIL, email));
                let condition = and([x.exists(keys::PK), x.ne(attr::STATUS, UserStatus::Deleted)]);
                (update, condition)
            },
            |_| Err(StoreError::NotFound),
        )
        .await
        .map(|_| ())
    }
}
