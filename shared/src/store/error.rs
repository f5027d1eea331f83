//! Errors of the store layer: domain outcomes the caller must handle, and typed
//! infrastructure failures that keep the SDK error as their source.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemError;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::query::QueryError;
use aws_sdk_dynamodb::operation::scan::ScanError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;

use crate::metrics::{self, Metric};

/// A failed DynamoDB call, typed by operation.
#[derive(Debug, thiserror::Error)]
pub enum DynamoError {
    /// Reading one item by its key failed.
    #[error("GetItem failed")]
    GetItem(#[from] SdkError<GetItemError, HttpResponse>),
    /// Querying a user's partition, or GSI1 by address, failed.
    #[error("Query failed")]
    Query(#[from] SdkError<QueryError, HttpResponse>),
    /// Scanning for live profiles, in the reconcile's first phase, failed.
    #[error("Scan failed")]
    Scan(#[from] SdkError<ScanError, HttpResponse>),
    /// Reading listed users' profiles, in the reconcile's second phase, failed.
    #[error("BatchGetItem failed")]
    BatchGetItem(#[from] SdkError<BatchGetItemError, HttpResponse>),
    /// A single-item update of a profile failed.
    #[error("UpdateItem failed")]
    UpdateItem(#[from] SdkError<UpdateItemError, HttpResponse>),
    /// A single-item delete (an erased user's kept switches) failed.
    #[error("DeleteItem failed")]
    DeleteItem(#[from] SdkError<DeleteItemError, HttpResponse>),
    /// A transactional write of several items failed.
    #[error("TransactWriteItems failed")]
    TransactWriteItems(#[from] SdkError<TransactWriteItemsError, HttpResponse>),
}

/// Error codes of DynamoDB refusing a call for throughput, and the reasons of a
/// transaction's items cancelled for it.
pub(crate) const THROTTLING_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
];

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

/// What a modeled service error is: transient, throttling, a server error.
trait Transient: ProvideErrorMetadata {
    fn is_transient_variant(&self) -> bool;
    fn is_throttling_variant(&self) -> bool;
    fn is_server_error_variant(&self) -> bool;

    fn is_transient(&self) -> bool {
        self.is_transient_variant() || self.code().is_some_and(|code| RETRYABLE_CODES.contains(&code))
    }

    fn is_throttling(&self) -> bool {
        self.is_throttling_variant() || self.code().is_some_and(|code| THROTTLING_CODES.contains(&code))
    }
}

macro_rules! transient_variants {
    ($($op:ty => [$($variant:ident),+]),+ $(,)?) => {$(
        impl Transient for $op {
            fn is_transient_variant(&self) -> bool {
                matches!(self, $(Self::$variant(_))|+)
            }
            fn is_throttling_variant(&self) -> bool {
                matches!(
                    self,
                    Self::ProvisionedThroughputExceededException(_) | Self::RequestLimitExceeded(_) | Self::ThrottlingException(_)
                )
            }
            fn is_server_error_variant(&self) -> bool {
                matches!(self, Self::InternalServerError(_))
            }
        }
    )+};
}

transient_variants!(
    GetItemError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    QueryError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    ScanError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    BatchGetItemError => [InternalServerError, ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException],
    UpdateItemError => [
        InternalServerError,
        ProvisionedThroughputExceededException,
        RequestLimitExceeded,
        ThrottlingException,
        TransactionConflictException,
        ReplicatedWriteConflictException
    ],
    DeleteItemError => [
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

/// The kind of a failed call, for the metrics: the one classification of
/// DynamoDB's failures. A transaction's cancellation reads as its items' reasons.
fn sdk_error_metric<E: Transient>(err: &SdkError<E, HttpResponse>, reasons: &[&str]) -> Metric {
    let service = match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            return Metric::DynamoDbTimeouts;
        }
        SdkError::ServiceError(service) => service,
        _ => return Metric::DynamoDbOtherErrors,
    };
    let error = service.err();
    if error.is_throttling() || reasons.iter().any(|r| THROTTLING_CODES.contains(r)) {
        Metric::DynamoDbThrottled
    } else if error
        .code()
        .is_some_and(|c| matches!(c, "TransactionConflictException" | "TransactionInProgressException"))
        || reasons.contains(&"TransactionConflict")
    {
        Metric::DynamoDbTransactionConflicts
    } else if service.raw().status().is_server_error() || error.is_server_error_variant() {
        Metric::DynamoDbServerErrors
    } else {
        Metric::DynamoDbOtherErrors
    }
}

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
            Self::BatchGetItem(e) => sdk_error_is_retryable(e),
            Self::UpdateItem(e) => sdk_error_is_retryable(e),
            Self::DeleteItem(e) => sdk_error_is_retryable(e),
            Self::TransactWriteItems(e) => sdk_error_is_retryable(e),
        }
    }

    /// The metric this failure counts in.
    pub fn metric(&self) -> Metric {
        match self {
            Self::GetItem(e) => sdk_error_metric(e, &[]),
            Self::Query(e) => sdk_error_metric(e, &[]),
            Self::Scan(e) => sdk_error_metric(e, &[]),
            Self::BatchGetItem(e) => sdk_error_metric(e, &[]),
            Self::UpdateItem(e) => sdk_error_metric(e, &[]),
            Self::DeleteItem(e) => sdk_error_metric(e, &[]),
            Self::TransactWriteItems(e) => {
                let reasons = match e.as_service_error() {
                    Some(TransactWriteItemsError::TransactionCanceledException(canceled)) => canceled
                        .cancellation_reasons()
                        .iter()
                        .filter_map(|r| r.code())
                        .collect(),
                    _ => Vec::new(),
                };
                sdk_error_metric(e, &reasons)
            }
        }
    }

    /// The service's error code, when the service answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::GetItem(e) => e.code(),
            Self::Query(e) => e.code(),
            Self::Scan(e) => e.code(),
            Self::BatchGetItem(e) => e.code(),
            Self::UpdateItem(e) => e.code(),
            Self::DeleteItem(e) => e.code(),
            Self::TransactWriteItems(e) => e.code(),
        }
    }
}

/// Everything a store operation can end in besides success.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The user has no profile or is deleted, or has no address by that id.
    #[error("the user or address does not exist")]
    NotFound,
    /// Refused: the account is suspended; it can be read but not changed.
    #[error("the account is not active")]
    AccountInactive,
    /// The admin acting is no longer an active user (checked inside the write).
    #[error("the acting admin's own account is not active")]
    AdminInactive,
    /// Too many availability checks by this user in 24 hours.
    #[error("too many availability checks")]
    TooManyChecks {
        /// Seconds until the window frees a check.
        retry_after_secs: u64,
    },
    /// Too many exports of their account by this user in 24 hours.
    #[error("too many exports")]
    TooManyExports {
        /// Seconds until the window frees an export.
        retry_after_secs: u64,
    },
    /// Another reconcile run took the lease over: this one writes nothing more.
    #[error("another reconcile run holds the lease")]
    Superseded,
    /// The person an import line names was erased since the line was first
    /// imported: the import never creates them again.
    #[error("the imported account was erased since")]
    ErasedBefore,
    /// `If-Match: *` found no current profile to match.
    #[error("there is no profile for the precondition to match")]
    NothingToMatch,
    /// Another user holds the address: verified, or claimed and not yet expired.
    #[error("another user holds the address")]
    EmailTaken,
    /// The caller holds the address already, verified or not.
    #[error("the user has this address already")]
    AlreadyAdded,
    /// The deployment's address policy refuses the address (nothing was written).
    #[error("the address policy refuses the address: {}", .0.code())]
    NotAllowed(crate::address_policy::Refusal),
    /// The user has the configured maximum of addresses; one must go before another is added.
    #[error("the user has the maximum number of addresses")]
    LimitReached,
    /// Only a verified address may become primary.
    #[error("the address is not verified")]
    NotVerified,
    /// A code was asked for an address that is verified already.
    #[error("the address is verified already")]
    AlreadyVerified,
    /// The primary address cannot be removed; another must be made primary first.
    #[error("the primary address cannot be removed")]
    PrimaryEmail,
    /// Too many recovery links that undid nothing came from this source in 24 hours.
    #[error("too many refused recovery links from this source")]
    TooManyRecoveryAttempts {
        /// Seconds until the window frees an attempt.
        retry_after_secs: u64,
    },
    /// A recovery of the account ended the session the request comes in: its
    /// token's sign-in is older than the recovery.
    #[error("a recovery ended this session")]
    SessionRevoked,
    /// The OS random source failed: no token could be drawn.
    #[error("the OS random source failed")]
    NoRandomSource,
    /// A recovery link that undoes nothing: no such switch, its token is not
    /// one of it, it was used or undone already, its window ended, or the
    /// account is gone or suspended.
    #[error("the recovery link is not valid")]
    RecoveryLinkInvalid,
    /// Cognito still signs the user in with this address (its password reset
    /// mails it): the switch of the primary has not reached Cognito yet.
    #[error("Cognito still signs the user in with this address")]
    SignInAddressPending,
    /// No such organization, or the caller is no member of it (the two are
    /// not told apart, so nobody learns which organizations exist).
    #[error("no such organization")]
    OrganizationNotFound,
    /// The organization has no such member.
    #[error("no such member")]
    MemberNotFound,
    /// The actor's role in the organization does not hold the power the action asks for.
    #[error("the actor's role does not allow this")]
    RoleRequired,
    /// The action would leave an organization without an owner.
    #[error("an organization must keep an owner")]
    LastOwner,
    /// The member's membership is suspended (by the organization's
    /// directory): it cannot be promoted, which would make an admin or owner
    /// who holds no power and yet counts.
    #[error("a suspended membership cannot be promoted")]
    MemberSuspended,
    /// Another organization holds the slug.
    #[error("the slug is taken")]
    SlugTaken,
    /// No such invitation: never made, revoked, accepted, replaced by a
    /// newer mail, or its organization deleted (not told apart).
    #[error("no such invitation")]
    InvitationNotFound,
    /// The invitation's link has lapsed: its organization may send a new one.
    #[error("the invitation has expired")]
    InvitationExpired,
    /// The caller does not hold the invited address verified.
    #[error("the invited address is not the caller's, verified")]
    InvitationAddressNotHeld,
    /// Another organization holds the domain (or this one does already).
    #[error("the domain is claimed")]
    DomainTaken,
    /// The domain cannot be an organization's: a consumer or disposable one.
    #[error("the domain cannot be claimed: {0}")]
    DomainNotClaimable(crate::org_policy::DomainRefusal),
    /// The organization has no such domain (never claimed, removed, or taken over once lapsed).
    #[error("no such domain")]
    DomainNotFound,
    /// The actor named no address of theirs, verified, at the domain.
    #[error("no verified address of the actor's at the domain")]
    DomainNotProven,
    /// Enrollment needs the domain verified first.
    #[error("the domain is not verified")]
    DomainNotVerified,
    /// The organization claims the most domains it may.
    #[error("the organization claims the most domains it may")]
    DomainLimitReached,
    /// The organization has no such live SCIM token (never made, or revoked).
    #[error("no such SCIM token")]
    ScimTokenNotFound,
    /// The organization holds the most SCIM tokens it may.
    #[error("the organization holds the most SCIM tokens it may")]
    ScimTokenLimitReached,
    /// The organization's directory already calls another member by this
    /// `userName` or `externalId`.
    #[error("the directory's name is another member's")]
    DirectoryNameTaken,
    /// A SCIM request's bearer token proves nothing: malformed, revoked,
    /// never made, or its organization deleted (not told apart).
    #[error("the SCIM token is not valid")]
    ScimTokenInvalid,
    /// Too many SCIM requests whose token proved nothing came from this source in 24 hours.
    #[error("too many SCIM requests with a token that is not valid from this source")]
    TooManyScimAttempts {
        /// Seconds until the window frees an attempt.
        retry_after_secs: u64,
    },
    /// No verified domain of the organization invites the address's users.
    #[error("the organization does not enroll this address")]
    NotEnrollable,
    /// The user belongs to the configured maximum of organizations.
    #[error("the user belongs to the maximum number of organizations")]
    OrganizationLimitReached,
    /// The organization has the configured maximum of members.
    #[error("the organization has the maximum number of members")]
    OrganizationFull,
    /// The If-Match precondition names no version the organization is at now.
    #[error("the organization has changed: version is {current}")]
    OrganizationVersionMismatch {
        /// The organization's version now.
        current: u64,
    },
    /// The If-Match precondition names no version the profile is at now.
    #[error("the profile has changed: version is {current}")]
    VersionMismatch {
        /// The profile's version now: the client reads it again before retrying.
        current: u64,
    },
    /// The code was wrong; it stays valid for the attempts left.
    #[error("wrong verification code; {attempts_left} attempts left")]
    VerificationFailed {
        /// Wrong codes still allowed before this code is spent.
        attempts_left: u32,
    },
    /// The code's lifetime ended, or none is pending; the user must ask for a new one.
    #[error("the verification code has expired")]
    VerificationExpired,
    /// Too many wrong codes: for this code, or for the user or address in 24 hours.
    #[error("too many wrong verification codes; retry in {retry_after_secs} s")]
    TooManyAttempts {
        /// Seconds until the limit lifts; sent as Retry-After.
        retry_after_secs: u64,
    },
    /// Too many codes asked for: the resend interval, or the per-address daily cap.
    #[error("too many codes asked for; retry in {retry_after_secs} s")]
    TooManyRequests {
        /// Seconds until another code may be issued; sent as Retry-After.
        retry_after_secs: u64,
    },
    /// Too many invitations sent: by the organization to the address, to the
    /// address from every organization, or by the organization, in 24 hours.
    #[error("too many invitations sent; retry in {retry_after_secs} s")]
    TooManyInvitations {
        /// Seconds until another invitation may be sent; sent as Retry-After.
        retry_after_secs: u64,
    },
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

    /// The DynamoDB metric of a failure DynamoDB caused (by kind), if it is one.
    pub fn dynamodb_metric(&self) -> Option<Metric> {
        match self {
            Self::Unavailable(err) | Self::Dynamo(err) => Some(err.metric()),
            Self::Contended => Some(Metric::DynamoDbTransactionConflicts),
            Self::UnexpectedCancellation(_) => Some(Metric::DynamoDbOtherErrors),
            _ => None,
        }
    }

    /// The metric of a refusal by a verification limit, or of a wrong code.
    pub fn refusal_metric(&self) -> Option<Metric> {
        match self {
            Self::TooManyRequests { .. } => Some(Metric::CodesRefusedByLimit),
            Self::NotAllowed(_) => Some(Metric::AddressesNotAllowed),
            Self::VerificationFailed { .. } => Some(Metric::VerificationsFailed),
            Self::TooManyAttempts { .. } | Self::VerificationExpired => Some(Metric::VerificationsRefusedByLimit),
            _ => None,
        }
    }

    /// Counts a refusal [`StoreError::refusal_metric`] names; for the store's
    /// verification writes, where they end.
    pub(crate) fn count_refusal(&self) {
        if let Some(metric) = self.refusal_metric() {
            metrics::count(metric);
        }
    }

    /// A failure DynamoDB caused, counted by kind. Every such failure ends the
    /// store call that met it, and is made through here: once per failed call.
    pub(crate) fn failed(self) -> Self {
        if let Some(metric) = self.dynamodb_metric() {
            metrics::count(metric);
        }
        self
    }
}

impl From<DynamoError> for StoreError {
    fn from(err: DynamoError) -> Self {
        if err.is_retryable() {
            Self::Unavailable(Box::new(err)).failed()
        } else {
            Self::Dynamo(Box::new(err)).failed()
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
    BatchGetItemError,
    UpdateItemError,
    DeleteItemError,
    TransactWriteItemsError
);

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::CancellationReason;
    use aws_sdk_dynamodb::types::error::{
        InternalServerError, ProvisionedThroughputExceededException, ResourceNotFoundException,
        TransactionCanceledException,
    };
    use aws_smithy_runtime_api::http::StatusCode;
    use aws_smithy_types::body::SdkBody;

    use super::*;

    fn answered<E>(err: E, status: u16) -> SdkError<E, HttpResponse> {
        let raw = HttpResponse::new(StatusCode::try_from(status).unwrap(), SdkBody::empty());
        SdkError::service_error(err, raw)
    }

    fn cancelled(reasons: &[&str]) -> DynamoError {
        let mut canceled = TransactionCanceledException::builder();
        for reason in reasons {
            canceled = canceled.cancellation_reasons(CancellationReason::builder().code(*reason).build());
        }
        DynamoError::TransactWriteItems(answered(
            TransactWriteItemsError::TransactionCanceledException(canceled.build()),
            400,
        ))
    }

    #[test]
    fn dynamodb_failures_are_counted_by_kind() {
        let throttled = GetItemError::ProvisionedThroughputExceededException(
            ProvisionedThroughputExceededException::builder().build(),
        );
        let cases = [
            (
                DynamoError::GetItem(answered(throttled, 400)),
                Metric::DynamoDbThrottled,
            ),
            (cancelled(&["None", "ThrottlingError"]), Metric::DynamoDbThrottled),
            (
                cancelled(&["TransactionConflict", "None"]),
                Metric::DynamoDbTransactionConflicts,
            ),
            (
                DynamoError::Query(SdkError::timeout_error("timed out")),
                Metric::DynamoDbTimeouts,
            ),
            (
                DynamoError::UpdateItem(answered(
                    UpdateItemError::InternalServerError(InternalServerError::builder().build()),
                    500,
                )),
                Metric::DynamoDbServerErrors,
            ),
            (
                DynamoError::Scan(answered(
                    ScanError::ResourceNotFoundException(ResourceNotFoundException::builder().build()),
                    400,
                )),
                Metric::DynamoDbOtherErrors,
            ),
        ];
        for (err, metric) in cases {
            assert_eq!(err.metric(), metric, "{err:?}");
            assert_eq!(StoreError::from(err).dynamodb_metric(), Some(metric));
        }
        assert_eq!(
            StoreError::Contended.dynamodb_metric(),
            Some(Metric::DynamoDbTransactionConflicts)
        );
        assert_eq!(StoreError::NotFound.dynamodb_metric(), None);
        assert_eq!(
            StoreError::TooManyRequests { retry_after_secs: 1 }.refusal_metric(),
            Some(Metric::CodesRefusedByLimit)
        );
        assert_eq!(StoreError::EmailTaken.refusal_metric(), None);
    }
}
