//! Exactly once through the engine across processes: 4 processes, each with its own
//! `handoff_core::Engine` over its own `SqliteStore` on one database file, race 1,000
//! identical resumes of one interrupted thread. The refund executes once: every execution
//! appends its idempotency key to a file, outside the engine and the store.
//!
//! The test binary re-executes itself as child processes (see `common`).

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::executor::block_on;
use futures::future::join_all;
use handoff_core::runtime::{NeverSleep, SequentialIds};
use handoff_core::store::counting::CountingStore;
use handoff_core::{Clock, Engine, Runtime, Store};
use handoff_store_conformance::race::{self, RaceAgent, Tally};
use handoff_store_sqlite::{SqliteOptions, SqliteStore};

use common::{CHILDREN, child_env, spawn_children, wait_for, write_report};

const THREAD: &str = "thread-race";
/// Resumes per child process.
const ATTEMPTS: usize = 250;
/// Resumes each child has in flight at once.
const IN_FLIGHT: usize = 10;

/// The wall clock: the processes must agree on time (leases).
struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // The host side of a test: time comes from here.
    fn now_ms(&self) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }
}

/// An engine over `store` whose refunds append their key to the effects file next to `db`.
fn engine(db: &Path, store: Arc<CountingStore<SqliteStore>>, tag: &str) -> Engine {
    let effects = file(db, "effects");
    let agent = RaceAgent::new(tag, move |key| {
        // One `write` of a whole line on an O_APPEND file: lines from processes never mix.
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&effects)
            .expect("open the effects file");
        f.write_all(format!("{key}\n").as_bytes())
            .expect("append to the effects file");
    });
    let runtime = Runtime::new(SystemClock, SequentialIds::new(tag), NeverSleep);
    let store: Arc<dyn Store> = store;
    Engine::new(agent, store, runtime)
}

fn file(db: &Path, name: &str) -> PathBuf {
    db.with_file_name(name)
}

/// Separates the entries of a child's results and problems files (problems span lines).
const SEPARATOR: &str = "\n\u{1e}\n";

/// Polls `done` every 10 ms for up to 60 s; whether it came true.
fn wait_until(done: impl Fn() -> bool) -> bool {
    for _ in 0..6_000 {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn executed(db: &Path) -> Vec<String> {
    std::fs::read_to_string(file(db, "effects"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// 4 processes x 250 identical resumes (10 in flight per process) of one interrupt, released
/// together: one refund, every response a valid answer or 409 THREAD_BUSY, one result.
#[test]
fn four_processes_race_one_thousand_identical_resumes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = dir.path().join("shared.sqlite3");
    let store = Arc::new(CountingStore::new(SqliteStore::open(&db).expect("open")));
    let parent = engine(&db, store.clone(), "p-");
    let interrupt = block_on(race::interrupt_thread(&parent, THREAD));
    std::fs::write(file(&db, "interrupt"), interrupt.id.as_str()).expect("write the interrupt id");

    // The children open the file and wait for "go". Then the write lock is held while they
    // send their first resumes (reads go on in WAL mode; every claim queues on the lock), so
    // they all contend from the moment it is released. Correctness does not depend on it.
    let children = spawn_children(&db, "resume");
    // A child that died before it was ready is reported, with its output, by `wait_for`.
    let _ready = wait_until(|| (0..CHILDREN).all(|n| file(&db, &format!("ready-{n}")).exists()));
    let mut gate = rusqlite::Connection::open(&db).expect("open a raw connection");
    let lock = gate
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    std::fs::write(file(&db, "go"), "").expect("write the go file");
    std::thread::sleep(Duration::from_millis(300));
    lock.commit().expect("release the write lock");
    drop(gate);

    let (mut tally, mut lost) = (Tally::default(), 0);
    for (n, report) in wait_for(children, &db) {
        let [answered, busy, invalid, other, lost_here] = report[..] else {
            panic!("child {n} report: {report:?}");
        };
        let lines = |name: &str| -> Vec<String> {
            std::fs::read_to_string(file(&db, &format!("{name}-{n}")))
                .unwrap_or_default()
                .split(SEPARATOR)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        tally.merge(Tally {
            answered,
            busy,
            invalid,
            other,
            results: lines("results").into_iter().collect(),
            problems: lines("problems"),
        });
        lost += lost_here;
    }
    eprintln!(
        "{CHILDREN} processes x {ATTEMPTS} resumes ({IN_FLIGHT} in flight each): {tally}; \
         {lost} commits lost a race; refunds executed: {}",
        executed(&db).len()
    );
    block_on(race::assert_exactly_once(
        &parent,
        THREAD,
        &interrupt,
        &tally,
        (CHILDREN * ATTEMPTS) as u64,
        || executed(&db),
    ));
    assert!(
        lost > 0,
        "no commit lost a race: the resumes did not overlap"
    );
}

/// The child side: [`ATTEMPTS`] resumes, [`IN_FLIGHT`] at a time, on an engine of its own.
#[test]
fn child_process() {
    let Some((db, id, mode)) = child_env() else {
        return;
    };
    assert_eq!(mode, "resume", "unknown child mode");
    // A long busy timeout: the parent holds the write lock while the children start.
    let options = SqliteOptions::default().with_busy_timeout(Duration::from_secs(60));
    let store = Arc::new(CountingStore::new(
        SqliteStore::open_with(&db, options).expect("child: open"),
    ));
    let engine = engine(&db, store.clone(), &format!("c{id}-"));
    let interrupt = std::fs::read_to_string(file(&db, "interrupt")).expect("the interrupt id");
    std::fs::write(file(&db, &format!("ready-{id}")), "").expect("child: signal ready");
    assert!(wait_until(|| file(&db, "go").exists()), "child {id}: no go");

    let mut tally = Tally::default();
    block_on(async {
        for batch in 0..ATTEMPTS / IN_FLIGHT {
            let attempts = (0..IN_FLIGHT).map(|i| {
                let run = format!("run-{id}-{}", batch * IN_FLIGHT + i);
                race::attempt(&engine, race::approve(THREAD, &run, &interrupt))
            });
            for outcome in join_all(attempts).await {
                tally.add(outcome);
            }
        }
    });
    let join = |items: &mut dyn Iterator<Item = &String>| {
        items
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    };
    std::fs::write(
        file(&db, &format!("results-{id}")),
        join(&mut tally.results.iter()),
    )
    .expect("child: write the results");
    std::fs::write(
        file(&db, &format!("problems-{id}")),
        join(&mut tally.problems.iter()),
    )
    .expect("child: write the problems");
    write_report(
        &db,
        id,
        &[
            tally.answered,
            tally.busy,
            tally.invalid,
            tally.other,
            store.cost().conflicts,
        ],
    );
}
