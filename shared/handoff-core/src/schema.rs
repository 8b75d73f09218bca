//! Checking an answer against its interrupt's `responseSchema`: the [`SchemaValidator`]
//! hook, and [`JsonSchema`] (the `jsonschema` crate, feature `json-schema`).
//!
//! The engine refuses an answer its validator rejects (422 `RESUME_PAYLOAD_INVALID`,
//! nothing written). An engine without a validator fails closed: an agent that raises an
//! interrupt with a `responseSchema` ends its run with `RUN_ERROR`
//! `SCHEMA_VALIDATION_UNAVAILABLE` rather than accept answers it cannot check. Hosts pick
//! the validator: native hosts use [`JsonSchema`]; a Worker can use the platform's own
//! (a smaller bundle than compiling `jsonschema` to wasm).

use serde_json::Value;

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaFailure {
    /// The answer does not satisfy the schema: the first violation (safe to show).
    Invalid(String),
    /// The schema itself cannot be used.
    Unusable(String),
}

/// Validates answers against JSON Schemas.
pub trait SchemaValidator: Send + Sync + 'static {
    /// `Ok` when `value` satisfies `schema`.
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure>;
}

/// The `jsonschema` crate (drafts 4 to 2020-12, by the schema's `$schema`; 2020-12 when absent).
#[cfg(feature = "json-schema")]
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonSchema;

#[cfg(feature = "json-schema")]
impl SchemaValidator for JsonSchema {
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| SchemaFailure::Unusable(e.to_string()))?;
        match validator.iter_errors(value).next() {
            None => Ok(()),
            Some(error) => {
                let path = error.instance_path().to_string();
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!(" at {path}")
                };
                Err(SchemaFailure::Invalid(format!("{error}{at}")))
            }
        }
    }
}

/// The validator an engine gets unless told otherwise: [`JsonSchema`] when the crate is
/// built with `json-schema`, else none (interrupts with a schema then fail closed).
pub fn default_validator() -> Option<std::sync::Arc<dyn SchemaValidator>> {
    #[cfg(feature = "json-schema")]
    {
        Some(std::sync::Arc::new(JsonSchema))
    }
    #[cfg(not(feature = "json-schema"))]
    {
        None
    }
}
