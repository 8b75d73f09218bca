//! W3C Trace Context: the `traceparent` a request continues.

/// The trace and parent span ids of a `traceparent` header (`00-{32 hex}-{16 hex}-{2
/// hex}`, lowercase, neither id all zeros), `None` when it is not one.
///
/// ```
/// let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/// let (trace, parent) = handoff_http::parse_traceparent(header).unwrap();
/// assert_eq!(trace, "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(parent, "00f067aa0ba902b7");
/// ```
pub fn parse_traceparent(header: &str) -> Option<(String, String)> {
    let mut parts = header.trim().split('-');
    let (Some("00"), Some(trace), Some(span), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let lower_hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let non_zero = |s: &str| s.bytes().any(|b| b != b'0');
    (lower_hex(trace, 32)
        && lower_hex(span, 16)
        && lower_hex(flags, 2)
        && non_zero(trace)
        && non_zero(span))
    .then(|| (trace.to_owned(), span.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::parse_traceparent;

    #[test]
    fn only_a_well_formed_traceparent_is_continued() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(parse_traceparent(good).is_some());
        for bad in [
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
            "garbage",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
    }
}
