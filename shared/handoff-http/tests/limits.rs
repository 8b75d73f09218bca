//! A run over the rate limit is 429 `RATE_LIMITED` before any stream, with `Retry-After`
//! and the IETF draft's `RateLimit-Policy` / `RateLimit` fields; malformed limits refuse
//! to start, naming the variable.

use std::sync::Arc;

use axum::body::Body;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, EngineConfig};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{Host, HttpConfig, Routes, check_limits};
use http::{Request, StatusCode};
use serde_json::json;
use tower::ServiceExt;

fn router(rate_limit: &str) -> axum::Router {
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        Arc::new(ManualClock::new(1_764_421_200_000)),
        SequentialIds::new("t"),
        NeverSleep,
    );
    let config = EngineConfig {
        rate_limit: Some(rate_limit.parse().unwrap()),
        ..EngineConfig::default()
    };
    let agent = DemoAgent::new(store.clone(), DemoConfig::default());
    let engine = Engine::with_config(Arc::new(agent), store, runtime, config);
    Routes::new(engine, HttpConfig::default()).build()
}

async fn post_run(app: &axum::Router, thread: &str) -> http::Response<Body> {
    let body = json!({"threadId": thread, "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "hello"}]});
    let request = Request::post("/agent")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    app.clone().oneshot(request).await.unwrap()
}

#[tokio::test]
async fn over_the_limit_is_429_with_the_rate_limit_fields() {
    let app = router("2/10s");
    for thread in ["a", "b"] {
        assert_eq!(post_run(&app, thread).await.status(), StatusCode::OK);
    }
    let refused = post_run(&app, "c").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let header = |name: &str| refused.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("retry-after"), "5");
    assert_eq!(header("ratelimit-policy"), "\"runs\";q=2;w=10");
    assert_eq!(header("ratelimit"), "\"runs\";r=0;t=10");
    let body = http_body_util::BodyExt::collect(refused.into_body())
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body.to_bytes()).unwrap();
    assert_eq!(body["code"], "RATE_LIMITED");
}

#[test]
fn malformed_limits_refuse_to_start_naming_the_variable() {
    let vars = |rate: &'static str, budget: &'static str| {
        move |name: &str| match name {
            "HANDOFF_RATE_LIMIT" => Some(rate.to_owned()),
            "HANDOFF_TOKEN_BUDGET" => Some(budget.to_owned()),
            _ => None,
        }
    };
    assert_eq!(check_limits(vars("60/min", "200000/day")), Ok(()));
    let error = check_limits(vars("60 per minute", "200000/day")).unwrap_err();
    assert!(error.starts_with("HANDOFF_RATE_LIMIT: "), "{error}");
    let error = check_limits(vars("60/min", "lots")).unwrap_err();
    assert!(error.starts_with("HANDOFF_TOKEN_BUDGET: "), "{error}");
    let config = Host::DevServer.engine_config(vars("3/10s", "1000/h"));
    assert_eq!(
        config.rate_limit.map(|q| (q.count, q.window_ms)),
        Some((3, 10_000))
    );
    assert_eq!(config.token_budget.map(|q| q.window_ms), Some(3_600_000));
}
