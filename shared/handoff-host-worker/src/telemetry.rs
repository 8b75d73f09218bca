//! Logs and spans on Workers, as JSON lines on the console (where Workers Logs and their
//! OTLP log export pick them up): the Rust OpenTelemetry SDK does not run on
//! `wasm32-unknown-unknown`, so the engine's spans are written as lines with the names
//! and attributes the native hosts export.
//!
//! - An event: `{"level","message","target","traceId"?,"spanId"?, …fields}`, `INFO` and
//!   up (or as `RUST_LOG` says). `HANDOFF_LOG=text` writes `LEVEL message k=v` instead.
//! - A span, when it closes, only with `OTEL_TRACES_EXPORTER=console` or an OTLP endpoint
//!   set: `{"span": name, "kind", "traceId", "spanId", "parentSpanId"?, "startMs",
//!   "durationMs", "attributes": {…}}`. A request continues its `traceparent`, and
//!   outgoing fetches carry one.

use handoff_core::conventions::{AttributeType, attribute_type};
use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Whether span lines are written (set once per isolate, by its first request).
static SPAN_LINES: OnceLock<bool> = OnceLock::new();

/// Installs the isolate's log and span lines from the first request's variables (later
/// calls do nothing): `HANDOFF_LOG` (json, default, or text), `RUST_LOG` (events, default
/// `info`), and span lines with `OTEL_TRACES_EXPORTER=console` or an OTLP endpoint set.
pub fn init(vars: &impl Fn(&str) -> Option<String>) {
    use tracing_subscriber::filter::{Targets, filter_fn};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    if SPAN_LINES.get().is_some() {
        return;
    }
    let set = |key: &str| vars(key).is_some_and(|v| !v.trim().is_empty());
    let spans = vars("OTEL_TRACES_EXPORTER").as_deref() == Some("console")
        || set("OTEL_EXPORTER_OTLP_ENDPOINT")
        || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let json = vars("HANDOFF_LOG").as_deref() != Some("text");
    let events = vars("RUST_LOG")
        .and_then(|spec| spec.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO));
    let span_levels = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("handoff::store", tracing::Level::DEBUG);
    let filter = filter_fn(move |meta| match meta.is_span() {
        true => spans && span_levels.would_enable(meta.target(), meta.level()),
        false => events.would_enable(meta.target(), meta.level()),
    });
    let layer = LogLines { spans, json }.with_filter(filter);
    let _ = tracing_subscriber::registry().with(layer).try_init();
    let _ = SPAN_LINES.set(spans);
}

/// What the console gets.
#[derive(Debug, Clone, Copy)]
struct LogLines {
    spans: bool,
    json: bool,
}

/// One open span's identity and attributes.
struct SpanData {
    name: String,
    kind: &'static str,
    trace_id: String,
    span_id: String,
    parent: Option<String>,
    start_ms: f64,
    attributes: Map<String, Value>,
}

/// Collects fields; the `otel.*` ones and an incoming `traceparent` are kept apart.
#[derive(Default)]
struct Fields {
    map: Map<String, Value>,
    name: Option<String>,
    kind: Option<&'static str>,
    traceparent: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "otel.name" => self.name = Some(value.to_owned()),
            "otel.kind" => {
                self.kind = Some(match value {
                    "server" => "server",
                    "client" => "client",
                    _ => "internal",
                });
            }
            "handoff.traceparent" => self.traceparent = Some(value.to_owned()),
            name => {
                self.map.insert(name.to_owned(), typed(name, value));
            }
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.map.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.map.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.map.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.map.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

/// A string attribute as the conventions type it ([`handoff_core::conventions`]), so a
/// span line says what the native hosts export: the finish reasons as an array. (Counts
/// need nothing: this visitor keeps an unsigned number a number.)
fn typed(name: &str, value: &str) -> Value {
    match attribute_type(name) {
        Some(AttributeType::StringArray) => Value::from(vec![value]),
        Some(AttributeType::Int) => value.parse::<i64>().map_or(Value::from(value), Value::from),
        None => Value::from(value),
    }
}

fn now_ms() -> f64 {
    worker::Date::now().as_millis() as f64
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for LogLines {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let inherited = span.parent().and_then(|parent| {
            let extensions = parent.extensions();
            let data = extensions.get::<SpanData>()?;
            Some((data.trace_id.clone(), data.span_id.clone()))
        });
        let (trace_id, parent) = match inherited.or_else(|| {
            fields
                .traceparent
                .as_deref()
                .and_then(handoff_http::parse_traceparent)
        }) {
            Some((trace, parent)) => (trace, Some(parent)),
            None => (crate::runtime::random_hex::<16>(), None),
        };
        let data = SpanData {
            name: fields
                .name
                .unwrap_or_else(|| attrs.metadata().name().to_owned()),
            kind: fields.kind.unwrap_or("internal"),
            trace_id,
            span_id: crate::runtime::random_hex::<8>(),
            parent,
            start_ms: now_ms(),
            attributes: fields.map,
        };
        span.extensions_mut().insert(data);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        values.record(&mut fields);
        if let Some(data) = span.extensions_mut().get_mut::<SpanData>() {
            data.attributes.extend(fields.map);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let message = fields.map.remove("message").unwrap_or(Value::Null);
        let line = if self.json {
            let mut line = Map::new();
            line.insert("level".into(), Value::from(meta.level().as_str()));
            line.insert("message".into(), message);
            line.insert("target".into(), Value::from(meta.target()));
            if let Some(span) = ctx.event_span(event)
                && let Some(data) = span.extensions().get::<SpanData>()
            {
                line.insert("traceId".into(), Value::from(data.trace_id.clone()));
                line.insert("spanId".into(), Value::from(data.span_id.clone()));
            }
            line.extend(fields.map);
            Value::Object(line).to_string()
        } else {
            let mut line = format!("{} {}", meta.level(), message.as_str().unwrap_or_default());
            for (key, value) in fields.map {
                line.push_str(&format!(" {key}={value}"));
            }
            line
        };
        worker::console_log!("{line}");
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if !self.spans {
            return;
        }
        let Some(span) = ctx.span(&id) else { return };
        let Some(data) = span.extensions_mut().remove::<SpanData>() else {
            return;
        };
        let mut line = json!({
            "span": data.name,
            "kind": data.kind,
            "traceId": data.trace_id,
            "spanId": data.span_id,
            "startMs": data.start_ms,
            "durationMs": (now_ms() - data.start_ms).max(0.0),
            "attributes": data.attributes,
        });
        if let Some(parent) = data.parent {
            line["parentSpanId"] = Value::from(parent);
        }
        worker::console_log!("{line}");
    }
}

/// The trace id of `span`, when span lines are written.
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    span.with_subscriber(|(id, dispatch)| {
        let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
        let span = registry.span(id)?;
        let extensions = span.extensions();
        Some(extensions.get::<SpanData>()?.trace_id.clone())
    })
    .flatten()
}

/// The current span's `traceparent`, for an outgoing fetch (none when no span is open or
/// span lines are off).
pub fn traceparent() -> Option<String> {
    if !SPAN_LINES.get().copied().unwrap_or(false) {
        return None;
    }
    tracing::Span::current()
        .with_subscriber(|(id, dispatch)| {
            let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
            let span = registry.span(id)?;
            let extensions = span.extensions();
            let data = extensions.get::<SpanData>()?;
            Some(format!("00-{}-{}-01", data.trace_id, data.span_id))
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a span line's attributes hold after the chat span records these strings.
    fn recorded(values: &[(&str, &str)]) -> Map<String, Value> {
        tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            let span = tracing::info_span!(
                "chat",
                gen_ai.response.finish_reasons = tracing::field::Empty,
                gen_ai.request.model = tracing::field::Empty,
            );
            let fields = span.metadata().expect("an enabled span").fields();
            let mut visitor = Fields::default();
            for (name, value) in values {
                let field = fields.field(*name).expect("a declared field");
                visitor.record_str(&field, value);
            }
            visitor.map
        })
    }

    #[test]
    fn span_lines_type_attributes_as_the_native_hosts_export_them() {
        let map = recorded(&[
            ("gen_ai.response.finish_reasons", "stop"),
            ("gen_ai.request.model", "42"),
        ]);
        assert_eq!(map["gen_ai.response.finish_reasons"], json!(["stop"]));
        assert_eq!(map["gen_ai.request.model"], json!("42"));
    }
}
