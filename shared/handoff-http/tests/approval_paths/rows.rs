//! The rows of the approval-path table: one per way Handoff raises an approval. Each
//! builds hosts over one shared store whose approval needs role `approver` and someone
//! other than the requester, and counts how often the approved action really executed.

use super::mcp_answer::Answer;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use handoff_core::outbound::{Body, Outbound, OutboundError, whole};
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Agent, ApprovalPolicy, ApprovalSource, Engine, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_llm::mcp::McpServer;
use handoff_llm::{BackendTool, LlmAgent, Provider};
use serde_json::{Value, json};

use super::named::Named;
use handoff_http::{HttpConfig, Routes};

/// One way of raising an approval, and the scenario's inputs for it.
pub(crate) struct Row {
    pub name: &'static str,
    pub source: ApprovalSource,
    pub build: fn() -> Case,
}

/// What a row's scenario runs against.
pub(crate) struct Case {
    /// The host the requester asks on.
    pub ask: axum::Router,
    /// The host answers go to (another instance over the same store).
    pub answer: axum::Router,
    /// The requester's message.
    pub text: &'static str,
    /// An edit the policy does not allow.
    pub bad_edit: Value,
    /// How many times the approved action executed.
    pub executed: Box<dyn Fn() -> usize + Send + Sync>,
}

pub(crate) const ROWS: &[Row] = &[
    Row {
        name: "scripted demo",
        source: ApprovalSource::Agent,
        build: scripted_demo,
    },
    Row {
        name: "LLM backend tool",
        source: ApprovalSource::BackendTool,
        build: backend_tool,
    },
    Row {
        name: "requiring_approval_by",
        source: ApprovalSource::BackendToolByArgs,
        build: by_args,
    },
    Row {
        name: "MCP tool",
        source: ApprovalSource::McpTool,
        build: || mcp(false),
    },
    Row {
        name: "MCP tool answered where its server cannot be listed",
        source: ApprovalSource::McpTool,
        build: || mcp(true),
    },
];

fn engine(agent: impl Agent, store: &Arc<dyn Store>, ids: &str) -> axum::Router {
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new(ids),
        NeverSleep,
    );
    let engine = Engine::new(agent, store.clone(), runtime);
    Routes::new(engine, HttpConfig::default())
        .authenticator(Arc::new(Named))
        .build()
}

fn provider() -> Provider {
    Provider::OpenAi {
        base_url: "http://model.invalid/v1".into(),
        api_key: String::new(),
        model: "stand-in".into(),
    }
}

fn four_eyes() -> ApprovalPolicy {
    ApprovalPolicy::new().role("approver").not_requester()
}

fn scripted_demo() -> Case {
    demo(Some(0))
}

/// The scripted demo without an approval policy: its requester may answer.
pub(crate) fn open_demo() -> Case {
    demo(None)
}

fn demo(approver_above_cents: Option<u64>) -> Case {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let config = DemoConfig {
        approver_above_cents,
        ..DemoConfig::default()
    };
    let agent = DemoAgent::new(store.clone(), config.clone());
    let ledger = agent.ledger().clone();
    let other = DemoAgent::new(store.clone(), config);
    Case {
        ask: engine(agent, &store, "a"),
        answer: engine(other, &store, "b"),
        text: "Refund order A1024",
        bad_edit: json!({"orderId": "A1024", "amountCents": 99_999_999, "currency": "EUR"}),
        executed: Box::new(move || {
            let ledger = ledger.clone();
            futures::executor::block_on(ledger.account("A1024", 0))
                .unwrap()
                .refunds as usize
        }),
    }
}

/// A model that calls `tool` with `args` once, then answers in text.
struct Model {
    turns: Mutex<VecDeque<String>>,
}

impl Model {
    fn calling(tool: &str, args: Value) -> Arc<Self> {
        let call = json!({"tool_calls": [{"index": 0, "id": "call_1",
            "function": {"name": tool, "arguments": args.to_string()}}]});
        Arc::new(Model {
            turns: Mutex::new(VecDeque::from([turn(call, "tool_calls")])),
        })
    }
}

fn turn(delta: Value, finish: &str) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        let chunk = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {chunk}\n\n")
    };
    chunk(delta, None) + &chunk(json!({}), Some(finish)) + "data: [DONE]\n\n"
}

#[async_trait]
impl Outbound for Model {
    async fn send(
        &self,
        _request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        let next = self.turns.lock().unwrap().pop_front();
        let body = next.unwrap_or_else(|| turn(json!({"content": "Done."}), "stop"));
        Ok(http::Response::new(whole(body.into_bytes())))
    }
}

/// `charge {cents}` counting its executions.
fn charge(count: &Arc<AtomicUsize>) -> BackendTool {
    let count = count.clone();
    let schema = json!({"type": "object", "properties": {"cents": {"type": "integer"}}, "required": ["cents"]});
    BackendTool::new("charge", "Charges", schema, move |args, _key| {
        let count = count.clone();
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"charged": args["cents"]}))
        }
    })
}

fn llm_case(tool: impl Fn(&Arc<AtomicUsize>) -> BackendTool) -> Case {
    llm_case_with(json!({"cents": 500}), tool)
}

fn llm_case_with(args: Value, tool: impl Fn(&Arc<AtomicUsize>) -> BackendTool) -> Case {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let count = Arc::new(AtomicUsize::new(0));
    let model = Model::calling("charge", args);
    let agent = |model: Arc<Model>| LlmAgent::new("charger", provider(), model).tool(tool(&count));
    let executed = count.clone();
    Case {
        ask: engine(agent(model.clone()), &store, "a"),
        answer: engine(agent(model), &store, "b"),
        text: "Charge 5.00",
        bad_edit: json!({"cents": 900}),
        executed: Box::new(move || executed.load(Ordering::SeqCst)),
    }
}

fn backend_tool() -> Case {
    llm_case(|count| charge(count).requiring_approval(four_eyes().at_most_original("cents")))
}

/// Above 100 cents an approver other than the requester; up to 100 the owner approves
/// and may change the amount.
fn by_args_policy(args: &Value) -> ApprovalPolicy {
    match args["cents"].as_u64() {
        Some(cents) if cents <= 100 => ApprovalPolicy::new().editable("cents"),
        _ => ApprovalPolicy::new()
            .at_most_original("cents")
            .role("approver")
            .not_requester(),
    }
}

/// `charge` under [`by_args_policy`], proposing 50 cents.
pub(crate) fn by_args_small() -> Case {
    llm_case_with(json!({"cents": 50}), |count| {
        charge(count).requiring_approval_by(by_args_policy)
    })
}

fn by_args() -> Case {
    llm_case(|count| charge(count).requiring_approval_by(by_args_policy))
}

/// An MCP server in process with one tool, `pay`; `listing_down` refuses `tools/list`.
#[derive(Default)]
struct Bank {
    calls: AtomicUsize,
    listing_down: bool,
}

#[async_trait]
impl Outbound for Bank {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Body>, OutboundError> {
        self.post(&request).map(Answer::into_response)
    }
}

impl Bank {
    fn post(&self, request: &http::Request<Vec<u8>>) -> Result<Answer, OutboundError> {
        let message: Value = serde_json::from_slice(request.body()).unwrap();
        let answer = |result: Value| {
            let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
            Ok(Answer {
                status: 200,
                content_type: "application/json".into(),
                session_id: Some("s".into()),
                body: serde_json::to_vec(&body).unwrap(),
            })
        };
        match message["method"].as_str().unwrap_or_default() {
            "initialize" => answer(json!({"protocolVersion": "2025-06-18", "capabilities": {}})),
            "tools/list" if self.listing_down => Err(OutboundError::NotSent("refused".into())),
            "tools/list" => answer(json!({"tools": [{"name": "pay", "description": "Pays",
                "inputSchema": {"type": "object", "properties": {"cents": {"type": "integer"}}}}]})),
            "tools/call" => {
                self.calls.fetch_add(1, Ordering::SeqCst);
                answer(json!({"content": [{"type": "text", "text": "paid"}]}))
            }
            _ => Ok(Answer {
                status: 202,
                content_type: String::new(),
                session_id: None,
                body: Vec::new(),
            }),
        }
    }
}

fn mcp(listing_down_at_answer: bool) -> Case {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let asking = Arc::new(Bank::default());
    let answering = match listing_down_at_answer {
        true => Arc::new(Bank {
            listing_down: true,
            ..Bank::default()
        }),
        false => asking.clone(),
    };
    let agent = |model: Arc<Model>, bank: Arc<Bank>| {
        let server = McpServer::streamable_http("bank", "https://bank.example/mcp")
            .tool_requiring_approval("pay", four_eyes());
        LlmAgent::new("payer", provider(), model)
            .mcp(server)
            .mcp_http(bank)
    };
    let model = Model::calling("bank__pay", json!({"cents": 500}));
    let (a, b) = (asking.clone(), answering.clone());
    Case {
        ask: engine(agent(model.clone(), asking), &store, "a"),
        answer: engine(agent(model, answering), &store, "b"),
        text: "Pay 5.00",
        bad_edit: json!({"cents": 1}),
        executed: Box::new(move || {
            let both = a.calls.load(Ordering::SeqCst);
            if Arc::ptr_eq(&a, &b) {
                both
            } else {
                both + b.calls.load(Ordering::SeqCst)
            }
        }),
    }
}
