//! Logs and traces on native hosts: the one place the dev server and Lambda install
//! their `tracing` subscriber.
//!
//! - Logs: `HANDOFF_LOG=text|json` (default text on the dev server, json on Lambda),
//!   filtered by `RUST_LOG` (default `info`). JSON lines have their fields at the top
//!   level (as on Workers) and the current span's under `span`. Two lines matter:
//!   - `request`, one per request once its response has been sent whole (`handoff_http`'s
//!     request log): `request_id` (echoed as `X-Request-Id`), `method`, `route`,
//!     `status`, `code` (of a refusal), `tenant`, `thread_id`/`run_id` (of a run it
//!     started), `trace_id`, `store_calls`, `duration_ms`, `aborted`;
//!   - `run ended`, one per run: `thread_id`, `run_id`, `tenant`, `outcome`, `code`,
//!     `duration_ms`, `store_calls`, and the `request_id` and `trace_id` of the request
//!     that started it.
//!
//!   No message content, tool argument, token or key is ever logged. Text lines are
//!   coloured only when stderr is a terminal and `NO_COLOR` is unset or empty.
//! - Traces (feature `otel`): with `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//!   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, the engine's spans go out over OTLP/HTTP
//!   and each request continues the caller's `traceparent`; see
//!   `handoff_host_native::telemetry`. With no endpoint, no exporter and no request span exist.
//!   Message contents and tool arguments go on the spans only with
//!   `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (feature `llm`; any value
//!   but `true` or `false` refuses to start).

#[cfg(feature = "otel")]
use std::sync::OnceLock;

use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    /// `HANDOFF_LOG`, else the host's default; a wrong value is refused by name.
    pub(crate) fn from_lookup(
        env: impl Fn(&str) -> Option<String>,
        default: LogFormat,
    ) -> Result<LogFormat, String> {
        match env("HANDOFF_LOG").as_deref() {
            None | Some("") => Ok(default),
            Some("text") => Ok(LogFormat::Text),
            Some("json") => Ok(LogFormat::Json),
            Some(other) => Err(format!("HANDOFF_LOG={other} is not text or json")),
        }
    }
}

#[cfg(feature = "otel")]
static TELEMETRY: OnceLock<handoff_host_native::telemetry::Telemetry> = OnceLock::new();

/// The exporter, when one is set up.
#[cfg(feature = "otel")]
pub(crate) fn telemetry() -> Option<&'static handoff_host_native::telemetry::Telemetry> {
    TELEMETRY.get()
}

/// Installs the subscriber; `Ok(false)` when one was already installed.
pub(crate) fn init(
    env: impl Fn(&str) -> Option<String>,
    default: LogFormat,
    timestamps: bool,
) -> Result<bool, String> {
    let format = LogFormat::from_lookup(&env, default)?;
    #[cfg(feature = "llm")]
    handoff_llm::set_capture_message_content(handoff_llm::capture_setting(
        env(handoff_llm::CAPTURE_MESSAGE_CONTENT).as_deref(),
    )?);
    let filter = env("RUST_LOG")
        .and_then(|spec| spec.parse::<tracing_subscriber::filter::Targets>().ok())
        .unwrap_or_else(|| {
            tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO)
        });
    let colour = colour(
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        env("NO_COLOR").as_deref(),
    );
    let logs = match (format, timestamps) {
        (LogFormat::Json, true) => json_layer().boxed(),
        (LogFormat::Json, false) => json_layer().without_time().boxed(),
        (LogFormat::Text, true) => text_layer(colour).boxed(),
        (LogFormat::Text, false) => text_layer(colour).without_time().boxed(),
    };
    #[cfg(feature = "otel")]
    let traces = {
        let telemetry = handoff_host_native::telemetry::Telemetry::from_lookup(&env)?;
        let layer = telemetry.as_ref().map(|t| t.layer());
        if let Some(telemetry) = telemetry {
            let _ = TELEMETRY.set(telemetry);
        }
        layer
    };
    #[cfg(not(feature = "otel"))]
    let traces: Option<tracing_subscriber::layer::Identity> = None;
    Ok(tracing_subscriber::registry()
        .with(traces)
        .with(logs.with_filter(filter))
        .try_init()
        .is_ok())
}

/// Whether text lines are coloured: only for a person at a terminal. A log redirected to a
/// file or a pipe (a test's capture, `2> dev.log`, a process manager) would otherwise be
/// full of escape codes; `NO_COLOR` (<https://no-color.org>, any non-empty value) turns
/// colour off even at a terminal.
fn colour(stderr_is_terminal: bool, no_color: Option<&str>) -> bool {
    stderr_is_terminal && no_color.is_none_or(str::is_empty)
}

fn json_layer<S>() -> tracing_subscriber::fmt::Layer<
    S,
    tracing_subscriber::fmt::format::JsonFields,
    tracing_subscriber::fmt::format::Format<tracing_subscriber::fmt::format::Json>,
    fn() -> std::io::Stderr,
>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_subscriber::fmt::layer()
        .json()
        // Fields at the top level, as the Workers' lines have them: one query fits both.
        .flatten_event(true)
        .with_current_span(true)
        .with_span_list(false)
        .with_target(false)
        .with_writer(std::io::stderr as fn() -> std::io::Stderr)
}

fn text_layer<S>(
    colour: bool,
) -> tracing_subscriber::fmt::Layer<
    S,
    tracing_subscriber::fmt::format::DefaultFields,
    tracing_subscriber::fmt::format::Format,
    fn() -> std::io::Stderr,
>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let layer =
        tracing_subscriber::fmt::layer().with_writer(std::io::stderr as fn() -> std::io::Stderr);
    // Only ever switched off: the default is already off where tracing-subscriber lacks its
    // `ansi` feature (the Lambda build), and asking for colour there panics in debug builds.
    if colour {
        layer
    } else {
        layer.with_ansi(false)
    }
}

/// Wraps `app` so each request gets a server span continuing its `traceparent`, when
/// traces are exported (otherwise `app` is returned as it is).
pub(crate) fn traced(app: axum::Router) -> axum::Router {
    #[cfg(feature = "otel")]
    if telemetry().is_some() {
        return app.layer(axum::middleware::from_fn(request_span));
    }
    app
}

/// What a Lambda invocation carries of X-Ray's trace header, for [`traced`].
#[cfg(feature = "otel")]
#[derive(Debug, Clone)]
pub(crate) struct XRayHeader(pub(crate) String);

#[cfg(feature = "otel")]
async fn request_span(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use tracing::Instrument;
    let fallback = request
        .extensions()
        .get::<XRayHeader>()
        .and_then(|h| handoff_host_native::telemetry::xray_parent(&h.0));
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|matched| matched.as_str().to_owned());
    let span = handoff_host_native::telemetry::request_span(
        request.method(),
        route.as_deref(),
        request.uri().path(),
        request.headers(),
        fallback,
    );
    // The log lines name the trace the spans went to.
    if let Some(trace) = handoff_host_native::telemetry::trace_id(&span) {
        request
            .extensions_mut()
            .insert(handoff_http::TraceId(trace));
    }
    let response = next.run(request).instrument(span.clone()).await;
    span.record("http.response.status_code", response.status().as_u16());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_format_is_named_or_the_hosts_default() {
        let none = |_: &str| None;
        assert_eq!(
            LogFormat::from_lookup(none, LogFormat::Text),
            Ok(LogFormat::Text)
        );
        assert_eq!(
            LogFormat::from_lookup(none, LogFormat::Json),
            Ok(LogFormat::Json)
        );
        let json = |k: &str| (k == "HANDOFF_LOG").then(|| "json".to_owned());
        assert_eq!(
            LogFormat::from_lookup(json, LogFormat::Text),
            Ok(LogFormat::Json)
        );
        let bad = |k: &str| (k == "HANDOFF_LOG").then(|| "yaml".to_owned());
        let error = LogFormat::from_lookup(bad, LogFormat::Text).unwrap_err();
        assert!(error.contains("HANDOFF_LOG=yaml"), "{error}");
    }

    #[test]
    fn colour_only_at_a_terminal_and_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("")), "an empty NO_COLOR is unset");
        assert!(!colour(true, Some("1")));
        assert!(!colour(true, Some("false")), "any non-empty value");
        assert!(!colour(false, None), "a redirected log");
        assert!(!colour(false, Some("")));
        assert!(!colour(false, Some("1")));
    }
}
