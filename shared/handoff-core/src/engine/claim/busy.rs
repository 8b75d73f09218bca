//! The busy check: a thread whose lease is live belongs to the run holding it. Also how
//! long a caller told "busy" should wait (the replay stage answers busy too).

use super::super::Inner;
use crate::error::CoreError;
use crate::records::{ThreadRecord, ThreadStatus};
use agui_protocol::RunId;

/// `Err(THREAD_BUSY)` while a run holds a live lease on `thread`.
pub(crate) fn check_free(inner: &Inner, thread: &ThreadRecord, now: u64) -> Result<(), CoreError> {
    match thread
        .lease
        .as_ref()
        .filter(|l| thread.status == ThreadStatus::Running && l.expires_at_ms > now)
    {
        Some(lease) => Err(busy(inner, &lease.run_id, lease.expires_at_ms, now)),
        None => Ok(()),
    }
}

/// `THREAD_BUSY` for `run_id`, to be retried after the configured pause, or when its
/// lease ends if sooner (at least 1 ms).
pub(crate) fn busy(inner: &Inner, run_id: &RunId, lease_end: u64, now: u64) -> CoreError {
    CoreError::ThreadBusy {
        run_id: run_id.to_string(),
        retry_after_ms: inner
            .config
            .busy_retry_after_ms
            .min(lease_end.saturating_sub(now))
            .max(1),
    }
}

#[cfg(test)]
mod tests {
    use agui_protocol::RunId;

    use super::{busy, check_free};
    use crate::engine::claim::test_support::Fixture;
    use crate::error::CoreError;
    use crate::records::{Lease, ThreadRecord, ThreadStatus};

    fn leased(status: ThreadStatus, expires_at_ms: u64) -> ThreadRecord {
        ThreadRecord {
            status,
            lease: Some(Lease {
                run_id: RunId::from("r0"),
                expires_at_ms,
                answer: None,
            }),
            ..ThreadRecord::default()
        }
    }

    #[test]
    fn only_a_live_lease_of_a_running_thread_is_busy() {
        let f = Fixture::new();
        let now = f.now();
        let running = leased(ThreadStatus::Running, now + 10);
        assert!(matches!(
            check_free(&f.inner, &running, now),
            Err(CoreError::ThreadBusy {
                retry_after_ms: 10,
                ..
            })
        ));
        assert!(check_free(&f.inner, &leased(ThreadStatus::Running, now), now).is_ok());
        assert!(check_free(&f.inner, &leased(ThreadStatus::Idle, now + 10), now).is_ok());
    }

    #[test]
    fn the_wait_is_the_configured_pause_at_most_and_never_zero() {
        let f = Fixture::new();
        let pause = f.inner.config.busy_retry_after_ms;
        let wait = |end| match busy(&f.inner, &RunId::from("r"), end, 100) {
            CoreError::ThreadBusy { retry_after_ms, .. } => retry_after_ms,
            other => panic!("{other:?}"),
        };
        assert_eq!(wait(u64::MAX), pause);
        assert_eq!(wait(100), 1);
    }
}
