//! ISO 8601 / RFC 3339 conversions for `expiresAt`, with the `time` crate.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Formats Unix milliseconds as RFC 3339 UTC (`2026-11-29T13:05:00.000Z`).
pub fn format_ms(millis: u64) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_owned())
}

/// Parses an RFC 3339 instant into Unix milliseconds; `None` when unparseable
/// (such an interrupt never expires, as in the official client).
pub fn parse_ms(text: &str) -> Option<u64> {
    let t = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_milliseconds() {
        let ms = 1_795_000_000_123;
        assert_eq!(parse_ms(&format_ms(ms)), Some(ms));
        assert_eq!(parse_ms("2026-11-14T12:05:00Z"), Some(1_794_657_900_000));
        assert_eq!(parse_ms("tomorrow"), None);
    }
}
