//! Canonical hashes that identify a request body and a resume answer.

use agui_protocol::{ResumeEntry, RunAgentInput};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the input's canonical JSON (serde_json maps are key-sorted).
pub(crate) fn input_hash(input: &RunAgentInput) -> String {
    let mut value = serde_json::to_value(input).unwrap_or(Value::Null);
    // The protocol version the client declares does not change what it asks for.
    if let Value::Object(map) = &mut value {
        map.remove("protocolVersion");
    }
    sha256_of_json(&value)
}

/// SHA-256 of `(threadId, [(interruptId, status, payload)] sorted by id)`.
pub(crate) fn resume_hash(thread_id: &str, entries: &[ResumeEntry]) -> String {
    let mut answers: Vec<Value> = entries
        .iter()
        .map(|e| serde_json::json!([e.interrupt_id, e.status, e.payload]))
        .collect();
    answers.sort_by_key(|a| a[0].as_str().unwrap_or_default().to_owned());
    let canonical = serde_json::json!([thread_id, answers]);
    sha256_of_json(&canonical)
}

/// The hex SHA-256 of `value`'s compact JSON, serialized straight into the hasher.
fn sha256_of_json(value: &impl Serialize) -> String {
    let mut hasher = HashWriter(Sha256::new());
    // Writing into a hasher cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut hasher, value);
    hex::encode(hasher.0.finalize())
}

struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use sha2::{Digest, Sha256};

    use super::sha256_of_json;

    #[test]
    fn streams_the_same_digest_as_hashing_the_whole_text() {
        let value = json!({"b": [1, "two", {"z": null, "a": 3.5}], "a": "ünï\"code\n"});
        let text = value.to_string();
        let expected: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sha256_of_json(&value), expected);
    }
}
