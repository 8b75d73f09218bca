//! Reading a request body under the size limit. A refused body needs no care here:
//! whatever a handler leaves unread is read and thrown away before its answer is sent
//! (see `crate::drain`), so the client reads the refusal instead of a reset connection.

use axum::body::{Body, Bytes};
use handoff_core::codes;
use http::{HeaderMap, header};

use crate::AppState;
use crate::drain::declared_length;
use crate::error::ApiError;

/// Reads a JSON body: 415 unless JSON, 413 over the limit.
pub(crate) async fn read_json_body(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::new(
            codes::UNSUPPORTED_MEDIA_TYPE,
            "send the body as application/json",
        ));
    }
    read_body(app, headers, body).await
}

/// Reads a body whatever its type (one that may be empty, say): 413 over the limit,
/// refused without reading when its declared length already is.
pub(crate) async fn read_body(
    app: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    let limit = app.config.body_limit;
    let too_large = || {
        ApiError::new(
            codes::BODY_TOO_LARGE,
            format!("the body exceeds {limit} bytes"),
        )
    };
    if declared_length(headers).is_some_and(|len| len > limit) {
        return Err(too_large());
    }
    // A body that fails to arrive (the client went away) gets the same answer.
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large())
}

pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}
