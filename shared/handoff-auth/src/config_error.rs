//! What is wrong with a configuration: [`AuthConfigError`], answered by
//! [`AuthConfig::from_lookup`](crate::AuthConfig::from_lookup) and by the authenticators
//! that parse their own variables ([`ApiKeys::parse`](crate::ApiKeys::parse),
//! [`Iam::parse_roles`](crate::Iam::parse_roles)).

/// The valid `HANDOFF_AUTH` values.
const MODES: &str = "none, api-key, jwt, iam, cf-access";

/// A configuration that cannot be served. Messages name the variable, never a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthConfigError {
    /// `HANDOFF_AUTH` has an unknown value.
    #[error("HANDOFF_AUTH={value:?} is not one of: {MODES}")]
    UnknownMode {
        /// The value given.
        value: String,
    },
    /// A variable the mode needs is unset or empty.
    #[error("HANDOFF_AUTH={mode} needs {var}")]
    Missing {
        /// The mode.
        mode: &'static str,
        /// The variable.
        var: &'static str,
    },
    /// A variable has an unusable value.
    #[error("{var}: {reason}")]
    Invalid {
        /// The variable.
        var: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An entry of `HANDOFF_API_KEYS` is malformed.
    #[error("HANDOFF_API_KEYS entry {index}: {reason}")]
    ApiKeyEntry {
        /// 1-based position of the entry.
        index: usize,
        /// What is wrong (never the key).
        reason: String,
    },
}
