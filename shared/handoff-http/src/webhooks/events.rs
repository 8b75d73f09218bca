//! What a run's end tells the webhooks: `interrupt.created` for each interrupt it left
//! pending, then `run.finished` (`RUN_FINISHED`) or `run.failed` (`RUN_ERROR`).

use agui_protocol::Event;
use agui_protocol::interrupt::RunFinishedOutcome;
use handoff_core::RunOutcomeKind;
use handoff_core::access::approver_roles;
use handoff_core::outbox::{Notice, Notifier, RunFacts};
use handoff_core::records::PendingInterrupt;
use handoff_core::time_fmt::format_ms;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use super::{WEBHOOK_KIND, deliveries_scope};

/// What `encodeURIComponent` leaves as it is, besides letters and digits.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Turns every run's end into webhook events (no watch needed: every run is told).
#[derive(Debug, Clone, Default)]
pub struct WebhookNotifier {
    /// The console's base URL for approval links (`HANDOFF_PUBLIC_URL`, else the host's
    /// own URL where it knows it); none: a link relative to the host.
    console_base: Option<String>,
}

impl WebhookNotifier {
    /// Approval links under `console_base` (none: relative, `/?thread=…`).
    pub fn new(console_base: Option<String>) -> Self {
        let console_base = console_base.map(|b| b.trim_end_matches('/').to_owned());
        WebhookNotifier { console_base }
    }

    /// The console page that opens `thread_id` with its approval cards.
    pub fn console_url(&self, thread_id: &str) -> String {
        let base = self.console_base.as_deref().unwrap_or("");
        format!(
            "{base}/?thread={}",
            utf8_percent_encode(thread_id, QUERY_VALUE)
        )
    }

    fn interrupt_created(&self, facts: &RunFacts<'_>, pending: &PendingInterrupt) -> Value {
        let interrupt = &pending.interrupt;
        let mut data = common(facts);
        let not_requester = pending
            .policy()
            .ok()
            .flatten()
            .is_some_and(|p| p.not_requester);
        let requested_by = pending
            .raised_by
            .as_ref()
            .unwrap_or(facts.requested_by)
            .subject
            .clone();
        let mut fields = vec![
            ("interruptId", json!(interrupt.id.to_string())),
            ("reason", json!(interrupt.reason)),
            ("requestedBy", json!(requested_by)),
            ("requiredRoles", json!(approver_roles(pending))),
            ("notRequester", json!(not_requester)),
            ("consoleUrl", json!(self.console_url(facts.thread_id))),
        ];
        if let Some(message) = &interrupt.message {
            fields.push(("message", json!(message)));
        }
        if let Some(tool) = &pending.tool_name {
            fields.push(("toolName", json!(tool)));
        }
        if let Some(expires_at) = &interrupt.expires_at {
            fields.push(("expiresAt", json!(expires_at)));
        }
        for (key, value) in fields {
            data.insert(key.to_owned(), value);
        }
        event("interrupt.created", facts, data)
    }
}

/// What every event's `data` has.
fn common(facts: &RunFacts<'_>) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("tenant".into(), json!(facts.tenant));
    data.insert("threadId".into(), json!(facts.thread_id));
    data.insert("runId".into(), json!(facts.run_id));
    data
}

/// `{"type", "timestamp", "data"}`, as Standard Webhooks suggests.
fn event(kind: &str, facts: &RunFacts<'_>, data: Map<String, Value>) -> Value {
    json!({ "type": kind, "timestamp": format_ms(facts.now_ms), "data": data })
}

/// `run.finished` or `run.failed`, from the run's terminal event.
fn run_ended(facts: &RunFacts<'_>) -> Option<Value> {
    let mut data = common(facts);
    match facts.terminal {
        Event::RunFinished(finished) => {
            let outcome = match &finished.outcome {
                Some(RunFinishedOutcome::Interrupt { .. }) => RunOutcomeKind::Interrupt,
                Some(RunFinishedOutcome::Cancelled) => RunOutcomeKind::Cancelled,
                _ => RunOutcomeKind::Success,
            };
            data.insert("outcome".into(), json!(outcome));
            if let Some(usage) = &finished.usage {
                data.insert("usage".into(), json!(usage));
            }
            Some(event("run.finished", facts, data))
        }
        Event::RunError(error) => {
            let code = error
                .code
                .clone()
                .unwrap_or_else(|| handoff_core::codes::AGENT_ERROR.name.to_owned());
            data.insert(
                "error".into(),
                json!({ "code": code, "message": error.message }),
            );
            if let Some(usage) = &error.usage {
                data.insert("usage".into(), json!(usage));
            }
            Some(event("run.failed", facts, data))
        }
        _ => None,
    }
}

impl Notifier for WebhookNotifier {
    fn notices(&self, facts: &RunFacts<'_>) -> Vec<Notice> {
        let listing = deliveries_scope(facts.tenant);
        facts
            .pending
            .iter()
            .map(|pending| self.interrupt_created(facts, pending))
            .chain(run_ended(facts))
            .map(|body| Notice::new(WEBHOOK_KIND, body).listed_in(listing.clone()))
            .collect()
    }
}
