//! Frame-level checks: what the client's schema stage (`enforceEvents` and the
//! compatibility boundary) makes of one received JSON object.
//!
//! The client strips unknown members, unknown union members (an unknown
//! outcome type; unknown content parts, patch operations and message roles
//! inside lists) and converts a few legacy nulls, each with a warning; it
//! rejects every other `null` in an optional position and every malformed
//! known value. Official mode mirrors that; strict mode rejects anything that
//! does not survive a parse/serialize round trip unchanged (`WIRE-EXACT`).

use serde_json::{Map, Value};

use super::state::MAX_SAFE_INTEGER;
use super::{Mode, Violation};
use crate::lenient::EventReader;
use crate::message::ROLES;
use crate::{Event, EventType, PROTOCOL_VERSION, ProtocolError};

const THINKING: [&str; 5] = [
    "THINKING_START",
    "THINKING_END",
    "THINKING_TEXT_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END",
];
const PART_TYPES: [&str; 5] = ["text", "image", "audio", "video", "document"];
const SOURCE_TYPES: [&str; 3] = ["data", "url", "file"];
const PATCH_OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];

/// Checks frames one at a time (keeps the `THINKING_*` translation state).
#[derive(Debug)]
pub(super) struct FrameChecker {
    mode: Mode,
    reader: EventReader,
}

impl FrameChecker {
    pub(super) fn new(mode: Mode) -> Self {
        FrameChecker {
            mode,
            reader: EventReader::new(),
        }
    }

    /// The frame's event, or `None` when official mode drops an unknown type.
    /// Tolerated deviations are appended to `warnings`.
    pub(super) fn check(
        &mut self,
        value: Value,
        index: usize,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Event>, Violation> {
        let fail = |rule, msg: String| Violation::new(rule, Some(index), msg);
        let Value::Object(object) = value else {
            return Err(fail(
                "SSE-FRAME",
                "Invalid event: the frame is not a JSON object.".into(),
            ));
        };
        let ty = match object.get("type") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(fail(
                    "SSE-FRAME",
                    "Invalid event: the frame carries no event type.".into(),
                ));
            }
        };
        let thinking = THINKING.contains(&ty.as_str());
        if EventType::from_wire(&ty).is_none() && !thinking {
            return match self.mode {
                Mode::Strict => Err(fail("UNKNOWN-EVENT", format!("unknown event type '{ty}'"))),
                Mode::Official => {
                    warnings.push(format!("#{index}: dropping unrecognised event '{ty}'"));
                    Ok(None)
                }
            };
        }
        let mut changes = Vec::new();
        let mut normalized = Value::Object(object);
        normalize(&mut normalized, &ty, &mut changes).map_err(|m| fail("SCHEMA", m))?;
        let event = self
            .reader
            .read_value(normalized.clone())
            .map_err(|e| fail("SCHEMA", schema_message(e, &ty)))?;
        if thinking {
            changes.push(format!(
                "retired event type '{ty}' (translated to REASONING_*)"
            ));
        } else {
            let reserialized = serde_json::to_value(&event).unwrap_or(Value::Null);
            let mut diffs = Vec::new();
            diff(&normalized, &reserialized, &mut String::new(), &mut diffs);
            for d in diffs {
                match d {
                    Diff::Missing { path, null: true } if legacy_null(&ty, &path) => {
                        changes.push(format!(
                            "legacy `null` at {path} (the client converts it to absent)"
                        ));
                    }
                    Diff::Missing { path, null: true } if known_field(&normalized, &path) => {
                        return Err(fail(
                            null_rule(&ty, &path),
                            format!(
                                "`null` at {path} on {ty}: an absent optional field must be omitted, not null"
                            ),
                        ));
                    }
                    Diff::Missing { path, .. } => {
                        changes.push(format!("unrecognised member {path} (the client strips it)"))
                    }
                    Diff::Changed { path } => changes.push(format!(
                        "value at {path} does not survive parsing unchanged"
                    )),
                }
            }
        }
        if let Event::RunStarted(e) = &event
            && self.mode == Mode::Official
            && let Some(version) = e
                .protocol_version
                .as_deref()
                .filter(|v| *v != PROTOCOL_VERSION)
        {
            warnings.push(format!(
                "#{index}: the producer declares protocolVersion '{version}'; this client speaks {PROTOCOL_VERSION}"
            ));
        }
        match (self.mode, changes.first()) {
            (Mode::Strict, Some(first)) => Err(fail("WIRE-EXACT", format!("{ty}: {first}"))),
            _ => {
                warnings.extend(changes.into_iter().map(|c| format!("#{index}: {ty}: {c}")));
                Ok(Some(event))
            }
        }
    }
}

fn schema_message(e: ProtocolError, ty: &str) -> String {
    format!("{ty}: {e}")
}

/// The rule for a fatal `null`: A1 for attribution and subagent fields, A3 for `interruptIds`.
fn null_rule(ty: &str, path: &str) -> &'static str {
    if path.ends_with("/subagentRunId")
        || (ty.starts_with("SUBAGENT_") && path.matches('/').count() == 1)
    {
        "A1"
    } else if path.ends_with("/interruptIds") {
        "A3"
    } else {
        "SCHEMA"
    }
}

/// Nulls the compatibility boundary converts to absent (with a warning).
fn legacy_null(ty: &str, path: &str) -> bool {
    match (ty, path) {
        (_, "/rawEvent") => true,
        ("TOOL_CALL_START" | "TOOL_CALL_CHUNK", "/parentMessageId") => true,
        ("RUN_FINISHED", "/outcome" | "/result") => true,
        ("SUBAGENT_FINISHED", "/result") => true,
        ("RUN_STARTED", "/input/forwardedProps" | "/input/state") => true,
        ("RUN_STARTED", p) => {
            let segments: Vec<&str> = p.split('/').collect();
            matches!(
                segments.as_slice(),
                ["", "input", "resume", _, "payload"] | ["", "input", "tools", _, "parameters"]
            )
        }
        _ => false,
    }
}

/// Whether the `null` member at `path` is a known field (so the `null` is
/// fatal) rather than an unknown member (stripped): put a value there that only
/// an untyped JSON field accepts and see whether the member is rejected, kept,
/// or dropped.
fn known_field(frame: &Value, path: &str) -> bool {
    let mut probe = frame.clone();
    match probe.pointer_mut(path) {
        Some(slot) => *slot = Value::from(0.5),
        None => return true,
    }
    match EventReader::new().read_value(probe) {
        Err(_) => true,
        Ok(event) => serde_json::to_value(&event)
            .ok()
            .and_then(|v| v.pointer(path).cloned())
            .is_some(),
    }
}

enum Diff {
    /// A member of the frame that the parsed event does not carry.
    Missing { path: String, null: bool },
    /// Anything else that differs.
    Changed { path: String },
}

/// Differences between what was received and what its parsed event serializes to.
fn diff(received: &Value, parsed: &Value, path: &mut String, out: &mut Vec<Diff>) {
    match (received, parsed) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match b.get(key) {
                    Some(other) => diff(value, other, path, out),
                    None => out.push(Diff::Missing {
                        path: path.clone(),
                        null: value.is_null(),
                    }),
                }
                path.truncate(len);
            }
            if let Some(key) = b.keys().find(|k| !a.contains_key(*k)) {
                out.push(Diff::Changed {
                    path: format!("{path}/{key}"),
                });
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff(x, y, path, out);
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        _ => out.push(Diff::Changed {
            path: if path.is_empty() {
                "/".into()
            } else {
                path.clone()
            },
        }),
    }
}

/// Brings a frame to what the client's schema stage would pass on, recording
/// each tolerated change. Errors are fatal schema problems.
fn normalize(frame: &mut Value, ty: &str, changes: &mut Vec<String>) -> Result<(), String> {
    let Some(object) = frame.as_object_mut() else {
        return Ok(());
    };
    timestamp(object, changes)?;
    match ty {
        "RUN_FINISHED" => {
            drop_unknown_outcome(object, &["success", "interrupt", "cancelled"], changes)
        }
        "SUBAGENT_FINISHED" => drop_unknown_outcome(object, &["success", "suspended"], changes),
        "TOOL_CALL_RESULT" => filter_parts(object.get_mut("content"), "/content", changes),
        "STATE_DELTA" => filter_list(object.get_mut("delta"), "/delta", "op", &PATCH_OPS, changes),
        "ACTIVITY_DELTA" => {
            filter_list(object.get_mut("patch"), "/patch", "op", &PATCH_OPS, changes)
        }
        "MESSAGES_SNAPSHOT" => filter_messages(object.get_mut("messages"), "/messages", changes),
        "RUN_STARTED" => {
            if let Some(input) = object.get_mut("input").and_then(Value::as_object_mut) {
                filter_messages(input.get_mut("messages"), "/input/messages", changes);
            }
        }
        _ => {}
    }
    Ok(())
}

/// `timestamp` must be an integer within ±(2^53 − 1). An integral float or a
/// negative value is legal on the wire but not representable here (u64): the
/// first is made an integer, the second dropped, both recorded.
fn timestamp(object: &mut Map<String, Value>, changes: &mut Vec<String>) -> Result<(), String> {
    let Some(Value::Number(n)) = object.get("timestamp").cloned() else {
        return Ok(());
    };
    let max = MAX_SAFE_INTEGER as f64;
    let value = match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) if u <= MAX_SAFE_INTEGER => return Ok(()),
        (Some(u), _, _) => {
            return Err(format!(
                "timestamp {u} is outside the safe integer range (2^53 - 1)"
            ));
        }
        (None, Some(i), _) => i as f64,
        (None, None, Some(f)) if f.fract() != 0.0 => {
            return Err(format!("timestamp must be an integer, got {f}"));
        }
        (None, None, Some(f)) => f,
        (None, None, None) => return Ok(()),
    };
    if value.abs() > max {
        return Err(format!(
            "timestamp {value} is outside the safe integer range (2^53 - 1)"
        ));
    }
    if value >= 0.0 {
        object.insert("timestamp".into(), Value::from(value as u64));
        changes.push(format!(
            "timestamp {n} written as a float (read as {})",
            value as u64
        ));
    } else {
        object.remove("timestamp");
        changes.push(format!(
            "negative timestamp {n} (accepted by the client, ignored here)"
        ));
    }
    Ok(())
}

fn drop_unknown_outcome(
    object: &mut Map<String, Value>,
    known: &[&str],
    changes: &mut Vec<String>,
) {
    let unknown = match object.get("outcome").and_then(|o| o.get("type")) {
        Some(Value::String(t)) => !known.contains(&t.as_str()),
        _ => false,
    };
    if unknown {
        object.remove("outcome");
        changes.push("unknown outcome type removed at /outcome (the run reads as success)".into());
    }
}

/// Drops list elements whose discriminator `tag` is a string outside `known`.
fn filter_list(
    list: Option<&mut Value>,
    path: &str,
    tag: &str,
    known: &[&str],
    changes: &mut Vec<String>,
) {
    let Some(Value::Array(items)) = list else {
        return;
    };
    let mut i = 0;
    items.retain(|item| {
        let keep = match item.get(tag) {
            Some(Value::String(t)) => known.contains(&t.as_str()),
            _ => true,
        };
        if !keep {
            changes.push(format!("unrecognised element {path}/{i} dropped"));
        }
        i += 1;
        keep
    });
}

/// Content parts: unknown part types and unknown media sources are dropped.
fn filter_parts(content: Option<&mut Value>, path: &str, changes: &mut Vec<String>) {
    if let Some(content) = content {
        filter_media(content, path, changes);
        filter_list(Some(content), path, "type", &PART_TYPES, changes);
    }
}

fn filter_messages(list: Option<&mut Value>, path: &str, changes: &mut Vec<String>) {
    let Some(list) = list else {
        return;
    };
    filter_list(Some(list), path, "role", &ROLES, changes);
    if let Value::Array(messages) = list {
        for (i, message) in messages.iter_mut().enumerate() {
            filter_parts(
                message.get_mut("content"),
                &format!("{path}/{i}/content"),
                changes,
            );
        }
    }
}

/// Media parts whose `source.type` is unknown are dropped (required position).
fn filter_media(content: &mut Value, path: &str, changes: &mut Vec<String>) {
    let Value::Array(parts) = content else {
        return;
    };
    let mut i = 0;
    parts.retain(|part| {
        let keep = match part.get("source").and_then(|s| s.get("type")) {
            Some(Value::String(t)) if part.get("type").and_then(Value::as_str) != Some("text") => {
                SOURCE_TYPES.contains(&t.as_str())
            }
            _ => true,
        };
        if !keep {
            changes.push(format!(
                "part with an unrecognised source {path}/{i} dropped"
            ));
        }
        i += 1;
        keep
    });
}
