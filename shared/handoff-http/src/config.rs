//! HTTP-level settings, read from the environment by hosts.

use handoff_core::limits::Quota;
use handoff_core::{DoubleText, EngineConfig};

use crate::cors::CorsOrigins;

/// Where the router is served. Each host has its own default body limit: AG-UI
/// clients resend the whole history on every run, so the default is as large as
/// the platform lets a request be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// The local dev server (`functions/dev-server`).
    DevServer,
    /// AWS Lambda behind a Function URL (`functions/agent-lambda`).
    Lambda,
    /// Cloudflare Workers (`functions/agent-worker`).
    Workers,
}

impl Host {
    /// The body limit when `HANDOFF_BODY_LIMIT` is not set.
    pub const fn default_body_limit(self) -> usize {
        match self {
            // Lambda refuses invocations over 6 MB, and the event wraps the body in
            // headers and context: 6,000,000 leaves room for that envelope.
            Host::Lambda => 6_000_000,
            // Workers take bodies up to 100 MB (free and Pro plans), but the isolate
            // has 128 MB of memory in all: 8 MiB bounds what one request buffers.
            Host::Workers => 8 * 1024 * 1024,
            Host::DevServer => 8 * 1024 * 1024,
        }
    }

    /// The run lease when `HANDOFF_LEASE_MS` is not set. Runs renew it while they live,
    /// so it bounds only how long a dead run keeps its thread. On Workers it is short: an
    /// isolate that dies mid-run (`waitUntil` keeps a disconnected run about 30 s) frees
    /// the thread within a minute, with no variable set. Lambda's is the engine's default,
    /// capped by each invocation's deadline.
    pub const fn default_lease_ms(self) -> u64 {
        match self {
            Host::Workers => 60_000,
            Host::Lambda | Host::DevServer => 15 * 60 * 1000,
        }
    }

    /// The engine settings of `host`, overridden by `HANDOFF_THREAD_TTL_SECS`, `HANDOFF_LEASE_MS`,
    /// `HANDOFF_STOP_POLL_MS` (0: stop requests reach only runs on the same instance),
    /// `HANDOFF_LIVE_FLUSH_MS` (0: no live journal; reconnects rejoin finished runs only) and
    /// `HANDOFF_DOUBLE_TEXT` (`reject`, `interrupt` or `enqueue`), `HANDOFF_RATE_LIMIT` and
    /// `HANDOFF_TOKEN_BUDGET` (`COUNT/WINDOW`; see [`check_limits`]).
    pub fn engine_config(self, lookup: impl Fn(&str) -> Option<String>) -> EngineConfig {
        let defaults = EngineConfig::default();
        EngineConfig {
            lease_ms: lookup("HANDOFF_LEASE_MS")
                .and_then(|v| v.parse().ok())
                .filter(|ms| *ms > 0)
                .unwrap_or(self.default_lease_ms()),
            stop_poll_ms: lookup("HANDOFF_STOP_POLL_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.stop_poll_ms),
            live_flush_ms: lookup("HANDOFF_LIVE_FLUSH_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(defaults.live_flush_ms),
            double_text: double_text(&lookup),
            // Malformed values were refused at start (`check_limits`).
            rate_limit: quota(&lookup, RATE_LIMIT_VAR).ok().flatten(),
            token_budget: quota(&lookup, TOKEN_BUDGET_VAR).ok().flatten(),
            ..thread_lifetime(defaults, &lookup)
        }
    }
}

/// Runs started per principal: `COUNT/WINDOW` (see [`handoff_core::limits`]).
pub const RATE_LIMIT_VAR: &str = "HANDOFF_RATE_LIMIT";
/// Model tokens per tenant: `COUNT/WINDOW` (see [`handoff_core::limits`]).
pub const TOKEN_BUDGET_VAR: &str = "HANDOFF_TOKEN_BUDGET";

fn quota(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Result<Option<Quota>, String> {
    match lookup(name).filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(value) => value
            .parse()
            .map(Some)
            .map_err(|error| format!("{name}: {error}")),
    }
}

/// Refuses to start on a malformed `HANDOFF_RATE_LIMIT` or `HANDOFF_TOKEN_BUDGET`, with
/// a message naming the variable (hosts call it before serving).
pub fn check_limits(lookup: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    quota(&lookup, RATE_LIMIT_VAR)?;
    quota(&lookup, TOKEN_BUDGET_VAR)?;
    Ok(())
}

/// `HANDOFF_DOUBLE_TEXT=reject|interrupt|enqueue` (default reject). An unknown value is
/// logged and read as reject, the behaviour that loses nothing.
fn double_text(lookup: &impl Fn(&str) -> Option<String>) -> DoubleText {
    match lookup("HANDOFF_DOUBLE_TEXT").map(|v| v.parse::<DoubleText>()) {
        None => DoubleText::Reject,
        Some(Ok(policy)) => policy,
        Some(Err(error)) => {
            tracing::error!(%error, "HANDOFF_DOUBLE_TEXT ignored: a new message on a busy thread is refused");
            DoubleText::Reject
        }
    }
}

/// `HANDOFF_THREAD_TTL_SECS`: how long an untouched thread lives (default 30 days). Its
/// effect records live as long, so exactly-once holds for the thread's whole life; its
/// history at least as long.
fn thread_lifetime(
    defaults: EngineConfig,
    lookup: &impl Fn(&str) -> Option<String>,
) -> EngineConfig {
    let Some(ttl_ms) = lookup("HANDOFF_THREAD_TTL_SECS")
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map(|secs| secs.saturating_mul(1000))
    else {
        return defaults;
    };
    EngineConfig {
        thread_ttl_ms: ttl_ms,
        effect_ttl_ms: ttl_ms,
        history_ttl_ms: defaults.history_ttl_ms.max(ttl_ms),
        ..defaults
    }
}

/// Settings of the shared router.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted request body (`HANDOFF_BODY_LIMIT`; default per [`Host`],
    /// 8 MiB for [`HttpConfig::default`]).
    pub body_limit: usize,
    /// Quiet time before an SSE keep-alive comment (`HANDOFF_KEEP_ALIVE_MS`, default 15 s).
    pub keep_alive_ms: u64,
    /// Where the CopilotKit runtime protocol is served (`HANDOFF_COPILOTKIT_BASE`, default
    /// [`COPILOTKIT_BASE`]): a path starting with `/`, no trailing `/`; `""` serves it at
    /// the root.
    pub copilotkit_base: String,
    /// Origins a browser may send state-changing requests from besides this endpoint's
    /// own (`HANDOFF_CORS_ORIGINS`; see the crate's `guard` docs).
    pub cors_origins: Option<CorsOrigins>,
    /// Host names an unauthenticated endpoint answers besides loopback
    /// (`HANDOFF_ALLOWED_HOSTS`).
    pub allowed_hosts: Vec<String>,
    /// `HANDOFF_PUBLIC_URL`: the deployment's own base URL, for links it publishes (the A2A
    /// agent card's endpoint). Unset: the request's origin.
    pub public_url: Option<String>,
    /// `HANDOFF_A2A_ALLOW_LOOPBACK=true`: A2A push-notification URLs may be loopback and
    /// `http://` (tests only).
    pub a2a_allow_loopback: bool,
    /// `HANDOFF_MCP_ELICIT_WAIT_MS` (default 45 s): how long an MCP session call that sent
    /// its client an `elicitation/create` waits for the answer's run to end before it
    /// answers "waiting for an approver" (never past the host deadline).
    pub mcp_elicit_wait_ms: u64,
    /// How a background run (`Prefer: respond-async`) goes on without its client where the
    /// host has no background executor ([`handoff_core::Runtime::background`]).
    pub background: BackgroundMode,
    /// How long a background run may run beside the response before it is handed over to
    /// the next sweep, when the host gives no deadline of its own (Workers: 25 s, inside
    /// the roughly 30 s `waitUntil` grants past the response; elsewhere unbounded).
    pub background_budget_ms: Option<u64>,
}

/// Where a background run runs when the host cannot drive it beside the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackgroundMode {
    /// It is not offered: the preference is ignored and the run streams.
    #[default]
    Streamed,
    /// It is claimed and handed over at once; the host's next sweep runs it
    /// ([`handoff_core::Engine::start_detached`]). Lambda: its schedule's invocation.
    Detached,
}

/// The default [`HttpConfig::copilotkit_base`].
pub const COPILOTKIT_BASE: &str = "/copilotkit";

/// `value` as a base path: one leading `/`, no trailing `/` (`"/"` and `""` give `""`).
pub(crate) fn normalize_base(value: &str) -> String {
    let trimmed = value.trim().trim_matches('/');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("/{trimmed}")
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            body_limit: Host::DevServer.default_body_limit(),
            keep_alive_ms: 15_000,
            copilotkit_base: COPILOTKIT_BASE.to_owned(),
            cors_origins: None,
            allowed_hosts: Vec::new(),
            public_url: None,
            a2a_allow_loopback: false,
            mcp_elicit_wait_ms: 45_000,
            background: BackgroundMode::Streamed,
            background_budget_ms: None,
        }
    }
}

impl HttpConfig {
    /// The settings of `host`, overridden by the environment (hosts pass a lookup
    /// of their variables): `HANDOFF_BODY_LIMIT`, `HANDOFF_KEEP_ALIVE_MS`,
    /// `HANDOFF_COPILOTKIT_BASE`, `HANDOFF_CORS_ORIGINS` (an invalid list is ignored here;
    /// hosts refuse to start with one), `HANDOFF_ALLOWED_HOSTS`.
    pub fn for_host(host: Host, lookup: impl Fn(&str) -> Option<String>) -> Self {
        HttpConfig {
            body_limit: lookup("HANDOFF_BODY_LIMIT")
                .and_then(|v| v.parse().ok())
                .unwrap_or(host.default_body_limit()),
            keep_alive_ms: lookup("HANDOFF_KEEP_ALIVE_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(HttpConfig::default().keep_alive_ms),
            copilotkit_base: normalize_base(
                &lookup("HANDOFF_COPILOTKIT_BASE").unwrap_or_else(|| COPILOTKIT_BASE.to_owned()),
            ),
            cors_origins: CorsOrigins::from_lookup(&lookup).ok().flatten(),
            allowed_hosts: crate::guard::allowed_hosts(&lookup),
            public_url: lookup("HANDOFF_PUBLIC_URL")
                .map(|url| url.trim().trim_end_matches('/').to_owned())
                .filter(|url| !url.is_empty()),
            a2a_allow_loopback: lookup("HANDOFF_A2A_ALLOW_LOOPBACK")
                .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
            mcp_elicit_wait_ms: lookup("HANDOFF_MCP_ELICIT_WAIT_MS")
                .and_then(|v| v.parse().ok())
                .unwrap_or(HttpConfig::default().mcp_elicit_wait_ms),
            background: match host {
                // Frozen once the response ends: the template's schedule runs it.
                Host::Lambda => BackgroundMode::Detached,
                Host::DevServer | Host::Workers => BackgroundMode::Streamed,
            },
            background_budget_ms: (host == Host::Workers).then_some(25_000),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_has_its_default_and_the_environment_overrides_it() {
        let limit = |host, value: Option<&str>| {
            let lookup = |key: &str| {
                value
                    .filter(|_| key == "HANDOFF_BODY_LIMIT")
                    .map(str::to_owned)
            };
            HttpConfig::for_host(host, lookup).body_limit
        };
        assert_eq!(limit(Host::Lambda, None), 6_000_000);
        assert_eq!(limit(Host::Workers, None), 8 << 20);
        assert_eq!(limit(Host::DevServer, None), 8 << 20);
        assert_eq!(limit(Host::Lambda, Some("1024")), 1024);
        assert_eq!(
            limit(Host::Lambda, Some("1 MiB")),
            6_000_000,
            "unparsable: the default"
        );
    }

    #[test]
    fn the_copilotkit_base_path_is_normalized() {
        let base = |value: Option<&str>| {
            let lookup = |key: &str| {
                value
                    .filter(|_| key == "HANDOFF_COPILOTKIT_BASE")
                    .map(str::to_owned)
            };
            HttpConfig::for_host(Host::DevServer, lookup).copilotkit_base
        };
        assert_eq!(base(None), "/copilotkit");
        assert_eq!(base(Some("api/ck/")), "/api/ck");
        assert_eq!(base(Some("/")), "");
    }
}
