//! OpenTelemetry traces for native hosts (feature `otel`): the engine's `tracing` spans
//! (`invoke_agent`, `chat`, `execute_tool`, `handoff.effect`, `handoff.store`) exported
//! over OTLP/HTTP, the caller's W3C `traceparent` continued, and outgoing requests
//! stamped with one.
//!
//! Nothing is set up unless `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; then the SDK's standard variables apply
//! (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_PROTOCOL` =
//! `http/protobuf` (default) or `http/json`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`).
//! Spans leave on the SDK's batch thread through `ureq` (the hosts' one HTTP client and
//! TLS stack), never on a request's path.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let telemetry = handoff_host_native::telemetry::Telemetry::from_env().expect("valid settings");
//! tracing_subscriber::registry()
//!     .with(telemetry.as_ref().map(|t| t.layer()))
//!     .with(tracing_subscriber::fmt::layer())
//!     .init();
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::trace::{SpanId, TracerProvider as _};
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

mod client;
mod typed;

/// The exporter and what it needs to flush at the right moment.
#[derive(Clone)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    open_runs: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Telemetry {
    /// The exporter the environment asks for, `None` when no OTLP endpoint is set.
    pub fn from_env() -> Result<Option<Telemetry>, String> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// [`Telemetry::from_env`] over any lookup (the SDK itself still reads its variables
    /// from the process environment).
    pub fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Result<Option<Telemetry>, String> {
        let set = |key: &str| env(key).is_some_and(|v| !v.trim().is_empty());
        if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            return Ok(None);
        }
        // Set explicitly: with both encoders linked the exporter's own default is JSON,
        // while the specification's is protobuf.
        let protocol = match env("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref() {
            None | Some("" | "http/protobuf") => opentelemetry_otlp::Protocol::HttpBinary,
            Some("http/json") => opentelemetry_otlp::Protocol::HttpJson,
            Some(other) => {
                return Err(format!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL={other} is not supported: use http/protobuf or http/json"
                ));
            }
        };
        use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .with_http_client(client::Export(crate::outbound::UreqOutbound::operator()))
            .build()
            .map_err(|e| format!("OTLP exporter: {e}"))?;
        let exporter = typed::Typed(exporter);
        let mut resource = opentelemetry_sdk::Resource::builder();
        if !set("OTEL_SERVICE_NAME") {
            resource = resource.with_service_name("handoff");
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        Ok(Some(Telemetry {
            provider,
            open_runs: Arc::default(),
        }))
    }

    /// The layer that turns the engine's spans into OpenTelemetry spans: everything at
    /// `INFO` and up, plus the store's `DEBUG` call spans.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let tracer = self.provider.tracer("handoff");
        let filter = Targets::new()
            .with_default(tracing::Level::INFO)
            .with_target("handoff::store", tracing::Level::DEBUG);
        let runs = OpenRuns(self.open_runs.clone());
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            .and_then(runs)
            .with_filter(filter)
    }

    /// Exports every finished span now. A Lambda host calls it before the invocation
    /// ends (the instance is frozen right after): it first waits, up to `wait`, for runs
    /// still closing their spans.
    pub async fn flush(&self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while self.open_runs.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let provider = self.provider.clone();
        let flushed = tokio::task::spawn_blocking(move || provider.force_flush()).await;
        if let Ok(Err(error)) = flushed {
            tracing::warn!(%error, "could not export spans");
        }
    }

    /// Exports what is left and stops the exporter (at shutdown).
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "could not export spans at shutdown");
        }
    }
}

/// Counts `invoke_agent` spans not yet closed, so a flush can wait for them.
struct OpenRuns(Arc<AtomicUsize>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for OpenRuns {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attrs.metadata().name() == "invoke_agent" {
            self.0.fetch_add(1, Ordering::AcqRel);
        }
    }

    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if ctx
            .span(&id)
            .is_some_and(|span| span.metadata().name() == "invoke_agent")
        {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The span of one HTTP request, `{method} {route}` (kind server; the route template, so
/// names stay few, else `{method}` alone): the parent of the runs it starts. Its parent is
/// the caller's `traceparent`, else `fallback` (Lambda's X-Ray header, when sampled).
pub fn request_span(
    method: &http::Method,
    route: Option<&str>,
    path: &str,
    headers: &http::HeaderMap,
    fallback: Option<SpanContext>,
) -> tracing::Span {
    let name = match route {
        Some(route) => format!("{method} {route}"),
        None => method.to_string(),
    };
    let span = tracing::info_span!(
        target: "handoff::http",
        "request",
        otel.name = name,
        http.route = route,
        otel.kind = "server",
        http.request.method = %method,
        url.path = path,
        http.response.status_code = tracing::field::Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let parent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    let parent = match (parent.span().span_context().is_valid(), fallback) {
        (false, Some(xray)) => opentelemetry::Context::new().with_remote_span_context(xray),
        _ => parent,
    };
    let _ = span.set_parent(parent);
    span
}

/// The trace id (32 hex digits) of `span`, when it is exported.
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
}

/// The current span's W3C `traceparent`, for an outgoing request (none when nothing is
/// traced).
pub fn traceparent() -> Option<String> {
    let context = tracing::Span::current().context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut headers = http::HeaderMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut HeaderInjector(&mut headers));
    headers
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The parent an X-Ray trace header (`Root=1-…;Parent=…;Sampled=1`, Lambda's
/// `_X_AMZN_TRACE_ID`) names, only when it is sampled: an unsampled parent would make
/// the default sampler drop every span.
pub fn xray_parent(header: &str) -> Option<SpanContext> {
    let (mut root, mut parent, mut sampled) = (None, None, false);
    for part in header.split(';') {
        match part.trim().split_once('=') {
            Some(("Root", value)) => root = Some(value),
            Some(("Parent", value)) => parent = Some(value),
            Some(("Sampled", value)) => sampled = value == "1",
            _ => {}
        }
    }
    if !sampled {
        return None;
    }
    // Root=1-{8 hex epoch}-{24 hex}: the 32 hex digits of a W3C trace id.
    let mut fields = root?.splitn(3, '-');
    let (Some("1"), Some(epoch), Some(unique)) = (fields.next(), fields.next(), fields.next())
    else {
        return None;
    };
    let trace_id = TraceId::from_hex(&format!("{epoch}{unique}")).ok()?;
    let span_id = SpanId::from_hex(parent?).ok()?;
    let context = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    context.is_valid().then_some(context)
}

#[cfg(test)]
mod tests;
