//! Canonical hashes that identify a request body and a resume answer.

use agui_protocol::{ResumeEntry, RunAgentInput};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the input's canonical JSON (serde_json maps are key-sorted).
pub(crate) fn input_hash(input: &RunAgentInput) -> String {
    let mut value = serde_json::to_value(input).unwrap_or(Value::Null);
    // The protocol version the client declares does not change what it asks for.
    if let Value::Object(map) = &mut value {
        map.remove("protocolVersion");
    }
    hex(&Sha256::digest(value.to_string().as_bytes()))
}

/// SHA-256 of `(threadId, [(interruptId, status, payload)] sorted by id)`.
pub(crate) fn resume_hash(thread_id: &str, entries: &[ResumeEntry]) -> String {
    let mut answers: Vec<Value> = entries
        .iter()
        .map(|e| serde_json::json!([e.interrupt_id, e.status, e.payload]))
        .collect();
    answers.sort_by_key(|a| a[0].as_str().unwrap_or_default().to_owned());
    let canonical = serde_json::json!([thread_id, answers]);
    hex(&Sha256::digest(canonical.to_string().as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
