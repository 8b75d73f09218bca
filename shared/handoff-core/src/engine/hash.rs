//! Canonical hashes that identify a request body and a resume answer.

use agui_protocol::{Context, ResumeEntry, RunAgentInput, RunId, ThreadId, Tool};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::digest::Chain;

/// Marks the current form of [`input_hash`].
const V3: &str = "v3:";
/// Marks the previous form ([`v2_input_hash`]); a stored hash with neither mark is
/// [`legacy_input_hash`].
const V2: &str = "v2:";

/// The input as it is hashed: every member but `protocolVersion` (the version a client
/// declares does not change what it asks for), in a fixed order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Hashed<'a, M> {
    thread_id: &'a ThreadId,
    run_id: &'a RunId,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_run_id: Option<&'a RunId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a Value>,
    messages: M,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [Tool]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<&'a [Context]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    forwarded_props: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resume: Option<&'a [ResumeEntry]>,
}

/// `v3:` and the SHA-256 of the input's JSON as the typed input writes it (fields in
/// declaration order, JSON objects inside — `state`, arguments… — key-sorted by serde_json's
/// map, so two bodies that parse to the same input hash alike, whatever their key order),
/// with `messages` standing for the hex digest of their [`Chain`]: the chain the run needs
/// anyway to recognise a resent history, so each message is written and hashed once per
/// run instead of twice (issue 38: a long conversation's turn cost).
pub(crate) fn input_hash(input: &RunAgentInput, messages: &Chain) -> String {
    let digest = super::digest::to_hex(messages.whole());
    format!("{V3}{}", sha256_of_json(&hashed(input, digest.as_str())))
}

fn hashed<M>(input: &RunAgentInput, messages: M) -> Hashed<'_, M> {
    Hashed {
        thread_id: &input.thread_id,
        run_id: &input.run_id,
        parent_run_id: input.parent_run_id.as_ref(),
        state: input.state.as_ref(),
        messages,
        tools: input.tools.as_deref(),
        context: input.context.as_deref(),
        forwarded_props: input.forwarded_props.as_ref(),
        resume: input.resume.as_deref(),
    }
}

/// Whether `stored` (a run record's hash) is the hash of `input`, whose current hash is
/// `current`. Records of earlier releases hold an earlier form, computed only for them: a
/// retry across an upgrade still replays.
pub(crate) fn same_input(stored: &str, current: &str, input: &RunAgentInput) -> bool {
    if stored.starts_with(V3) {
        stored == current
    } else if stored.starts_with(V2) {
        stored == v2_input_hash(input)
    } else {
        stored == legacy_input_hash(input)
    }
}

/// What run records held before `v3:`: the whole input written out, messages included.
fn v2_input_hash(input: &RunAgentInput) -> String {
    format!(
        "{V2}{}",
        sha256_of_json(&hashed(input, input.messages.as_slice()))
    )
}

/// SHA-256 of the input's JSON as a key-sorted `Value` (without `protocolVersion`): what
/// run records held before `v2:`.
fn legacy_input_hash(input: &RunAgentInput) -> String {
    let mut value = serde_json::to_value(input).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("protocolVersion");
    }
    sha256_of_json(&value)
}

/// SHA-256 of `(threadId, [(interruptId, status, payload)] sorted by id)`.
pub(crate) fn resume_hash(thread_id: &str, entries: &[ResumeEntry]) -> String {
    // Tuples serialize as arrays: the same text as a `json!` array of copies of them.
    let mut answers: Vec<_> = entries
        .iter()
        .map(|e| (&e.interrupt_id, &e.status, &e.payload))
        .collect();
    answers.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    sha256_of_json(&(thread_id, answers))
}

/// The hex SHA-256 of `value`'s compact JSON.
fn sha256_of_json(value: &impl Serialize) -> String {
    // Serialized whole, then hashed in one call: fed straight into the hasher, serde's
    // many small writes (a quote, a colon) each paid the hasher's buffering.
    // Room for a typical request body's JSON (serde_json's own `to_vec` starts at 128 bytes
    // and doubles its way up).
    let mut json = Vec::with_capacity(1024);
    if serde_json::to_writer(&mut json, value).is_err() {
        json.clear();
    }
    let digest = Sha256::digest(&json);
    let mut hex = [0u8; 64];
    // 64 bytes for 32: the length always fits, and hex digits are ASCII.
    let _ = hex::encode_to_slice(digest, &mut hex);
    String::from_utf8_lossy(&hex).into_owned()
}

#[cfg(test)]
mod tests {
    use agui_protocol::ResumeEntry;
    use agui_protocol::lenient::parse_input;
    use serde_json::json;
    use sha2::{Digest, Sha256};

    use agui_protocol::RunAgentInput;

    use super::{
        Chain, input_hash, legacy_input_hash, resume_hash, same_input, sha256_of_json,
        v2_input_hash,
    };

    fn hash(input: &RunAgentInput) -> String {
        input_hash(input, &Chain::of(&input.messages))
    }

    #[test]
    fn is_the_digest_of_the_compact_json_text() {
        let value = json!({"b": [1, "two", {"z": null, "a": 3.5}], "a": "ünï\"code\n"});
        let text = value.to_string();
        let expected: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sha256_of_json(&value), expected);
    }

    /// Stored idempotency records hold these hashes: a retry after an upgrade must hash its
    /// body to the same value, so the canonical form may not drift.
    #[test]
    fn hashes_of_a_fixed_input_do_not_change() {
        let input = parse_input(
            br#"{"threadId":"t1","runId":"r2","protocolVersion":"1.0","state":{"b":1,"a":[true,null]},
                "messages":[{"id":"m1","role":"user","content":"Refund order B7 \u00e9"}],
                "resume":[{"interruptId":"int-1","status":"resolved","payload":{"approved":true}}]}"#,
        )
        .unwrap();
        assert_eq!(
            hash(&input),
            "v3:de2038fbb20818a2e49abcf973dd34e12b3f2c1076523af443c7c4d6d5606bc3"
        );
        assert_eq!(
            v2_input_hash(&input),
            "v2:00e0f3f6d0c2c6e904d84ecf9866b77636712c437e6ce825539e5f0bb5bafd17"
        );
        assert_eq!(
            legacy_input_hash(&input),
            "b0336b66c713f4f83abf069630ec1c95b75d39f482baf4486c85b17297cc74dc"
        );
        assert_eq!(
            resume_hash("t1", input.resume_entries()),
            "3644dfa2617d78fff9e27a2fccb34bec18cad0147316ec3ad6ec671137033fc6"
        );
    }

    /// The same request written with other key orders, other whitespace, another declared
    /// protocol version hashes alike; a changed value does not. A record from before `v3:`
    /// (`v2:` or legacy) still matches its request.
    #[test]
    fn bodies_that_parse_alike_hash_alike() {
        let a = parse_input(
            br#"{"threadId":"t","runId":"r","protocolVersion":"1.0","state":{"b":1,"a":{"y":2,"x":[1]}},
                "messages":[{"id":"m1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[
                {"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}],
                "forwardedProps":{"z":true,"k":null}}"#,
        )
        .unwrap();
        let b = parse_input(
            br#"{ "forwardedProps" : {"k":null,"z":true}, "messages":[{"content":"hi","role":"user","id":"m1"},
                {"toolCalls":[{"function":{"arguments":"{}","name":"f"},"type":"function","id":"c1"}],"role":"assistant","id":"a1"}],
                "state":{"a":{"x":[1],"y":2},"b":1}, "runId":"r","threadId":"t"}"#,
        )
        .unwrap();
        assert_eq!(hash(&a), hash(&b));
        let mut changed = b.clone();
        changed.state = Some(json!({"a": {"x": [1], "y": 3}, "b": 1}));
        assert_ne!(hash(&a), hash(&changed));
        let mut fewer = b.clone();
        fewer.messages.pop();
        assert_ne!(hash(&a), hash(&fewer), "the messages are part of the hash");
        assert!(same_input(&hash(&a), &hash(&b), &b));
        assert!(same_input(&legacy_input_hash(&a), &hash(&b), &b));
        assert!(!same_input(
            &legacy_input_hash(&a),
            &hash(&changed),
            &changed
        ));
        assert!(!same_input(&hash(&a), &hash(&changed), &changed));
    }

    /// Several answers hash as `[threadId, [[id, status, payload], …]]` sorted by id, an
    /// absent payload as `null`, whatever order they came in.
    #[test]
    fn a_resume_hash_is_that_of_its_answers_sorted_by_id() {
        let entries = [
            ResumeEntry::resolved("int-b", json!({"approved": false, "note": "é\"x"})),
            ResumeEntry::cancelled("int-a"),
            ResumeEntry::resolved("int-c", json!([1.5, null])),
        ];
        let canonical = json!(["t9", [
            ["int-a", "cancelled", null],
            ["int-b", "resolved", {"approved": false, "note": "é\"x"}],
            ["int-c", "resolved", [1.5, null]],
        ]]);
        assert_eq!(resume_hash("t9", &entries), sha256_of_json(&canonical));
        let reversed: Vec<ResumeEntry> = entries.iter().rev().cloned().collect();
        assert_eq!(resume_hash("t9", &reversed), sha256_of_json(&canonical));
    }
}
