//! The delegation client hands its idempotency key to the agent: a retry after
//! an in-doubt send (the request reached the agent, the answer was lost) sends
//! the same `messageId` and `Idempotency-Key`, so the agent can recognise it.
//! The agent here is a scripted transport that records what it receives and
//! loses the first answer on request (the fault under test).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::*;
use handoff_a2a::a2a_types::{Message, Part, Role};
use handoff_a2a::{A2aClient, ClientError, Delegate, TokenSource};
use handoff_core::outbound::{Body, Outbound, OutboundError, whole};
use serde_json::{Value, json};

const AGENT: &str = "https://fraud.example.com";

/// A remote agent with a v1.0 or a v0.3 card that records every request.
struct RecordingAgent {
    card: Value,
    requests: Mutex<Vec<http::Request<Vec<u8>>>>,
    lose_next_answer: AtomicBool,
}

impl RecordingAgent {
    fn new(card: Value) -> Arc<Self> {
        Arc::new(RecordingAgent {
            card,
            requests: Mutex::new(Vec::new()),
            lose_next_answer: AtomicBool::new(false),
        })
    }

    /// `(messageId, Idempotency-Key)` of every send, in order.
    fn sends(&self) -> Vec<(String, Option<String>)> {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .filter(|r| r.method() == http::Method::POST)
            .map(|r| {
                let body: Value = serde_json::from_slice(r.body()).unwrap();
                let message_id = body["params"]["message"]["messageId"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let key = r
                    .headers()
                    .get("idempotency-key")
                    .map(|value| value.to_str().unwrap().to_owned());
                (message_id, key)
            })
            .collect()
    }
}

#[async_trait]
impl Outbound for RecordingAgent {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let is_send = request.method() == http::Method::POST;
        let id = serde_json::from_slice::<Value>(request.body())
            .map_or(Value::Null, |b| b["id"].clone());
        self.requests.lock().unwrap().push(request);
        if !is_send {
            let card = serde_json::to_vec(&self.card).unwrap();
            return Ok(http::Response::new(whole(card)));
        }
        if self.lose_next_answer.swap(false, Ordering::SeqCst) {
            return Err(OutboundError::InDoubt(
                "connection reset after the request was sent".into(),
            ));
        }
        let task =
            json!({"id": TASK, "contextId": "ctx-1", "status": {"state": "TASK_STATE_SUBMITTED"}});
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}});
        Ok(http::Response::new(whole(
            serde_json::to_vec(&answer).unwrap(),
        )))
    }
}

struct FixedTokens;

impl TokenSource for FixedTokens {
    fn token(&self) -> String {
        TOKEN.to_owned()
    }
}

fn v1_card() -> Value {
    json!({
        "name": "fraud-review",
        "capabilities": {"pushNotifications": true},
        "supportedInterfaces": [{"url": format!("{AGENT}/a2a/jsonrpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    })
}

fn v03_card() -> Value {
    json!({
        "name": "fraud-review",
        "url": format!("{AGENT}/a2a/jsonrpc"),
        "protocolVersion": "0.3.0",
        "capabilities": {"pushNotifications": true}
    })
}

fn delegation(idempotency_key: &str) -> Delegate {
    Delegate {
        thread_id: THREAD.to_owned(),
        agent_url: AGENT.to_owned(),
        callback_base_url: "https://agents.example.com".to_owned(),
        message: Message::new(
            "chosen-by-the-caller",
            Role::User,
            vec![Part::text("Fraud review for order A1024")],
        ),
        idempotency_key: idempotency_key.to_owned(),
        ttl_ms: None,
        sender_jwt: None,
    }
}

#[tokio::test]
async fn a_retried_delegation_resends_the_same_message_id_and_key() {
    for card in [v1_card(), v03_card()] {
        let h = Harness::new();
        let agent = RecordingAgent::new(card.clone());
        let client = A2aClient::new(agent.clone(), Arc::new(FixedTokens), false);
        let key = "thread-1/a2a:fraud:A1024";

        agent.lose_next_answer.store(true, Ordering::SeqCst);
        let lost = client.delegate(&h.receiver, delegation(key)).await;
        assert!(matches!(lost, Err(ClientError::Transport(_))), "{lost:?}");
        let retried = client.delegate(&h.receiver, delegation(key)).await;
        assert_eq!(retried.expect("the retry is answered").task_id, TASK);

        let expected = (key.to_owned(), Some(key.to_owned()));
        assert_eq!(
            agent.sends(),
            vec![expected.clone(), expected],
            "card {card}"
        );
    }
}

#[tokio::test]
async fn different_keys_are_different_messages() {
    let h = Harness::new();
    let agent = RecordingAgent::new(v1_card());
    let client = A2aClient::new(agent.clone(), Arc::new(FixedTokens), false);
    for key in ["thread-1/a2a:fraud:A1024", "thread-1/a2a:fraud:B2048"] {
        client.delegate(&h.receiver, delegation(key)).await.unwrap();
    }
    let ids: Vec<String> = agent.sends().into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids,
        ["thread-1/a2a:fraud:A1024", "thread-1/a2a:fraud:B2048"]
    );
}
