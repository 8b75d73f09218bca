//! Golden fixtures (`tests/fixtures/a2a` at the workspace root).
//!
//! - every `v1/` body parses, serializes back to the same JSON value (nothing
//!   added, nothing dropped, optional members omitted rather than null) and reparses equal;
//! - every `v0.3/` body reads into the same value as its `v1/` twin (`v0.3/PAIRS.json`),
//!   and so serializes as v1.0.

use std::path::PathBuf;

use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse};
use a2a_types::{
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
    TaskState, WireFormat,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/a2a")
}

fn read(path: &str) -> Value {
    let path = root().join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn v1_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("v1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 9, "v1 fixtures missing: {names:?}");
    names
}

/// Which type a fixture file holds.
fn kind_of(name: &str) -> &'static str {
    match name {
        "task.json" => "Task",
        "push-config.json" => "TaskPushNotificationConfig",
        "send-message-request.json" => "SendMessageRequestRpc",
        "send-message-response.json" => "SendMessageResponseRpc",
        "jsonrpc-error.json" => "ErrorRpc",
        n if n.starts_with("stream-") => "StreamResponse",
        other => panic!("no type known for fixture {other}"),
    }
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    name: &str,
    value: &Value,
) {
    let parsed: T = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let written = serde_json::to_value(&parsed).unwrap();
    assert_eq!(
        &written, value,
        "{name}: serialization differs from the fixture"
    );
    let reparsed: T = serde_json::from_value(written).unwrap();
    assert_eq!(reparsed, parsed, "{name}: reparse differs");
}

fn round_trip_as(kind: &str, name: &str, value: &Value) {
    match kind {
        "Task" => round_trip::<Task>(name, value),
        "StreamResponse" => round_trip::<StreamResponse>(name, value),
        "TaskPushNotificationConfig" => round_trip::<TaskPushNotificationConfig>(name, value),
        "SendMessageRequestRpc" => round_trip::<JsonRpcRequest<SendMessageRequest>>(name, value),
        "SendMessageResponseRpc" => round_trip::<JsonRpcResponse<SendMessageResponse>>(name, value),
        "ErrorRpc" => round_trip::<JsonRpcResponse<Value>>(name, value),
        other => panic!("unknown kind {other}"),
    }
}

/// Reads `value` as `kind` and writes it back (v1.0).
fn normalize(kind: &str, name: &str, value: Value) -> Value {
    fn via<T: Serialize + DeserializeOwned>(name: &str, value: Value) -> Value {
        let parsed: T = serde_json::from_value(value).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::to_value(parsed).unwrap()
    }
    match kind {
        "Task" => via::<Task>(name, value),
        "StreamResponse" => via::<StreamResponse>(name, value),
        "TaskPushNotificationConfig" => via::<TaskPushNotificationConfig>(name, value),
        "SendMessageRequestRpc" => {
            let mut out = via::<JsonRpcRequest<SendMessageRequest>>(name, value);
            out.as_object_mut().unwrap().remove("method");
            out
        }
        "SendMessageResponseRpc" => via::<JsonRpcResponse<SendMessageResponse>>(name, value),
        other => panic!("unknown kind {other}"),
    }
}

#[test]
fn every_v1_fixture_round_trips_exactly() {
    for name in v1_files() {
        let value = read(&format!("v1/{name}"));
        round_trip_as(kind_of(&name), &name, &value);
    }
}

#[test]
fn every_v03_fixture_reads_as_its_v1_twin() {
    let pairs = read("v0.3/PAIRS.json");
    let pairs = pairs.as_object().unwrap();
    let mut listed: Vec<&String> = pairs.keys().collect();
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(root().join("v0.3"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "PAIRS.json")
        .collect();
    present.sort();
    assert_eq!(
        listed.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        present,
        "PAIRS.json must list every v0.3 fixture"
    );
    for (name, pair) in pairs {
        let kind = pair["type"].as_str().unwrap();
        let twin = pair["v1"].as_str().unwrap();
        let old = normalize(kind, name, read(&format!("v0.3/{name}")));
        let new = normalize(kind, twin, read(&format!("v1/{twin}")));
        assert_eq!(old, new, "v0.3/{name} does not read as v1/{twin}");
    }
}

#[test]
fn push_bodies_report_their_wire_format() {
    let cases = [
        ("v1/stream-status-update.json", WireFormat::Wrapped),
        ("v0.3/status-update.json", WireFormat::Kind),
        ("v0.3/task.json", WireFormat::Kind),
        ("v0.3/task-python-model-dump.json", WireFormat::Kind),
        ("v0.3/message.json", WireFormat::Kind),
    ];
    for (path, format) in cases {
        let body = serde_json::to_vec(&read(path)).unwrap();
        let (_, read_format) = StreamResponse::from_slice(&body).unwrap();
        assert_eq!(read_format, format, "{path}");
    }
    let (task, _) =
        StreamResponse::from_slice(&serde_json::to_vec(&read("v0.3/task.json")).unwrap()).unwrap();
    let StreamResponse::Task(task) = task else {
        panic!("a bare v0.3 task reads as a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert!(task.status.state.is_terminal());
}
