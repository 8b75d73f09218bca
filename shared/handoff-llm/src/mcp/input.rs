//! A tool call the server answers with `input_required` (2026-07-28's multi round-trip
//! requests) as Handoff interrupts, and the human's answers as the retry's
//! `inputResponses`.
//!
//! The call ran inside `ctx.effect` like any other, and what it recorded is the server's
//! question: its `requestState`, `inputRequests` and the arguments sent (the state is
//! bound to them). That record stays on the server side (the store), never on the wire.
//! Each form-mode elicitation becomes one interrupt (`reason: "mcp_input"`, the
//! request's message, its `requestedSchema` as `responseSchema`), a URL-mode one an
//! interrupt naming the URL, and a result with only a `requestState` (the server waits
//! for an approver elsewhere) one `mcp_waiting` interrupt whose answer asks again. Every
//! one is raised under the tool's approval policy (the thread's owner answers when the
//! server sets none), so the engine enforces who may answer before any retry is sent.
//!
//! The answer's run reads the record back (a replay: nothing is called) and retries the
//! same tool with the same arguments, the `requestState` echoed and each answer as
//! `{"action": "accept", "content": payload}` (`cancelled`: `{"action": "cancel"}`),
//! inside `ctx.effect` under `tool-{toolCallId}-input-{n}`: a replayed or racing answer
//! gets the recorded result, and the server is asked once per round. A server that asks
//! again is asked again, up to [`MAX_ROUNDS`].

use agui_protocol::{Interrupt, Metadata, ResumeStatus, ToolCallId};
use handoff_core::{ApprovalPolicy, ApprovalSource, Decision, RaisedInterrupt};
use serde_json::{Map, Value, json};

use super::result::{InputAnswers, InputRequired};

/// The interrupt metadata member naming an MCP tool: `{"server": …, "tool": …}` (the
/// tool's MCP name; the offered name is not reversible once cut or hashed).
pub const METADATA_KEY: &str = "mcp";

/// Rounds of questions one tool call may ask before the model hears it gave up.
pub const MAX_ROUNDS: u64 = 8;
/// The recorded value's member holding the server's question.
const PENDING: &str = "mcpInputRequired";

/// A question the server asks (an elicitation).
pub const REASON_INPUT: &str = "mcp_input";
/// The server waits for an approver elsewhere.
pub const REASON_WAITING: &str = "mcp_waiting";

/// What the server asked, as recorded by the call's effect.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pending {
    pub(crate) question: InputRequired,
    /// The arguments the call was sent with.
    pub(crate) arguments: Value,
}

/// The value a call that asked for input records.
pub(crate) fn recorded(question: &InputRequired, arguments: &Value) -> Value {
    let mut pending = json!({
        "inputRequests": question.input_requests,
        "arguments": arguments,
    });
    if let Some(state) = &question.request_state {
        pending["requestState"] = json!(state);
    }
    json!({ PENDING: pending })
}

/// The question in a call's recorded value, if it asked one.
pub(crate) fn pending(result: &Value) -> Option<Pending> {
    let pending = result.get(PENDING)?;
    Some(Pending {
        question: InputRequired {
            input_requests: pending.get("inputRequests")?.as_object()?.clone(),
            request_state: pending
                .get("requestState")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        arguments: pending.get("arguments")?.clone(),
    })
}

/// The effect key of attempt `attempt` of `call` (0: the first call).
pub(crate) fn effect_key(call: &ToolCallId, attempt: u64) -> String {
    match attempt {
        0 => format!("tool-{call}"),
        n => format!("tool-{call}-input-{n}"),
    }
}

/// The attempt whose question `interrupt` asks, when it is one of these interrupts.
pub(crate) fn attempt_of(interrupt: &Interrupt) -> Option<u64> {
    let named = interrupt.metadata.as_ref()?.get(METADATA_KEY)?;
    named.get("attempt")?.as_u64()
}

/// The interrupts asking `pending` (the answer to attempt `attempt` of `call`), under
/// `policy`; `named` is the tool's `{"server", "tool"}`. The error is what the model
/// hears when the question cannot be asked (a request kind this client did not offer).
pub(crate) fn interrupts(
    pending: &Pending,
    call: &ToolCallId,
    named: &Value,
    attempt: u64,
    policy: &ApprovalPolicy,
) -> Result<Vec<RaisedInterrupt>, String> {
    if attempt > MAX_ROUNDS {
        return Err(format!(
            "the server asked for input {MAX_ROUNDS} times; the call was given up"
        ));
    }
    let meta = |input: Option<&str>, mode: &str, url: Option<&str>| {
        let mut mcp = named.clone();
        mcp["attempt"] = json!(attempt);
        mcp["mode"] = json!(mode);
        if let Some(input) = input {
            mcp["input"] = json!(input);
        }
        if let Some(url) = url {
            mcp["url"] = json!(url);
        }
        let mut metadata = Metadata::new();
        metadata.insert(METADATA_KEY.to_owned(), mcp);
        metadata
    };
    let raise = |interrupt: Interrupt, metadata: Metadata| {
        let interrupt = interrupt
            .with_tool_call(call.clone())
            .with_metadata(metadata);
        RaisedInterrupt::approval_from(ApprovalSource::McpTool, interrupt, policy.clone())
    };
    let tool = named.get("tool").and_then(Value::as_str).unwrap_or("tool");
    let requests = &pending.question.input_requests;
    if requests.is_empty() {
        let id = format!("mcp-{call}-{attempt}-wait");
        let message = format!("{tool} waits for an approver at its server; answer to ask it again");
        let interrupt = Interrupt::new(id, REASON_WAITING).with_message(message);
        return Ok(vec![raise(interrupt, meta(None, "waiting", None))]);
    }
    let mut raised = Vec::new();
    for (index, (key, request)) in requests.iter().enumerate() {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        if method != "elicitation/create" {
            return Err(format!(
                "the server asked for {method:?}, which this client does not offer"
            ));
        }
        let params = request.get("params").cloned().unwrap_or(json!({}));
        let message = params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("The tool asks for input")
            .to_owned();
        let id = format!("mcp-{call}-{attempt}-{index}");
        let interrupt = Interrupt::new(id, REASON_INPUT);
        let url = params.get("url").and_then(Value::as_str);
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        raised.push(match (mode, url) {
            ("url", Some(url)) => raise(
                interrupt
                    .with_message(format!("{message} (open {url}, then answer)"))
                    .with_response_schema(json!({ "type": "object" })),
                meta(Some(key), "url", Some(url)),
            ),
            ("form", _) => {
                let schema = params
                    .get("requestedSchema")
                    .filter(|s| s.is_object())
                    .cloned()
                    .unwrap_or_else(|| json!({ "type": "object" }));
                raise(
                    interrupt.with_message(message).with_response_schema(schema),
                    meta(Some(key), "form", None),
                )
            }
            (other, _) => return Err(format!("an elicitation in mode {other:?} without a URL")),
        });
    }
    Ok(raised)
}

/// The retry's answers: each decision under its request's key, the state echoed.
pub(crate) fn answers(decisions: &[&Decision], pending: &Pending) -> InputAnswers {
    let mut responses = Map::new();
    for decision in decisions {
        let named = decision
            .interrupt
            .metadata
            .as_ref()
            .and_then(|m| m.get(METADATA_KEY));
        let Some(key) = named.and_then(|n| n.get("input")).and_then(Value::as_str) else {
            continue;
        };
        let form = named.and_then(|n| n.get("mode")) == Some(&json!("form"));
        let response = match (&decision.status, &decision.payload) {
            (ResumeStatus::Resolved, Some(content)) if form && content.is_object() => {
                json!({ "action": "accept", "content": content })
            }
            (ResumeStatus::Resolved, _) => json!({ "action": "accept" }),
            _ => json!({ "action": "cancel" }),
        };
        responses.insert(key.to_owned(), response);
    }
    InputAnswers {
        input_responses: responses,
        request_state: pending.question.request_state.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Pending {
        let requests = json!({ "int-1": { "method": "elicitation/create", "params": {
            "mode": "form", "message": "Refund 15.00?",
            "requestedSchema": { "type": "object", "properties": { "approved": { "type": "boolean" } } } } } });
        Pending {
            question: InputRequired {
                input_requests: requests.as_object().unwrap().clone(),
                request_state: Some("sealed".into()),
            },
            arguments: json!({ "message": "refund" }),
        }
    }

    #[test]
    fn the_record_round_trips_and_other_results_are_no_question() {
        let pending = asked();
        let value = recorded(&pending.question, &pending.arguments);
        assert_eq!(super::pending(&value), Some(pending));
        assert_eq!(super::pending(&json!("paid")), None);
        assert_eq!(super::pending(&json!({ "error": "x" })), None);
    }

    #[test]
    fn a_form_elicitation_is_an_interrupt_under_the_policy() {
        let call = ToolCallId::from("call_0");
        let named = json!({ "server": "b", "tool": "agent" });
        let policy = ApprovalPolicy::new().role("approver");
        let raised = interrupts(&asked(), &call, &named, 0, &policy).unwrap();
        assert_eq!(raised.len(), 1);
        assert_eq!(raised[0].policy(), Some(&policy));
        let interrupt = raised[0].interrupt();
        assert_eq!(interrupt.reason, REASON_INPUT);
        assert_eq!(interrupt.message.as_deref(), Some("Refund 15.00?"));
        assert_eq!(interrupt.tool_call_id.as_ref(), Some(&call));
        assert_eq!(attempt_of(interrupt), Some(0));
        let schema = interrupt.response_schema.as_deref().unwrap();
        assert_eq!(schema["properties"]["approved"]["type"], "boolean");
        assert!(interrupts(&asked(), &call, &named, MAX_ROUNDS + 1, &policy).is_err());
    }

    #[test]
    fn answers_are_accept_with_content_url_accept_and_cancel() {
        let call = ToolCallId::from("c");
        let named = json!({ "server": "b", "tool": "t" });
        let mut pending = asked();
        pending.question.input_requests.insert(
            "site".into(),
            json!({ "method": "elicitation/create", "params": {
                "mode": "url", "message": "Sign in", "url": "https://b.example/approve" } }),
        );
        let raised = interrupts(&pending, &call, &named, 0, &ApprovalPolicy::new()).unwrap();
        let url = raised.iter().find(|r| {
            r.interrupt()
                .message
                .as_deref()
                .unwrap_or("")
                .contains("https://b.example/approve")
        });
        assert!(url.is_some(), "the URL is in the message");
        let decide =
            |raised: &RaisedInterrupt, status: ResumeStatus, payload: Option<Value>| Decision {
                interrupt: raised.interrupt().clone(),
                status,
                payload,
                metadata: None,
                proposed_args: None,
                approval: None,
            };
        let form = raised
            .iter()
            .find(|r| {
                r.interrupt()
                    .response_schema
                    .as_deref()
                    .is_some_and(|s| s.get("properties").is_some())
            })
            .unwrap();
        let decisions = [
            decide(
                form,
                ResumeStatus::Resolved,
                Some(json!({ "approved": true })),
            ),
            decide(url.unwrap(), ResumeStatus::Resolved, Some(json!({}))),
        ];
        let answers = answers(&decisions.iter().collect::<Vec<_>>(), &pending);
        assert_eq!(answers.request_state.as_deref(), Some("sealed"));
        assert_eq!(
            Value::Object(answers.input_responses),
            json!({ "int-1": { "action": "accept", "content": { "approved": true } },
                    "site": { "action": "accept" } })
        );
        let cancelled = [decide(form, ResumeStatus::Cancelled, None)];
        let answers = super::answers(&cancelled.iter().collect::<Vec<_>>(), &pending);
        assert_eq!(
            Value::Object(answers.input_responses),
            json!({ "int-1": { "action": "cancel" } })
        );
    }

    #[test]
    fn sampling_cannot_be_asked_and_a_bare_state_waits() {
        let call = ToolCallId::from("c");
        let mut sampling = asked();
        sampling.question.input_requests.insert(
            "s".into(),
            json!({ "method": "sampling/createMessage", "params": {} }),
        );
        let named = json!({ "server": "b", "tool": "t" });
        let refused = interrupts(&sampling, &call, &named, 0, &ApprovalPolicy::new());
        assert!(refused.unwrap_err().contains("sampling/createMessage"));
        let mut waiting = asked();
        waiting.question.input_requests.clear();
        let raised = interrupts(&waiting, &call, &named, 2, &ApprovalPolicy::new()).unwrap();
        assert_eq!(raised[0].interrupt().reason, REASON_WAITING);
        assert_eq!(raised[0].interrupt().id.as_str(), "mcp-c-2-wait");
    }
}
