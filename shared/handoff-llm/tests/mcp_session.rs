//! The MCP client's session handling against a scripted transport: fault injection
//! (a server that forgets its session, answers over SSE, pages its list, says its list
//! changed) that the reference server does not do on demand. The real server is in
//! tests/node/mcp.test.mjs.

#[path = "support/mcp_answer.rs"]
mod mcp_answer;

use mcp_answer::Answer;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::executor::block_on;
use handoff_core::outbound::{Body, Outbound, OutboundError};
use handoff_llm::mcp::{Called, ClientCredentials, McpConnection, McpError, McpServer};
use serde_json::{Value, json};

/// Answers each POST with the next scripted answer, recording what was sent.
#[derive(Default)]
struct Scripted {
    answers: Mutex<VecDeque<Result<Answer, OutboundError>>>,
    sent: Mutex<Vec<Sent>>,
}

/// A request as the fake server saw it.
struct Sent {
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Scripted {
    fn new(answers: Vec<Result<Answer, OutboundError>>) -> Arc<Self> {
        Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            sent: Mutex::default(),
        })
    }
    fn sent(&self) -> Vec<(Value, Option<String>)> {
        self.sent
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                let session = r
                    .headers
                    .iter()
                    .find(|(n, _)| n == "mcp-session-id")
                    .map(|(_, v)| v.clone());
                (serde_json::from_slice(&r.body).unwrap(), session)
            })
            .collect()
    }
}

#[async_trait]
impl Outbound for Scripted {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let headers = request
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        self.sent.lock().unwrap().push(Sent {
            url: request.uri().to_string(),
            headers,
            body: request.into_body(),
        });
        // The last request with an id (a resumed stream's GET has no body).
        let id = self.sent.lock().unwrap().iter().rev().find_map(|r| {
            let body: Value = serde_json::from_slice(&r.body).ok()?;
            body.get("id").cloned()
        });
        let answer = self.answers.lock().unwrap().pop_front();
        answer
            .expect("a scripted answer")
            .map(|a| with_id(a, id))
            .map(Answer::into_response)
    }
}

/// The scripted answer as the response to request `id`: the tests script answers in
/// order, the ids follow what was sent.
fn with_id(mut answer: Answer, id: Option<Value>) -> Answer {
    let Some(id) = id else { return answer };
    let respond = |line: &str| -> Option<String> {
        let mut message: Value = serde_json::from_str(line).ok()?;
        if message.get("id").is_none() || message.get("method").is_some() {
            return None;
        }
        message["id"] = id.clone();
        Some(message.to_string())
    };
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    let rewritten: Vec<String> = body
        .split('\n')
        .map(|line| match line.strip_prefix("data: ") {
            Some(data) => respond(data).map_or(line.to_owned(), |m| format!("data: {m}")),
            None => respond(line).unwrap_or_else(|| line.to_owned()),
        })
        .collect();
    answer.body = rewritten.join("\n").into_bytes();
    answer
}

/// The text of a complete call.
fn text(called: Called) -> String {
    match called {
        Called::Complete(outcome) => outcome.text,
        other @ Called::InputRequired(_) => panic!("not complete: {other:?}"),
    }
}

fn json_answer(session: Option<&str>, body: Value) -> Result<Answer, OutboundError> {
    Ok(Answer {
        status: 200,
        content_type: "application/json".into(),
        session_id: session.map(str::to_owned),
        body: serde_json::to_vec(&body).unwrap(),
    })
}

fn sse_answer(messages: &[Value]) -> Result<Answer, OutboundError> {
    let body: String = messages
        .iter()
        .map(|m| format!("event: message\ndata: {m}\n\n"))
        .collect();
    Ok(Answer {
        status: 200,
        content_type: "text/event-stream".into(),
        session_id: None,
        body: body.into_bytes(),
    })
}

fn status(code: u16) -> Result<Answer, OutboundError> {
    Ok(Answer {
        status: code,
        content_type: "text/plain".into(),
        session_id: None,
        body: b"Session not found".to_vec(),
    })
}

/// A session server: `server/discover` refused as an unknown method, then `initialize`.
fn initialized(id: u64, session: &str) -> Vec<Result<Answer, OutboundError>> {
    vec![
        json_answer(
            None,
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Method not found" } }),
        ),
        json_answer(
            Some(session),
            json!({ "jsonrpc": "2.0", "id": id, "result": { "protocolVersion": "2025-06-18", "capabilities": {} } }),
        ),
        Ok(Answer {
            status: 202,
            content_type: String::new(),
            session_id: None,
            body: Vec::new(),
        }),
    ]
}

fn echo(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": { "content": [{ "type": "text", "text": "Echo: hi" }] } })
}

#[test]
fn a_forgotten_session_is_initialised_again_and_the_call_sent_once_more() {
    let mut answers = initialized(1, "s-1");
    answers.push(status(404));
    answers.extend(initialized(3, "s-2"));
    answers.push(sse_answer(&[echo(4)]));
    let http = Scripted::new(answers);
    let server = McpServer::streamable_http("e", "http://127.0.0.1:1/mcp").bearer("t0k");
    let connection = McpConnection::new(server);
    let outcome = block_on(connection.call(
        &*http,
        "echo",
        json!({ "message": "hi" }),
        "k",
        None,
        0,
        1_000,
    ))
    .unwrap();
    assert_eq!(text(outcome), "Echo: hi");
    let sent = http.sent();
    let methods: Vec<_> = sent
        .iter()
        .map(|(b, s)| (b["method"].as_str().unwrap().to_owned(), s.clone()))
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        methods,
        vec![
            ("server/discover".into(), None),
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-1")),
            ("tools/call".into(), s("s-1")),
            ("server/discover".into(), None),
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-2")),
            ("tools/call".into(), s("s-2")),
        ]
    );
    assert_eq!(sent[7].0["params"]["_meta"]["idempotencyKey"], "k");
    // A session revision's request carries no 2026-07-28 `_meta`.
    assert!(
        sent[7].0["params"]["_meta"]
            .get("io.modelcontextprotocol/protocolVersion")
            .is_none()
    );
    assert_eq!(
        sent[0].0["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let request = &http.sent.lock().unwrap()[7];
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("authorization"), Some("Bearer t0k"));
    assert_eq!(header("mcp-protocol-version"), Some("2025-06-18"));
    assert_eq!(
        header("accept"),
        Some("application/json, text/event-stream")
    );
}

#[test]
fn listing_pages_is_cached_and_refreshed_after_list_changed() {
    let mut answers = initialized(1, "s");
    answers.push(json_answer(None, json!({ "jsonrpc": "2.0", "id": 2, "result": {
        "tools": [{ "name": "a", "description": "A", "inputSchema": { "type": "object" } }], "nextCursor": "p2" } })));
    answers.push(sse_answer(&[
        json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": {} }),
        json!({ "jsonrpc": "2.0", "id": 3, "result": { "tools": [{ "name": "b" }] } }),
    ]));
    // The call's stream says the list changed: the next listing asks again.
    answers.push(sse_answer(&[
        json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
        echo(4),
    ]));
    answers.push(json_answer(
        None,
        json!({ "jsonrpc": "2.0", "id": 5, "result": { "tools": [] } }),
    ));
    let http = Scripted::new(answers);
    let connection = McpConnection::new(McpServer::streamable_http("e", "http://x/mcp"));
    let tools = block_on(connection.tools(&*http, 0, 1_000)).unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(tools[1].input_schema, json!({ "type": "object" }));
    assert_eq!(http.sent()[4].0["params"]["cursor"], "p2");
    // Cached: no request.
    assert_eq!(block_on(connection.tools(&*http, 0, 1_000)).unwrap(), tools);
    assert_eq!(http.sent().len(), 5);
    block_on(connection.call(&*http, "a", json!({}), "k", None, 0, 1_000)).unwrap();
    assert!(
        block_on(connection.tools(&*http, 0, 1_000))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn failures_say_whether_the_server_may_have_acted() {
    let connection = McpConnection::new(McpServer::streamable_http("e", "http://x/mcp"));
    let down = Scripted::new(vec![Err(OutboundError::NotSent("refused".into()))]);
    let error = block_on(connection.call(&*down, "a", json!({}), "k", None, 0, 1_000)).unwrap_err();
    assert!(matches!(error, McpError::NotSent(_)), "{error:?}");

    // The refused initialize took id 1.
    let mut answers = initialized(2, "s");
    answers.push(Err(OutboundError::InDoubt("timed out".into())));
    answers.push(json_answer(
        None,
        json!({ "jsonrpc": "2.0", "id": 4, "error": { "code": -32602, "message": "Tool z not found" } }),
    ));
    answers.push(Ok(Answer {
        status: 200,
        content_type: "application/json".into(),
        session_id: None,
        body: b"<html>oops</html>".to_vec(),
    }));
    let http = Scripted::new(answers);
    let timed_out =
        block_on(connection.call(&*http, "a", json!({}), "k", None, 0, 1_000)).unwrap_err();
    assert!(matches!(timed_out, McpError::InDoubt(_)), "{timed_out:?}");
    let refused =
        block_on(connection.call(&*http, "z", json!({}), "k", None, 0, 1_000)).unwrap_err();
    assert_eq!(refused, McpError::Rpc(-32602, "Tool z not found".into()));
    let garbage =
        block_on(connection.call(&*http, "a", json!({}), "k", None, 0, 1_000)).unwrap_err();
    assert!(matches!(garbage, McpError::Unusable(_)), "{garbage:?}");
}

fn token(value: &str, expires_in: u64) -> Result<Answer, OutboundError> {
    json_answer(
        None,
        json!({ "access_token": value, "token_type": "Bearer", "expires_in": expires_in }),
    )
}

#[test]
fn client_credentials_tokens_are_cached_renewed_and_replaced_after_a_401() {
    let mut answers = vec![token("A", 60)];
    answers.extend(initialized(1, "s"));
    answers.push(json_answer(None, echo(2)));
    answers.push(json_answer(None, echo(3)));
    // Past expires_in minus the margin: a new token first.
    answers.push(token("B", 60));
    answers.push(json_answer(None, echo(4)));
    // Revoked early: the server refuses it, a new token, the same request again.
    answers.push(status(401));
    answers.push(token("C", 60));
    answers.push(json_answer(None, echo(5)));
    let http = Scripted::new(answers);
    let credentials =
        ClientCredentials::new("http://auth.test/token", "agent", "s3cr3t").audience("urn:mcp:e");
    let server =
        McpServer::streamable_http("e", "http://e.test/mcp").client_credentials(credentials);
    let connection = McpConnection::new(server);
    for now_ms in [0, 10_000, 31_000, 32_000] {
        let outcome =
            block_on(connection.call(&*http, "echo", json!({}), "k", None, now_ms, 1_000)).unwrap();
        assert_eq!(text(outcome), "Echo: hi");
    }
    let sent = http.sent.lock().unwrap();
    let summary: Vec<(String, String)> = sent
        .iter()
        .map(|r| {
            let auth = r
                .headers
                .iter()
                .find(|(n, _)| n == "authorization")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            (r.url.clone(), auth)
        })
        .collect();
    let mcp = |token: &str| ("http://e.test/mcp".to_owned(), format!("Bearer {token}"));
    // base64("agent:s3cr3t"): the client's own id and secret, HTTP Basic.
    let auth = (
        "http://auth.test/token".to_owned(),
        "Basic YWdlbnQ6czNjcjN0".to_owned(),
    );
    assert_eq!(
        summary,
        vec![
            auth.clone(),
            mcp("A"),
            mcp("A"),
            mcp("A"),
            mcp("A"),
            mcp("A"),
            auth.clone(),
            mcp("B"),
            mcp("B"),
            auth,
            mcp("C"),
        ]
    );
    let form = String::from_utf8(sent[0].body.clone()).unwrap();
    assert_eq!(
        form,
        "grant_type=client_credentials&resource=http%3A%2F%2Fe.test%2Fmcp&audience=urn%3Amcp%3Ae"
    );
    // The refused request went again as it was.
    assert_eq!(sent[8].body, sent[10].body);
}

#[test]
fn a_token_endpoint_that_fails_means_the_call_was_not_sent() {
    let server = McpServer::streamable_http("e", "http://e.test/mcp").client_credentials(
        ClientCredentials::new("http://auth.test/token", "agent", "s3cr3t"),
    );
    for answer in [
        json_answer(
            None,
            json!({ "error": "invalid_client", "error_description": "bad s3cr3t" }),
        )
        .map(|r| Answer { status: 401, ..r }),
        Err(OutboundError::InDoubt("timed out".into())),
    ] {
        let connection = McpConnection::new(server.clone());
        let http = Scripted::new(vec![answer]);
        let error =
            block_on(connection.call(&*http, "a", json!({}), "k", None, 0, 1_000)).unwrap_err();
        assert!(matches!(error, McpError::NotSent(_)), "{error:?}");
        assert!(!error.to_string().contains("s3cr3t"), "{error}");
        assert_eq!(
            http.sent.lock().unwrap().len(),
            1,
            "the MCP server was never called"
        );
    }
}

#[test]
fn shared_connections_keep_one_session_per_server_and_credential() {
    let server = McpServer::streamable_http("shared-e", "http://e.test/mcp").bearer("one");
    let mut answers = initialized(1, "s");
    answers.push(json_answer(None, echo(2)));
    answers.push(json_answer(None, echo(3)));
    let http = Scripted::new(answers);
    // Built per request, as on Workers: the second finds the first's session.
    for _ in 0..2 {
        let connection = McpConnection::shared(server.clone());
        block_on(connection.call(&*http, "echo", json!({}), "k", None, 0, 1_000)).unwrap();
    }
    assert_eq!(http.sent().len(), 5, "one initialize for both");
    // Another credential is another client of the server: its own session.
    let other = McpConnection::shared(server.clone().bearer("two"));
    let mut answers = initialized(1, "t");
    answers.push(json_answer(None, echo(2)));
    let http = Scripted::new(answers);
    block_on(other.call(&*http, "echo", json!({}), "k", None, 0, 1_000)).unwrap();
    assert_eq!(http.sent()[1].0["method"], "initialize");
}

/// A timer that does not wait (the test's clock does not matter).
struct NoWait;

impl handoff_core::Sleep for NoWait {
    fn sleep(&self, _millis: u64) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(futures::future::ready(()))
    }
}

#[test]
fn a_stream_closed_before_the_response_is_resumed_with_last_event_id() {
    let mut answers = initialized(1, "s");
    // The call's stream: an event with an id and a retry, then closed.
    answers.push(Ok(Answer {
        status: 200,
        content_type: "text/event-stream".into(),
        session_id: None,
        body: b"id: e1\nretry: 5\ndata: \n\n".to_vec(),
    }));
    // The first GET brings only another event; the second the response.
    answers.push(Ok(Answer {
        status: 200,
        content_type: "text/event-stream".into(),
        session_id: None,
        body: b"id: e2\ndata: \n\n".to_vec(),
    }));
    answers.push(sse_answer(&[echo(3)]));
    let http = Scripted::new(answers);
    let connection = McpConnection::new(McpServer::streamable_http("e", "http://x/mcp"));
    connection.set_sleep(Arc::new(NoWait));
    let outcome = block_on(connection.call(&*http, "echo", json!({}), "k", None, 0, 1_000));
    assert_eq!(text(outcome.unwrap()), "Echo: hi");
    let sent = http.sent.lock().unwrap();
    let gets: Vec<_> = sent.iter().filter(|r| r.body.is_empty()).collect();
    assert_eq!(gets.len(), 2, "two reconnections");
    let header = |r: &Sent, name: &str| {
        r.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header(gets[0], "last-event-id").as_deref(), Some("e1"));
    assert_eq!(header(gets[1], "last-event-id").as_deref(), Some("e2"));
    assert_eq!(header(gets[1], "mcp-session-id").as_deref(), Some("s"));
    drop(sent);

    // Without a timer there is no resuming: the answer is unusable, nothing is waited on.
    let mut answers = initialized(1, "s");
    answers.push(Ok(Answer {
        status: 200,
        content_type: "text/event-stream".into(),
        session_id: None,
        body: b"id: e1\ndata: \n\n".to_vec(),
    }));
    let http = Scripted::new(answers);
    let connection = McpConnection::new(McpServer::streamable_http("e", "http://x/mcp"));
    let error = block_on(connection.call(&*http, "echo", json!({}), "k", None, 0, 1_000));
    assert!(matches!(error, Err(McpError::Unusable(_))), "{error:?}");
}
