//! The DynamoDB store: every access pattern of the service. Writes are single
//! requests or transactions whose conditions carry every invariant; a read before
//! a write only supplies keys and values, never the check itself.

pub mod cancel;
pub mod error;
pub mod expr;
pub mod items;
pub mod limits;
pub mod retry;
pub mod schema;
pub mod tx;

use aws_config::BehaviorVersion;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

use crate::config::{ClientTimeouts, StoreConfig};
use crate::domain::{
    Account, Email, EmailAddress, EmailId, NewUser, Profile, ProfilePatch, Timestamp, UserId, UserStatus,
};
use crate::keys::{self, Item};
use crate::verification::{VerificationCode, VerificationKey};

use cancel::Rejection;
pub use error::{DynamoError, StoreError};
use expr::Expr;
use items::{ClaimItem, EmailItem, IndexedEmail, ProfileItem, UserItems, attr};
use limits::Counter;
use tx::{CounterWrite, TxPlan};

/// Whether a confirmed sign-up created the user or found it created already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    New,
    Existing,
}

#[derive(Debug, Clone)]
pub struct Store {
    client: Client,
    config: StoreConfig,
    /// Only the functions that hash codes or addresses load it.
    key: Option<VerificationKey>,
}

/// The SDK configuration, once, from the standard AWS environment (`AWS_REGION`,
/// credentials, `AWS_ENDPOINT_URL_<SERVICE>` for emulators), with the timeouts.
pub async fn sdk_config(timeouts: ClientTimeouts) -> aws_config::SdkConfig {
    let timeout_config = TimeoutConfig::builder()
        .connect_timeout(timeouts.connect)
        .operation_attempt_timeout(timeouts.attempt)
        .operation_timeout(timeouts.operation)
        .build();
    aws_config::defaults(BehaviorVersion::latest())
        .timeout_config(timeout_config)
        .load()
        .await
}

/// The DynamoDB client, for tools that need nothing else.
pub async fn dynamodb_client(timeouts: ClientTimeouts) -> Client {
    Client::new(&sdk_config(timeouts).await)
}

impl Store {
    pub fn new(client: Client, config: StoreConfig) -> Self {
        Self {
            client,
            config,
            key: None,
        }
    }

    pub fn with_key(self, key: VerificationKey) -> Self {
        Self { key: Some(key), ..self }
    }

    fn key(&self) -> Result<&VerificationKey, StoreError> {
        self.key.as_ref().ok_or(StoreError::NoVerificationKey)
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn table(&self) -> &str {
        &self.config.table_name
    }

    // ---- reads ----

    /// The profile of a user; deleted users are not found.
    pub async fn get_profile(&self, user: &UserId) -> Result<Profile, StoreError> {
        let item = self.get(keys::profile_key(user)).await?;
        let profile: ProfileItem = item.map(items::from_item).transpose()?.ok_or(StoreError::NotFound)?;
        visible(profile).map(ProfileItem::into_domain)
    }

    /// The status of a user's profile, deleted ones included; `None` without a profile.
    pub async fn profile_status(&self, user: &UserId) -> Result<Option<UserStatus>, StoreError> {
        let item = self.get(keys::profile_key(user)).await?;
        Ok(item.map(items::from_item::<ProfileItem>).transpose()?.map(|p| p.status))
    }

    /// A user's addresses, oldest first.
    pub async fn list_emails(&self, user: &UserId) -> Result<Vec<Email>, StoreError> {
        let expr = Expr::default()
            .with_pk()
            .s(":pk", keys::user_pk(user))
            .s(":prefix", keys::EMAIL_SK_PREFIX);
        let mut names = expr.names.clone();
        names.insert("#sk".to_owned(), keys::SK.to_owned());
        let query = self
            .client
            .query()
            .table_name(self.table())
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(expr.values_or_none())
            .consistent_read(true);
        let mut records: Vec<EmailItem> = query_all(query)
            .await?
            .into_iter()
            .map(items::from_item)
            .collect::<Result<_, _>>()?;
        items::sort_oldest_first(&mut records);
        Ok(records.into_iter().map(EmailItem::into_domain).collect())
    }

    /// The profile and all addresses of a user, in one Query of its partition.
    pub async fn get_account(&self, user: &UserId) -> Result<Account, StoreError> {
        let items = self.user_items(user).await?;
        let profile = visible(items.profile.ok_or(StoreError::NotFound)?)?;
        Ok(Account {
            profile: profile.into_domain(),
            emails: items.emails.into_iter().map(EmailItem::into_domain).collect(),
        })
    }

    /// The account holding an address, through GSI1. GSI1 is eventually
    /// consistent: a change of owner shows there a moment later.
    pub async fn find_by_email(&self, email: &EmailAddress) -> Result<Account, StoreError> {
        let expr = Expr::default().s(":gsi1pk", keys::email_gsi1pk(email));
        let query = self
            .client
            .query()
            .table_name(self.table())
            .index_name(keys::GSI1)
            .key_condition_expression("#gsi1pk = :gsi1pk")
            .expression_attribute_names("#gsi1pk", keys::GSI1PK)
            .set_expression_attribute_values(expr.values_or_none());
        let records: Vec<IndexedEmail> = query_all(query)
            .await?
            .into_iter()
            .map(items::from_item)
            .collect::<Result<_, _>>()?;
        // During a take-over the index may briefly list two holders: the verified one owns it.
        let owner = records
            .iter()
            .max_by_key(|r| (r.is_verified, r.created_at))
            .ok_or(StoreError::NotFound)?;
        self.get_account(&owner.user_id).await
    }

    /// Whether an address can be added: no claim, or an unverified one that has
    /// expired. A strongly consistent read.
    pub async fn is_available(&self, email: &EmailAddress, now: Timestamp) -> Result<bool, StoreError> {
        Ok(self.claim(email).await?.is_none_or(|c| !c.is_live(now)))
    }

    /// Whether a sign-up with the address must be refused: only when its owner
    /// verified it. An unverified claim never blocks a sign-up (the confirmed
    /// sign-up takes it over), so no one can squat an address they cannot verify.
    pub async fn is_owned(&self, email: &EmailAddress) -> Result<bool, StoreError> {
        Ok(self.claim(email).await?.is_some_and(|c| c.expires_at.is_none()))
    }

    async fn claim(&self, email: &EmailAddress) -> Result<Option<ClaimItem>, StoreError> {
        self.get(keys::claim_key(email))
            .await?
            .map(items::from_item)
            .transpose()
    }

    // ---- writes ----

    /// Creates a confirmed user with a verified primary address. Idempotent: a
    /// repeated delivery for a user that exists succeeds and changes nothing.
    pub async fn create_user(&self, user: &NewUser, now: Timestamp) -> Result<Created, StoreError> {
        let profile = ProfileItem::new(user, 1, now);
        let record = EmailItem::verified_primary(&user.user_id, &user.email, now);
        let mut held: Option<ClaimItem> = None;
        let mut with_token = true;
        retrying!({
            let mut plan = tx::create_user(self.table(), &profile, &record, held.as_ref(), now)?;
            if !with_token {
                plan.client_request_token = None;
            }
            let mut result = self.transact(&plan, now).await;
            if matches!(result, Err(Rejection::TokenInUse)) {
                // An earlier delivery used the token with other timestamps, or is in
                // flight: go on without it, the conditions keep the write idempotent.
                with_token = false;
                plan.client_request_token = None;
                result = self.transact(&plan, now).await;
            }
            match after_claim_write(result, &mut held) {
                Ok(()) => Ok(Created::New),
                Err(Rejection::UserExists) => Ok(Created::Existing),
                Err(other) => Err(other),
            }
        })
    }

    /// Adds an unverified address and issues it `code`. The claim is held for
    /// `verification_ttl_seconds` from the user's first add of the address in the
    /// last 24 hours, so removing and adding it again does not extend it; the code
    /// counts against the address's daily limit of codes.
    pub async fn add_email(
        &self,
        user: &UserId,
        email: &EmailAddress,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<Email, StoreError> {
        let key = self.key()?;
        let address = key.address_hash(email);
        let email_id = EmailId::new();
        let code_expires_at = now.plus_seconds(self.config.code_ttl_seconds);
        let record = EmailItem::unverified(user, email_id, email, code.hash(key, email_id), code_expires_at, now);
        let mut held: Option<ClaimItem> = None;
        let mut seen = limits::Seen::default();
        retrying!({
            limits::admit(seen.codes_issued.as_ref(), self.config.max_codes_per_address, now)
                .map_err(|retry_after_secs| StoreError::TooManyRequests { retry_after_secs })?;
            let first_added_at = limits::first_added_at(seen.user_address.as_ref(), now);
            let claim_expires_at = first_added_at.plus_seconds(self.config.verification_ttl_seconds);
            let mut counters = vec![CounterWrite {
                counter: Counter::CodesIssued,
                key: keys::codes_issued_key(&address),
                seen: seen.codes_issued.as_ref(),
                event: Some(now),
                first_added_at: None,
            }];
            if seen.user_address.as_ref().and_then(|i| i.first_added_at) != Some(first_added_at) {
                // A new window of holding the address begins: remember its start.
                counters.push(CounterWrite {
                    counter: Counter::UserAddress,
                    key: keys::user_address_key(user, &address),
                    seen: seen.user_address.as_ref(),
                    event: None,
                    first_added_at: Some(first_added_at),
                });
            }
            let plan = tx::add_email(
                self.table(),
                &record,
                claim_expires_at,
                self.config.max_emails_per_user,
                held.as_ref(),
                counters,
                now,
            )?;
            let result = self.transact(&plan, now).await;
            after_claim_write(learn_limits(result, &mut seen), &mut held).map(|()| record.clone().into_domain())
        })
    }

    /// Replaces the code of an unverified address; returns the address to send it to.
    pub async fn issue_code(
        &self,
        user: &UserId,
        email_id: EmailId,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<EmailAddress, StoreError> {
        let key = self.key()?;
        let mut seen = limits::Seen::default();
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_verified {
                return Err(StoreError::AlreadyVerified.into());
            }
            limits::admit(seen.codes_issued.as_ref(), self.config.max_codes_per_address, now)
                .map_err(|retry_after_secs| StoreError::TooManyRequests { retry_after_secs })?;
            let codes_issued = CounterWrite {
                counter: Counter::CodesIssued,
                key: keys::codes_issued_key(&key.address_hash(&record.email)),
                seen: seen.codes_issued.as_ref(),
                event: Some(now),
                first_added_at: None,
            };
            let plan = tx::issue_code(
                self.table(),
                user,
                email_id,
                &code.hash(key, email_id),
                now.plus_seconds(self.config.code_ttl_seconds),
                now.plus_seconds(-self.config.resend_interval_seconds),
                codes_issued,
                now,
            )?;
            learn_limits(self.transact(&plan, now).await, &mut seen)?;
            Ok(record.email)
        })
    }

    /// Checks a code. The right one verifies the address and makes its claim
    /// permanent; a wrong one counts against the code's limit and the user's
    /// rolling limits. Past any of them every code is refused, right or wrong.
    pub async fn verify_email(
        &self,
        user: &UserId,
        email_id: EmailId,
        code: &VerificationCode,
        now: Timestamp,
    ) -> Result<Email, StoreError> {
        let key = self.key()?;
        let config = &self.config;
        let per_code = (config.verification_max_attempts, config.resend_interval_seconds);
        let mut seen = limits::Seen::default();
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_verified {
                return Ok(record.into_domain());
            }
            let attempts = record.verification_attempts.unwrap_or(0);
            if attempts >= config.verification_max_attempts {
                let retry_after_secs = cancel::next_code_in(&record, config.resend_interval_seconds, now);
                return Err(StoreError::TooManyAttempts { retry_after_secs }.into());
            }
            let (Some(stored), Some(expires_at)) =
                (record.verification_code_hash.as_deref(), record.verification_expires_at)
            else {
                return Err(StoreError::VerificationExpired.into());
            };
            if expires_at <= now {
                return Err(StoreError::VerificationExpired.into());
            }
            let address = key.address_hash(&record.email);
            let user_limit = (seen.wrong_codes.as_ref(), config.max_wrong_codes_per_user);
            let address_limit = (seen.user_address.as_ref(), config.max_wrong_codes_per_address);
            for (item, cap) in [user_limit, address_limit] {
                limits::admit(item, cap, now)
                    .map_err(|retry_after_secs| StoreError::TooManyAttempts { retry_after_secs })?;
            }
            let user_key = keys::wrong_codes_key(user);
            let address_key = keys::user_address_key(user, &address);
            if !code.matches(key, email_id, stored) {
                let counters = vec![
                    CounterWrite {
                        counter: Counter::WrongCodes,
                        key: user_key,
                        seen: seen.wrong_codes.as_ref(),
                        event: Some(now),
                        first_added_at: None,
                    },
                    CounterWrite {
                        counter: Counter::UserAddress,
                        key: address_key,
                        seen: seen.user_address.as_ref(),
                        event: Some(now),
                        first_added_at: seen.user_address.as_ref().and_then(|i| i.first_added_at),
                    },
                ];
                let plan = tx::count_failed_attempt(self.table(), user, email_id, stored, per_code, counters, now)?;
                match learn_limits(self.transact(&plan, now).await, &mut seen) {
                    // Verified by a concurrent request: read it back.
                    Err(Rejection::Failed(StoreError::AlreadyVerified)) => return Err(Rejection::Retry),
                    other => other?,
                }
                let attempts_left = (config.verification_max_attempts - attempts - 1)
                    .min(limits::left(
                        seen.wrong_codes.as_ref(),
                        config.max_wrong_codes_per_user,
                        now,
                    ))
                    .min(limits::left(
                        seen.user_address.as_ref(),
                        config.max_wrong_codes_per_address,
                        now,
                    ));
                return Err(StoreError::VerificationFailed { attempts_left }.into());
            }
            let guess_limits = [
                (Counter::WrongCodes, user_key, seen.wrong_codes.as_ref()),
                (Counter::UserAddress, address_key, seen.user_address.as_ref()),
            ];
            let plan = tx::verify_email(
                self.table(),
                user,
                email_id,
                &record.email,
                stored,
                per_code,
                guess_limits,
                now,
            )?;
            match learn_limits(self.transact(&plan, now).await, &mut seen) {
                Ok(()) => {
                    let mut verified = record.into_domain();
                    verified.is_verified = true;
                    verified.verified_at = Some(now);
                    Ok(verified)
                }
                // Verified by a concurrent request: read it back.
                Err(Rejection::Failed(StoreError::AlreadyVerified)) => Err(Rejection::Retry),
                Err(other) => Err(other),
            }
        })
    }

    /// Makes a verified address the primary one, atomically.
    pub async fn set_primary(&self, user: &UserId, email_id: EmailId, now: Timestamp) -> Result<Profile, StoreError> {
        retrying!({
            let items = self.user_items(user).await?;
            let profile = writable(items.profile)?;
            let target = items
                .emails
                .iter()
                .find(|r| r.email_id == email_id)
                .ok_or(StoreError::NotFound)?;
            if target.is_primary {
                return Ok(profile.into_domain());
            }
            if !target.is_verified {
                return Err(StoreError::NotVerified.into());
            }
            let current = items
                .emails
                .iter()
                .find(|r| r.is_primary)
                .ok_or(StoreError::Inconsistent("active user without a primary address"))?;
            let plan = tx::set_primary(self.table(), &profile, current.email_id, target, now)?;
            self.transact(&plan, now).await?;
            let mut updated = profile.into_domain();
            updated.email = Some(target.email.clone());
            updated.version += 1;
            updated.updated_at = now;
            Ok(updated)
        })
    }

    /// Removes a non-primary address and frees it for others.
    pub async fn remove_email(&self, user: &UserId, email_id: EmailId) -> Result<(), StoreError> {
        retrying!({
            let record = self.email_record(user, email_id).await?;
            if record.is_primary {
                return Err(StoreError::PrimaryEmail.into());
            }
            let plan = tx::remove_email(self.table(), &record)?;
            // Conditions are not time-dependent here.
            self.transact(&plan, Timestamp::now()).await
        })
    }

    /// Edits the profile if it is still at `expected_version`.
    pub async fn update_profile(
        &self,
        user: &UserId,
        expected_version: u64,
        patch: &ProfilePatch,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        let mut sets = vec!["#version = #version + :one", "#updatedAt = :now"];
        let mut removes = Vec::new();
        let mut expr = Expr::names(&[attr::VERSION, attr::UPDATED_AT, attr::STATUS])
            .with_pk()
            .n(":one", 1)
            .t(":now", now)
            .n(":expected", expected_version)
            .s(":active", UserStatus::Active.as_str());
        if let Some(first) = &patch.first_name {
            sets.push("#firstName = :firstName");
            expr = expr.s(":firstName", first.as_str());
            expr.names.insert("#firstName".into(), attr::FIRST_NAME.into());
        }
        if let Some(last) = &patch.last_name {
            sets.push("#lastName = :lastName");
            expr = expr.s(":lastName", last.as_str());
            expr.names.insert("#lastName".into(), attr::LAST_NAME.into());
        }
        match &patch.phone {
            Some(Some(phone)) => {
                sets.push("#phone = :phone");
                expr = expr.s(":phone", phone.as_str());
            }
            Some(None) => removes.push("#phone"),
            None => {}
        }
        if patch.phone.is_some() {
            expr.names.insert("#phone".into(), attr::PHONE.into());
        }
        let mut update_expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            update_expression.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        let condition = "attribute_exists(#pk) AND #version = :expected AND #status = :active";
        self.update_profile_item(user, &update_expression, condition, &expr)
            .await?
            .map_err(|old| cancel::profile_update_failed(old.as_ref()))
    }

    /// Sets a user's status. Deleting releases every address in the same
    /// transaction; a deleted user stays deleted.
    pub async fn set_status(&self, user: &UserId, status: UserStatus, now: Timestamp) -> Result<Profile, StoreError> {
        if status == UserStatus::Deleted {
            return self.delete_user(user, None, now).await;
        }
        let expr = Expr::names(&[attr::STATUS, attr::VERSION, attr::UPDATED_AT])
            .with_pk()
            .s(":status", status.as_str())
            .s(":deleted", UserStatus::Deleted.as_str())
            .n(":one", 1)
            .t(":now", now);
        let update = "SET #status = :status, #version = #version + :one, #updatedAt = :now";
        let condition = "attribute_exists(#pk) AND #status <> :deleted AND #status <> :status";
        match self.update_profile_item(user, update, condition, &expr).await? {
            Ok(profile) => Ok(profile),
            // Missing or deleted: not found. Already in that status: nothing to change.
            Err(old) => {
                let old: Option<ProfileItem> = old.map(items::from_item).transpose()?;
                visible(old.ok_or(StoreError::NotFound)?).map(ProfileItem::into_domain)
            }
        }
    }

    /// An UpdateItem of a profile: the profile as it is after, or, when the
    /// condition failed, as it was (ALL_OLD, so no second read is needed).
    async fn update_profile_item(
        &self,
        user: &UserId,
        update: &str,
        condition: &str,
        expr: &Expr,
    ) -> Result<Result<Profile, Option<Item>>, StoreError> {
        let result = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::profile_key(user)))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_names(expr.names_or_none())
            .set_expression_attribute_values(expr.values_or_none())
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(out) => updated_profile(out.attributes).map(Ok),
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => Ok(Err(failed.item().cloned())),
                _ => Err(err.into()),
            },
        }
    }

    /// Deletes a user: every address released and the profile erased (no address,
    /// names or phone) in one transaction. With `expected_version` (the user
    /// closing their own account) the profile must be active and at that version.
    pub async fn delete_user(
        &self,
        user: &UserId,
        expected_version: Option<u64>,
        now: Timestamp,
    ) -> Result<Profile, StoreError> {
        retrying!({
            let items = self.user_items(user).await?;
            let profile = match expected_version {
                None => visible(items.profile.ok_or(StoreError::NotFound)?)?,
                Some(expected) => {
                    let profile = writable(items.profile)?;
                    if profile.version != expected {
                        return Err(StoreError::VersionMismatch {
                            current: profile.version,
                        }
                        .into());
                    }
                    profile
                }
            };
            let plan = tx::delete_user(self.table(), &profile, &items.emails, now)?;
            self.transact(&plan, now).await?;
            Ok(Profile {
                email: None,
                first_name: None,
                last_name: None,
                phone: None,
                status: UserStatus::Deleted,
                version: profile.version + 1,
                updated_at: now,
                email_count: 0,
                ..profile.into_domain()
            })
        })
    }

    /// One page of the users that are not deleted, from `start` on, for sweeps;
    /// the key to go on from, while there is more.
    pub async fn live_users(&self, start: Option<Item>) -> Result<(Vec<UserId>, Option<Item>), StoreError> {
        let expr = Expr::names(&[attr::ENTITY_TYPE, attr::STATUS, attr::USER_ID])
            .s(":user", "User")
            .s(":deleted", UserStatus::Deleted.as_str());
        let page = self
            .client
            .scan()
            .table_name(self.table())
            .filter_expression("#entityType = :user AND #status <> :deleted")
            .projection_expression("#userId")
            .set_expression_attribute_names(expr.names_or_none())
            .set_expression_attribute_values(expr.values_or_none())
            .set_exclusive_start_key(start)
            .send()
            .await?;
        let users = page
            .items
            .unwrap_or_default()
            .into_iter()
            .filter_map(|item| keys::key_string(&item, attr::USER_ID).and_then(|id| UserId::parse(id).ok()))
            .collect();
        Ok((users, page.last_evaluated_key.filter(|k| !k.is_empty())))
    }

    /// One of the user's addresses.
    pub async fn get_email(&self, user: &UserId, email_id: EmailId) -> Result<Email, StoreError> {
        Ok(self.email_record(user, email_id).await?.into_domain())
    }

    // ---- plumbing ----

    async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let request = self
            .client
            .get_item()
            .table_name(self.table())
            .set_key(Some(key))
            .consistent_read(true);
        let out = match self.call_timeout() {
            Some(timeout) => request.customize().config_override(timeout).send().await?,
            None => request.send().await?,
        };
        Ok(out.item)
    }

    async fn email_record(&self, user: &UserId, email_id: EmailId) -> Result<EmailItem, StoreError> {
        let item = self.get(keys::email_key(user, email_id)).await?;
        item.map(items::from_item).transpose()?.ok_or(StoreError::NotFound)
    }

    async fn user_items(&self, user: &UserId) -> Result<UserItems, StoreError> {
        let query = self
            .client
            .query()
            .table_name(self.table())
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", keys::PK)
            .expression_attribute_values(":pk", aws_sdk_dynamodb::types::AttributeValue::S(keys::user_pk(user)))
            .consistent_read(true);
        UserItems::from_items(query_all(query).await?)
    }

    async fn transact(&self, plan: &TxPlan, now: Timestamp) -> Result<(), Rejection> {
        // Without a token of ours the SDK fills one in and reuses it on its own
        // retries, so a commit whose response was lost is not applied twice.
        let request = self
            .client
            .transact_write_items()
            .set_transact_items(Some(plan.items.clone()))
            .set_client_request_token(plan.client_request_token.clone());
        let result = match self.call_timeout() {
            Some(timeout) => request.customize().config_override(timeout).send().await,
            None => request.send().await,
        };
        result
            .map(|_| ())
            .map_err(|err| cancel::transaction_failure(err, plan, now))
    }

    /// Under an invocation deadline: the client's operation timeout cut to what is
    /// left, so a call started just before the deadline cannot outlive it.
    fn call_timeout(&self) -> Option<aws_sdk_dynamodb::config::Builder> {
        retry::current_deadline()?;
        let configured = self
            .client
            .config()
            .timeout_config()
            .and_then(|t| t.operation_timeout());
        let timeout = retry::call_timeout(configured)?;
        let override_ = aws_sdk_dynamodb::config::Builder::default()
            .timeout_config(TimeoutConfig::builder().operation_timeout(timeout).build());
        Some(override_)
    }
}

/// Runs `$body` (an attempt yielding `Result<T, Rejection>`) until it succeeds
/// or fails for good; a lost race reads and tries again after a short, jittered
/// pause, while the invocation's deadline allows. A macro rather than a
/// closure-taking function: async closures that borrow make futures that are
/// not `Send` for every lifetime.
macro_rules! retrying {
    ($body:block) => {{
        let deadline = retry::deadline_from_now();
        let mut attempt = 0u32;
        loop {
            let result: Result<_, Rejection> = async $body.await;
            if let Some(value) = settle(result, &mut attempt, deadline).await? {
                break Ok(value);
            }
        }
    }};
}
use retrying;

async fn settle<T>(
    result: Result<T, Rejection>,
    attempt: &mut u32,
    deadline: tokio::time::Instant,
) -> Result<Option<T>, StoreError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(Rejection::Failed(err)) => Err(err),
        Err(Rejection::Retry | Rejection::TokenInUse) => {
            *attempt += 1;
            let pause = retry::backoff(*attempt);
            if !retry::may_retry(*attempt, pause, deadline) {
                return Err(StoreError::Contended);
            }
            tokio::time::sleep(pause).await;
            Ok(None)
        }
        Err(other) => Err(StoreError::UnexpectedCancellation(format!("{other:?}"))),
    }
}

/// After a write with rate-limit counters: a counter that moved is remembered as
/// it is now, and the operation decides again from it.
fn learn_limits(result: Result<(), Rejection>, seen: &mut limits::Seen) -> Result<(), Rejection> {
    match result {
        Err(Rejection::LimitMoved(counter, item)) => {
            seen.learn(counter, item);
            Err(Rejection::Retry)
        }
        other => other,
    }
}

/// After a write of a claim: a claim that may be taken over is remembered for
/// the next attempt; any other lost race forgets it, so the next attempt reads afresh.
fn after_claim_write(result: Result<(), Rejection>, held: &mut Option<ClaimItem>) -> Result<(), Rejection> {
    match result {
        Err(Rejection::TakeOver(claim)) => {
            *held = Some(claim);
            Err(Rejection::Retry)
        }
        Err(Rejection::Retry) => {
            *held = None;
            Err(Rejection::Retry)
        }
        other => other,
    }
}

async fn query_all(
    query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
) -> Result<Vec<Item>, StoreError> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = query.clone().set_exclusive_start_key(start).send().await?;
        items.extend(page.items.unwrap_or_default());
        match page.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => return Ok(items),
        }
    }
}

/// A profile as readers see it: deleted users are not found.
fn visible(profile: ProfileItem) -> Result<ProfileItem, StoreError> {
    match profile.status {
        UserStatus::Deleted => Err(StoreError::NotFound),
        _ => Ok(profile),
    }
}

/// A profile a write may change: it exists and is active.
fn writable(profile: Option<ProfileItem>) -> Result<ProfileItem, StoreError> {
    let profile = visible(profile.ok_or(StoreError::NotFound)?)?;
    match profile.status {
        UserStatus::Active => Ok(profile),
        _ => Err(StoreError::AccountInactive),
    }
}

fn updated_profile(attributes: Option<Item>) -> Result<Profile, StoreError> {
    let item = attributes.ok_or(StoreError::Inconsistent("update returned no item"))?;
    Ok(items::from_item::<ProfileItem>(item)?.into_domain())
}
