//! Threads that own the connections, and the queue that feeds them.

use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;

use futures::channel::oneshot;
use handoff_core::store::StoreError;
use rusqlite::Connection;

use crate::checkpoint::Restart;
use crate::group::apply_group;
use crate::options::Purge;
use crate::prepared::Prepared;
use crate::stats::Counters;
use crate::write::{Commit, Purger};

type Answer = oneshot::Sender<Result<(), StoreError>>;

enum Job {
    /// Any work on the connection (reads; the closure answers its caller itself).
    Run(Box<dyn FnOnce(&mut Prepared<'_>) + Send + 'static>),
    /// A [`Store::commit`](handoff_core::Store::commit): the commits queued together run as
    /// one group ([`apply_group`]).
    Commit(Commit, Answer),
}

/// How a worker's threads run the commits sent to them (only the writer is sent any).
#[derive(Clone)]
pub(crate) struct CommitSettings {
    pub(crate) purge: Purge,
    /// The most commits one group takes (1: no group commit).
    pub(crate) max_group: usize,
    /// Run after each group: the writer's `RESTART` checkpoint.
    pub(crate) restart: Option<Restart>,
    /// Where the commits answered and the transactions committed are counted.
    pub(crate) counters: Arc<Counters>,
}

/// Threads that each own one connection and take jobs from a shared queue.
pub(crate) struct Worker {
    queue: Option<mpsc::Sender<Job>>,
    pub(crate) threads: Vec<thread::JoinHandle<()>>,
}

impl Worker {
    /// `settings` apply to the commits this worker runs (only the writer is sent any).
    pub(crate) fn spawn(
        name: &str,
        connections: Vec<Connection>,
        settings: &CommitSettings,
    ) -> Result<Self, StoreError> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut worker = Self {
            queue: Some(queue),
            threads: Vec::with_capacity(connections.len()),
        };
        for (n, conn) in connections.into_iter().enumerate() {
            let jobs = Arc::clone(&jobs);
            let settings = settings.clone();
            let thread = thread::Builder::new()
                .name(format!("{name}-{n}"))
                .spawn(move || serve(conn, &jobs, &settings))
                .map_err(|e| StoreError::Backend(format!("cannot start a sqlite thread: {e}")))?;
            worker.threads.push(thread);
        }
        Ok(worker)
    }

    /// Runs `f` on one of the worker's connections and awaits its result without blocking.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Prepared<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let (answer, result) = oneshot::channel();
        let job = Job::Run(Box::new(move |conn| {
            // A panic is reported to the caller, and the thread keeps serving on a connection
            // with no transaction left open.
            let outcome = conn.contain(f);
            // The caller may have stopped waiting; the outcome is then nobody's business.
            let _ = answer.send(outcome);
        }));
        self.send(job)?;
        result.await.map_err(|_| stopped())?
    }

    /// Queues `commit` and awaits its answer, sent once its group's transaction committed.
    pub(crate) async fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let (answer, result) = oneshot::channel();
        self.send(Job::Commit(commit, answer))?;
        result.await.map_err(|_| stopped())?
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.queue
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())
    }
}

fn stopped() -> StoreError {
    StoreError::Backend("sqlite worker stopped".to_owned())
}

/// One thread's loop: takes the next job; a commit takes with it every commit queued right
/// behind it (up to the settings' `max_group`), and they run as one group.
fn serve(conn: Connection, jobs: &Mutex<mpsc::Receiver<Job>>, settings: &CommitSettings) {
    let mut purger = Purger::new(settings.purge);
    let max_group = settings.max_group;
    // Declared after `conn`, so dropped before it: the statements borrow the connection.
    let mut prepared = Prepared::new(&conn);
    let lock = || jobs.lock().unwrap_or_else(PoisonError::into_inner);
    // A job taken while gathering a group, to run right after it (queue order is kept).
    let mut next: Option<Job> = None;
    loop {
        // The lock is held only while taking jobs, never while running them.
        let job = match next.take() {
            Some(job) => job,
            None => match lock().recv() {
                Ok(job) => job,
                Err(mpsc::RecvError) => break, // the store was dropped
            },
        };
        match job {
            Job::Run(job) => job(&mut prepared),
            Job::Commit(commit, answer) => {
                let mut commits = vec![commit];
                let mut answers = vec![answer];
                gather(&lock(), max_group, &mut commits, &mut answers, &mut next);
                // Alone: let the executor have the core once, so the commits it was about
                // to queue join this group and share its fsync. On a busy single core that
                // more than halves the fsyncs (`make bench`: 2.1 to 0.9 per pair); with idle
                // cores it returns at once. Pointless without group commit.
                if commits.len() == 1 && next.is_none() && max_group > 1 {
                    thread::yield_now();
                    gather(&lock(), max_group, &mut commits, &mut answers, &mut next);
                }
                let counters = &settings.counters;
                let outcomes = apply_group(&mut prepared, commits, &mut purger, counters);
                // Before the answers, so a caller that reads the stats after its commit
                // returned finds it counted.
                counters.commits_answered(outcomes.len());
                for (answer, outcome) in answers.into_iter().zip(outcomes) {
                    // The caller may have stopped waiting.
                    let _ = answer.send(outcome);
                }
                // After the answers: the group's commits do not wait for it.
                if let Some(restart) = &settings.restart {
                    restart.run_if_due(&conn);
                }
            }
        }
    }
}

/// Adds the commits queued right now, and their answers, to the group (up to `max_group`);
/// stops at the first other job, kept in `next` to run after the group.
fn gather(
    jobs: &mpsc::Receiver<Job>,
    max_group: usize,
    commits: &mut Vec<Commit>,
    answers: &mut Vec<Answer>,
    next: &mut Option<Job>,
) {
    while commits.len() < max_group {
        match jobs.try_recv() {
            Ok(Job::Commit(commit, answer)) => {
                commits.push(commit);
                answers.push(answer);
            }
            Ok(other) => {
                *next = Some(other);
                break;
            }
            Err(_) => break, // empty, or closed: the next `recv` tells
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends each thread after the jobs already queued; joining closes the
        // connections before the store is gone (a reopened store finds the file released).
        drop(self.queue.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use handoff_core::store::StoreError;

    use super::{CommitSettings, Worker};
    use crate::open::test_database;
    use crate::options::{MAX_GROUP, Purge};

    #[test]
    fn a_job_that_panics_inside_its_transaction_leaves_none_open_for_the_next() {
        let settings = CommitSettings {
            purge: Purge::NEVER,
            max_group: MAX_GROUP,
            restart: None,
            counters: Default::default(),
        };
        let worker = Worker::spawn("test", vec![test_database()], &settings).expect("spawn");
        let panicked: Result<(), _> = block_on(worker.run(|p| {
            p.exec("BEGIN").expect("begin");
            panic!("a read gone wrong");
        }));
        assert!(
            matches!(panicked, Err(StoreError::Backend(_))),
            "{panicked:?}"
        );
        // The same thread and connection (the only one) serve the next job.
        let open = block_on(worker.run(|p| Ok(!p.conn().is_autocommit()))).expect("served");
        assert!(!open, "the panicking job's transaction was rolled back");
    }
}
