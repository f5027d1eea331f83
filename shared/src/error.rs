//! What every layer's errors share: one line for a log, and an AWS call's
//! failure without its message. Each layer keeps its own error enum.

/// An error and its sources, one line: for logs.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// What went wrong with an AWS call, without its message: service messages may
/// quote the request (an address, say), and logs carry no personal data.
pub fn aws_failure<E, R>(err: &aws_smithy_runtime_api::client::result::SdkError<E, R>) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    match err {
        SdkError::ServiceError(service) => service.err().code().unwrap_or("unknown service error").to_owned(),
        SdkError::TimeoutError(_) => "timeout".to_owned(),
        SdkError::DispatchFailure(_) => "dispatch failure".to_owned(),
        SdkError::ResponseError(_) => "unreadable response".to_owned(),
        SdkError::ConstructionFailure(_) => "request not built".to_owned(),
        _ => "unknown".to_owned(),
    }
}
