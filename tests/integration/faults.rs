//! What DynamoDB Local cannot produce: throttling, transaction conflicts, 500s.
//! Injected at the SDK level with aws-smithy-mocks; everything else is real.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::CancellationReason;
use aws_sdk_dynamodb::types::error::{ProvisionedThroughputExceededException, TransactionCanceledException};
use aws_smithy_mocks::{RuleMode, mock, mock_client};
use user_service::config::StoreConfig;
use user_service::domain::{IfMatch, PersonName, ProfilePatch};
use user_service::{Store, StoreError};

use crate::common::*;

fn store(client: Client) -> Store {
    Store::new(client, StoreConfig::new("faults"))
}

#[tokio::test]
async fn throttling_is_unavailable_and_retryable() {
    let rule = mock!(Client::get_item).then_error(|| {
        GetItemError::ProvisionedThroughputExceededException(
            ProvisionedThroughputExceededException::builder()
                .message("slow down")
                .build(),
        )
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let err = store(client).get_profile(&uid("ada")).await.unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(err.is_retryable());
    assert!(rule.num_calls() >= 1);
}

#[tokio::test]
async fn server_errors_are_unavailable() {
    let rule = mock!(Client::update_item).then_http_response(|| {
        aws_smithy_runtime_api::http::Response::new(
            aws_smithy_runtime_api::http::StatusCode::try_from(500).unwrap(),
            aws_smithy_types::body::SdkBody::from(
                r#"{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}"#,
            ),
        )
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let patch = ProfilePatch {
        first_name: Some(PersonName::parse("A").unwrap()),
        ..Default::default()
    };
    let err = store(client)
        .update_profile(&uid("ada"), &IfMatch::Versions(vec![1]), &patch, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
}

/// A sign-up transaction cancelled because another transaction held its first item.
fn conflict() -> TransactWriteItemsError {
    TransactWriteItemsError::TransactionCanceledException(
        TransactionCanceledException::builder()
            .message("Transaction cancelled")
            .cancellation_reasons(CancellationReason::builder().code("TransactionConflict").build())
            .cancellation_reasons(CancellationReason::builder().code("None").build())
            .cancellation_reasons(CancellationReason::builder().code("None").build())
            .build(),
    )
}

#[tokio::test]
async fn transaction_conflicts_are_retried_then_reported_as_contention() {
    let rule = mock!(Client::transact_write_items).then_error(conflict);
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let err = store(client)
        .create_user(&new_user(&uid("ada"), "ada@example.com"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Contended), "{err:?}");
    assert!(err.is_retryable());
    assert_eq!(
        rule.num_calls(),
        user_service::store::retry::MAX_ATTEMPTS as usize,
        "the store retried the conflicting transaction"
    );
}

#[tokio::test]
async fn retries_stop_at_the_invocations_deadline() {
    let rule = mock!(Client::transact_write_items).then_error(conflict);
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    // 150 ms left: the backoffs (20, 40, 80, 160 ms ...) leave room for a few attempts only.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(150);
    let err = user_service::deadline::within(
        Some(deadline),
        store(client).create_user(&new_user(&uid("ada"), "ada@example.com"), now()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, StoreError::Contended), "{err:?}");
    let calls = rule.num_calls();
    assert!(
        (1..user_service::store::retry::MAX_ATTEMPTS as usize).contains(&calls),
        "{calls} attempts: the deadline, not the attempt cap, ended the retries"
    );
}

#[tokio::test]
async fn a_conflict_then_success_succeeds() {
    let rule = mock!(Client::transact_write_items)
        .sequence()
        .error(|| {
            TransactWriteItemsError::TransactionCanceledException(
                TransactionCanceledException::builder()
                    .cancellation_reasons(CancellationReason::builder().code("TransactionConflict").build())
                    .build(),
            )
        })
        .output(|| aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput::builder().build())
        .build();
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let created = store(client)
        .create_user(&new_user(&uid("ada"), "ada@example.com"), now())
        .await
        .unwrap();
    assert_eq!(created, user_service::store::Created::New);
    assert_eq!(rule.num_calls(), 2);
}

#[tokio::test]
async fn throttled_transaction_items_are_unavailable() {
    let rule = mock!(Client::transact_write_items).then_error(|| {
        TransactWriteItemsError::TransactionCanceledException(
            TransactionCanceledException::builder()
                .cancellation_reasons(CancellationReason::builder().code("ThrottlingError").build())
                .build(),
        )
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let err = store(client)
        .create_user(&new_user(&uid("ada"), "ada@example.com"), now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
}

#[tokio::test]
async fn permanent_errors_are_not_retryable() {
    let rule = mock!(Client::update_item).then_error(|| {
        UpdateItemError::ResourceNotFoundException(
            aws_sdk_dynamodb::types::error::ResourceNotFoundException::builder()
                .message("no table")
                .build(),
        )
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let patch = ProfilePatch {
        first_name: Some(PersonName::parse("A").unwrap()),
        ..Default::default()
    };
    let err = store(client)
        .update_profile(&uid("ada"), &IfMatch::Versions(vec![1]), &patch, now())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Dynamo(_)), "{err:?}");
    assert!(!err.is_retryable());
}
