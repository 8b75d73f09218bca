//! `GET /threads/{threadId}/runs/{runId}` for each way a run stands, and `POST /agent` with
//! `Prefer: respond-async` (a background run) on a runtime that offers background work
//! and on one that does not. The demo agent behind the router, callers named in the
//! `authorization` header.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use futures::future::BoxFuture;
use handoff_core::records::RunRecord;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Clock, Condition, Engine, Principal, Spawn, Store, Write};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::{AuthError, Authenticator, HttpConfig, Routes};
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const T0: u64 = 1_764_421_200_000;

/// alice and bob of tenant acme, eve of tenant other.
struct Named;

impl Authenticator for Named {
    fn authenticate<'a>(
        &'a self,
        request: &'a http::request::Parts,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let who = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let principal = match who {
            Some(name @ ("alice" | "bob")) => Ok(Principal::new("acme", name)),
            Some("eve") => Ok(Principal::new("other", "eve")),
            _ => Err(AuthError::unauthenticated("who are you?")),
        };
        Box::pin(async move { principal })
    }
    fn scheme(&self) -> &'static str {
        "test-names"
    }
}

/// Tokio tasks, as the dev server spawns them.
struct Tasks;

impl Spawn for Tasks {
    fn spawn(&self, future: BoxFuture<'static, ()>) {
        tokio::spawn(future);
    }
}

struct App {
    router: axum::Router,
    clock: Arc<ManualClock>,
    store: Arc<dyn Store>,
}

/// The demo (configured by `config`) on a runtime with background work when `background`.
fn app(config: DemoConfig, background: bool) -> App {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let store_handle = store.clone();
    let clock = Arc::new(ManualClock::new(T0));
    let mut runtime =
        Runtime::new(clock.clone(), SequentialIds::new("s"), NeverSleep).with_spawner(Tasks);
    if background {
        runtime = runtime.with_background(Tasks);
    }
    let engine = Engine::new(DemoAgent::new(store.clone(), config), store, runtime);
    let router = Routes::new(engine, HttpConfig::default())
        .authenticator(Arc::new(Named))
        .build();
    App {
        router,
        clock,
        store: store_handle,
    }
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
    /// The `data:` JSON of each SSE frame.
    fn events(&self) -> Vec<Value> {
        self.text
            .split("\n\n")
            .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }
}

impl App {
    async fn call(
        &self,
        who: &str,
        method: &str,
        uri: &str,
        extra: &[(&str, &str)],
        body: Value,
    ) -> Answer {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "localhost")
            .header("authorization", who)
            .header("content-type", "application/json");
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        Answer {
            status,
            headers,
            text,
        }
    }

    async fn status(&self, who: &str, thread: &str, run: &str) -> Answer {
        let uri = format!("/threads/{thread}/runs/{run}");
        self.call(who, "GET", &uri, &[], Value::Null).await
    }

    /// Polls alice's run until its status is not `running` (the run goes on in a task).
    async fn ended(&self, thread: &str, run: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..500 {
            let answer = self.status("alice", thread, run).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
            last = answer.json();
            if last["status"] != "running" {
                return last;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("run {run} still running after 5 s: {last}");
    }
}

fn say(thread: &str, run: &str, text: &str) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [
        {"id": format!("{run}-m"), "role": "user", "content": text}]})
}

fn approve(thread: &str, run: &str, interrupt: &Value) -> Value {
    json!({"threadId": thread, "runId": run, "messages": [],
        "resume": [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}}]})
}

#[tokio::test]
async fn streamed_runs_read_as_interrupted_then_succeeded_with_their_interrupts_and_times() {
    let app = app(DemoConfig::default(), false);
    let asked = app
        .call(
            "alice",
            "POST",
            "/agent",
            &[],
            say("t1", "r1", "Refund order A1024"),
        )
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.text);
    let finished = asked.events().pop().unwrap();
    assert_eq!(finished["type"], "RUN_FINISHED");

    let status = app.status("alice", "t1", "r1").await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.text);
    let view = status.json();
    assert_eq!(view["status"], "interrupted", "{view}");
    assert_eq!(view["outcome"], "interrupt");
    assert_eq!(view["interrupts"], finished["outcome"]["interrupts"]);
    assert_eq!(
        (&view["threadId"], &view["runId"]),
        (&json!("t1"), &json!("r1"))
    );
    assert_eq!(view["startedAt"], json!(T0));
    assert_eq!(view["finishedAt"], finished["timestamp"]);
    for absent in ["error", "usage"] {
        assert!(
            view.get(absent).is_none(),
            "{absent} omitted, not null: {view}"
        );
    }

    let interrupt = &view["interrupts"][0];
    app.clock.advance(1_000);
    let resumed = app
        .call(
            "alice",
            "POST",
            "/agent",
            &[],
            approve("t1", "r2", interrupt),
        )
        .await;
    assert_eq!(resumed.status, StatusCode::OK, "{}", resumed.text);
    let view = app.status("alice", "t1", "r2").await.json();
    assert_eq!(view["status"], "succeeded", "{view}");
    assert_eq!(view["outcome"], "success");
    assert_eq!(view["startedAt"], json!(T0 + 1_000));
    assert!(view.get("interrupts").is_none(), "{view}");
    // The first run ended interrupted, and says so still.
    assert_eq!(
        app.status("alice", "t1", "r1").await.json()["status"],
        "interrupted"
    );
}

#[tokio::test]
async fn a_run_that_ends_with_run_error_is_failed_with_its_code() {
    let config = DemoConfig {
        error_after_refund: true,
        ..DemoConfig::default()
    };
    let app = app(config, false);
    let asked = app
        .call(
            "alice",
            "POST",
            "/agent",
            &[],
            say("t1", "r1", "Refund order A1024"),
        )
        .await;
    let interrupt = asked.events().pop().unwrap()["outcome"]["interrupts"][0].clone();
    let failed = app
        .call(
            "alice",
            "POST",
            "/agent",
            &[],
            approve("t1", "r2", &interrupt),
        )
        .await;
    let error = failed.events().pop().unwrap();
    assert_eq!(error["type"], "RUN_ERROR", "{}", failed.text);

    let view = app.status("alice", "t1", "r2").await.json();
    assert_eq!(view["status"], "failed", "{view}");
    assert_eq!(view["error"]["code"], error["code"]);
    assert_eq!(view["error"]["message"], error["message"]);
    assert_eq!(view["finishedAt"], error["timestamp"]);
    assert!(view.get("outcome").is_none(), "{view}");
}

#[tokio::test]
async fn a_background_run_is_202_with_its_location_runs_without_a_client_and_stops_cancelled() {
    // Words 1 s apart on a timer that never fires: the run stays running until stopped.
    let slow = DemoConfig {
        token_delay_ms: 1_000,
        ..DemoConfig::default()
    };
    let app = app(slow, true);
    let prefer = [("prefer", "respond-async, wait=5")];
    let accepted = app
        .call(
            "alice",
            "POST",
            "/agent",
            &prefer,
            say("t 1", "r/1", "hello"),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text);
    assert_eq!(accepted.json(), json!({"threadId": "t 1", "runId": "r/1"}));
    assert_eq!(accepted.headers["location"], "/threads/t%201/runs/r%2F1");
    assert_eq!(accepted.headers["preference-applied"], "respond-async");

    let view = app.status("alice", "t%201", "r%2F1").await.json();
    assert_eq!(view["status"], "running", "{view}");
    assert_eq!(view["startedAt"], json!(T0));
    for absent in ["finishedAt", "outcome", "error", "interrupts"] {
        assert!(view.get(absent).is_none(), "{absent}: {view}");
    }
    // The thread is the run's: a second message is refused while it runs.
    let busy = app
        .call(
            "alice",
            "POST",
            "/agent",
            &prefer,
            say("t 1", "r/2", "again"),
        )
        .await;
    assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.text);

    // At once after the 202, before the run's task was even polled: the stop reaches it
    // through this instance (its poll's timer never fires here).
    let stop = app
        .call(
            "alice",
            "POST",
            "/threads/t%201/runs/r%2F1/stop",
            &[],
            Value::Null,
        )
        .await;
    assert_eq!(stop.status, StatusCode::ACCEPTED, "{}", stop.text);
    let view = app.ended("t%201", "r%2F1").await;
    assert_eq!(
        (&view["status"], &view["outcome"]),
        (&json!("cancelled"), &json!("cancelled")),
        "{view}"
    );
    assert!(view["finishedAt"].is_u64(), "{view}");
}

#[tokio::test]
async fn a_background_run_goes_on_to_its_interrupt_and_bad_input_is_still_4xx() {
    let app = app(DemoConfig::default(), true);
    let prefer = [("prefer", "respond-async")];
    let accepted = app
        .call(
            "alice",
            "POST",
            "/agent",
            &prefer,
            say("t1", "r1", "Refund order A1024"),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text);
    let view = app.ended("t1", "r1").await;
    assert_eq!(view["status"], "interrupted", "{view}");
    assert_eq!(view["interrupts"][0]["reason"], "tool_call");

    let bad = app
        .call(
            "alice",
            "POST",
            "/agent",
            &prefer,
            json!({"threadId": "t2"}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
    let unanswered = app
        .call("alice", "POST", "/agent", &prefer, say("t1", "r2", "hi"))
        .await;
    assert_eq!(
        unanswered.status,
        StatusCode::CONFLICT,
        "{}",
        unanswered.text
    );
    assert!(unanswered.headers.get("location").is_none());
    assert_eq!(
        app.status("alice", "t1", "r2").await.json()["code"],
        "RUN_NOT_FOUND"
    );
}

#[tokio::test]
async fn a_host_without_background_work_ignores_the_preference_and_streams() {
    let app = app(DemoConfig::default(), false);
    let prefer = [("prefer", "respond-async")];
    let streamed = app
        .call("alice", "POST", "/agent", &prefer, say("t1", "r1", "hello"))
        .await;
    assert_eq!(streamed.status, StatusCode::OK, "{}", streamed.text);
    assert!(streamed.headers.get("preference-applied").is_none());
    assert_eq!(streamed.events().pop().unwrap()["type"], "RUN_FINISHED");
}

#[tokio::test]
async fn a_run_whose_lease_lapsed_reads_failed_abandoned() {
    let slow = DemoConfig {
        token_delay_ms: 1_000,
        ..DemoConfig::default()
    };
    let app = app(slow, true);
    let prefer = [("prefer", "respond-async")];
    let accepted = app
        .call("alice", "POST", "/agent", &prefer, say("t1", "r1", "hello"))
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text);
    assert_eq!(
        app.status("alice", "t1", "r1").await.json()["status"],
        "running"
    );
    // Nothing renews it (the timer never fires), as if its instance had died: it is still
    // running, for the next sweep to finish (see handoff-core's tests/redrive.rs).
    app.clock.advance(16 * 60 * 1000);
    let view = app.status("alice", "t1", "r1").await.json();
    assert_eq!(view["status"], "running", "{view}");
    // A run with nothing to re-drive it from (claimed before runs kept their request) is
    // abandoned.
    let partition = Principal::new("acme", "alice").partition("t1").unwrap();
    let now = app.clock.now_ms();
    let item = app.store.get_one(&partition, "run#r1", now).await.unwrap();
    let item = item.expect("the run's record");
    let mut run: RunRecord = serde_json::from_slice(&item.value).unwrap();
    assert!(
        run.redrive.take().is_some(),
        "a running run keeps its request"
    );
    let bytes = serde_json::to_vec(&run).unwrap();
    let forget = Write::put(
        "run#r1",
        Condition::Version(item.version),
        bytes,
        item.expires_at_ms,
    );
    app.store
        .commit(&partition, vec![forget], now)
        .await
        .unwrap();
    let view = app.status("alice", "t1", "r1").await.json();
    assert_eq!(view["status"], "failed", "{view}");
    assert_eq!(view["error"]["code"], "RUN_ABANDONED");
}

#[tokio::test]
async fn unknown_runs_are_404_and_other_callers_runs_are_hidden() {
    let app = app(DemoConfig::default(), false);
    app.call("alice", "POST", "/agent", &[], say("t1", "r1", "hello"))
        .await;
    let cases = [
        ("alice", "t1", "nope", "RUN_NOT_FOUND"),
        ("alice", "t9", "r1", "THREAD_NOT_FOUND"),
        // Another tenant has no such thread; another owner of the tenant may not see it.
        ("eve", "t1", "r1", "THREAD_NOT_FOUND"),
        ("bob", "t1", "r1", "THREAD_NOT_FOUND"),
    ];
    for (who, thread, run, code) in cases {
        let answer = app.status(who, thread, run).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{who} {thread}/{run}: {}",
            answer.text
        );
        assert_eq!(answer.json()["code"], code, "{who} {thread}/{run}");
        assert!(!answer.text.contains("startedAt"));
    }
    assert_eq!(
        app.status("alice", "t1", "r1").await.json()["status"],
        "succeeded"
    );
    let anonymous = app.status("mallory", "t1", "r1").await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}
