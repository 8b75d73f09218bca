//! Checkpoints on a thread of their own, so the writer never stops to copy the WAL into the
//! database file.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that takes the WAL past 1,000
//! frames: that commit's group, and every commit queued behind it, wait while about 4 MB are
//! copied and the database file is synced. Here the writer's WAL hook only nudges a thread
//! with its own connection, which runs the same `PASSIVE` checkpoint (copy what no reader
//! still needs, never wait on a lock) while the writer goes on committing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;

use handoff_core::store::StoreError;
use rusqlite::Connection;

use crate::sql::sql_err;

/// WAL frames after which the writer asks for a checkpoint: SQLite's own default for its
/// automatic checkpoint.
pub(crate) const CHECKPOINT_FRAMES: i32 = 1_000;

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
    pub(crate) fn spawn(conn: Connection, writer: &mut Connection) -> Result<Self, StoreError> {
        let (messages, inbox) = mpsc::channel();
        let pending = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("handoff-sqlite-checkpoint".to_owned())
            .spawn({
                let pending = Arc::clone(&pending);
                move || serve(&conn, &inbox, &pending)
            })
            .map_err(|e| StoreError::Backend(format!("cannot start a sqlite thread: {e}")))?;
        let nudge = Nudge { messages, pending };
        let hook = nudge.clone();
        writer
            .wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, frames: i32| {
                if frames >= CHECKPOINT_FRAMES {
                    hook.send();
                }
                Ok(())
            }))
            .map_err(sql_err)?;
        Ok(Self {
            nudge,
            thread: Some(thread),
        })
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

fn serve(conn: &Connection, inbox: &mpsc::Receiver<Message>, pending: &AtomicBool) {
    while let Ok(Message::Checkpoint) = inbox.recv() {
        // Taken before the checkpoint: a commit during it nudges again.
        pending.store(false, Ordering::Release);
        // What a reader still needs, or another process's checkpoint holding the lock, is
        // left for the next nudge: the WAL then grows a little longer, nothing is lost.
        let _ = conn
            .prepare_cached("PRAGMA wal_checkpoint(PASSIVE)")
            .and_then(|mut checkpoint| checkpoint.query_row([], |_| Ok(())));
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
