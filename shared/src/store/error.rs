//! Errors of the store layer: domain outcomes the caller must handle, and typed
//! infrastructure failures that keep the SDK error as their source.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::query::QueryError;
use aws_sdk_dynamodb::operation::scan::ScanError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;

/// A failed DynamoDB call, typed by operation.
#[derive(Debug, thiserror::Error)]
pub enum DynamoError {
    #[error("GetItem failed")]
    GetItem(#[from] SdkError<GetItemError, HttpResponse>),
    #[error("Query failed")]
    Query(#[from] SdkError<QueryError, HttpResponse>),
    #[error("Scan failed")]
    Scan(#[from] SdkError<ScanError, HttpResponse>),
    #[error("UpdateItem failed")]
    UpdateItem(#[from] SdkError<UpdateItemError, HttpResponse>),
    #[error("TransactWriteItems failed")]
    TransactWriteItems(#[from] SdkError<TransactWriteItemsError, HttpResponse>),
}

/// Error codes of failures that succeed when tried again later, for errors the
/// SDK models only as `Unhandled`.
const RETRYABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionConflictException",
    "TransactionInProgressException",
];

/// Whether a modeled service error is transient.
trait Transient: ProvideErrorMetadata {
    fn is_transient_variant(&self) -> bool;

    fn is_transient(&self) -> bool {
        self.is_transient_variant() || self.code().is_some_and(|code| RETRYABLE_CODES.contains(&code))
    }
}

macro_rules! transient_variants {
    ($($op:ty => [$($variant:ident),+]),+ $(,)?) => {$(
        impl Transient for $op {
            fn is_transient_variant(&self) -> bool {
                matches!(self, $(Self::$variant(_))|+)
            }
        }
    )+};
}

transient_variants!(
    GetItemError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    QueryError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    ScanError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    UpdateItemError => [
        InternalServerError,
        ProvisionedThroughputExceededException,
        RequestLimitExceeded,
        ThrottlingException,
        TransactionConflictException,
        ReplicatedWriteConflictException
    ],
    TransactWriteItemsError => [
        InternalServerError,
        ProvisionedThroughputExceededException,
        RequestLimitExceeded,
        ThrottlingException,
        TransactionInProgressException
    ],
);

fn sdk_error_is_retryable<E: Transient>(err: &SdkError<E, HttpResponse>) -> bool {
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
        SdkError::ServiceError(service) => service.raw().status().is_server_error() || service.err().is_transient(),
        _ => false,
    }
}

impl DynamoError {
    /// Throttling, 5xx, timeouts and transaction conflicts: the same request may succeed later.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::GetItem(e) => sdk_error_is_retryable(e),
            Self::Query(e) => sdk_error_is_retryable(e),
            Self::Scan(e) => sdk_error_is_retryable(e),
            Self::UpdateItem(e) => sdk_error_is_retryable(e),
            Self::TransactWriteItems(e) => sdk_error_is_retryable(e),
        }
    }

    /// The service's error code, when the service answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::GetItem(e) => e.code(),
            Self::Query(e) => e.code(),
            Self::Scan(e) => e.code(),
            Self::UpdateItem(e) => e.code(),
            Self::TransactWriteItems(e) => e.code(),
        }
    }
}

/// Everything a store operation can end in besides success.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the user or address does not exist")]
    NotFound,
    #[error("the account is not active")]
    AccountInactive,
    #[error("another user holds the address")]
    EmailTaken,
    #[error("the user has this address already")]
    AlreadyAdded,
    #[error("the user has the maximum number of addresses")]
    LimitReached,
    #[error("the address is not verified")]
    NotVerified,
    #[error("the address is verified already")]
    AlreadyVerified,
    #[error("the primary address cannot be removed")]
    PrimaryEmail,
    #[error("the profile has changed: version is {current}")]
    VersionMismatch { current: u64 },
    #[error("wrong verification code; {attempts_left} attempts left")]
    VerificationFailed { attempts_left: u32 },
    #[error("the verification code has expired")]
    VerificationExpired,
    #[error("too many wrong verification codes; retry in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: u64 },
    #[error("too many codes asked for; retry in {retry_after_secs} s")]
    TooManyRequests { retry_after_secs: u64 },
    /// A function that hashes codes or addresses was built without the key: a
    /// deployment fault (its catalog entry must say it reads the key).
    #[error("the verification key was not loaded")]
    NoVerificationKey,
    /// The items kept changing under concurrent writers, after our own retries.
    #[error("concurrent writes kept conflicting")]
    Contended,
    /// DynamoDB throttled or failed after the SDK's retries.
    #[error("DynamoDB is unavailable")]
    Unavailable(#[source] Box<DynamoError>),
    /// DynamoDB refused the request for a reason retrying will not fix.
    #[error("DynamoDB request failed")]
    Dynamo(#[source] Box<DynamoError>),
    /// A transaction was cancelled for a reason none of its items explains.
    #[error("transaction cancelled unexpectedly: {0}")]
    UnexpectedCancellation(String),
    /// What is stored breaks a rule this code keeps (for example no primary address).
    #[error("stored data is inconsistent: {0}")]
    Inconsistent(&'static str),
    /// A request could not be built: a bug, not a condition of the data.
    #[error("request could not be built")]
    Build(#[from] aws_sdk_dynamodb::error::BuildError),
    /// A stored item does not have the shape this code writes.
    #[error("stored item is malformed")]
    Corrupt(#[source] serde_dynamo::Error),
}

impl StoreError {
    /// Whether a client may retry the same request later and expect it to work.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Contended)
    }
}

impl From<DynamoError> for StoreError {
    fn from(err: DynamoError) -> Self {
        if err.is_retryable() {
            Self::Unavailable(Box::new(err))
        } else {
            Self::Dynamo(Box::new(err))
        }
    }
}

macro_rules! store_error_from_sdk {
    ($($op:ty),*) => {$(
        impl From<SdkError<$op, HttpResponse>> for StoreError {
            fn from(err: SdkError<$op, HttpResponse>) -> Self {
                DynamoError::from(err).into()
            }
        }
    )*};
}
store_error_from_sdk!(
    GetItemError,
    QueryError,
    ScanError,
    UpdateItemError,
    TransactWriteItemsError
);
