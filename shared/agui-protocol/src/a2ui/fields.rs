//! Interrupt form fields derived from a JSON Schema.

use serde::Serialize;
use serde_json::Value;

/// One input the user must fill to answer an interrupt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterruptField {
    /// Property name in the resume payload.
    pub name: String,
    /// `text`, `confirm` or `select`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Label (the property's `title` or `description`, else its name).
    pub label: String,
    /// Whether the schema requires it.
    pub required: bool,
    /// Choices for `select`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<Value>>,
}

/// Fields for an interrupt's `responseSchema`; one required `confirm` when there is no schema.
///
/// ```
/// use serde_json::json;
/// let fields = agui_protocol::a2ui::fields_from_schema(Some(&json!({
///     "type": "object",
///     "properties": {"approved": {"type": "boolean"}, "reason": {"enum": ["damaged", "late"]}},
///     "required": ["approved"]
/// })));
/// assert_eq!(fields[0].kind, "confirm");
/// assert!(fields[0].required);
/// assert_eq!(fields[1].kind, "select");
/// ```
pub fn fields_from_schema(schema: Option<&Value>) -> Vec<InterruptField> {
    let Some(schema) = schema else {
        return vec![InterruptField {
            name: "confirm".into(),
            kind: "confirm",
            label: "Confirm".into(),
            required: true,
            options: None,
        }];
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, prop)| {
            let options = prop.get("enum").and_then(Value::as_array).cloned();
            let kind = if options.is_some() {
                "select"
            } else if prop.get("type").and_then(Value::as_str) == Some("boolean") {
                "confirm"
            } else {
                "text"
            };
            let label = prop
                .get("title")
                .or_else(|| prop.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_owned();
            InterruptField {
                name: name.clone(),
                kind,
                label,
                required: required.contains(&name.as_str()),
                options,
            }
        })
        .collect()
}
