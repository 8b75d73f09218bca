//! Checkpoints on a thread of their own, so the writer rarely stops to copy the WAL into the
//! database file.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that takes the WAL past 1,000
//! frames: that commit's group, and every commit queued behind it, wait while about 4 MB are
//! copied and the database file is synced. Here the writer's WAL hook only nudges a thread
//! with its own connection, which runs the same `PASSIVE` checkpoint (copy what no reader
//! still needs, never wait on a lock) while the writer goes on committing.
//!
//! A WAL is started over only by a writer that begins while every frame has been copied and no
//! reader is still reading one. Under steady load that never happens: the writer begins its
//! next group at once, while the thread is still copying the last one, so the WAL grew by
//! every commit (150 MB in 6 s of the load benchmark) and each checkpoint re-sorted its
//! index. So past [`RESTART_FRAMES`] the writer, between two groups (after answering the
//! first), runs a `RESTART` checkpoint itself: it copies the few frames the thread has not,
//! waits briefly for readers to move on, and its next group starts the WAL over.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use handoff_core::store::StoreError;
use rusqlite::Connection;

use crate::sql::sql_err;
use crate::stats::{Counters, WalGrowth};

/// WAL frames after which the writer asks for a checkpoint: SQLite's own default for its
/// automatic checkpoint.
pub(crate) const CHECKPOINT_FRAMES: i32 = 1_000;

/// Past the first checkpoint, the writer asks again once this many more frames were written
/// (not after every commit: each checkpoint sorts the WAL's whole index).
const CHECKPOINT_STEP: i32 = 256;

/// WAL frames (of 4 KiB pages: 16 MiB) past which the writer restarts the WAL itself.
pub(crate) const RESTART_FRAMES: i32 = 4 * CHECKPOINT_FRAMES;

/// The longest a restart waits for the checkpoint thread or a reader (then the writer goes on,
/// and tries again after its next group).
const RESTART_WAIT: Duration = Duration::from_millis(50);

enum Message {
    Checkpoint,
    Stop,
}

/// The checkpoint thread; stopped and joined on drop.
pub(crate) struct Checkpointer {
    nudge: Nudge,
    thread: Option<thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on `conn` (a read-write connection with the writer's `synchronous`
    /// setting: a checkpoint syncs the database file before the WAL may be reused) and makes
    /// `writer`'s commits nudge it, which turns SQLite's automatic checkpoint off on `writer`.
    /// The writer's thread runs the returned [`Restart`] after each group. The hook also
    /// counts the frames each `COMMIT` wrote, and both kinds of checkpoint count themselves,
    /// in `counters`.
    pub(crate) fn spawn(
        conn: Connection,
        writer: &mut Connection,
        busy_timeout: Duration,
        counters: Arc<Counters>,
    ) -> Result<(Self, Restart), StoreError> {
        let (messages, inbox) = mpsc::channel();
        let pending = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("handoff-sqlite-checkpoint".to_owned())
            .spawn({
                let pending = Arc::clone(&pending);
                let counters = Arc::clone(&counters);
                move || serve(&conn, &inbox, &pending, &counters)
            })
            .map_err(|e| StoreError::Backend(format!("cannot start a sqlite thread: {e}")))?;
        let nudge = Nudge { messages, pending };
        let restart = Restart {
            wanted: Arc::new(AtomicBool::new(false)),
            busy_timeout,
            counters: Arc::clone(&counters),
        };
        let hook = nudge.clone();
        let wanted = Arc::clone(&restart.wanted);
        // The WAL's length when the thread was last nudged (0: not since it started over).
        let mut nudged_at = 0;
        let mut growth = WalGrowth::default();
        writer
            .wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, frames: i32| {
                counters.frames_written(growth.after_commit(frames));
                if frames < nudged_at {
                    nudged_at = 0;
                }
                if frames >= CHECKPOINT_FRAMES
                    && (nudged_at == 0 || frames >= nudged_at + CHECKPOINT_STEP)
                {
                    nudged_at = frames;
                    hook.send();
                }
                if frames >= RESTART_FRAMES {
                    wanted.store(true, Ordering::Release);
                }
                Ok(())
            }))
            .map_err(sql_err)?;
        Ok((
            Self {
                nudge,
                thread: Some(thread),
            },
            restart,
        ))
    }
}

/// What the writer's thread runs between groups: a `RESTART` checkpoint once the WAL is past
/// [`RESTART_FRAMES`].
#[derive(Debug, Clone)]
pub(crate) struct Restart {
    wanted: Arc<AtomicBool>,
    /// The connection's own busy timeout, put back after the restart's shorter one.
    busy_timeout: Duration,
    counters: Arc<Counters>,
}

impl Restart {
    /// Runs the restart on the writer's `conn` if the WAL is past the limit. A restart that
    /// cannot finish in [`RESTART_WAIT`] has still copied what it could; the next commit
    /// past the limit asks again.
    pub(crate) fn run_if_due(&self, conn: &Connection) {
        if !self.wanted.swap(false, Ordering::AcqRel) {
            return;
        }
        if conn.busy_timeout(RESTART_WAIT).is_ok() {
            checkpoint(conn, "PRAGMA wal_checkpoint(RESTART)", &self.counters);
        }
        let _ = conn.busy_timeout(self.busy_timeout);
    }
}

/// What the writer's WAL hook holds.
#[derive(Clone)]
struct Nudge {
    messages: mpsc::Sender<Message>,
    pending: Arc<AtomicBool>,
}

impl Nudge {
    fn send(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            // The thread is gone only when the store is being dropped.
            let _ = self.messages.send(Message::Checkpoint);
        }
    }
}

fn serve(
    conn: &Connection,
    inbox: &mpsc::Receiver<Message>,
    pending: &AtomicBool,
    counters: &Counters,
) {
    while let Ok(Message::Checkpoint) = inbox.recv() {
        // Taken before the checkpoint: a commit during it nudges again.
        pending.store(false, Ordering::Release);
        // What a reader still needs, or another process's checkpoint holding the lock, is
        // left for the next nudge: the WAL then grows a little longer, nothing is lost.
        checkpoint(conn, "PRAGMA wal_checkpoint(PASSIVE)", counters);
    }
}

/// Runs a `wal_checkpoint` pragma; counts it if it reports frames copied into the database
/// file (its row: busy, frames in the WAL, frames copied). A failed one is left for later.
fn checkpoint(conn: &Connection, pragma: &str, counters: &Counters) {
    let copied = conn
        .prepare_cached(pragma)
        .and_then(|mut checkpoint| checkpoint.query_row([], |row| row.get::<_, i64>(2)));
    if matches!(copied, Ok(frames) if frames > 0) {
        counters.checkpointed();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let _ = self.nudge.messages.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
