//! Stage 1, the read: the thread head, this run's record, the answers' resume record and
//! audit head (a resume), and the leftovers marker, in one consistent read; or nothing at
//! all on a first attempt that assumes a new thread (see `Request::may_assume_new`). An
//! expired thread's leftovers are cleared here, and the claim then reads again.

use super::super::{Inner, leftovers};
use super::request::Request;
use crate::context::audit_head_read;
use crate::error::CoreError;
use crate::records::audit::{AUDIT_HEAD_KEY, AuditHead};
use crate::records::{self, MARK_KEY, THREAD_KEY, ThreadRecord};
use crate::store::{Condition, Item};

/// What one attempt read.
pub(crate) struct Read {
    /// The thread head as stored.
    pub(crate) head: Option<Item>,
    /// The head decoded once (a thread record carries every message, so it can be large).
    /// A corrupt one fails the claim after the replay checks, which read it as absent.
    pub(crate) thread: Result<Option<ThreadRecord>, CoreError>,
    /// The record of a run with this request's id.
    pub(crate) run: Option<Item>,
    /// The resume record of this request's answers.
    pub(crate) answer: Option<Item>,
    /// A resume's audit chain head (see `context::audit_head_read`).
    pub(crate) audit_head: Option<(u64, Option<AuditHead>)>,
    /// When the thread's marker expires (0: none, `u64::MAX`: never).
    pub(crate) mark_until: u64,
}

impl Read {
    /// The thread as read, `None` when absent or corrupt (what the replay checks see).
    pub(crate) fn stored(&self) -> Option<&ThreadRecord> {
        self.thread.as_ref().ok().and_then(Option::as_ref)
    }

    /// The thread (a default one when absent) and the version the commit must find it at;
    /// the error of a corrupt head.
    pub(crate) fn into_thread(self) -> Result<(ThreadRecord, Condition), CoreError> {
        Ok(match (self.thread?, &self.head) {
            (Some(thread), Some(item)) => (thread, Condition::Version(item.version)),
            _ => (ThreadRecord::default(), Condition::Absent),
        })
    }
}

/// The attempt's read; `None` when it found and cleared an expired thread's leftovers
/// (the claim then reads again).
pub(crate) async fn read(
    inner: &Inner,
    request: &Request<'_>,
    assume_new: bool,
    now: u64,
) -> Result<Option<Read>, CoreError> {
    let partition = request.partition.as_str();
    let mut keys = vec![THREAD_KEY, request.run_key.as_str()];
    keys.extend(request.resume.as_deref());
    // A resume appends to the thread's audit chain (the answers, the effects): its head
    // rides along, so the run does not read it on its own.
    if request.resume.is_some() {
        keys.push(AUDIT_HEAD_KEY);
    }
    // The marker rides along: with no head, it means an expired thread left records.
    keys.push(MARK_KEY);
    let mut items = if assume_new {
        keys.iter().map(|_| None).collect()
    } else {
        inner.store.get(partition, &keys, now).await?
    };
    let mark = items.pop().flatten();
    let audit_head = match request.resume {
        Some(_) => audit_head_read(items.pop().flatten().as_ref()),
        None => None,
    };
    let mark_until = mark
        .as_ref()
        .map_or(0, |mark| mark.expires_at_ms.unwrap_or(u64::MAX));
    if items[0].is_none() && mark.is_some() {
        leftovers::clear(inner, partition, now).await?;
        return Ok(None);
    }
    let answer = match request.resume {
        Some(_) => items.pop().flatten(),
        None => None,
    };
    let run = items.pop().flatten();
    let head = items.pop().flatten();
    let thread = head
        .as_ref()
        .map(records::decode::<ThreadRecord>)
        .transpose();
    Ok(Some(Read {
        head,
        thread,
        run,
        answer,
        audit_head,
        mark_until,
    }))
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::read;
    use crate::engine::claim::test_support::{Fixture, input};
    use crate::records::ThreadRecord;

    #[test]
    fn an_assumed_new_thread_reads_nothing() {
        let f = Fixture::new();
        let input = input("t", "r1");
        let read = block_on(read(&f.inner, &f.request(&input), true, f.now())).unwrap();
        let read = read.expect("no leftovers to clear");
        assert!(read.head.is_none() && read.run.is_none() && read.mark_until == 0);
        assert_eq!(f.cost().gets, 0);
    }

    #[test]
    fn a_read_is_one_get_and_decodes_the_head() {
        let f = Fixture::new();
        block_on(f.put_thread(&ThreadRecord::default()));
        let input = input("t", "r1");
        let request = f.request(&input);
        let read = block_on(read(&f.inner, &request, false, f.now())).unwrap();
        let read = read.expect("a head, so no leftovers");
        assert_eq!(f.cost().gets, 1);
        assert!(read.stored().is_some());
    }
}
