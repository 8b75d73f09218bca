//! The OpenTelemetry type of each span attribute whose `tracing` value cannot carry it.
//!
//! Spans are `tracing` spans, and `tracing` has no arrays, while the bridge to
//! OpenTelemetry turns an unsigned count into the string of its digits. The conventions
//! type `gen_ai.usage.*_tokens` and `http.response.status_code` as integers and
//! `gen_ai.response.finish_reasons` as an array of strings, and a collector (or a query
//! summing tokens) only sees what was sent. So every host's exporter asks this one table
//! how to type an attribute, instead of each call site working around its exporter.

/// How an attribute is typed on the wire, when not as `tracing` recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeType {
    /// A signed 64-bit integer (`intValue`).
    Int,
    /// An array of strings (`arrayValue` of `stringValue`); the span records one string,
    /// the array's only element.
    StringArray,
}

/// The type the conventions give `key`, `None` for an attribute exported as recorded.
pub fn attribute_type(key: &str) -> Option<AttributeType> {
    match key {
        "gen_ai.response.finish_reasons" => Some(AttributeType::StringArray),
        "http.response.status_code" => Some(AttributeType::Int),
        // Every count of tokens, today's (input, output, cache, reasoning) and any added later.
        key if key.starts_with("gen_ai.usage.") && key.ends_with("_tokens") => {
            Some(AttributeType::Int)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_and_status_codes_are_integers_finish_reasons_arrays() {
        for key in [
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.reasoning.output_tokens",
            "http.response.status_code",
        ] {
            assert_eq!(attribute_type(key), Some(AttributeType::Int), "{key}");
        }
        assert_eq!(
            attribute_type("gen_ai.response.finish_reasons"),
            Some(AttributeType::StringArray)
        );
        for key in [
            "gen_ai.usage.cost",
            "gen_ai.request.model",
            "handoff.run.id",
            "gen_ai.tokens",
        ] {
            assert_eq!(attribute_type(key), None, "{key}");
        }
    }
}
