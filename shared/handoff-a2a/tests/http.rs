//! The axum routes (feature `http`), driven with `ServiceExt::oneshot`.

mod common;

use axum::body::Body;
use common::*;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

async fn send(h: &Harness, request: Request<Body>) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let response = handoff_a2a::http::routes(h.receiver.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, headers, bytes)
}

fn post(config: &str, token: Option<&str>, body: Vec<u8>) -> Request<Body> {
    let mut builder = Request::post(format!("/a2a/push/{config}"))
        .header(header::CONTENT_TYPE, "application/a2a+json");
    if let Some(token) = token {
        builder = builder.header("X-A2A-Notification-Token", token);
    }
    builder.body(Body::from(body)).unwrap()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[tokio::test]
async fn a_delivery_is_acknowledged_with_json() {
    let h = Harness::new();
    let config = h.token_config().await;
    let (status, _, body) = send(
        &h,
        post(
            &config,
            Some(TOKEN),
            fixture("v1/stream-status-update.json"),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        json(&body),
        serde_json::json!({"taskId": TASK, "outcome": "applied", "state": "TASK_STATE_WORKING", "duplicate": false})
    );
    let (_, _, again) = send(
        &h,
        post(
            &config,
            Some(TOKEN),
            fixture("v1/stream-status-update.json"),
        ),
    )
    .await;
    assert_eq!(json(&again)["duplicate"], true);
}

#[tokio::test]
async fn rejections_are_json_and_401s_are_indistinguishable() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("working", None);
    let (s1, h1, unknown) = send(&h, post("a2apush-missing", Some(TOKEN), b.clone())).await;
    let (s2, _, forged) = send(&h, post(&config, Some("forged-forged-forged-x"), b.clone())).await;
    let (s3, _, missing) = send(&h, post(&config, None, b.clone())).await;
    assert_eq!(
        (s1, s2, s3),
        (
            StatusCode::UNAUTHORIZED,
            StatusCode::UNAUTHORIZED,
            StatusCode::UNAUTHORIZED
        )
    );
    assert_eq!(unknown, forged);
    assert_eq!(unknown, missing);
    assert_eq!(
        json(&unknown),
        serde_json::json!({"code": "UNAUTHORIZED", "message": "unauthorized"})
    );
    assert_eq!(h1.get(header::WWW_AUTHENTICATE).unwrap(), "Bearer");

    let (status, _, body) = send(&h, post(&config, Some(TOKEN), b"{\"oops\":".to_vec())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json(&body)["code"], "INVALID_NOTIFICATION");

    let other = serde_json::to_vec(
        &serde_json::json!({"statusUpdate": {"taskId": "nope", "status": {"state": "working"}}}),
    )
    .unwrap();
    let (status, _, body) = send(&h, post(&config, Some(TOKEN), other)).await;
    assert_eq!(
        (status, json(&body)["code"].clone()),
        (StatusCode::FORBIDDEN, "TASK_MISMATCH".into())
    );
}

#[tokio::test]
async fn oversized_bodies_are_413_whether_declared_or_streamed() {
    let h = Harness::new();
    let config = h.token_config().await;
    let limit = h.receiver.config().body_limit;
    let big = vec![b' '; limit + 1];
    let (status, _, body) = send(&h, post(&config, Some(TOKEN), big.clone())).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(json(&body)["code"], "BODY_TOO_LARGE");
    let chunks = futures::stream::iter(
        big.chunks(64 * 1024)
            .map(|c| Ok::<_, std::io::Error>(bytes::Bytes::copy_from_slice(c)))
            .collect::<Vec<_>>(),
    );
    let streamed = Request::post(format!("/a2a/push/{config}"))
        .header("X-A2A-Notification-Token", TOKEN)
        .body(Body::from_stream(chunks))
        .unwrap();
    let (status, _, _) = send(&h, streamed).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn storage_trouble_is_503_with_retry_after() {
    let h = Harness::new();
    let config = h.token_config().await;
    h.store
        .down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (status, headers, body) =
        send(&h, post(&config, Some(TOKEN), status_body("working", None))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers.get(header::RETRY_AFTER).unwrap(), "1");
    assert_eq!(json(&body)["code"], "STORE_UNAVAILABLE");
    assert!(
        !String::from_utf8_lossy(&body).contains("throttled"),
        "no internals"
    );
}

#[tokio::test]
async fn the_challenge_echoes_as_plain_text() {
    let h = Harness::new();
    let config = h.token_config().await;
    let get = |uri: String| Request::get(uri).body(Body::empty()).unwrap();
    let (status, headers, body) = send(
        &h,
        get(format!("/a2a/push/{config}?validationToken=abc%2D123")),
    )
    .await;
    assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"abc-123"[..]));
    assert_eq!(
        headers.get(header::CONTENT_TYPE).unwrap(),
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        headers.get(header::X_CONTENT_TYPE_OPTIONS).unwrap(),
        "nosniff"
    );
    let (status, _, _) = send(&h, get(format!("/a2a/push/{config}"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = send(
        &h,
        get(format!("/a2a/push/{config}?validationToken=%3Cb%3E%20x")),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = send(&h, get("/a2a/push/a2apush-nope?validationToken=abc".into())).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
