//! The authoritative copy of a thread's shared state.

use agui_protocol::PatchOp;
use json_patch::jsonptr::PointerBuf;
use json_patch::{
    AddOperation, CopyOperation, MoveOperation, PatchOperation, RemoveOperation, ReplaceOperation,
    TestOperation,
};
use serde_json::Value;

/// Applies an AG-UI patch to `doc` with `json-patch`, all or nothing: a patch that fails
/// part-way is undone by `json-patch`, so `doc` is never left half-patched.
pub(crate) fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
    let patch = ops.iter().map(operation).collect::<Result<Vec<_>, _>>()?;
    json_patch::patch(doc, &patch).map_err(|e| e.to_string())
}

/// One operation in `json-patch`'s terms, built directly rather than through a JSON
/// round trip (that round trip was most of the cost of a small delta).
fn operation(op: &PatchOp) -> Result<PatchOperation, String> {
    let pointer = |path: &str| PointerBuf::parse(path).map_err(|e| format!("{path:?}: {e}"));
    Ok(match op {
        PatchOp::Add { path, value, .. } => PatchOperation::Add(AddOperation {
            path: pointer(path)?,
            value: value.clone(),
        }),
        PatchOp::Remove { path, .. } => PatchOperation::Remove(RemoveOperation {
            path: pointer(path)?,
        }),
        PatchOp::Replace { path, value, .. } => PatchOperation::Replace(ReplaceOperation {
            path: pointer(path)?,
            value: value.clone(),
        }),
        PatchOp::Move { from, path, .. } => PatchOperation::Move(MoveOperation {
            from: pointer(from)?,
            path: pointer(path)?,
        }),
        PatchOp::Copy { from, path, .. } => PatchOperation::Copy(CopyOperation {
            from: pointer(from)?,
            path: pointer(path)?,
        }),
        PatchOp::Test { path, value, .. } => PatchOperation::Test(TestOperation {
            path: pointer(path)?,
            value: value.clone(),
        }),
        other => return Err(format!("unsupported patch operation: {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use agui_protocol::PatchOp;
    use serde_json::{Value, json};

    use super::apply_patch;

    fn ops(json: Value) -> Vec<PatchOp> {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn every_operation_applies_as_rfc_6902_says() {
        let mut doc = json!({"a": {"b": 1}, "list": [1, 2]});
        let patch = ops(json!([
            {"op": "add", "path": "/list/-", "value": 3},
            {"op": "replace", "path": "/a/b", "value": 2},
            {"op": "copy", "from": "/a", "path": "/c"},
            {"op": "move", "from": "/c/b", "path": "/d"},
            {"op": "remove", "path": "/list/0"},
            {"op": "test", "path": "/d", "value": 2},
            {"op": "add", "path": "/esc~1aped~0", "value": true}
        ]));
        apply_patch(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"a": {"b": 2}, "c": {}, "d": 2, "list": [2, 3], "esc/aped~": true})
        );
    }

    #[test]
    fn a_patch_that_fails_part_way_changes_nothing() {
        let before = json!({"a": 1, "list": [1]});
        for bad in [
            json!([{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 9}]),
            json!([{"op": "remove", "path": "/a"}, {"op": "replace", "path": "/missing", "value": 1}]),
            json!([{"op": "add", "path": "/b", "value": 2}, {"op": "add", "path": "no-slash", "value": 1}]),
        ] {
            let mut doc = before.clone();
            assert!(apply_patch(&mut doc, &ops(bad.clone())).is_err(), "{bad}");
            assert_eq!(doc, before, "{bad}");
        }
    }
}
