//! HTTP-level settings, read from the environment by hosts.

/// Settings of the shared router.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted request body (`HANDOFF_BODY_LIMIT`, default 1 MiB).
    pub body_limit: usize,
    /// Quiet time before an SSE keep-alive comment (`HANDOFF_KEEP_ALIVE_MS`, default 15 s).
    pub keep_alive_ms: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            body_limit: 1024 * 1024,
            keep_alive_ms: 15_000,
        }
    }
}

impl HttpConfig {
    /// Reads the settings from a lookup function (hosts pass their environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let defaults = HttpConfig::default();
        HttpConfig {
            body_limit: lookup("HANDOFF_BODY_LIMIT")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.body_limit),
            keep_alive_ms: lookup("HANDOFF_KEEP_ALIVE_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.keep_alive_ms),
        }
    }
}

/// Host facts a host adapter puts in request extensions.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostDeadline(pub Option<u64>);

impl HostDeadline {
    /// The deadline a host put in `extensions`, if any.
    pub fn of(extensions: &http::Extensions) -> Option<u64> {
        extensions.get::<HostDeadline>().and_then(|d| d.0)
    }
}
