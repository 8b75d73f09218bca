//! Unit tests of chunk expansion.

use super::*;
use crate::event::{
    Custom, EventBase, Raw, ReasoningMessageChunk, RunError, RunFinished, RunStarted,
    StateSnapshot, SubagentFinished, TextMessageChunk, TextMessageEnd, TextRole, ToolCallChunk,
};
use crate::ids::{MessageId, ToolCallId};
use crate::message::Metadata;
use serde_json::json;

fn text(id: Option<&str>, delta: Option<&str>) -> TextMessageChunk {
    let mut c = TextMessageChunk::new();
    c.message_id = id.map(MessageId::from);
    c.delta = delta.map(String::from);
    c
}

fn tool(id: Option<&str>, name: Option<&str>, delta: Option<&str>) -> ToolCallChunk {
    let mut c = ToolCallChunk::new();
    c.tool_call_id = id.map(ToolCallId::from);
    c.tool_call_name = name.map(String::from);
    c.delta = delta.map(String::from);
    c
}

fn reasoning(id: Option<&str>, delta: Option<&str>) -> ReasoningMessageChunk {
    let mut c = ReasoningMessageChunk::new();
    c.message_id = id.map(MessageId::from);
    c.delta = delta.map(String::from);
    c
}

/// `TYPE:id[@sub]` per event, for compact assertions.
fn shape(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let v = serde_json::to_value(e).unwrap_or_default();
            let id = ["messageId", "toolCallId", "runId"]
                .iter()
                .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
                .unwrap_or("");
            let sub = e
                .subagent_run_id()
                .map(|s| format!("@{s}"))
                .unwrap_or_default();
            format!("{}:{id}{sub}", e.event_type())
        })
        .collect()
}

#[test]
fn text_chunks_expand_and_close_before_run_finished() {
    let out = expand([
        RunStarted::new("t", "r").into(),
        text(Some("m"), Some("He")).into(),
        text(None, Some("llo")).into(),
        text(Some("m"), None).into(),
        RunFinished::new("t", "r").into(),
    ])
    .unwrap();
    assert_eq!(
        shape(&out),
        [
            "RUN_STARTED:r",
            "TEXT_MESSAGE_START:m",
            "TEXT_MESSAGE_CONTENT:m",
            "TEXT_MESSAGE_CONTENT:m",
            "TEXT_MESSAGE_END:m",
            "RUN_FINISHED:r"
        ]
    );
    let Event::TextMessageStart(start) = &out[1] else {
        panic!("not a start")
    };
    assert_eq!(start.role, Some(TextRole::Assistant));
}

#[test]
fn tool_and_reasoning_chunks_expand() {
    let out = expand([
        tool(Some("c"), Some("f"), Some("{")).into(),
        tool(None, Some("f"), Some("}")).into(),
        reasoning(Some("r1"), Some("hmm")).into(),
        Custom::new("x:y", json!(1)).into(),
    ])
    .unwrap();
    assert_eq!(
        shape(&out),
        [
            "TOOL_CALL_START:c",
            "TOOL_CALL_ARGS:c",
            "TOOL_CALL_ARGS:c",
            "TOOL_CALL_END:c",
            "REASONING_MESSAGE_START:r1",
            "REASONING_MESSAGE_CONTENT:r1",
            "REASONING_MESSAGE_END:r1",
            "CUSTOM:"
        ]
    );
}

#[test]
fn new_id_closes_the_pending_item() {
    let out = expand([
        text(Some("a"), Some("1")).into(),
        text(Some("b"), Some("2")).into(),
    ])
    .unwrap();
    assert_eq!(
        shape(&out),
        [
            "TEXT_MESSAGE_START:a",
            "TEXT_MESSAGE_CONTENT:a",
            "TEXT_MESSAGE_END:a",
            "TEXT_MESSAGE_START:b",
            "TEXT_MESSAGE_CONTENT:b",
            "TEXT_MESSAGE_END:b"
        ]
    );
}

#[test]
fn lanes_are_per_subagent() {
    let mut x = ChunkExpander::new();
    let mut out = Vec::new();
    out.extend(
        x.push(text(Some("s1"), Some("a")).in_subagent("sub").into())
            .unwrap(),
    );
    out.extend(x.push(text(Some("p1"), Some("b")).into()).unwrap());
    // A parent-lane event closes only the parent lane.
    out.extend(x.push(StateSnapshot::new(json!({})).into()).unwrap());
    out.extend(
        x.push(Raw::new(json!({})).in_subagent("sub").into())
            .unwrap(),
    );
    out.extend(x.push(SubagentFinished::new("sub").into()).unwrap());
    assert_eq!(
        shape(&out),
        [
            "TEXT_MESSAGE_START:s1@sub",
            "TEXT_MESSAGE_CONTENT:s1@sub",
            "TEXT_MESSAGE_START:p1",
            "TEXT_MESSAGE_CONTENT:p1",
            "TEXT_MESSAGE_END:p1",
            "STATE_SNAPSHOT:",
            "RAW:@sub",
            "TEXT_MESSAGE_END:s1@sub",
            "SUBAGENT_FINISHED:@sub"
        ]
    );
    assert!(!x.has_pending());
}

#[test]
fn untagged_idless_chunk_goes_to_the_sole_open_lane() {
    let out = expand([
        text(Some("c"), Some("a")).in_subagent("s").into(),
        text(None, Some("b")).into(),
        RunError::new("boom").into(),
    ])
    .unwrap();
    assert_eq!(
        shape(&out),
        [
            "TEXT_MESSAGE_START:c@s",
            "TEXT_MESSAGE_CONTENT:c@s",
            "TEXT_MESSAGE_CONTENT:c@s",
            "TEXT_MESSAGE_END:c@s",
            "RUN_ERROR:"
        ]
    );
}

#[test]
fn ambiguous_untagged_chunk_is_an_error() {
    let err = expand([
        text(Some("c"), Some("a")).in_subagent("s1").into(),
        text(Some("d"), Some("a")).in_subagent("s2").into(),
        text(None, Some("b")).into(),
    ])
    .unwrap_err();
    assert_eq!(err.rule, "CHUNK-AMBIGUOUS");
    assert_eq!(err.index, Some(2));
}

#[test]
fn first_chunk_needs_its_ids() {
    assert_eq!(
        expand([text(None, Some("x")).into()]).unwrap_err().message,
        "First TEXT_MESSAGE_CHUNK must have a messageId"
    );
    assert_eq!(
        expand([tool(None, Some("f"), None).into()])
            .unwrap_err()
            .rule,
        "CHUNK-ID"
    );
    assert_eq!(
        expand([tool(Some("c"), None, None).into()])
            .unwrap_err()
            .message,
        "First TOOL_CALL_CHUNK must have a toolCallName"
    );
    assert_eq!(
        expand([reasoning(None, Some("x")).into()])
            .unwrap_err()
            .rule,
        "CHUNK-ID"
    );
}

#[test]
fn conflicting_repeats_are_fatal() {
    let mut second = text(None, Some("b"));
    second.role = Some(TextRole::User);
    let err = expand([text(Some("c"), Some("a")).into(), second.into()]).unwrap_err();
    assert_eq!(err.rule, "CHUNK-CONFLICT");
    assert!(
        err.message
            .contains("chunk role 'user' does not match the open stream's role 'assistant'"),
        "{err}"
    );

    let mut named = text(None, None);
    named.name = Some("bob".into());
    let err = expand([text(Some("c"), Some("a")).into(), named.into()]).unwrap_err();
    assert!(err.message.contains("name (absent)"), "{err}");

    let err = expand([
        tool(Some("c"), Some("f"), None).into(),
        tool(None, Some("g"), None).into(),
    ])
    .unwrap_err();
    assert_eq!(err.rule, "CHUNK-CONFLICT");

    let mut same = text(None, Some("b"));
    same.role = Some(TextRole::Assistant);
    assert!(expand([text(Some("c"), Some("a")).into(), same.into()]).is_ok());
}

#[test]
fn metadata_and_raw_event_placement() {
    let mut meta = Metadata::new();
    meta.insert("k".into(), json!(1));
    let mut first = text(Some("c"), None);
    first.base.metadata = Some(meta.clone());
    first.base.timestamp = Some(5);
    let mut cont = text(None, None);
    cont.base.metadata = Some(meta.clone());
    let bare = text(Some("c"), None);
    let mut raw = text(None, None);
    raw.base.raw_event = Some(json!({"r": 1}));
    let out = expand([first.into(), cont.into(), bare.into(), raw.into()]).unwrap();
    assert_eq!(
        shape(&out),
        [
            "TEXT_MESSAGE_START:c",
            "TEXT_MESSAGE_CONTENT:c",
            "TEXT_MESSAGE_CONTENT:c",
            "TEXT_MESSAGE_END:c"
        ]
    );
    assert_eq!(out[0].base().metadata, Some(meta.clone()));
    assert_eq!(out[0].base().timestamp, None);
    assert_eq!(out[1].base().metadata, Some(meta));
    assert_eq!(out[2].base().raw_event, Some(json!({"r": 1})));
    assert_eq!(out[3].base(), &EventBase::default());
}

#[test]
fn explicit_end_closes_the_chunk_item_first() {
    let out = expand([
        text(Some("c"), Some("a")).into(),
        TextMessageEnd::new("c").into(),
    ])
    .unwrap();
    assert_eq!(
        shape(&out),
        [
            "TEXT_MESSAGE_START:c",
            "TEXT_MESSAGE_CONTENT:c",
            "TEXT_MESSAGE_END:c",
            "TEXT_MESSAGE_END:c"
        ]
    );
}

#[test]
fn an_error_is_sticky_and_finish_is_empty_after_it() {
    let mut x = ChunkExpander::new();
    assert!(x.push(text(Some("c"), Some("a")).into()).is_ok());
    let err = x
        .push(text(Some("d"), None).in_subagent("s").into())
        .map(|_| ());
    assert!(err.is_ok());
    let bad = x.push(tool(None, None, None).into()).unwrap_err();
    assert_eq!(
        x.push(Custom::new("x", json!(null)).into()).unwrap_err(),
        bad
    );
    assert!(x.finish().is_empty());
}
