//! Opaque identifier newtypes. Consumers must never parse them.
//!
//! An id is an `Arc<str>`: every event of a message, a tool call or a run repeats its ids,
//! and a clone of one is a count increment rather than a copy of the string.

use std::fmt;
use std::sync::Arc;

/// Reads an id straight into its `Arc<str>` (one allocation; serde's own `Arc<str>` goes
/// through a `Box<str>` first).
struct IdVisitor;

impl serde::de::Visitor<'_> for IdVisitor {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an id string")
    }

    fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<Arc<str>, E> {
        Ok(Arc::from(id))
    }
}

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_str(IdVisitor).map(Self)
            }
        }

        impl $name {
            /// Wraps any string as this id.
            pub fn new(id: impl Into<String>) -> Self {
                Self(Arc::from(id.into()))
            }
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        // Hash, Eq and Ord agree with `str`'s (derived over the `Arc<str>`), so a map keyed
        // by ids can be searched with a `&str`.
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(Arc::from(s))
            }
        }
        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(Arc::from(s))
            }
        }
        impl From<&String> for $name {
            fn from(s: &String) -> Self {
                Self(Arc::from(s.as_str()))
            }
        }
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }
    };
}

id_type!(
    /// Identifies a conversation; stable across runs.
    ThreadId
);
id_type!(
    /// Identifies one run; never reused on a thread.
    RunId
);
id_type!(
    /// Identifies a message; unique within the thread.
    MessageId
);
id_type!(
    /// Ties a tool call, its result and any interrupt about it together.
    ToolCallId
);
id_type!(
    /// Identifies one subagent invocation.
    SubagentRunId
);
id_type!(
    /// Identifies an interrupt; unique within its run.
    InterruptId
);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MessageId, ToolCallId};

    #[test]
    fn a_cloned_id_shares_its_text() {
        let id = MessageId::new(String::from("msg_1"));
        let copy = id.clone();
        assert!(std::ptr::eq(id.as_str(), copy.as_str()));
        assert_eq!(copy, "msg_1");
    }

    /// `Borrow<str>` is only sound if an id hashes and compares like its text.
    #[test]
    fn maps_keyed_by_ids_are_searched_by_text() {
        let mut hashed = std::collections::HashMap::new();
        let mut ordered = std::collections::BTreeMap::new();
        for text in ["call_b", "call_a", "call_c"] {
            hashed.insert(ToolCallId::from(text), text.len());
            ordered.insert(ToolCallId::from(text), ());
        }
        assert_eq!(hashed.get("call_a"), Some(&6));
        assert_eq!(hashed.get("call_d"), None);
        assert!(ordered.contains_key("call_c"));
        let sorted: Vec<&str> = ordered.keys().map(ToolCallId::as_str).collect();
        assert_eq!(sorted, ["call_a", "call_b", "call_c"]);
    }

    #[test]
    fn ids_read_and_write_as_plain_json_strings() {
        // Borrowed from the input, unescaped into scratch space, and owned by a `Value`.
        let plain: ToolCallId = serde_json::from_str(r#""call_1""#).expect("plain");
        let escaped: ToolCallId = serde_json::from_str(r#""call_\u00e9\"1""#).expect("escaped");
        let owned: ToolCallId = serde_json::from_value(json!("call_2")).expect("owned");
        assert_eq!(
            [plain.as_str(), escaped.as_str(), owned.as_str()],
            ["call_1", "call_\u{e9}\"1", "call_2"]
        );
        assert_eq!(
            serde_json::to_string(&escaped).expect("writes"),
            r#""call_é\"1""#
        );
        assert!(serde_json::from_str::<ToolCallId>("17").is_err());
    }
}
