//! The DynamoDB store: every access pattern of the service. Writes are single
//! requests or transactions whose conditions carry every invariant; a read before
//! a write only supplies keys and values, never the check itself.
//!
//! `reads` holds the reads; `ops` one module per write, each with its plan and
//! the reading of its failures; `plan` the transaction plan they build; this
//! module the network calls they share.

pub mod changes;
mod error;
mod expr;
pub mod keys;
mod ops;
mod plan;
mod reads;
pub mod schema;
mod sdk;
pub mod session;
mod user_list;

// The stored items and the retry bounds are the store's own: public for the
// invariant checker and the fault tests alone, which the layering test holds
// (only `store/` may name them in the crate). Not behind a feature: the
// functions build with the workspace's features (tools/workspace-hack).
#[doc(hidden)]
pub mod items;
#[doc(hidden)]
pub mod limits;
#[doc(hidden)]
pub mod retry;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

use crate::address_policy::AddressPolicy;
use crate::config::{ClientTimeouts, StoreConfig};
use crate::domain::{EmailId, IfMatch, Profile, UserId};
use crate::verification_key::VerificationKey;
use keys::Item;

pub use error::{DynamoError, StoreError};
use expr::{Expr, Update};
use items::{EmailItem, ProfileItem, UserItems};
pub use ops::{
    Adopted, BATCH_GET_KEYS, ChunkAt, DirectoryAccount, Filed, HeldAccount, Hold, InvitationPage, Invited,
    MAX_TOKENS_PER_CHANGE, MAX_WRONG_PASSWORDS, MadeScimToken, MemberPage, Moved, MyOrganization, PasswordSlot,
    PendingUser, Purged, RECOVERY_GUESSES_PER_SOURCE, RecordPage, Recovered, ScanPage, ScannedProfile, ScannedRecord,
    ScimClient, ScimMember, ScimPage, SignInSettled, SignInView, Slot, StatusSet, Suggestion, UnlistedPage,
    UnlistedProfile, password_admitted,
};
use plan::{Rejection, TxPlan};
use retry::{retrying, send_by_deadline};
pub use sdk::{lambda_sdk_config, sdk_config};
pub use user_list::UserPage;

/// Who deletes a user, which decides the write's conditions.
#[derive(Debug, Clone, Copy)]
pub enum Deleter<'a> {
    /// The user closing their own account: the profile must be active and
    /// match the precondition (If-Match).
    Owner(&'a IfMatch),
    /// An admin: the admin's own profile must be active, in the same write.
    Admin(&'a UserId),
    /// The service itself, with no acting admin.
    System,
    /// The reconcile, erasing a user Cognito no longer has: the tombstone says
    /// so, and the stream consumer makes no Cognito call for it.
    GoneFromCognito,
    /// An organization's directory, erasing an account it made and alone
    /// uses: that one membership ends in the erasure's own write, at the
    /// version read and under the directory's power (its token live), and the
    /// write holds the account alone (in no other organization, every
    /// verified address at the organization's verified `domains`).
    Directory {
        /// The directory.
        client: ScimClient,
        /// The organization's half of the membership, as read.
        member: &'a items::MemberItem,
        /// The organization's verified domains.
        domains: &'a crate::scim::provision::Domains,
    },
}

/// Whether a confirmed sign-up created the user or found it created already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// This delivery wrote the profile, record and claim: counted as a sign-up.
    New,
    /// The profile existed already (a repeated delivery, or the other trigger was first): nothing changed.
    Existing,
}

/// The service's only access to its DynamoDB table: every read and write of users, addresses and counters.
#[derive(Debug, Clone)]
pub struct Store {
    client: Client,
    config: StoreConfig,
    /// Only the functions that hash codes or addresses load it.
    key: Option<VerificationKey>,
    /// Which spellings are one address, and which new ones are refused.
    policy: AddressPolicy,
}

/// The DynamoDB client, for tools that need nothing else.
pub async fn dynamodb_client(timeouts: ClientTimeouts) -> Client {
    Client::new(&sdk_config(timeouts).await)
}

impl Store {
    /// A store without the verification key, for functions that never hash codes or addresses.
    pub fn new(client: Client, config: StoreConfig) -> Self {
        Self {
            client,
            config,
            key: None,
            policy: AddressPolicy::default(),
        }
    }

    /// The deployment's address policy, in place of the default (every
    /// normalised address its own, none refused).
    pub fn with_policy(self, policy: AddressPolicy) -> Self {
        Self { policy, ..self }
    }

    /// The address policy in force.
    pub fn policy(&self) -> &AddressPolicy {
        &self.policy
    }

    /// Adds the key the functions that hash codes or addresses need.
    pub fn with_key(self, key: VerificationKey) -> Self {
        Self { key: Some(key), ..self }
    }

    fn key(&self) -> Result<&VerificationKey, StoreError> {
        self.key.as_ref().ok_or(StoreError::NoVerificationKey)
    }

    /// The table name and limits in force, for logs and for responses that state a limit.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The raw DynamoDB client, for test tools that scan the table to check invariants.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn table(&self) -> &str {
        &self.config.table_name
    }

    /// Opens the connection to DynamoDB (TCP, TLS, credentials, endpoint) with
    /// one read the function is granted, of a key nothing is stored under, so
    /// that its first invocation does not pay for it: for environments whose
    /// init is off the request path. The answer is not used: a failure here
    /// only means the first request connects.
    pub async fn open_connection(&self, granted: &[&str]) {
        let result = if granted.contains(&"GetItem") {
            let request = self
                .client
                .get_item()
                .table_name(self.table())
                .set_key(Some(keys::connection_key()));
            request
                .send()
                .await
                .map(|_| ())
                .map_err(|e| crate::error::aws_failure(&e))
        } else if granted.contains(&"Query") {
            let request = self.query(|x| x.eq(keys::PK, keys::connection_pk())).limit(1);
            request
                .send()
                .await
                .map(|_| ())
                .map_err(|e| crate::error::aws_failure(&e))
        } else {
            return;
        };
        if let Err(code) = result {
            tracing::warn!(code, "no connection opened at init");
        }
    }

    // ---- plumbing ----

    async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let request = self
            .client
            .get_item()
            .table_name(self.table())
            .set_key(Some(key))
            .consistent_read(true);
        Ok(send_by_deadline!(&self.client, request)?.item)
    }

    async fn email_record(&self, user: &UserId, email_id: EmailId) -> Result<EmailItem, StoreError> {
        let item = self.get(keys::email_key(user, email_id)).await?;
        item.map(items::from_item).transpose()?.ok_or(StoreError::NotFound)
    }

    async fn user_items(&self, user: &UserId) -> Result<UserItems, StoreError> {
        let query = self
            .query(|x| x.eq(keys::PK, keys::user_pk(user)))
            .consistent_read(true);
        UserItems::from_items(query_all(&self.client, query).await?)
    }

    /// A Query of the table under the key condition `key_condition` writes.
    fn query(&self, key_condition: impl FnOnce(&mut Expr) -> String) -> QueryFluentBuilder {
        let mut x = Expr::default();
        let key_condition = key_condition(&mut x);
        self.client
            .query()
            .table_name(self.table())
            .key_condition_expression(key_condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
    }

    /// Segment `segment` of `segments` of a parallel Scan under `filter`, from
    /// `after`, evaluating at most `limit` items; names and values from `x`
    /// (so a projection's names are registered before this is called).
    fn scan_segment(
        &self,
        x: &Expr,
        filter: String,
        (segment, segments): (u32, u32),
        limit: i32,
        after: Option<Item>,
    ) -> ScanFluentBuilder {
        self.client
            .scan()
            .table_name(self.table())
            .segment(i32::try_from(segment).unwrap_or(0))
            .total_segments(i32::try_from(segments).unwrap_or(1))
            .limit(limit)
            .filter_expression(filter)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .set_exclusive_start_key(after)
    }

    /// Sends a plan; a failure comes back read through the plan's own readings.
    async fn transact(&self, plan: &TxPlan) -> Result<(), Rejection> {
        // Without a token of ours the SDK fills one in and reuses it on its own
        // retries, so a commit whose response was lost is not applied twice.
        let request = self
            .client
            .transact_write_items()
            .set_transact_items(Some(plan.items().to_vec()))
            .set_client_request_token(plan.client_request_token.clone());
        let outcome = send_by_deadline!(&self.client, request)
            .map(|_| ())
            .map_err(|err| plan.read_failure(err));
        // Item counts and the outcome's kind only: items and rejections hold addresses.
        tracing::debug!(
            items = plan.items().len(),
            committed = outcome.is_ok(),
            "transaction sent"
        );
        outcome
    }

    /// An UpdateItem of `key` under its condition (`write` gives both):
    /// whether the condition held and the item was written.
    pub(in crate::store) async fn update_if(
        &self,
        key: Item,
        write: impl FnOnce(&mut Expr) -> (Update, String),
    ) -> Result<bool, StoreError> {
        let mut x = Expr::default();
        let (update, condition) = write(&mut x);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(key))
            .update_expression(update.text())
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        match send_by_deadline!(&self.client, request) {
            Ok(_) => Ok(true),
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(UpdateItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(false)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// An UpdateItem of a profile, `write` giving the update and its condition:
    /// the profile as it is after, or, when the condition failed, what `read`
    /// makes of the profile as it was (ALL_OLD, so no second read is needed).
    async fn update_profile_item(
        &self,
        user: &UserId,
        write: impl FnOnce(&mut Expr) -> (Update, String),
        read: impl FnOnce(Option<&Item>) -> Result<Profile, StoreError>,
    ) -> Result<Profile, StoreError> {
        let mut x = Expr::default();
        let (update, condition) = write(&mut x);
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::profile_key(user)))
            .update_expression(update.text())
            .condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let outcome: Result<Result<Profile, Option<Item>>, StoreError> = retrying!({
            match send_by_deadline!(&self.client, request.clone()) {
                Ok(out) => Ok(Ok(updated_profile(out.attributes)?)),
                Err(err) => match err.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => Ok(Err(failed.item().cloned())),
                    // A transaction held the profile (the SDK does not retry
                    // this): it settles in milliseconds, so try again, bounded.
                    Some(UpdateItemError::TransactionConflictException(_)) => Err(Rejection::Retry),
                    _ => Err(Rejection::Failed(err.into())),
                },
            }
        });
        outcome?.or_else(|old| read(old.as_ref()).map_err(plan::refused))
    }
}

/// Every item the query matches, page after page. Not the SDK's paginator:
/// it cannot carry the per-call timeout that keeps each page inside the
/// invocation's deadline.
async fn query_all(client: &Client, query: QueryFluentBuilder) -> Result<Vec<Item>, StoreError> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = query.clone().set_exclusive_start_key(start);
        let out = send_by_deadline!(client, page)?;
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key.filter(|k| !k.is_empty()) {
            Some(key) => start = Some(key),
            None => return Ok(items),
        }
    }
}

fn updated_profile(attributes: Option<Item>) -> Result<Profile, StoreError> {
    let item = attributes.ok_or(StoreError::Inconsistent("update returned no item"))?;
    Ok(items::from_item::<ProfileItem>(item)?.into_domain())
}
