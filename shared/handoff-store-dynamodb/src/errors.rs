//! SDK errors → [`StoreError`].

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use handoff_core::StoreError;

/// Service error codes that mean "try again later".
const TRANSIENT_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "Throttling",
    "RequestLimitExceeded",
    "InternalServerError",
    "InternalFailure",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "TransactionInProgressException",
    "TransactionConflictException",
    "ReplicatedWriteConflictException",
    "LimitExceededException",
];

/// Maps a failed SDK call of operation `op`.
///
/// - no response (connection refused or reset, DNS, TLS), a timeout, or a response that could
///   not be read → [`StoreError::Unavailable`];
/// - throttling, capacity, 5xx and transaction-in-progress errors → [`StoreError::Unavailable`];
/// - validation errors about sizes, and item collections over 10 GB → [`StoreError::TooLarge`];
/// - anything else (validation, missing table, access denied, a request the SDK could not
///   build) → [`StoreError::Backend`].
pub(crate) fn map_sdk<E>(op: &str, err: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match &err {
        SdkError::ConstructionFailure(_) => {
            StoreError::Backend(format!("{op}: {}", DisplayErrorContext(&err)))
        }
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            StoreError::Unavailable(format!("{op}: {}", DisplayErrorContext(&err)))
        }
        SdkError::ServiceError(service) => {
            let code = service.err().code().unwrap_or("unknown");
            let message = service.err().message().unwrap_or_default();
            match classify(op, code, message) {
                StoreError::Backend(text) if service.raw().status().is_server_error() => {
                    StoreError::Unavailable(text)
                }
                other => other,
            }
        }
        _ => StoreError::Backend(format!("{op}: {}", DisplayErrorContext(&err))),
    }
}

/// Maps a service error code and message.
pub(crate) fn classify(op: &str, code: &str, message: &str) -> StoreError {
    let text = format!("{op}: {code}: {message}");
    if TRANSIENT_CODES.contains(&code) {
        StoreError::Unavailable(text)
    } else if code == "ItemCollectionSizeLimitExceededException"
        || (code == "ValidationException" && mentions_size(message))
    {
        StoreError::TooLarge(text)
    } else {
        StoreError::Backend(text)
    }
}

/// Whether a cancellation reason code of a transaction means "try again later".
pub(crate) fn transient_reason(code: &str) -> bool {
    matches!(
        code,
        "TransactionConflict" | "ProvisionedThroughputExceeded" | "ThrottlingError"
    )
}

fn mentions_size(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("size") || message.contains("too large") || message.contains("exceed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_codes() {
        assert!(matches!(
            classify("PutItem", "ProvisionedThroughputExceededException", ""),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            classify(
                "PutItem",
                "ValidationException",
                "Item size has exceeded the maximum allowed size"
            ),
            StoreError::TooLarge(_)
        ));
        assert!(matches!(
            classify("PutItem", "ValidationException", "Invalid UpdateExpression"),
            StoreError::Backend(_)
        ));
        assert!(matches!(
            classify("PutItem", "ResourceNotFoundException", "no table"),
            StoreError::Backend(_)
        ));
    }
}
