//! The resume contract, checked before anything is written.
//!
//! Handoff keeps interrupt state, so it is **strict**: an entry naming an
//! interrupt that is not pending on the thread is rejected
//! (`INTERRUPT_NOT_PENDING`) instead of the spec's lenient "proceed and warn".
//! A stateful producer that silently dropped such an entry would hide a client
//! bug (answering the wrong thread, or an already-answered interrupt), and a
//! genuine retry of an applied answer never reaches this check: it is replayed
//! from its resume record first.

use agui_protocol::{ResumeStatus, RunAgentInput};

use crate::agent::{Agent, Readiness};
use crate::decision::Decision;
use crate::error::CoreError;
use crate::records::{PendingInterrupt, ThreadRecord};
use crate::schema::{SchemaFailure, SchemaValidator};

/// Checks `input.resume` against the thread's pending interrupts and returns the decisions,
/// each with the pending interrupt it answers.
pub(crate) fn validate_resume<'a>(
    validator: Option<&dyn SchemaValidator>,
    thread: &'a ThreadRecord,
    agent_id: &str,
    input: &RunAgentInput,
    resume_key: Option<&str>,
    abandoned_answer: Option<&str>,
    now_ms: u64,
) -> Result<Vec<(&'a PendingInterrupt, Decision)>, CoreError> {
    let entries = input.resume_entries();
    for (index, entry) in entries.iter().enumerate() {
        if entries[..index]
            .iter()
            .any(|e| e.interrupt_id == entry.interrupt_id)
        {
            return Err(CoreError::InvalidInput(format!(
                "resume answers interrupt {} more than once",
                entry.interrupt_id
            )));
        }
        // An interrupt is answered through the agent that raised it: another agent's
        // route would skip its readiness checks and run that agent's same-named tool.
        if !thread.pending.iter().any(|p| {
            p.interrupt.id == entry.interrupt_id
                && p.agent_id
                    .as_deref()
                    .is_none_or(|raised_by| raised_by == agent_id)
        }) {
            return Err(CoreError::InterruptNotPending {
                id: entry.interrupt_id.to_string(),
            });
        }
    }
    let missing: Vec<String> = thread
        .pending
        .iter()
        .filter(|p| !entries.iter().any(|e| e.interrupt_id == p.interrupt.id))
        .map(|p| p.interrupt.id.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(CoreError::ResumeIncomplete { missing });
    }
    let mut answers = Vec::with_capacity(thread.pending.len());
    for pending in &thread.pending {
        let Some(entry) = entries
            .iter()
            .find(|e| e.interrupt_id == pending.interrupt.id)
        else {
            continue;
        };
        let id = pending.interrupt.id.to_string();
        if let Some(pinned) = pending.pinned_answer.as_deref().or(abandoned_answer) {
            // Answered in time already; the same answer re-drives its effect, whatever the clock says.
            if resume_key != Some(pinned) {
                return Err(CoreError::AnswerPinned { id });
            }
        } else if entry.status == ResumeStatus::Resolved {
            if pending.expires_at_ms.is_some_and(|at| at <= now_ms) {
                return Err(CoreError::InterruptExpired {
                    id,
                    expires_at: pending.interrupt.expires_at.clone().unwrap_or_default(),
                });
            }
            if let Some(schema) = &pending.interrupt.response_schema {
                check_payload(validator, &id, schema, entry.payload.as_ref())?;
            }
        }
        let decision = Decision {
            interrupt: pending.interrupt.clone(),
            status: entry.status,
            payload: entry.payload.clone(),
            metadata: entry.metadata.clone(),
            proposed_args: pending.tool_args.clone(),
            approval: pending.policy().ok().flatten(),
        };
        answers.push((pending, decision));
    }
    Ok(answers)
}

/// Asks the agent whether each `resolved` answer may be applied now (see
/// [`Agent::readiness`]); the first one that may not rejects the whole resume.
pub(crate) async fn check_readiness(
    agent: &dyn Agent,
    thread_id: &str,
    decisions: &[Decision],
) -> Result<(), CoreError> {
    for decision in decisions
        .iter()
        .filter(|d| d.status == ResumeStatus::Resolved)
    {
        if let Readiness::NotReady(reason) = agent.readiness(thread_id, decision).await? {
            return Err(CoreError::InterruptNotReady {
                id: decision.id().to_string(),
                reason,
            });
        }
    }
    Ok(())
}

fn check_payload(
    validator: Option<&dyn SchemaValidator>,
    id: &str,
    schema: &serde_json::Value,
    payload: Option<&serde_json::Value>,
) -> Result<(), CoreError> {
    let invalid = |reason: String| CoreError::ResumePayloadInvalid {
        id: id.to_owned(),
        reason,
    };
    let validator = validator.ok_or(CoreError::SchemaValidationUnavailable)?;
    let payload = payload.ok_or_else(|| invalid("a resolved entry needs a payload".to_owned()))?;
    validator
        .validate(schema, payload)
        .map_err(|failure| match failure {
            SchemaFailure::Invalid(reason) => {
                invalid(format!("it does not match its responseSchema: {reason}"))
            }
            SchemaFailure::Unusable(reason) => {
                invalid(format!("unusable responseSchema: {reason}"))
            }
        })
}
