//! The Handoff starter: copy this crate and replace the agent.
//!
//! An expense agent, one deterministic turn per run (no LLM), showing the three
//! kinds of tool a real agent needs:
//!
//! 1. **Backend tool** `check_policy`: called and answered inside the run
//!    (`TOOL_CALL_*` then `TOOL_CALL_RESULT`).
//! 2. **Approval** before a side effect: the run ends with an interrupt bound to
//!    the `submit_expense` call, with a `responseSchema`. The answer arrives as a
//!    second run (`resume[]`, on any instance); the expense is filed through
//!    [`RunContext::effect`], so a replayed or duplicated answer files it once.
//! 3. **Frontend tool** `show_receipt`: offered by the client in
//!    `RunAgentInput.tools`; the agent calls it and the run ends with
//!    `pendingToolCallIds`. The client runs it and sends its result back as a
//!    `tool` message, which starts the next run.
//!
//! Hosts: `src/bin/starter.rs` (local, feature `server`), `src/bin/starter-lambda.rs`
//! (feature `lambda`) and, with feature `worker`, the Cloudflare Worker below.
//!
//! # Copying it
//!
//! The crate inherits nothing from Handoff's workspace. Its paths to Handoff (`handoff` in
//! `Cargo.toml`, the Lambda client patch in `.cargo/config.toml`, the console's assets in
//! `wrangler.toml`) are relative to `functions/starter`; a copy points them at your clone:
//!
//! ```sh
//! HANDOFF=$PWD   # the root of your clone of Handoff
//! cp -r functions/starter ~/my-agent && cp Cargo.lock ~/my-agent/
//! cd ~/my-agent && sed -i "s#\.\./\.\./shared/#$HANDOFF/shared/#" Cargo.toml .cargo/config.toml wrangler.toml
//! cargo run --bin starter   # then rename the package, the binaries and the agent
//! ```
//!
//! `.cargo/config.toml` patches `lambda_runtime_api_client` with Handoff's vendored copy, which
//! sets `TCP_NODELAY` (about 36 ms off each Lambda response's first byte); cargo reads it when run
//! from the crate's directory (or move the patch into `Cargo.toml` as `[patch.crates-io]`).
//! Copying `Cargo.lock` is optional: it pins the versions Handoff is tested with.
//! `tests/tests/starter_copy.rs` in Handoff's repository does exactly this and builds the copy.
//!
//! # Answers
//!
//! - An interrupt's `reason` is free text for the client (AG-UI names `tool_call`, used when
//!   the interrupt is about a tool call, `input_required`, `confirmation`, or a namespaced
//!   `<framework>:<name>`). The engine does not interpret it: approval rules come from the
//!   [`ApprovalPolicy`] attached with [`WithApproval::with_approval`], whatever the reason.
//!   Read it back as `decision.interrupt.reason` when an agent asks more than one kind of
//!   question.
//! - [`Decision::approved`] reads the answer's `approved`; [`Decision::payload_as`] reads the
//!   whole answer as your type (here [`Approval`]), [`Decision::field`] one member, and
//!   [`Decision::args`] the tool call's arguments (an approver's allowed `editedArgs`, else
//!   the proposed ones).
//! - The answer's type is the single source of its `responseSchema`: [`approval_schema`]
//!   derives it with `schemars`, and [`Agent::answer_validator`] checks answers by
//!   deserializing them into that type (a wrong one: 422 `RESUME_PAYLOAD_INVALID`, nothing
//!   written).
//!
//! ```
//! use futures::StreamExt;
//! use handoff::{Engine, Principal, RunOptions, Runtime, runtime, store::memory::MemoryStore};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ids = runtime::SequentialIds::new("doc");
//! let runtime = Runtime::new(runtime::ManualClock::new(0), ids, runtime::NeverSleep);
//! let engine = Engine::new(starter::ExpenseAgent, std::sync::Arc::new(MemoryStore::new()), runtime);
//! futures::executor::block_on(async {
//!     let ask = json!({"threadId": "t", "runId": "r1",
//!         "messages": [{"id": "m1", "role": "user", "content": "Expense 42.50 for team lunch"}]});
//!     let _: Vec<_> = engine.start(serde_json::from_value(ask)?, RunOptions::default()).await?.collect().await;
//!     let thread = engine.thread(&Principal::anonymous(), "t").await?.expect("the thread exists");
//!     assert_eq!(thread.pending_interrupts.len(), 1, "waiting for approval");
//!     Ok(())
//! })
//! # }
//! ```

use std::sync::Arc;

use handoff::schema::{SchemaValidator, TypedAnswers};
use handoff::{
    Agent, AgentError, ApprovalPolicy, Decision, Finish, Interrupt, Message, RunContext,
    WithApproval,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// Expenses above this amount are refused without asking.
pub const POLICY_LIMIT: f64 = 100.0;

/// The frontend tool the agent calls when the client offers it.
pub const SHOW_RECEIPT: &str = "show_receipt";

/// Files expenses after asking; see the [crate docs](crate).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExpenseAgent;

/// The answer to the approval. Its JSON Schema, the interrupt's `responseSchema`, is
/// derived from it ([`approval_schema`]); answers are checked by deserializing into it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct Approval {
    /// File the expense (`true`) or not.
    pub approved: bool,
    /// Why, if the approver says so.
    #[serde(default)]
    pub note: Option<String>,
}

/// What the client is told to send: [`Approval`]'s JSON Schema (draft 2020-12).
pub fn approval_schema() -> Value {
    schemars::schema_for!(Approval).into()
}

#[handoff::async_trait]
impl Agent for ExpenseAgent {
    fn name(&self) -> &str {
        "expense-starter"
    }

    /// Answers are checked against the agent's own types, before anything is written: a
    /// wrong one gets 422 `RESUME_PAYLOAD_INVALID`. (With the `json-schema` feature of
    /// `handoff`, leave this out to check any schema with the `jsonschema` crate.)
    fn answer_validator(&self) -> Option<Arc<dyn SchemaValidator>> {
        Some(Arc::new(
            TypedAnswers::new().answer::<Approval>(approval_schema()),
        ))
    }

    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        // Run 2: the answer to the approval.
        if let Some(answer) = ctx.decisions().first().cloned() {
            return file_expense(ctx, &answer).await;
        }
        // Run 3: the client ran `show_receipt` and sent its result back.
        if let Some(Message::Tool(shown)) = ctx.messages().last() {
            let text = format!("Your receipt is on screen ({}).", shown.content.text());
            ctx.say(&text);
            return Ok(Finish::done());
        }
        // Run 1: a new request.
        let request = ctx.last_user_text().unwrap_or_default();
        let Some(amount) = parse_amount(&request) else {
            ctx.say("Tell me what to file, e.g. \"Expense 42.50 for team lunch\".");
            return Ok(Finish::done());
        };
        // A backend tool: called and answered here.
        let check = ctx.tool_call("check_policy", &json!({ "amount": amount }));
        let within = amount <= POLICY_LIMIT;
        let verdict = json!({ "withinPolicy": within, "limit": POLICY_LIMIT });
        ctx.tool_result(&check, verdict.to_string());
        if !within {
            ctx.say(&format!(
                "{amount:.2} EUR is over the {POLICY_LIMIT:.2} EUR limit: not filed."
            ));
            return Ok(Finish::done());
        }
        // A side effect: announce the call, then stop and ask. Nothing waits in memory.
        let submit = ctx.tool_call("submit_expense", &json!({ "amount": amount }));
        ctx.set_state(json!({ "expense": { "amount": amount, "status": "awaiting_approval" } }));
        Ok(Finish::interrupt(
            Interrupt::new(ctx.new_id("int"), "tool_call")
                .with_tool_call(submit)
                .with_message(format!("File {amount:.2} EUR?"))
                .with_response_schema(approval_schema())
                // Who may answer and what an answer may change, enforced by the engine on
                // every route: here the thread's owner, no edits. A team adds
                // `.role("approver").not_requester()` for four eyes.
                .with_approval(&ApprovalPolicy::new().fixed("amount")),
        ))
    }
}

/// Run 2: files the expense once if approved, then asks the client to show the receipt.
async fn file_expense(ctx: &mut RunContext, answer: &Decision) -> Result<Finish, AgentError> {
    let amount = ctx.state()["expense"]["amount"]
        .as_f64()
        .unwrap_or_default();
    // A `cancelled` answer has no payload; a resolved one was checked against `Approval`
    // before this run started, and reads back as that type.
    let approval = match answer.is_cancelled() {
        true => None,
        false => Some(answer.payload_as::<Approval>()?),
    };
    let Some(Approval { approved: true, .. }) = approval else {
        ctx.set_state(json!({ "expense": { "amount": amount, "status": "declined" } }));
        let text = match approval.and_then(|a| a.note) {
            Some(note) => format!("Not filed: {note}"),
            None => "Not filed.".to_owned(),
        };
        ctx.say(&text);
        return Ok(Finish::done());
    };
    let call = answer
        .tool_call_id()
        .cloned()
        .ok_or("the approval is bound to submit_expense")?;
    // At most once per key and thread: a duplicate answer gets the recorded receipt.
    let fresh = ctx.new_id("EXP");
    let receipt: String = ctx
        .effect(&format!("submit/{call}"), |idempotency_key| async move {
            // Call your expense API here, passing it `idempotency_key`.
            let _ = idempotency_key;
            Ok::<_, String>(fresh)
        })
        .await?;
    ctx.tool_result(
        &call,
        json!({ "status": "filed", "receipt": receipt }).to_string(),
    );
    ctx.set_state(
        json!({ "expense": { "amount": amount, "status": "filed", "receipt": receipt } }),
    );
    ctx.say(&format!("Filed {amount:.2} EUR as {receipt}."));
    // A frontend tool: call it only if the client offers it; the run then ends with
    // `pendingToolCallIds` and the client's result starts the next run.
    if ctx
        .input()
        .tool_list()
        .iter()
        .any(|t| t.name == SHOW_RECEIPT)
    {
        let args: Value = json!({ "receipt": receipt, "amount": amount });
        ctx.tool_call(SHOW_RECEIPT, &args);
    }
    Ok(Finish::done())
}

/// The first number in the text (`42.50`, `42,50 €`, `$7`).
fn parse_amount(text: &str) -> Option<f64> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_ascii_digit()))
        .find_map(|word| word.replace(',', ".").parse::<f64>().ok())
        .filter(|amount| amount.is_finite() && *amount > 0.0)
}

/// The Cloudflare Worker (`wrangler.toml` binds `PARTITIONS` and `BLOBS`).
#[cfg(feature = "worker")]
mod cloudflare {
    /// The Durable Object class that owns each thread; exported for the runtime.
    pub use handoff::worker::PartitionObject;

    #[worker::event(fetch)]
    async fn fetch(
        req: worker::HttpRequest,
        env: worker::Env,
        ctx: worker::Context,
    ) -> worker::Result<handoff::worker::Response> {
        handoff::worker::serve(req, env, ctx, super::ExpenseAgent).await
    }
}
#[cfg(feature = "worker")]
pub use cloudflare::PartitionObject;

#[cfg(test)]
mod tests {
    use handoff::Agent;
    use handoff::schema::{JsonSchema, SchemaValidator};
    use serde_json::json;

    use super::{ExpenseAgent, approval_schema, parse_amount};

    #[test]
    fn the_approval_type_accepts_what_its_schema_accepts() {
        let typed = ExpenseAgent
            .answer_validator()
            .expect("the agent checks its answers");
        let schema = approval_schema();
        let answers = [
            json!({"approved": true}),
            json!({"approved": false, "note": "over budget"}),
            json!({"approved": false, "note": null}),
            json!({"approved": false, "note": 5}),
            json!({"approved": true, "other": "ignored"}),
            json!({"approved": "yes"}),
            json!({"approved": null}),
            json!({"approved": 1}),
            json!({}),
            json!([true]),
            json!([]),
            json!(true),
            json!("approved"),
            json!(null),
        ];
        for answer in answers {
            let by_schema = JsonSchema.validate(&schema, &answer).is_ok();
            let by_type = typed.validate(&schema, &answer).is_ok();
            assert_eq!(by_type, by_schema, "{answer}");
        }
        assert!(typed.validate(&schema, &json!({"approved": true})).is_ok());
    }

    #[test]
    fn the_schema_is_derived_from_the_type() {
        let schema = approval_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["approved"]));
        assert_eq!(schema["properties"]["approved"]["type"], "boolean");
        assert_eq!(
            schema["properties"]["note"]["type"],
            json!(["string", "null"])
        );
    }

    #[test]
    fn amounts() {
        assert_eq!(parse_amount("Expense 42.50 for team lunch"), Some(42.5));
        assert_eq!(parse_amount("taxi 7,20€"), Some(7.2));
        assert_eq!(parse_amount("$12 coffee"), Some(12.0));
        assert_eq!(parse_amount("hello"), None);
        assert_eq!(parse_amount("0 things"), None);
    }
}
