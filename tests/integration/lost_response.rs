//! A transaction that committed but whose response was lost: the SDK retries it
//! with the idempotency token it filled in, and DynamoDB runs it once. Every
//! write transaction of the store relies on that token (sign-up sets its own).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_sdk_dynamodb::Client;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextRef,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::ConfigBag;
use integration_tests::ddb;
use user_service::Store;

use crate::common::*;

/// Replaces the response of the first TransactWriteItems with a 500, after
/// DynamoDB Local has committed it; records every token sent.
#[derive(Debug, Clone, Default)]
struct LoseFirstCommit {
    transactions: Arc<AtomicUsize>,
    /// The token of every TransactWriteItems attempt sent, in order.
    tokens: Arc<std::sync::Mutex<Vec<Option<String>>>>,
    /// Whether the request in flight is a TransactWriteItems.
    in_flight: Arc<std::sync::atomic::AtomicBool>,
}

impl Intercept for LoseFirstCommit {
    fn name(&self) -> &'static str {
        "LoseFirstCommit"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request();
        let is_transaction = integration_tests::sdk::is_transaction(request);
        self.in_flight.store(is_transaction, Ordering::SeqCst);
        if is_transaction {
            let body: serde_json::Value = serde_json::from_slice(request.body().bytes().unwrap_or_default())?;
            let token = body["ClientRequestToken"].as_str().map(str::to_owned);
            self.tokens.lock().unwrap().push(token);
        }
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let is_transaction = self.in_flight.load(Ordering::SeqCst);
        if is_transaction && self.transactions.fetch_add(1, Ordering::SeqCst) == 0 {
            let response = context.response_mut();
            *response.status_mut() = 500.try_into()?;
            *response.body_mut() =
                SdkBody::from(r#"{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"lost"}"#);
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_commit_whose_response_is_lost_is_applied_once() {
    let setup = ddb::store().await;
    let user = signed_up(&setup, "ada", "ada@example.com").await;
    let interceptor = LoseFirstCommit::default();
    let client = Client::from_conf(
        ddb::sdk_config_builder()
            .endpoint_url(ddb::endpoint())
            .interceptor(interceptor.clone())
            .build(),
    );
    let store = Store::new(client, setup.config().clone()).with_key(ddb::test_key());

    let added = store
        .add_email(&user, &addr("work@example.com"), &code("123456"), now())
        .await
        .expect("the SDK's retry finds the committed transaction and succeeds");

    // Sent twice, with the same token the SDK filled in.
    let tokens = interceptor.tokens.lock().unwrap().clone();
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    assert!(tokens[0].is_some() && tokens[0] == tokens[1], "{tokens:?}");
    // Applied once: one record, counted once.
    let account = setup.get_account(&user).await.unwrap();
    assert_eq!(account.emails.len(), 2);
    assert_eq!(account.profile.email_count, 2);
    assert!(account.emails.iter().any(|e| e.email_id == added.email_id));
    assert_invariants(&setup).await;
}
