//! Answers checked against `responseSchema` on Workers by Cloudflare's validator
//! (`@cfworker/json-schema`, from `js/schema.js`), so the wasm does not carry the
//! `jsonschema` crate (about two thirds of a megabyte gzipped).
//!
//! worker-build bundles the import: the Worker's directory (or one above it) needs the
//! package in `node_modules` (`npm i @cfworker/json-schema`).

use handoff_core::schema::{SchemaFailure, SchemaValidator};
use serde_json::Value;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/schema.js")]
extern "C" {
    #[wasm_bindgen(catch)]
    fn validate_json(schema_json: &str, value_json: &str) -> Result<Option<String>, JsValue>;
}

/// [`SchemaValidator`] over the platform's JavaScript validator (draft 2020-12).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerSchema;

impl SchemaValidator for WorkerSchema {
    fn validate(&self, schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        match validate_json(&schema.to_string(), &value.to_string()) {
            Ok(None) => Ok(()),
            Ok(Some(violation)) => Err(SchemaFailure::Invalid(violation)),
            Err(thrown) => Err(SchemaFailure::Unusable(
                thrown
                    .as_string()
                    .unwrap_or_else(|| "the validator threw".to_owned()),
            )),
        }
    }
}
