//! What SDK interceptors in the tests need to know of a request.

use aws_smithy_runtime_api::client::orchestrator::HttpRequest;

/// Whether the request is a TransactWriteItems (by its `X-Amz-Target`).
pub fn is_transaction(request: &HttpRequest) -> bool {
    request
        .headers()
        .get("x-amz-target")
        .is_some_and(|t| t.ends_with("TransactWriteItems"))
}
