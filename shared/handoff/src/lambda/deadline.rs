//! The invocation's deadline, as the engine's.

/// Lambda's deadline is Unix milliseconds. The local emulator (`cargo lambda
/// watch`) sends the timeout itself (e.g. 600000); a value that small cannot be an
/// instant in this century, so it is read as "this many ms from now".
pub(super) fn absolute_deadline(raw: u64, now_ms: u64) -> u64 {
    const YEAR_2001_MS: u64 = 978_307_200_000;
    if raw < YEAR_2001_MS {
        now_ms.saturating_add(raw)
    } else {
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulators_relative_deadline_becomes_absolute() {
        assert_eq!(
            absolute_deadline(600_000, 1_800_000_000_000),
            1_800_000_600_000
        );
        assert_eq!(
            absolute_deadline(1_800_000_900_000, 1_800_000_000_000),
            1_800_000_900_000
        );
    }
}
