//! Stage 6, the stale-history check: a copy of the conversation that lacks the thread's
//! newest message (a second tab, a late retry) is refused before anything is written.

use agui_protocol::Message;

use super::super::{Inner, history};
use super::request::Request;
use crate::decision::Decision;
use crate::error::CoreError;
use crate::records::ThreadRecord;

/// The stored history when checking the request needed it (the run then does not read it
/// again), `None` when the request could not be stale; `THREAD_CHANGED` when it is.
///
/// A request that contains the thread's newest message cannot be stale, so only one that
/// lacks it pays for a read of the history here; the run reads it after `RUN_STARTED`
/// otherwise. A resume appends nothing to the history, so it is not checked.
pub(crate) async fn preload(
    inner: &Inner,
    request: &Request<'_>,
    thread: &ThreadRecord,
    decisions: &[Decision],
    now: u64,
) -> Result<Option<Vec<Message>>, CoreError> {
    let messages = &request.input.messages;
    if !decisions.is_empty() || !history::needs_check(thread, messages) {
        return Ok(None);
    }
    let stored = history::load(inner, &request.partition, thread, thread.pages, now).await?;
    history::merge(&stored, messages, request.after_running)?;
    Ok(Some(stored))
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::preload;
    use crate::engine::claim::test_support::{Fixture, input};
    use crate::records::ThreadRecord;

    #[test]
    fn a_thread_without_history_reads_nothing() {
        let f = Fixture::new();
        let plain = input("t", "r1");
        let thread = ThreadRecord::default();
        let preloaded = block_on(preload(&f.inner, &f.request(&plain), &thread, &[], f.now()));
        assert_eq!(preloaded.unwrap(), None);
        assert_eq!(f.cost().gets + f.cost().lists, 0);
    }
}
