//! Watches: a caller's interest, carried from a run to the runs that answer its interrupts.
//! A leaf module, so the records that keep watches need nothing else of the outbox.

use serde::{Deserialize, Serialize};

/// A caller's interest in a chain of runs (kind and key are the caller's: `a2a-task` and a
/// task id, say).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Watch {
    /// What watches.
    pub kind: String,
    /// Which one.
    pub key: String,
}

impl Watch {
    /// A watch.
    pub fn new(kind: impl Into<String>, key: impl Into<String>) -> Self {
        Watch {
            kind: kind.into(),
            key: key.into(),
        }
    }
}
