//! ISO 8601 / RFC 3339 conversions for `expiresAt`, with the `time` crate.

use std::num::NonZeroU8;

use time::OffsetDateTime;
use time::format_description::well_known::iso8601::{Config, EncodedConfig, TimePrecision};
use time::format_description::well_known::{Iso8601, Rfc3339};

/// Formats Unix milliseconds as RFC 3339 UTC with exactly three fractional digits
/// (`2026-11-29T13:05:00.000Z`, as JavaScript's `toISOString` writes it). Clients compare
/// these as strings (CopilotKit sorts threads by `lastRunAt`): with the fraction trimmed,
/// `…:12.3Z` sorted after `…:12.31Z`.
pub fn format_ms(millis: u64) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Iso8601::<MILLISECONDS>).ok())
        .unwrap_or_else(|| "9999-12-31T23:59:59.999Z".to_owned())
}

/// ISO 8601's extended calendar form, seconds to three decimals, UTC as `Z`.
const MILLISECONDS: EncodedConfig = Config::DEFAULT
    .set_time_precision(TimePrecision::Second {
        decimal_digits: NonZeroU8::new(3),
    })
    .encode();

/// Parses an RFC 3339 instant into Unix milliseconds; `None` when unparseable
/// (such an interrupt never expires, as in the official client).
pub fn parse_ms(text: &str) -> Option<u64> {
    let t = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    u64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before, the fraction was trimmed (`…:05Z`, `…:05.12Z`), so string order was not time order.
    #[test]
    fn always_three_fractional_digits_so_strings_sort_as_instants() {
        assert_eq!(format_ms(1_794_657_900_000), "2026-11-14T12:05:00.000Z");
        assert_eq!(format_ms(1_794_657_900_120), "2026-11-14T12:05:00.120Z");
        let mut instants: Vec<u64> = (0..2_000).map(|i| 1_794_657_900_000 + i * 7).collect();
        let mut texts: Vec<String> = instants.iter().map(|&ms| format_ms(ms)).collect();
        texts.sort();
        instants.sort_unstable();
        assert_eq!(
            texts,
            instants.iter().map(|&ms| format_ms(ms)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn round_trips_milliseconds() {
        let ms = 1_795_000_000_123;
        assert_eq!(parse_ms(&format_ms(ms)), Some(ms));
        assert_eq!(parse_ms("2026-11-14T12:05:00Z"), Some(1_794_657_900_000));
        assert_eq!(parse_ms("tomorrow"), None);
    }
}
