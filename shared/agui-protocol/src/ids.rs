//! Opaque identifier newtypes. Consumers must never parse them.

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// Wraps any string as this id.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
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
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }
        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
        impl From<&String> for $name {
            fn from(s: &String) -> Self {
                Self(s.clone())
            }
        }
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
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
