//! RFC 6902 JSON Patch operations as they appear in `STATE_DELTA` and `ACTIVITY_DELTA`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One JSON Patch operation. Extra members are preserved (operations are open objects).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
#[non_exhaustive]
pub enum PatchOp {
    /// Add a value.
    Add {
        /// JSON Pointer.
        path: String,
        /// Value.
        value: Value,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// Remove a value.
    Remove {
        /// JSON Pointer.
        path: String,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// Replace a value.
    Replace {
        /// JSON Pointer.
        path: String,
        /// Value.
        value: Value,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// Move a value.
    Move {
        /// Source pointer.
        from: String,
        /// Target pointer.
        path: String,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// Copy a value.
    Copy {
        /// Source pointer.
        from: String,
        /// Target pointer.
        path: String,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// Test a value.
    Test {
        /// JSON Pointer.
        path: String,
        /// Expected value.
        value: Value,
        /// Extra members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl PatchOp {
    /// `add` at `path`.
    pub fn add(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Add {
            path: path.into(),
            value,
            extra: Map::new(),
        }
    }
    /// `replace` at `path`.
    pub fn replace(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Replace {
            path: path.into(),
            value,
            extra: Map::new(),
        }
    }
    /// `remove` at `path`.
    pub fn remove(path: impl Into<String>) -> Self {
        PatchOp::Remove {
            path: path.into(),
            extra: Map::new(),
        }
    }
    /// The target pointer.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Remove { path, .. }
            | PatchOp::Replace { path, .. }
            | PatchOp::Move { path, .. }
            | PatchOp::Copy { path, .. }
            | PatchOp::Test { path, .. } => path,
        }
    }
}

/// Whether `pointer` is a syntactically valid JSON Pointer (`^(/([^/~]|~[01])*)*$`).
pub fn is_valid_pointer(pointer: &str) -> bool {
    if pointer.is_empty() {
        return true;
    }
    if !pointer.starts_with('/') {
        return false;
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}
