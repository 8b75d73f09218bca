//! What the router tests share: one request through `oneshot`, and the code of an error body.

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

/// `method uri` with JSON `body` and `headers`: the status and the body as text.
pub(crate) async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: String,
) -> (StatusCode, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

/// The `code` of a JSON error body ("" for anything else).
pub(crate) fn code(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .map(|v| v["code"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}
