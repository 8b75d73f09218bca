//! Records as bytes: JSON through serde, except where a run's event log dominates the
//! cost (run records, live batches), whose events are written by the protocol crate's
//! serde-free writer. Every encoding here is byte-identical to serde's, so any reader
//! (and any record written before) sees the same thing.

use std::borrow::Borrow;
use std::sync::Arc;

use agui_protocol::{Event, Message, RunId};
use serde::Serialize;
use serde_json::Value;

use super::{AnswerAudit, HistoryPage, LiveBatch, ResumeRecord, RunRecord};
use crate::error::CoreError;
use crate::store::Item;

/// Serializes a record.
pub(crate) fn encode<T: Serialize>(record: &T) -> Vec<u8> {
    // Room for most small records (a thread head, an effect) at once; serde_json's own
    // `to_vec` starts at 128 bytes and doubles its way up.
    let mut out = Vec::with_capacity(512);
    put(&mut out, record);
    out
}

/// Deserializes a record from an item.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(item: &Item) -> Result<T, CoreError> {
    let corrupt =
        |e: &dyn std::fmt::Display| CoreError::CorruptRecord(format!("{}: {e}", item.key));
    // Checked as UTF-8 in one pass, then read as text: from bytes, serde_json checks
    // every string it reads on its own (a call per string, most of them short ids).
    let text = std::str::from_utf8(&item.value).map_err(|e| corrupt(&e))?;
    serde_json::from_str(text).map_err(|e| corrupt(&e))
}

/// Appends `value` as serde writes it.
fn put<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("records always serialize");
}

/// Appends `[…]`, each item written by `write` (the protocol crate's serde-free writers).
fn put_array<T>(out: &mut Vec<u8>, items: &[T], write: impl Fn(&T, &mut Vec<u8>)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(item, out);
    }
    out.push(b']');
}

/// Appends `,"events":[…]`, from a record's own events or a run's shared log.
fn put_events<E: Borrow<Event>>(out: &mut Vec<u8>, events: &[E]) {
    out.extend_from_slice(b",\"events\":");
    put_array(out, events, |event, out| event.borrow().write_json(out));
}

impl RunRecord {
    /// [`encode`] of this record, its events written without serde (most of a run
    /// record's bytes are its events).
    pub(crate) fn encode(&self) -> Vec<u8> {
        self.encode_with_events(&self.events)
    }

    /// [`Self::encode`] with `events` in place of the record's own (a finishing run's
    /// log, shared with its response stream rather than copied into the record).
    pub(crate) fn encode_with_events<E: Borrow<Event>>(&self, events: &[E]) -> Vec<u8> {
        // Every field named: a new one fails to compile here instead of going unwritten.
        let RunRecord {
            input_hash,
            status,
            resume_key,
            started_at_ms,
            events: _,
            snapshot_pages,
            requested_by,
            cuts,
            redrive,
        } = self;
        let mut out = Vec::with_capacity(512 + 192 * events.len());
        out.extend_from_slice(b"{\"inputHash\":");
        put(&mut out, input_hash);
        out.extend_from_slice(b",\"status\":");
        put(&mut out, status);
        if let Some(key) = resume_key {
            out.extend_from_slice(b",\"resumeKey\":");
            put(&mut out, key);
        }
        out.extend_from_slice(b",\"startedAtMs\":");
        put(&mut out, started_at_ms);
        put_events(&mut out, events);
        if let Some(pages) = snapshot_pages {
            out.extend_from_slice(b",\"snapshotPages\":");
            put(&mut out, pages);
        }
        if let Some(by) = requested_by {
            out.extend_from_slice(b",\"requestedBy\":");
            put(&mut out, by);
        }
        if !cuts.is_empty() {
            out.extend_from_slice(b",\"cuts\":");
            put(&mut out, cuts);
        }
        if let Some(request) = redrive {
            out.extend_from_slice(b",\"redrive\":");
            put(&mut out, request);
        }
        out.push(b'}');
        out
    }
}

impl HistoryPage {
    /// [`encode`] of a page with these fields, its messages written without serde, owned or
    /// borrowed (a finishing run's are the context's own: nothing is copied to write them).
    pub(crate) fn encode_parts<M: Borrow<Message>>(
        run_id: &RunId,
        messages: &[M],
        answers: &[AnswerAudit],
        state: Option<&Value>,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 256 * messages.len());
        out.extend_from_slice(b"{\"runId\":");
        put(&mut out, run_id);
        out.extend_from_slice(b",\"messages\":");
        put_array(&mut out, messages, |m, out| m.borrow().write_json(out));
        if !answers.is_empty() {
            out.extend_from_slice(b",\"answers\":");
            put(&mut out, answers);
        }
        if let Some(state) = state {
            out.extend_from_slice(b",\"state\":");
            put(&mut out, state);
        }
        out.push(b'}');
        out
    }
}

impl LiveBatch {
    /// [`encode`] of `LiveBatch { first, events }`, written from the run's log as it stands
    /// (no copy of the events to build the batch first), its events written without serde.
    pub(crate) fn encode_from(first: u64, events: &[Arc<Event>]) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + 192 * events.len());
        out.extend_from_slice(b"{\"first\":");
        put(&mut out, &first);
        put_events(&mut out, events);
        out.push(b'}');
        out
    }
}

impl ResumeRecord {
    /// The encoding of `ResumeRecord { run_id, finished: Some(run) }`, given `run`'s own
    /// encoding: the finish has just serialized the run record, so its copy is spliced in
    /// instead of being cloned and serialized a second time.
    pub(crate) fn encode_finished(run_id: &RunId, run_bytes: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(run_bytes.len() + run_id.as_str().len() + 32);
        bytes.extend_from_slice(b"{\"runId\":");
        put(&mut bytes, run_id);
        bytes.extend_from_slice(b",\"finished\":");
        bytes.extend_from_slice(run_bytes);
        bytes.push(b'}');
        bytes
    }
}

#[cfg(test)]
mod tests {
    use agui_protocol::bench_corpus;
    use agui_protocol::event::{MessagesSnapshot, RunFinished, RunStarted, TextMessageContent};
    use agui_protocol::{
        Event, Interrupt, Message, MessageId, RunFinishedOutcome, RunId, ThreadId,
    };
    use serde_json::json;

    use super::encode;
    use crate::principal::Owner;
    use crate::records::{
        AnswerAudit, DeltaCuts, HistoryPage, LiveBatch, RedriveRequest, ResumeRecord, RunRecord,
        RunStatus,
    };

    fn run(events: Vec<Event>) -> RunRecord {
        RunRecord {
            input_hash: "abc".to_owned(),
            status: RunStatus::Succeeded,
            resume_key: Some("resume#x".to_owned()),
            started_at_ms: 7,
            events,
            snapshot_pages: Some(2),
            requested_by: Some(Owner {
                subject: "alice \"a\"".to_owned(),
            }),
            cuts: vec![DeltaCuts {
                index: 1,
                lengths: vec![3, 4],
                offsets_ms: vec![],
            }],
            redrive: Some(RedriveRequest {
                input: serde_json::from_value(json!({
                    "threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
                    "state": {"q": "\u{e9}\"x\""}, "forwardedProps": {}
                }))
                .expect("an input"),
                history_prefix: Some(2),
                principal: crate::Principal::new("acme", "alice"),
                agent_id: Some("demo".to_owned()),
                watches: vec![crate::outbox::Watch::new("a2a-task", "t-1")],
            }),
        }
    }

    fn text(run_id: &RunId) -> Vec<Event> {
        vec![
            Event::from(RunStarted::new(ThreadId::new("t"), run_id.clone())),
            Event::from(TextMessageContent::new(MessageId::new("m"), "h\u{e9}llo\n")),
        ]
    }

    fn item(key: &str, value: &[u8]) -> crate::store::Item {
        crate::store::Item {
            key: key.to_owned(),
            version: 1,
            value: value.to_vec(),
            expires_at_ms: None,
        }
    }

    #[test]
    fn a_record_reads_back_with_escapes_and_a_corrupt_one_names_its_key() {
        let record = run(text(&RunId::new("r")));
        let written = item("run#r", &encode(&record));
        assert_eq!(super::decode::<RunRecord>(&written).unwrap(), record);
        // Not UTF-8 (a string cut inside a two-byte character), and not JSON.
        let mut cut = br#"{"inputHash":"h"#.to_vec();
        cut.push(0xc3);
        for bytes in [cut.as_slice(), b"{\"inputHash\":", b"\"\xff"] {
            let error = super::decode::<RunRecord>(&item("run#bad", bytes)).unwrap_err();
            let crate::error::CoreError::CorruptRecord(text) = error else {
                panic!("{error:?}");
            };
            assert!(text.starts_with("run#bad: "), "{text}");
        }
    }

    #[test]
    fn a_run_record_is_written_as_serde_writes_it() {
        let run_id = RunId::new("run-\"1\"\u{e9}");
        // Every kind of event the corpus holds, fast-written or not, and an interrupt.
        let mut corpus: Vec<Event> = bench_corpus::mix(400);
        let mut finished = RunFinished::new(ThreadId::new("t"), run_id.clone());
        finished.outcome = Some(RunFinishedOutcome::Interrupt {
            interrupts: vec![
                Interrupt::new("int-1", "tool_call")
                    .with_message("Refund?")
                    .with_response_schema(json!({"type": "object", "required": ["approved"]})),
            ],
        });
        corpus.push(MessagesSnapshot::new(Vec::new()).into());
        corpus.push(Event::from(finished).with_timestamp(1_700_000_000_123));
        let full = run(corpus.clone());
        let bare = RunRecord {
            resume_key: None,
            snapshot_pages: None,
            requested_by: None,
            cuts: Vec::new(),
            redrive: None,
            status: RunStatus::Interrupted,
            ..run(Vec::new())
        };
        for record in [full, bare] {
            let bytes = record.encode();
            assert_eq!(
                String::from_utf8(bytes.clone()).unwrap(),
                String::from_utf8(encode(&record)).unwrap()
            );
            let decoded: RunRecord = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(decoded, record);
        }
        for (first, events) in [(12, corpus), (1, Vec::new())] {
            let shared: Vec<std::sync::Arc<Event>> =
                events.iter().cloned().map(std::sync::Arc::new).collect();
            let bytes = LiveBatch::encode_from(first, &shared);
            assert_eq!(bytes, encode(&LiveBatch { first, events }));
        }
    }

    #[test]
    fn a_spliced_resume_record_is_the_one_serde_writes() {
        let run_id = RunId::new("run-\"1\"\u{e9}");
        let run = run(text(&run_id));
        let whole = ResumeRecord {
            run_id: run_id.clone(),
            finished: Some(Box::new(run.clone())),
        };
        let spliced = ResumeRecord::encode_finished(&run_id, &run.encode());
        assert_eq!(
            String::from_utf8(spliced).unwrap(),
            String::from_utf8(encode(&whole)).unwrap()
        );
        let decoded: ResumeRecord = serde_json::from_slice(&encode(&whole)).unwrap();
        assert_eq!(decoded, whole);
    }

    #[test]
    fn a_history_page_is_written_as_serde_writes_it() {
        let messages: Vec<agui_protocol::Message> = serde_json::from_value(json!([
            {"role": "user", "id": "u\"1", "content": "refund B7 \u{e9}\n"},
            {"role": "assistant", "id": "a", "toolCalls": [{"id": "c", "type": "function",
                "function": {"name": "get_order", "arguments": "{\"orderId\":\"B7\"}"}}]},
            {"role": "tool", "id": "t", "content": [{"type": "text", "text": "x"}], "toolCallId": "c"},
            {"role": "assistant", "id": "b", "content": "done", "metadata": {"k": [1.5, null]}},
        ]))
        .unwrap();
        let answers = vec![AnswerAudit {
            interrupt_id: "int-1".to_owned(),
            status: agui_protocol::ResumeStatus::Resolved,
            approved: Some(true),
            by: "alice".to_owned(),
            run_id: RunId::new("r2"),
            at_ms: 9,
        }];
        let state = Some(serde_json::json!({"cart": ["a"], "n": 2}));
        for (messages, answers, state) in
            [(messages, answers, state), (Vec::new(), Vec::new(), None)]
        {
            let page = HistoryPage {
                run_id: RunId::new("r\u{e9}"),
                messages,
                answers,
                state,
            };
            // Every field named: a new one fails to compile here until encode_parts writes it.
            let HistoryPage {
                run_id,
                messages,
                answers,
                state,
            } = &page;
            let bytes = HistoryPage::encode_parts(run_id, messages, answers, state.as_ref());
            let borrowed: Vec<&Message> = messages.iter().collect();
            assert_eq!(
                HistoryPage::encode_parts(run_id, &borrowed, answers, state.as_ref()),
                bytes
            );
            assert_eq!(
                String::from_utf8(bytes.clone()).unwrap(),
                String::from_utf8(encode(&page)).unwrap()
            );
            let decoded: HistoryPage = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(decoded, page);
        }
    }
}
