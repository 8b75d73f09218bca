//! [`TypedAnswers`]: answers checked by the agent's own Rust types.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{SchemaFailure, SchemaValidator};

/// Checks answers by deserializing them into the agent's Rust types, one type per
/// `responseSchema` the agent raises. serde decides what is valid, so no JSON Schema
/// engine is linked: an agent whose questions have fixed answer shapes saves the
/// `jsonschema` crate (about a quarter of a Lambda bootstrap).
///
/// The schema is still what the client sees; keep it and the type in step (test them
/// against each other, as the starter does). What is checked: the schema's top-level
/// `type` keyword (so an array never passes for an object), then the type. A schema with
/// no type registered for it cannot be checked: an interrupt raising it ends its run with
/// `RUN_ERROR` instead of asking. Constraints the type does not express (`minimum`,
/// `pattern`, ...) are not checked: use the `jsonschema` validator for those.
///
/// ```
/// use std::sync::Arc;
/// use handoff_core::schema::{SchemaValidator, TypedAnswers};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct Approval {
///     #[allow(dead_code)]
///     approved: bool,
/// }
///
/// let schema = json!({"type": "object", "properties": {"approved": {"type": "boolean"}},
///                     "required": ["approved"]});
/// let answers = TypedAnswers::new().answer::<Approval>(schema.clone());
/// assert!(answers.validate(&schema, &json!({"approved": true})).is_ok());
/// assert!(answers.validate(&schema, &json!({"approved": "yes"})).is_err());
/// assert!(answers.validate(&schema, &json!([true])).is_err());
/// // Give it to the engine through `Agent::answer_validator`:
/// let _: Arc<dyn SchemaValidator> = Arc::new(answers);
/// ```
#[derive(Clone, Default)]
pub struct TypedAnswers {
    answers: Vec<Typed>,
}

#[derive(Clone)]
struct Typed {
    schema: Value,
    check: fn(&Value) -> Result<(), String>,
}

impl std::fmt::Debug for TypedAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedAnswers")
            .field("schemas", &self.answers.len())
            .finish()
    }
}

/// Deserializes `value` into `T`; the error names where it failed.
fn deserializes_into<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => Ok(()),
        Err(error) => {
            let path = error.path().to_string();
            if path == "." {
                Err(error.into_inner().to_string())
            } else {
                Err(format!("{} at {path}", error.into_inner()))
            }
        }
    }
}

/// The JSON Schema type names `value` has (`integer` numbers are also `number`s).
fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// The schema's top-level `type` keyword, when there is one it allows `value`.
fn top_level_type(schema: &Value, value: &Value) -> Result<(), String> {
    let allowed: Vec<&str> = match schema.get("type") {
        None => return Ok(()),
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        Some(_) => return Ok(()),
    };
    if allowed.iter().any(|name| has_type(value, name)) {
        Ok(())
    } else {
        Err(format!("expected {}", allowed.join(" or ")))
    }
}

impl TypedAnswers {
    /// No answer types yet: every schema is one it cannot check.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers to interrupts whose `responseSchema` equals `schema` must deserialize into
    /// `T` (unknown fields are allowed unless `T` denies them, as JSON Schema allows them
    /// unless `additionalProperties` forbids them).
    #[must_use]
    pub fn answer<T: DeserializeOwned>(mut self, schema: Value) -> Self {
        self.answers.retain(|typed| typed.schema != schema);
        self.answers.push(Typed {
            schema,
            check: deserializes_into::<T>,
        });
        self
    }

    fn find(&self, schema: &Value) -> Result<&Typed, SchemaFailure> {
        self.answers
            .iter()
            .find(|typed| typed.schema == *schema)
            .ok_or_else(|| {
                SchemaFailure::Unusable(
                    "no answer type is registered for this responseSchema (TypedAnswers)"
                        .to_owned(),
                )
            })
    }
}

impl SchemaValidator for TypedAnswers {
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        let typed = self.find(schema)?;
        top_level_type(schema, value)
            .and_then(|()| (typed.check)(value))
            .map_err(SchemaFailure::Invalid)
    }

    fn check_schema(&self, schema: &Value) -> Result<(), SchemaFailure> {
        self.find(schema).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::{SchemaFailure, SchemaValidator, TypedAnswers};

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Refund {
        cents: u32,
        note: Option<String>,
    }

    fn refund_schema() -> serde_json::Value {
        json!({"type": "object", "required": ["cents"],
               "properties": {"cents": {"type": "integer", "minimum": 0}, "note": {"type": "string"}}})
    }

    #[test]
    fn an_answer_is_valid_when_it_deserializes_into_the_type() {
        let answers = TypedAnswers::new().answer::<Refund>(refund_schema());
        let check = |value| answers.validate(&refund_schema(), &value);
        assert_eq!(check(json!({"cents": 250})), Ok(()));
        assert_eq!(
            check(json!({"cents": 250, "note": "late", "extra": 1})),
            Ok(())
        );
        assert_eq!(
            check(json!({"cents": -1})),
            Err(SchemaFailure::Invalid(
                "invalid value: integer `-1`, expected u32 at cents".to_owned()
            ))
        );
        assert_eq!(
            check(json!({"note": "x"})),
            Err(SchemaFailure::Invalid("missing field `cents`".to_owned()))
        );
        // serde would read a struct from an array; the schema's `type` says object.
        assert_eq!(
            check(json!([250, "late"])),
            Err(SchemaFailure::Invalid("expected object".to_owned()))
        );
    }

    #[test]
    fn a_schema_without_a_type_cannot_be_checked() {
        let answers = TypedAnswers::new().answer::<Refund>(refund_schema());
        let other = json!({"type": "object", "required": ["approved"]});
        assert!(matches!(
            answers.check_schema(&other),
            Err(SchemaFailure::Unusable(_))
        ));
        assert!(matches!(
            answers.validate(&other, &json!({"approved": true})),
            Err(SchemaFailure::Unusable(_))
        ));
        assert_eq!(answers.check_schema(&refund_schema()), Ok(()));
    }

    #[test]
    fn the_top_level_type_keyword_is_checked_by_name() {
        let answers = TypedAnswers::new()
            .answer::<u8>(json!({"type": "integer"}))
            .answer::<Option<String>>(json!({"type": ["string", "null"]}));
        let integer = json!({"type": "integer"});
        assert_eq!(answers.validate(&integer, &json!(7)), Ok(()));
        assert!(answers.validate(&integer, &json!(7.5)).is_err());
        assert!(answers.validate(&integer, &json!("7")).is_err());
        let maybe = json!({"type": ["string", "null"]});
        assert_eq!(answers.validate(&maybe, &json!(null)), Ok(()));
        assert_eq!(answers.validate(&maybe, &json!("x")), Ok(()));
        assert_eq!(
            answers.validate(&maybe, &json!(1)),
            Err(SchemaFailure::Invalid("expected string or null".to_owned()))
        );
    }

    #[test]
    fn registering_a_schema_again_replaces_its_type() {
        let schema = json!({"type": "integer"});
        let answers = TypedAnswers::new()
            .answer::<String>(schema.clone())
            .answer::<u8>(schema.clone());
        assert_eq!(answers.validate(&schema, &json!(3)), Ok(()));
    }
}
