//! The one error type of this crate, and the [`Violation`] of a verifier rule it carries.

/// A broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule, e.g. `"L3"`, `"C2"`, `"SCHEMA"`, `"STRICT-RUN-ID"`.
    pub rule: &'static str,
    /// Index (0-based) of the offending event or SSE frame, when there is one.
    pub index: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Violation {
    /// A violation of `rule` at `index`.
    pub fn new(rule: &'static str, index: Option<usize>, message: impl Into<String>) -> Self {
        Violation {
            rule,
            index,
            message: message.into(),
        }
    }

    pub(crate) fn at(mut self, index: Option<usize>) -> Self {
        self.index = index;
        self
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "[{}] event #{i}: {}", self.rule, self.message),
            None => write!(f, "[{}] {}", self.rule, self.message),
        }
    }
}

impl std::error::Error for Violation {}

/// What went wrong reading AG-UI material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The text is not JSON.
    #[error("invalid JSON: {message}")]
    Syntax {
        /// Parser message with line/column.
        message: String,
    },
    /// A known value is malformed; `path` names where (e.g. `outcome.interrupts[0].reason`).
    #[error("invalid value at `{path}`: {message}")]
    Invalid {
        /// JSON path of the offending value (`.` for the root).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An SSE frame is not a JSON object with a non-empty string `type`.
    #[error("invalid SSE frame: {0}")]
    Frame(String),
    /// The stream broke a sequencing rule.
    #[error("{0}")]
    Verify(#[from] Violation),
}

impl ProtocolError {
    /// The JSON path of the problem, when known.
    pub fn path(&self) -> Option<&str> {
        match self {
            ProtocolError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Deserializes `T` from a JSON value, naming the JSON path of the first malformed value.
pub(crate) fn from_value_with_path<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, ProtocolError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        ProtocolError::Invalid {
            path,
            message: err.into_inner().to_string(),
        }
    })
}

/// Deserializes `T` from JSON text, naming the JSON path of the first malformed value.
pub(crate) fn from_str_with_path<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, ProtocolError> {
    // Tracking the path costs on every value; only a failure needs it, so well-formed text
    // (nearly all of it) is read once without, and malformed text again with it.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    match result {
        Ok(v) => {
            de.end().map_err(|e| ProtocolError::Syntax {
                message: e.to_string(),
            })?;
            Ok(v)
        }
        Err(err) => {
            let path = err.path().to_string();
            let inner = err.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                Err(ProtocolError::Syntax {
                    message: inner.to_string(),
                })
            } else {
                Err(ProtocolError::Invalid {
                    path,
                    message: inner.to_string(),
                })
            }
        }
    }
}
