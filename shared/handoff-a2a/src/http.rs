//! axum routes (feature `http`), for hosts to merge into their router:
//!
//! | route | answer |
//! |---|---|
//! | `POST /a2a/push/{configId}` | 200 [`Ack`](crate::Ack) JSON; errors as `{"code","message"}` with [`ReceiverError::http_status`] |
//! | `GET /a2a/push/{configId}?validationToken=X` | 200 `text/plain` `X` for a live subscription |
//!
//! Any content type is read as JSON (senders use `application/json` and
//! `application/a2a+json`); a 401 carries `WWW-Authenticate`, a 503 `Retry-After`.

use std::collections::HashMap;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use handoff_core::codes::{self, ErrorCode};
use http::{HeaderValue, StatusCode, header};

use crate::error::ReceiverError;
use crate::receiver::Receiver;

/// The `GET /threads/{threadId}` extra every host adds: `a2aTasks`, the thread's
/// A2A task snapshots (omitted when there are none). A store failure is a 503.
#[derive(Clone, Debug)]
pub struct TaskSnapshots(pub Receiver);

impl handoff_http::ThreadExtras for TaskSnapshots {
    fn fields<'a>(
        &'a self,
        partition: &'a str,
    ) -> futures::future::BoxFuture<
        'a,
        Result<serde_json::Map<String, serde_json::Value>, handoff_http::ApiError>,
    > {
        Box::pin(async move {
            let tasks = self.0.tasks(partition).await.map_err(|e| {
                handoff_http::ApiError::new(codes::STORE_UNAVAILABLE, e.to_string())
            })?;
            let mut fields = serde_json::Map::new();
            if !tasks.is_empty() {
                fields.insert(
                    "a2aTasks".to_owned(),
                    serde_json::to_value(tasks).unwrap_or_default(),
                );
            }
            Ok(fields)
        })
    }
}

/// The webhook routes over `receiver`.
pub fn routes(receiver: Receiver) -> Router {
    Router::new()
        .route("/a2a/push/{config_id}", post(push).get(challenge))
        .with_state(receiver)
}

/// The error body and headers for `err`.
pub fn error_response(err: &ReceiverError) -> Response {
    let status =
        StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status.is_server_error() {
        tracing::error!(code = err.code().name, error = ?err, "a2a push failed");
    }
    let body = serde_json::json!({"code": err.code(), "message": err.public_message()});
    let mut response = (status, Json(body)).into_response();
    let headers = response.headers_mut();
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    if err.retryable() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

async fn push(
    State(receiver): State<Receiver>,
    Path(config_id): Path<String>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let limit = receiver.config().body_limit;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let too_large = ReceiverError::TooLarge { limit };
    if declared.is_some_and(|len| len > limit) {
        return error_response(&too_large);
    }
    let Ok(bytes) = axum::body::to_bytes(Body::new(body), limit).await else {
        return error_response(&too_large);
    };
    let now = receiver.runtime().now_ms();
    match receiver
        .handle(&config_id, &parts.headers, &bytes, now)
        .await
    {
        Ok(ack) => (StatusCode::OK, Json(ack)).into_response(),
        Err(err) => error_response(&err),
    }
}

async fn challenge(
    State(receiver): State<Receiver>,
    Path(config_id): Path<String>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let token = query
        .as_ref()
        .ok()
        .and_then(|q| q.get("validationToken"))
        .map(String::as_str);
    let now = receiver.runtime().now_ms();
    match receiver.challenge(&config_id, token, now).await {
        Ok(echo) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            echo,
        )
            .into_response(),
        Err(err) => error_response(&err),
    }
}
