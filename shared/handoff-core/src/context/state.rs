//! The authoritative copy of a thread's shared state.

use agui_protocol::PatchOp;
use serde_json::Value;

/// Applies an AG-UI patch to `doc` atomically with `json-patch`.
pub(crate) fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
    let ops_json = serde_json::to_value(ops).map_err(|e| e.to_string())?;
    let patch: json_patch::Patch = serde_json::from_value(ops_json).map_err(|e| e.to_string())?;
    json_patch::patch(doc, &patch).map_err(|e| e.to_string())
}
