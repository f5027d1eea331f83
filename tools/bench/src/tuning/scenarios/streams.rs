//! The stream consumers' scenarios, records built from the samples with
//! fresh keys; and the scheduled reconcile's, a whole pass over a small pool.

use aws_sdk_dynamodb::types::AttributeValue;
use integration_tests::ddb;
use integration_tests::moto::Moto;
use serde_json::{Value, json};
use user_service::Store;
use user_service::catalog::Function;
use user_service::domain::{EmailId, Timestamp, UserId};
use user_service::store::keys;

use super::{Names, World, fresh_sub, new_user, no_scenario, replaced};
use crate::user::{ADA, ADA_EMAIL};

/// The address the samples' records name beside ada's own.
const SAMPLE_ADDED: &str = "ada.work@example.com";
/// The id of that address's record in publish-events' sample.
const SAMPLE_EMAIL_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/// The users of the reconcile's own table and pool: a small pool, listed in one call.
const RECONCILE_USERS: u64 = 20;

impl World {
    pub(super) async fn stream_event(&self, f: &Function) -> Value {
        match f.name {
            // A primary switch: a user of the pool with a profile, whose
            // Cognito email and former primary's inbox the record updates.
            "sync-cognito-email" => {
                let (old, new) = (self.names.address("synced"), self.names.address("switched"));
                let sub = (self.add_to_pool)(old.clone()).await;
                let user = UserId::parse_sub(&sub).expect("moto's sub");
                self.store
                    .create_user(&new_user(user, &old), Timestamp::now())
                    .await
                    .unwrap_or_else(|e| panic!("a synced user: {e}"));
                let sample = self.sample(f.name);
                let mut event = replaced(&sample, &[(ADA, &sub), (SAMPLE_ADDED, &new), (ADA_EMAIL, &old)]);
                self.fresh_records(&mut event);
                event
            }
            // An address verified: the publisher reads the images alone.
            "publish-events" => {
                let (sub, id) = (fresh_sub(), EmailId::new().to_string());
                let address = self.names.address("published");
                let sample = self.sample(f.name);
                let mut event = replaced(
                    &sample,
                    &[(ADA, &sub), (SAMPLE_EMAIL_ID, &id), (SAMPLE_ADDED, &address)],
                );
                self.fresh_records(&mut event);
                event
            }
            // A deleted organization, its owner to remove.
            "purge-organizations" => {
                let (owner, org) = self.organization().await;
                self.store
                    .delete_organization(
                        &user_service::domain::Actor::Member(owner.user),
                        org,
                        &user_service::domain::IfMatch::Any,
                        Timestamp::now(),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("a deleted organization: {e}"));
                self.sample(f.name)
            }
            // The schedule's tick, with a pass due.
            "reconcile-users" => {
                self.reconcile.next_pass().await;
                self.sample(f.name)
            }
            _ => no_scenario(f),
        }
    }

    /// Each record with an id and a sequence number of its own.
    fn fresh_records(&self, event: &mut Value) {
        for record in event["Records"].as_array_mut().into_iter().flatten() {
            record["eventID"] = json!(fresh_sub().replace('-', ""));
            record["dynamodb"]["SequenceNumber"] = json!(self.names.sequence());
        }
    }
}

pub(super) fn succeeded(f: &Function, answer: &Value) -> bool {
    match f.name {
        // Every record applied or published.
        "sync-cognito-email" | "publish-events" => answer["batchItemFailures"] == json!([]),
        // Every deletion under way finished, this scenario's among them.
        "purge-organizations" => {
            answer["finished"].as_u64().is_some_and(|n| n >= 1) && answer["finished"] == answer["pending"]
        }
        // A whole pass over every user, nobody erased.
        "reconcile-users" => {
            let tally = &answer["tally"];
            answer["complete"] == true && tally["erased"] == 0 && tally["live"] == RECONCILE_USERS
        }
        _ => no_scenario(f),
    }
}

/// The reconcile's own table and pool, with the same users: the pass's work
/// stays the same however many users the other scenarios add to theirs.
pub(super) struct Reconcile {
    store: Store,
    table: String,
    pool_id: String,
}

impl Reconcile {
    /// Each profile records the address Cognito holds, so every pass finds
    /// them in line and writes nothing to them.
    pub(super) async fn set_up(store: &Store, moto: &Moto, names: &Names) -> Reconcile {
        let table = ddb::fresh_table(store.client()).await;
        let own = ddb::store_on(store.client().clone(), &table);
        let addresses: Vec<String> = (0..RECONCILE_USERS).map(|_| names.address("swept")).collect();
        let refs: Vec<&str> = addresses.iter().map(String::as_str).collect();
        let (_, pool_id, subs) = moto.user_pool(&refs).await;
        let now = Timestamp::now();
        for (sub, address) in subs.iter().zip(&addresses) {
            let user = new_user(UserId::parse_sub(sub).expect("moto's sub"), address);
            own.create_user(&user, now)
                .await
                .unwrap_or_else(|e| panic!("a swept user: {e}"));
            own.confirm_cognito_email(&user.user_id, &user.email)
                .await
                .unwrap_or_else(|e| panic!("a swept user's address: {e}"));
        }
        Reconcile {
            store: own,
            table,
            pool_id,
        }
    }

    #[cfg(test)]
    pub(super) fn store(&self) -> &Store {
        &self.store
    }

    pub(super) fn table(&self) -> &str {
        &self.table
    }

    pub(super) fn pool_id(&self) -> &str {
        &self.pool_id
    }

    /// Makes the next scheduled run start a pass at once: one asked for, as a
    /// deletion whose record names nobody asks. First the last pass's
    /// snapshot goes: its TTL would remove it, DynamoDB Local keeps it, and
    /// each pass would scan a bigger table.
    async fn next_pass(&self) {
        let checkpoint = self
            .store
            .reconcile_checkpoint()
            .await
            .unwrap_or_else(|e| panic!("the reconcile's checkpoint: {e}"));
        if let Some(last) = checkpoint.last_complete {
            self.forget(&keys::snapshot_pk(&last.id)).await;
        }
        self.store
            .request_reconcile_pass()
            .await
            .unwrap_or_else(|e| panic!("a pass asked for: {e}"));
    }

    /// Deletes every item of the partition `pk`.
    async fn forget(&self, pk: &str) {
        let client = self.store.client();
        let mut start = None;
        loop {
            let page = client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk")
                .expression_attribute_names("#pk", keys::PK)
                .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
                .set_exclusive_start_key(start)
                .send()
                .await
                .unwrap_or_else(|e| panic!("a pass's snapshot: {}", user_service::error::chain(&e)));
            for item in page.items() {
                let key = [keys::PK, keys::SK].map(|k| (k.to_owned(), item[k].clone()));
                client
                    .delete_item()
                    .table_name(&self.table)
                    .set_key(Some(key.into()))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("a pass's snapshot: {}", user_service::error::chain(&e)));
            }
            start = page.last_evaluated_key;
            if start.is_none() {
                return;
            }
        }
    }
}
