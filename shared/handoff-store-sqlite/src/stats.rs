//! [`SqliteStats`]: what the store's commits cost the database, counted as they happen (for
//! benchmarks: commits, transactions, WAL frames and checkpoints per unit of work).

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of the store's write work since it was opened ([`SqliteStore::stats`]).
///
/// [`SqliteStore::stats`]: crate::SqliteStore::stats
///
/// Group commit shows as `transactions < commits`; with it off
/// ([`SqliteOptions::with_max_group(1)`](crate::SqliteOptions::with_max_group))
/// every commit that wrote is a transaction of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SqliteStats {
    /// [`Store::commit`](handoff_core::Store::commit)s answered, with success or an error.
    pub commits: u64,
    /// Transactions committed (`COMMIT`s of a group with at least one commit applied). Under
    /// `synchronous = FULL` in WAL mode each one fsyncs the WAL once; under `NORMAL` none
    /// does. A group whose every commit failed rolls back and is not counted.
    pub transactions: u64,
    /// WAL frames (one changed page each) those transactions appended, from SQLite's WAL
    /// hook (each `COMMIT` reports the WAL's length in frames; the counter adds the growth
    /// since the previous one, or the whole length when the WAL started over). Exact while
    /// this store is the only writer of its file and no transaction writes more frames than
    /// the WAL held before it started over (the WAL starts over only after a checkpoint, past
    /// 1,000 frames, far more than a group writes). 0 for an in-memory database.
    pub wal_frames: u64,
    /// Checkpoints run by the store (its checkpoint thread's `PASSIVE` ones and the writer's
    /// `RESTART` ones) that reported frames copied into the database file. Each one that
    /// copied new frames syncs the WAL and then the database file: two fsyncs.
    pub checkpoints: u64,
}

impl SqliteStats {
    /// The work done between `earlier` (a snapshot of the same store) and `self`.
    pub fn since(&self, earlier: &SqliteStats) -> SqliteStats {
        SqliteStats {
            commits: self.commits.saturating_sub(earlier.commits),
            transactions: self.transactions.saturating_sub(earlier.transactions),
            wal_frames: self.wal_frames.saturating_sub(earlier.wal_frames),
            checkpoints: self.checkpoints.saturating_sub(earlier.checkpoints),
        }
    }
}

/// The live counters behind [`SqliteStats`], shared by the writer's thread, its WAL hook and
/// the checkpoint thread. Relaxed atomics: each is a tally on its own, bumped at most a few
/// times per group of commits, never used to order other memory.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    commits: AtomicU64,
    transactions: AtomicU64,
    wal_frames: AtomicU64,
    checkpoints: AtomicU64,
}

impl Counters {
    pub(crate) fn commits_answered(&self, count: usize) {
        self.commits.fetch_add(count as u64, Ordering::Relaxed);
    }

    pub(crate) fn transaction_committed(&self) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn frames_written(&self, frames: u64) {
        self.wal_frames.fetch_add(frames, Ordering::Relaxed);
    }

    pub(crate) fn checkpointed(&self) {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> SqliteStats {
        SqliteStats {
            commits: self.commits.load(Ordering::Relaxed),
            transactions: self.transactions.load(Ordering::Relaxed),
            wal_frames: self.wal_frames.load(Ordering::Relaxed),
            checkpoints: self.checkpoints.load(Ordering::Relaxed),
        }
    }
}

/// Turns the WAL lengths the writer's WAL hook reports after each `COMMIT` into frames written.
#[derive(Debug, Default)]
pub(crate) struct WalGrowth {
    /// The length the last `COMMIT` reported.
    last: u64,
}

impl WalGrowth {
    /// The frames the `COMMIT` that left the WAL `frames` long wrote: the growth, or all of
    /// them when the WAL is shorter than before (it started over at that transaction).
    pub(crate) fn after_commit(&mut self, frames: i32) -> u64 {
        let frames = u64::try_from(frames).unwrap_or(0);
        let written = if frames >= self.last {
            frames - self.last
        } else {
            frames
        };
        self.last = frames;
        written
    }
}

#[cfg(test)]
mod tests {
    use super::WalGrowth;

    #[test]
    fn wal_growth_counts_what_each_commit_appended_across_a_restart() {
        let mut growth = WalGrowth::default();
        assert_eq!(growth.after_commit(3), 3);
        assert_eq!(growth.after_commit(10), 7);
        // The WAL started over: this transaction wrote its 4 frames from the start.
        assert_eq!(growth.after_commit(4), 4);
        assert_eq!(growth.after_commit(6), 2);
    }
}
