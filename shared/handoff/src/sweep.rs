//! Outbox sweeps: every host retries the push notifications whose first attempt failed,
//! or never ran to the end (see `handoff_core::outbox`).
//!
//! - The dev server sweeps on a timer, every `HANDOFF_OUTBOX_POLL_MS`.
//! - Lambda sweeps in the background at the start of an invocation, at most once per
//!   `HANDOFF_OUTBOX_POLL_MS` per instance, and the invocation's response ends only once
//!   that sweep did (2 s at most: an instance is frozen when its response ends).
//! - Workers sweep under `waitUntil` on a request, at most once per
//!   `HANDOFF_OUTBOX_POLL_MS` per isolate, and on every Cron Trigger
//!   (`handoff::worker::scheduled`).
//!
//! A sweep is one index query when nothing is due. Sweeps on several instances at once
//! are safe: each attempt leases its item first.

use std::sync::atomic::{AtomicU64, Ordering};

/// Items one sweep delivers at most.
pub(crate) const SWEEP_LIMIT: usize = 50;

/// `HANDOFF_OUTBOX_POLL_MS` (default 1000): how often a host sweeps the outbox.
pub(crate) fn poll_ms(vars: impl Fn(&str) -> Option<String>) -> u64 {
    vars("HANDOFF_OUTBOX_POLL_MS")
        .and_then(|v| v.parse().ok())
        .filter(|ms| *ms > 0)
        .unwrap_or(1_000)
}

/// `HANDOFF_SCHEDULE_POLL_MS` (default 1000): how often the dev server looks for due
/// schedule ticks (one index query when none is due).
#[cfg_attr(not(all(feature = "server", feature = "schedules")), allow(dead_code))]
pub(crate) fn schedule_poll_ms(vars: impl Fn(&str) -> Option<String>) -> u64 {
    vars("HANDOFF_SCHEDULE_POLL_MS")
        .and_then(|v| v.parse().ok())
        .filter(|ms| *ms > 0)
        .unwrap_or(1_000)
}

/// `HANDOFF_SWEEP_SECS` (default 15; 0 turns it off): how often a host with a timer (the
/// dev server) looks for runs whose instance died before their end and finishes them
/// (`handoff_core::Engine::redrive_due`).
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn sweep_secs(vars: impl Fn(&str) -> Option<String>) -> u64 {
    vars("HANDOFF_SWEEP_SECS")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(15)
}

/// Whether a sweep is due at `now_ms` after the last one (recorded in `last`), at most one
/// per `every_ms`; claims it when it is (of callers racing, one wins).
#[cfg_attr(not(any(feature = "lambda", feature = "worker")), allow(dead_code))]
pub(crate) fn claim(last: &AtomicU64, now_ms: u64, every_ms: u64) -> bool {
    let previous = last.load(Ordering::Acquire);
    if previous != 0 && now_ms.saturating_sub(previous) < every_ms {
        return false;
    }
    last.compare_exchange(previous, now_ms, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_ms_defaults_and_reads_the_variable() {
        assert_eq!(poll_ms(|_| None), 1_000);
        assert_eq!(poll_ms(|_| Some("250".into())), 250);
        assert_eq!(poll_ms(|_| Some("0".into())), 1_000);
        assert_eq!(poll_ms(|_| Some("soon".into())), 1_000);
    }

    #[test]
    fn sweep_secs_defaults_to_15_and_0_turns_it_off() {
        assert_eq!(sweep_secs(|_| None), 15);
        assert_eq!(sweep_secs(|_| Some("2".into())), 2);
        assert_eq!(sweep_secs(|_| Some("0".into())), 0);
        assert_eq!(sweep_secs(|_| Some("often".into())), 15);
    }

    #[test]
    fn one_sweep_per_interval() {
        let last = AtomicU64::new(0);
        assert!(claim(&last, 10_000, 1_000), "the first is due");
        assert!(!claim(&last, 10_500, 1_000), "too soon");
        assert!(claim(&last, 11_000, 1_000), "an interval later");
        assert!(!claim(&last, 11_000, 1_000), "claimed once");
    }
}
