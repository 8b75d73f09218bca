//! A run's event log: appended by its context, streamed to the client and read by the
//! live-journal writer, with no per-event channel between them. Events are shared, not
//! copied: the response stream gets the log's own `Arc` of each.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use agui_protocol::Event;
use futures::Stream;
use futures::task::AtomicWaker;

#[derive(Debug, Default)]
struct Shared {
    events: Mutex<Vec<Arc<Event>>>,
    /// The response stream waiting for the next event.
    reader: AtomicWaker,
    /// No more events will be appended (the run's context is gone).
    closed: AtomicBool,
}

/// The log, shared by the run's context, its reader and the live journal.
#[derive(Debug, Clone)]
pub(crate) struct SharedLog(Arc<Shared>);

/// Events a run's log has room for before it first grows: even a one-line answer emits
/// about a dozen (lifecycle, text, snapshots), an answer streamed word by word a few dozen.
const FIRST_CAPACITY: usize = 32;

impl SharedLog {
    /// An empty log, with room for a short run's events.
    pub(crate) fn new() -> Self {
        SharedLog(Arc::new(Shared {
            events: Mutex::new(Vec::with_capacity(FIRST_CAPACITY)),
            ..Shared::default()
        }))
    }

    pub(crate) fn push(&self, event: Event) {
        self.lock().push(Arc::new(event));
        self.0.reader.wake();
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Vec<Arc<Event>>> {
        self.0.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The events from the first, as they are appended; ends once the log is closed.
    pub(crate) fn reader(&self) -> LogReader {
        LogReader {
            log: self.clone(),
            next: 0,
            taken: VecDeque::new(),
        }
    }

    /// Ends the readers' streams after the events already appended.
    fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
        self.0.reader.wake();
    }
}

/// Closes the log when dropped: the context holds it, so a run's stream ends when its
/// context does (normally, or cancelled with the run's future).
#[derive(Debug)]
pub(crate) struct LogWriter(pub(crate) SharedLog);

impl Drop for LogWriter {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// A run's events in order (one reader per log: it alone is woken).
#[derive(Debug)]
pub(crate) struct LogReader {
    log: SharedLog,
    /// The index of the first event not taken yet.
    next: usize,
    /// Events taken but not yet yielded: one lock takes every event appended so far (a
    /// run's events mostly arrive in bursts), not one lock per event.
    taken: VecDeque<Arc<Event>>,
}

impl Stream for LogReader {
    type Item = Arc<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Arc<Event>>> {
        let this = &mut *self;
        if let Some(event) = this.take_next() {
            return Poll::Ready(Some(event));
        }
        this.log.0.reader.register(cx.waker());
        // Read `closed` before looking again: everything appended before the close is then
        // seen, and an append after the registration has woken this task.
        let closed = this.log.0.closed.load(Ordering::Acquire);
        match this.take_next() {
            Some(event) => Poll::Ready(Some(event)),
            None if closed => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

impl LogReader {
    /// The next unread event, if it has been appended.
    fn take_next(&mut self) -> Option<Arc<Event>> {
        if self.taken.is_empty() {
            let events = self.log.lock();
            if let Some(new) = events.get(self.next..) {
                self.taken.extend(new.iter().cloned());
                self.next = events.len();
            }
        }
        self.taken.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agui_protocol::event::TextMessageContent;
    use agui_protocol::{Event, MessageId};
    use futures::executor::block_on;
    use futures::{FutureExt, StreamExt};

    use super::{LogWriter, SharedLog};

    fn delta(text: &str) -> Event {
        TextMessageContent::new(MessageId::new("m"), text).into()
    }

    #[test]
    fn a_reader_gets_every_event_in_order_and_ends_when_the_writer_goes() {
        let log = SharedLog::new();
        let writer = LogWriter(log.clone());
        let mut reader = log.reader();
        log.push(delta("a"));
        assert_eq!(
            reader.next().now_or_never(),
            Some(Some(Arc::new(delta("a"))))
        );
        // Nothing new yet: the reader waits rather than ending.
        assert_eq!(reader.next().now_or_never(), None);
        log.push(delta("b"));
        log.push(delta("c"));
        drop(writer);
        let rest: Vec<Arc<Event>> = block_on(reader.collect());
        assert_eq!(rest, vec![Arc::new(delta("b")), Arc::new(delta("c"))]);
    }

    #[test]
    fn events_appended_while_a_burst_is_read_come_after_it() {
        let log = SharedLog::new();
        let writer = LogWriter(log.clone());
        let mut reader = log.reader();
        for text in ["a", "b", "c"] {
            log.push(delta(text));
        }
        // The first read takes the whole burst; the next append lands behind it.
        assert_eq!(
            reader.next().now_or_never(),
            Some(Some(Arc::new(delta("a"))))
        );
        log.push(delta("d"));
        drop(writer);
        let rest: Vec<Arc<Event>> = block_on(reader.collect());
        assert_eq!(rest, ["b", "c", "d"].map(|t| Arc::new(delta(t))).to_vec());
    }

    #[test]
    fn a_waiting_reader_is_woken_by_an_append_from_another_thread() {
        let log = SharedLog::new();
        let writer = LogWriter(log.clone());
        let reader = log.reader();
        let appender = std::thread::spawn(move || {
            for n in 0..1_000 {
                writer.0.push(delta(&n.to_string()));
            }
        });
        let all: Vec<Arc<Event>> = block_on(reader.collect());
        appender.join().expect("appender");
        assert_eq!(all.len(), 1_000);
        assert_eq!(*all[999], delta("999"));
    }
}
