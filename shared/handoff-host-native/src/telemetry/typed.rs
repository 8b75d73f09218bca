//! The exporter's last step before the wire: attributes typed as the conventions type
//! them ([`handoff_core::conventions`]). `tracing-opentelemetry` records an unsigned
//! count as the string of its digits and `tracing` has no arrays, so the spans arrive
//! here with `"123"` for a token count and `"stop"` for the finish reasons. Retyping
//! here, on the batch thread, covers every span of every native host at once.

use std::time::Duration;

use handoff_core::conventions::{AttributeType, attribute_type};
use opentelemetry::{Array, KeyValue, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Wraps the OTLP exporter; everything but `export` is passed through as it is.
#[derive(Debug)]
pub(super) struct Typed<E>(pub(super) E);

impl<E: SpanExporter> SpanExporter for Typed<E> {
    fn export(
        &self,
        mut batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        for span in &mut batch {
            for attribute in &mut span.attributes {
                retype(attribute);
            }
        }
        self.0.export(batch)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.0.set_resource(resource);
    }
}

/// Gives `attribute` its conventions' type; a value that does not fit (a count beyond
/// `i64`, which no model reports) is left as it was rather than dropped.
fn retype(attribute: &mut KeyValue) {
    let Value::String(recorded) = &attribute.value else {
        return;
    };
    let typed = match attribute_type(attribute.key.as_str()) {
        Some(AttributeType::Int) => match recorded.as_str().parse::<i64>() {
            Ok(count) => Value::I64(count),
            Err(_) => return,
        },
        Some(AttributeType::StringArray) => Value::Array(Array::String(vec![recorded.clone()])),
        None => return,
    };
    attribute.value = typed;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retyped(key: &'static str, value: impl Into<Value>) -> Value {
        let mut attribute = KeyValue::new(key, value);
        retype(&mut attribute);
        attribute.value
    }

    #[test]
    fn counts_become_integers_and_finish_reasons_an_array() {
        assert_eq!(retyped("gen_ai.usage.input_tokens", "123"), Value::I64(123));
        assert_eq!(
            retyped("gen_ai.usage.cache_read.input_tokens", "0"),
            Value::I64(0)
        );
        assert_eq!(retyped("http.response.status_code", "200"), Value::I64(200));
        assert_eq!(
            retyped("gen_ai.response.finish_reasons", "tool_calls"),
            Value::Array(Array::String(vec!["tool_calls".into()]))
        );
    }

    #[test]
    fn everything_else_is_exported_as_recorded() {
        assert_eq!(retyped("gen_ai.conversation.id", "42"), Value::from("42"));
        assert_eq!(
            retyped("gen_ai.usage.output_tokens", "18446744073709551615"),
            Value::from("18446744073709551615")
        );
        assert_eq!(retyped("gen_ai.usage.input_tokens", 7_i64), Value::I64(7));
        assert_eq!(
            retyped("handoff.effect.replayed", false),
            Value::Bool(false)
        );
    }
}
