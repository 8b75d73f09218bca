//! Stage 3, authorization: before anything about the thread (even that it is busy) is
//! revealed, the caller must be allowed to read it, and to run it (a new run) or to
//! answer on it (a resume, which needs a thread).

use super::super::Inner;
use super::request::Request;
use crate::access::Access;
use crate::error::CoreError;
use crate::records::ThreadRecord;

/// `Ok` when the request may go on to the thread `existing` (`None`: a new thread).
pub(crate) fn authorize(
    inner: &Inner,
    request: &Request<'_>,
    existing: Option<&ThreadRecord>,
) -> Result<(), CoreError> {
    inner.authorize(request.principal, existing, Access::Read)?;
    if request.entries().is_empty() {
        inner.authorize(request.principal, existing, Access::Run)?;
    } else if existing.is_none() {
        // Answered exactly like a thread the caller may not see, so neither tells.
        return Err(CoreError::ThreadNotFound);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agui_protocol::ResumeEntry;

    use super::authorize;
    use crate::engine::claim::test_support::{Fixture, input};
    use crate::error::CoreError;
    use crate::principal::{Owner, Principal};
    use crate::records::ThreadRecord;

    #[test]
    fn a_new_run_needs_read_and_run_and_an_answer_needs_a_thread() {
        let f = Fixture::new();
        let plain = input("t", "r1");
        assert!(authorize(&f.inner, &f.request(&plain), None).is_ok());
        let mut answer = input("t", "r1");
        answer.resume = Some(vec![ResumeEntry::cancelled("i1")]);
        assert!(matches!(
            authorize(&f.inner, &f.request(&answer), None),
            Err(CoreError::ThreadNotFound)
        ));
        let others = ThreadRecord {
            owner: Some(Owner::from(&Principal::new("default", "someone-else"))),
            ..ThreadRecord::default()
        };
        assert!(matches!(
            authorize(&f.inner, &f.request(&plain), Some(&others)),
            Err(CoreError::ThreadNotFound)
        ));
    }
}
