//! Checking an answer against its interrupt's `responseSchema`: the [`SchemaValidator`]
//! hook, [`JsonSchema`] (the `jsonschema` crate, feature `json-schema`) and [`TypedAnswers`]
//! (the agent's own answer types, through serde; no JSON Schema engine linked).
//!
//! The engine refuses an answer its validator rejects (422 `RESUME_PAYLOAD_INVALID`,
//! nothing written). An engine without a validator fails closed: an agent that raises an
//! interrupt with a `responseSchema` ends its run with `RUN_ERROR`
//! `SCHEMA_VALIDATION_UNAVAILABLE` rather than accept answers it cannot check. Hosts pick
//! the validator: native hosts use [`JsonSchema`]; a Worker can use the platform's own
//! (a smaller bundle than compiling `jsonschema` to wasm). An agent that knows the types of
//! its answers can bring its own ([`crate::Agent::answer_validator`], e.g. [`TypedAnswers`]):
//! `jsonschema` and its two regex engines are about a quarter of a Lambda bootstrap.

use serde_json::Value;

mod typed;

pub use typed::TypedAnswers;

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

    /// Whether answers to `schema` can be checked at all, asked when an agent raises an
    /// interrupt with it: an `Err` ends that run with `RUN_ERROR` instead of asking a
    /// question whose answers would all be refused. The default accepts every schema (a
    /// general validator finds an unusable one when the first answer arrives).
    fn check_schema(&self, _schema: &Value) -> Result<(), SchemaFailure> {
        Ok(())
    }
}

/// The `jsonschema` crate (drafts 4 to 2020-12, by the schema's `$schema`; 2020-12 when absent).
#[cfg(feature = "json-schema")]
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonSchema;

#[cfg(feature = "json-schema")]
impl SchemaValidator for JsonSchema {
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        let validator = compiled::validator(schema)?;
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

/// Compiled validators, by schema text: an interrupt's schema is compiled when its first
/// answer arrives, not on every answer (compiling costs far more than validating).
#[cfg(feature = "json-schema")]
mod compiled {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock, PoisonError};

    use serde_json::Value;

    use super::SchemaFailure;

    /// Distinct schemas kept; past it one entry makes room for each new one. (Agents use a
    /// handful of fixed schemas, but one that bounds its answer by the data, as the demo's
    /// refund does, compiles one per interrupt: clearing the whole map would drop hundreds
    /// of validators inside one unlucky request.)
    pub(super) const LIMIT: usize = 256;

    type Cache = Mutex<HashMap<Vec<u8>, Arc<jsonschema::Validator>>>;

    static CACHE: OnceLock<Cache> = OnceLock::new();

    /// How many validators are kept.
    #[cfg(test)]
    pub(super) fn cached() -> usize {
        CACHE.get().map_or(0, |c| {
            c.lock().unwrap_or_else(PoisonError::into_inner).len()
        })
    }

    pub(super) fn validator(schema: &Value) -> Result<Arc<jsonschema::Validator>, SchemaFailure> {
        let cache = CACHE.get_or_init(Cache::default);
        // The schema's compact JSON (written by serde_json into a `Vec`, several times faster
        // than through `Display`).
        let key = serde_json::to_vec(schema).unwrap_or_default();
        // A panic elsewhere cannot leave the map half-written: every change is one call.
        let lock = || cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = lock().get(&key) {
            return Ok(found.clone());
        }
        let validator = Arc::new(
            jsonschema::validator_for(schema)
                .map_err(|e| SchemaFailure::Unusable(e.to_string()))?,
        );
        let mut map = lock();
        let evicted = if map.len() >= LIMIT && !map.contains_key(&key) {
            let oldest = map.keys().next().cloned();
            oldest.and_then(|k| map.remove(&k))
        } else {
            None
        };
        map.insert(key, validator.clone());
        // Dropped after the lock is released: a large validator takes a while to free.
        drop(map);
        drop(evicted);
        Ok(validator)
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

#[cfg(all(test, feature = "json-schema"))]
mod tests {
    use serde_json::json;

    use super::{JsonSchema, SchemaFailure, SchemaValidator, compiled};

    #[test]
    fn a_cached_validator_answers_for_its_own_schema_only() {
        let at_most = |max: u64| json!({"type": "object", "properties": {"n": {"maximum": max}}});
        for _ in 0..3 {
            assert_eq!(JsonSchema.validate(&at_most(5), &json!({"n": 5})), Ok(()));
            assert!(matches!(
                JsonSchema.validate(&at_most(5), &json!({"n": 6})),
                Err(SchemaFailure::Invalid(_))
            ));
            // A schema differing only in its bound is its own entry.
            assert_eq!(JsonSchema.validate(&at_most(6), &json!({"n": 6})), Ok(()));
        }
    }

    #[test]
    fn a_full_cache_makes_room_one_entry_at_a_time() {
        let at_least = |min: usize| json!({"type": "integer", "minimum": min});
        for min in 0..compiled::LIMIT + 40 {
            assert_eq!(JsonSchema.validate(&at_least(min), &json!(min)), Ok(()));
            assert!(compiled::cached() <= compiled::LIMIT);
        }
        // Full, not started over; old and new schemas still answer correctly.
        assert_eq!(compiled::cached(), compiled::LIMIT);
        assert!(JsonSchema.validate(&at_least(3), &json!(2)).is_err());
        assert!(JsonSchema.validate(&at_least(5), &json!(5)).is_ok());
    }

    #[test]
    fn an_unusable_schema_stays_unusable() {
        let broken = json!({"type": 17});
        for _ in 0..2 {
            assert!(matches!(
                JsonSchema.validate(&broken, &json!({})),
                Err(SchemaFailure::Unusable(_))
            ));
        }
    }
}
