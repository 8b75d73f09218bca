//! Interrupts as MCP elicitation, and elicitation answers as resume entries.
//!
//! An interrupt's `responseSchema` is reduced to MCP's elicitation subset (a flat object
//! whose properties are strings, numbers, integers, booleans or enums): optional
//! properties of other kinds are left out (the demo's optional `editedArgs`), a required
//! one makes the schema irreducible, and an irreducible schema becomes a URL-mode
//! elicitation pointing at the console's thread. No schema asks for `{"answer": string}`
//! (its text is the payload, as a text answer over A2A is).
//!
//! Answers: `accept` is a `resolved` answer with the client's `content`; `decline` is a
//! deny, which Handoff expresses as a `resolved` answer: when the schema has exactly one
//! required boolean (the approvals' `approved`) it is that field `false`, else there is no
//! deny to express and it is `cancelled`; `cancel` is `cancelled`.

use agui_protocol::{Interrupt, ResumeEntry};
use handoff_core::Principal;
use handoff_core::approval::{APPROVAL, ApprovalPolicy};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::McpError;

const PRIMITIVES: [&str; 4] = ["string", "number", "integer", "boolean"];
/// The property a schema-less interrupt is answered with.
const TEXT_ANSWER: &str = "answer";

/// Keywords a primitive property keeps.
const KEPT: [&str; 11] = [
    "type",
    "title",
    "description",
    "default",
    "enum",
    "enumNames",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
];

/// `schema` as an elicitation `requestedSchema`, when it reduces.
pub(crate) fn reduce(schema: Option<&Value>) -> Option<Value> {
    let Some(schema) = schema else {
        return Some(json!({"type": "object",
            "properties": {TEXT_ANSWER: {"type": "string", "title": "Answer"}},
            "required": [TEXT_ANSWER]}));
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut properties = Map::new();
    let empty = Map::new();
    let given = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, property) in given {
        match primitive(property) {
            Some(kept) => {
                properties.insert(name.clone(), kept);
            }
            None if required.contains(&name.as_str()) => return None,
            None => {}
        }
    }
    if required.iter().any(|r| !properties.contains_key(*r)) {
        return None;
    }
    let mut reduced = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        reduced["required"] = json!(required);
    }
    Some(reduced)
}

fn primitive(property: &Value) -> Option<Value> {
    let object = property.as_object()?;
    let kind = object.get("type").and_then(Value::as_str);
    let is_enum = object.get("enum").and_then(Value::as_array).is_some();
    let typed = kind.is_some_and(|k| PRIMITIVES.contains(&k));
    let untyped_enum = kind.is_none() && is_enum;
    if !(typed || untyped_enum) {
        return None;
    }
    let mut kept: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| KEPT.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    kept.entry("type").or_insert_with(|| json!("string"));
    Some(Value::Object(kept))
}

/// The elicitation request of `interrupt`: form mode with its reduced schema, else URL
/// mode at `console`.
pub(crate) fn request(interrupt: &Interrupt, console: &str) -> Value {
    let message = interrupt
        .message
        .clone()
        .unwrap_or_else(|| interrupt.reason.clone());
    let params = match reduce(interrupt.response_schema.as_deref()) {
        Some(schema) => json!({"mode": "form", "message": message, "requestedSchema": schema}),
        None => json!({"mode": "url", "message": message, "url": console}),
    };
    json!({"method": "elicitation/create", "params": params})
}

/// Whether `interrupt` can be elicited from a client declaring `form` / `url` support.
pub(crate) fn elicitable(interrupt: &Interrupt, form: bool, url: bool) -> bool {
    match reduce(interrupt.response_schema.as_deref()) {
        Some(_) => form,
        None => url,
    }
}

/// Whether `principal` may answer `interrupt` under its approval policy (its wire echo):
/// `requested` says whether the caller asked for the run that raised it. A caller who
/// may not is told the run waits for an approver instead of being asked.
pub(crate) fn may_answer(interrupt: &Interrupt, principal: &Principal, requested: bool) -> bool {
    let Some(echo) = interrupt.metadata.as_ref().and_then(|m| m.get(APPROVAL)) else {
        return true;
    };
    let Ok(policy) = ApprovalPolicy::deserialize(echo) else {
        return false;
    };
    if policy.not_requester && requested {
        return false;
    }
    policy.roles.is_empty() || principal.roles.iter().any(|r| policy.roles.contains(r))
}

/// The resume entries `responses` give for `interrupts`; `None` when one has no answer
/// yet (the client is asked again).
pub(crate) fn answers(
    responses: &Map<String, Value>,
    interrupts: &[Interrupt],
) -> Result<Option<Vec<ResumeEntry>>, McpError> {
    let mut entries = Vec::new();
    for interrupt in interrupts {
        let id = interrupt.id.as_str();
        let Some(response) = responses.get(id) else {
            return Ok(None);
        };
        let action = response.get("action").and_then(Value::as_str);
        let schema = interrupt.response_schema.as_deref();
        entries.push(match action {
            Some("accept") => {
                let content = response.get("content").cloned().unwrap_or(json!({}));
                let payload = match schema {
                    None => content.get(TEXT_ANSWER).cloned().unwrap_or(content),
                    Some(_) => content,
                };
                ResumeEntry::resolved(id, payload)
            }
            Some("decline") => match deny_field(schema) {
                Some(field) => ResumeEntry::resolved(id, json!({field: false})),
                None => ResumeEntry::cancelled(id),
            },
            Some("cancel") => ResumeEntry::cancelled(id),
            _ => {
                return Err(McpError::InvalidParams(format!(
                    "inputResponses.{id}.action must be accept, decline or cancel"
                )));
            }
        });
    }
    Ok(Some(entries))
}

/// The one required boolean of `schema`, if it has exactly one: how it says no.
fn deny_field(schema: Option<&Value>) -> Option<String> {
    let schema = schema?;
    let properties = schema.get("properties")?.as_object()?;
    let booleans: Vec<&str> = schema
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .filter(|r| {
            properties
                .get(*r)
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                == Some("boolean")
        })
        .collect();
    match booleans.as_slice() {
        [only] => Some((*only).to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refund_schema_reduces_to_its_approval_and_declines_as_false() {
        let schema = json!({"type": "object", "properties": {
            "approved": {"type": "boolean"},
            "editedArgs": {"type": "object", "properties": {"cents": {"type": "integer"}}}},
            "required": ["approved"]});
        let reduced = reduce(Some(&schema)).unwrap();
        assert_eq!(
            reduced,
            json!({"type": "object", "properties": {"approved": {"type": "boolean"}},
                "required": ["approved"]})
        );
        assert_eq!(deny_field(Some(&schema)).as_deref(), Some("approved"));
    }

    #[test]
    fn a_required_nested_object_does_not_reduce_and_declines_as_cancel() {
        let schema = json!({"type": "object", "properties": {
            "address": {"type": "object"}}, "required": ["address"]});
        assert_eq!(reduce(Some(&schema)), None);
        assert_eq!(deny_field(Some(&schema)), None);
        let interrupt = Interrupt::new("i1", "input_required").with_response_schema(schema);
        let asked = request(&interrupt, "https://h/?thread=t");
        assert_eq!(asked["params"]["mode"], "url");
        let responses = json!({"i1": {"action": "decline"}});
        let entries = answers(responses.as_object().unwrap(), &[interrupt])
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_value(&entries[0]).unwrap()["status"],
            "cancelled"
        );
    }

    #[test]
    fn an_enum_and_strings_are_kept_and_a_missing_answer_asks_again() {
        let schema = json!({"type": "object", "properties": {
            "reason": {"type": "string", "enum": ["a", "b"], "title": "Reason", "x-ui": 1},
            "note": {"type": "string", "maxLength": 5}}, "required": ["reason"]});
        let reduced = reduce(Some(&schema)).unwrap();
        assert_eq!(
            reduced["properties"]["reason"],
            json!({"type": "string", "enum": ["a", "b"], "title": "Reason"})
        );
        let interrupt = Interrupt::new("i1", "input_required").with_response_schema(schema);
        assert_eq!(answers(&Map::new(), &[interrupt]).unwrap(), None);
    }
}
