//! What Cognito signs a user in with, and the table's record of it. The stream
//! consumer is Cognito's one writer of a user's email (but for a recovery it
//! left held, which the reconcile finishes: `holds`): it records the address
//! once Cognito holds it, and removing an address waits for that. The
//! reconcile's pass compares what Cognito lists with the table: a right address
//! not yet recorded is recorded; a wrong one is recorded as what Cognito holds,
//! and the consumer is asked, in the stream's order, to apply the primary again.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use serde::Deserialize;

use crate::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use crate::store::expr::{Expr, Update, and};
use crate::store::items::{self, attr};
use crate::store::keys::{self, Item};
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError};

/// DynamoDB's most keys in one BatchGetItem.
pub const BATCH_GET_KEYS: usize = 100;

/// A live profile as the pass compares it with Cognito.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInView {
    /// Whose profile.
    pub user_id: UserId,
    /// The primary address.
    pub primary: EmailAddress,
    /// The address Cognito holds, as last recorded (absent on older profiles).
    pub recorded: Option<EmailAddress>,
}

/// What the pass did with one user's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInSettled {
    /// Cognito holds the primary and the table says so: nothing written.
    InLine,
    /// Cognito holds the primary; the table now says so.
    Recorded,
    /// Cognito holds another address: recorded as it is, and the consumer asked
    /// to apply the primary again.
    Resync,
    /// The profile changed since it was read: the next pass decides again.
    Moved,
}

impl Store {
    /// Records that Cognito now signs `user` in with `email` (the stream
    /// consumer, once it has set it there). Not a change the user sees: the
    /// version stays. A deleted or missing profile is `NotFound` and nothing is
    /// written: no address goes back into an erased profile.
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

    /// Lets `user` sign in again after the recovery at `recovered_at` (its
    /// `tokensValidAfter`): the stream consumer, once Cognito is settled. A
    /// later recovery's hold stays (the condition names this one), and a
    /// deleted or missing profile needs nothing. Not a change the user sees.
    /// Then the hold's item goes: this recovery holds nothing any more.
    pub async fn release_sign_in(&self, user: &UserId, recovered_at: i64) -> Result<(), StoreError> {
        let released = self
            .update_profile_item(
                user,
                |x| {
                    let update = Update::default().remove(x.name(attr::SIGN_IN_HELD));
                    let condition = and([
                        x.exists(keys::PK),
                        x.eq(attr::TOKENS_VALID_AFTER, recovered_at),
                        x.ne(attr::STATUS, UserStatus::Deleted),
                    ]);
                    (update, condition)
                },
                |_| Err(StoreError::NotFound),
            )
            .await;
        match released {
            Ok(_) | Err(StoreError::NotFound) => {
                let hold = super::holds::Hold {
                    user: user.clone(),
                    recovered_at,
                };
                self.forget_hold(&hold).await
            }
            Err(err) => Err(err),
        }
    }

    /// The active profiles of `users` (at most [`BATCH_GET_KEYS`]), as the pass
    /// compares them with Cognito; the others (deleted, suspended, gone) are left
    /// out. Keys DynamoDB leaves unprocessed are asked again, a few times.
    pub async fn sign_in_views(&self, users: &[UserId]) -> Result<Vec<SignInView>, StoreError> {
        let mut x = Expr::default();
        let projection = [attr::USER_ID, attr::STATUS, attr::EMAIL, attr::COGNITO_EMAIL]
            .map(|name| x.name(name))
            .join(", ");
        let mut wanted: Vec<Item> = users.iter().map(keys::profile_key).collect();
        let mut found = Vec::new();
        for attempt in 0..5u32 {
            if wanted.is_empty() {
                break;
            }
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(20 << attempt)).await;
            }
            let batch = KeysAndAttributes::builder()
                .set_keys(Some(std::mem::take(&mut wanted)))
                .projection_expression(projection.clone())
                .set_expression_attribute_names(x.names_or_none())
                .build()?;
            let request = self.client.batch_get_item().request_items(self.table(), batch);
            let out = send_by_deadline!(&self.client, request)?;
            let mut responses = out.responses.unwrap_or_default();
            found.extend(responses.remove(self.table()).unwrap_or_default());
            wanted = out
                .unprocessed_keys
                .and_then(|mut left| left.remove(self.table()))
                .map(|left| left.keys)
                .unwrap_or_default();
        }
        if !wanted.is_empty() {
            return Err(StoreError::Inconsistent("BatchGetItem left keys unprocessed"));
        }
        Ok(found.into_iter().filter_map(sign_in_view).collect())
    }

    /// Settles one user's address with what Cognito lists for them (`holds`),
    /// on condition that the profile is still as `seen`.
    pub async fn settle_sign_in(
        &self,
        seen: &SignInView,
        holds: &EmailAddress,
        now: Timestamp,
    ) -> Result<SignInSettled, StoreError> {
        let in_line = *holds == seen.primary;
        if in_line && seen.recorded.as_ref() == Some(holds) {
            return Ok(SignInSettled::InLine);
        }
        let written = self
            .update_profile_item(
                &seen.user_id,
                |x| {
                    let mut update = Update::default().set(x.eq(attr::COGNITO_EMAIL, holds));
                    if !in_line {
                        update = update.set(x.eq(attr::SYNC_REQUESTED_AT, now));
                    }
                    let recorded = match &seen.recorded {
                        Some(recorded) => x.eq(attr::COGNITO_EMAIL, recorded),
                        None => x.not_exists(attr::COGNITO_EMAIL),
                    };
                    let condition = and([
                        x.exists(keys::PK),
                        x.eq(attr::STATUS, UserStatus::Active),
                        x.eq(attr::EMAIL, &seen.primary),
                        recorded,
                    ]);
                    (update, condition)
                },
                |_| Err(StoreError::NotFound),
            )
            .await;
        match written {
            Ok(_) if in_line => Ok(SignInSettled::Recorded),
            Ok(_) => Ok(SignInSettled::Resync),
            Err(StoreError::NotFound) => Ok(SignInSettled::Moved),
            Err(err) => Err(err),
        }
    }
}

/// The attributes `sign_in_views` projects.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Projected {
    user_id: UserId,
    status: UserStatus,
    #[serde(default)]
    email: Option<EmailAddress>,
    #[serde(default)]
    cognito_email: Option<EmailAddress>,
}

fn sign_in_view(item: HashMap<String, AttributeValue>) -> Option<SignInView> {
    let profile: Projected = items::from_item(item).ok()?;
    if profile.status != UserStatus::Active {
        return None;
    }
    Some(SignInView {
        user_id: profile.user_id,
        primary: profile.email?,
        recorded: profile.cognito_email,
    })
}
