//! From an A2A message to what the engine takes: a user message for a new turn, or the
//! answers of a resume.
//!
//! A message that answers an input-required task carries, per interrupt, a data part
//! `{"interruptId", "payload"}` (or `{"interruptId", "cancelled": true}`). With a single
//! interrupt open, a bare data part is its payload, and plain text answers an interrupt that
//! has no `responseSchema` (the text is the payload).

use a2a_types::{Message, PartContent, Role};
use agui_protocol::{Interrupt, ResumeEntry};
use serde_json::Value;

use super::error::A2aError;

/// Checks what every message needs: an id, a part, the user's role.
pub(crate) fn check(message: &Message) -> Result<(), A2aError> {
    if message.message_id.trim().is_empty() {
        return Err(A2aError::InvalidParams(
            "message.messageId is required".into(),
        ));
    }
    if message.parts.is_empty() {
        return Err(A2aError::InvalidParams(
            "message.parts must not be empty".into(),
        ));
    }
    if message.role == Role::Agent {
        return Err(A2aError::InvalidParams(
            "a sent message has role ROLE_USER".into(),
        ));
    }
    for part in &message.parts {
        if matches!(part.content, PartContent::Raw(_) | PartContent::Url(_)) {
            let media = part.media_type.as_deref().unwrap_or("a file");
            return Err(A2aError::ContentType(format!(
                "this agent takes text and JSON data parts, not {media}"
            )));
        }
    }
    Ok(())
}

/// The text of a new turn: text parts as they are, data parts as JSON, one per line.
pub(crate) fn user_text(message: &Message) -> String {
    message
        .parts
        .iter()
        .map(|part| match &part.content {
            PartContent::Text(text) => text.clone(),
            PartContent::Data(data) => data.to_string(),
            PartContent::Raw(_) | PartContent::Url(_) => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The resume entries `message` gives for `open`, the interrupts the task waits on.
pub(crate) fn answers(message: &Message, open: &[Interrupt]) -> Result<Vec<ResumeEntry>, A2aError> {
    let mut entries = Vec::new();
    for part in &message.parts {
        let PartContent::Data(Value::Object(data)) = &part.content else {
            continue;
        };
        let Some(id) = data.get("interruptId").and_then(Value::as_str) else {
            continue;
        };
        if data.get("cancelled") == Some(&Value::Bool(true)) {
            entries.push(ResumeEntry::cancelled(id));
            continue;
        }
        let payload = data.get("payload").cloned().ok_or_else(|| {
            A2aError::InvalidParams(format!("the answer to interrupt {id} has no payload"))
        })?;
        entries.push(ResumeEntry::resolved(id, payload));
    }
    if !entries.is_empty() {
        return Ok(entries);
    }
    let [only] = open else {
        return Err(A2aError::InvalidParams(format!(
            "this task waits on {} interrupts: answer each with a data part {{\"interruptId\", \"payload\"}}",
            open.len()
        )));
    };
    let data = message.parts.iter().find_map(|p| match &p.content {
        PartContent::Data(data) => Some(data.clone()),
        _ => None,
    });
    if let Some(payload) = data {
        return Ok(vec![ResumeEntry::resolved(only.id.clone(), payload)]);
    }
    if only.response_schema.is_some() {
        return Err(A2aError::InvalidParams(format!(
            "interrupt {} expects an answer matching its responseSchema: send a data part",
            only.id.as_str()
        )));
    }
    Ok(vec![ResumeEntry::resolved(
        only.id.clone(),
        Value::String(user_text(message)),
    )])
}
