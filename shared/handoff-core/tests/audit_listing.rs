//! Issue 49: `GET /audit?threadId=` reads that thread's entries only. The tenant's listing
//! holds every thread's entries; one thread's page is read from its own chain (the head
//! names the last sequence number, keys follow from it), so its cost does not grow with
//! the rest of the tenant's trail.

mod support;

use std::sync::Arc;

use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::records::audit::AuditEntry;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::counting::{CountingStore, StoreCost};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{AuditQuery, Engine, Principal, RunOptions, Runtime};
use support::*;

/// Refunds asked for per turn: an approved turn appends this many effect entries and as
/// many answer entries.
const REFUNDS: usize = 5;

struct Setup {
    engine: Engine,
    store: Arc<CountingStore<MemoryStore>>,
    clock: Arc<ManualClock>,
}

fn setup() -> Setup {
    let store = Arc::new(CountingStore::new(MemoryStore::new()));
    let clock = Arc::new(ManualClock::new(T0));
    let runtime = Runtime::new(clock.clone(), SequentialIds::new("l"), NeverSleep);
    let agent = RefundAgent::new(Probe::new()).with_interrupts(REFUNDS);
    let engine = Engine::new(agent, store.clone(), runtime);
    Setup {
        engine,
        store,
        clock,
    }
}

fn alice() -> RunOptions {
    RunOptions {
        principal: Principal::new("acme", "alice"),
        ..RunOptions::default()
    }
}

fn auditor() -> Principal {
    Principal::new("acme", "audrey").with_roles(["auditor"])
}

/// One turn asking for refunds on `thread`, then their approval: `2 * REFUNDS` entries.
async fn approved_turn(engine: &Engine, thread: &str, turn: usize) {
    let ask = user_input(thread, &format!("{thread}-ask{turn}"), "refunds");
    let events = engine.start(ask, alice()).await.unwrap();
    let raised = interrupts(&events.collect::<Vec<_>>().await);
    let answers = raised.iter().map(approve).collect();
    let resume = resume_input(thread, &format!("{thread}-yes{turn}"), answers);
    let events = engine.start(resume, alice()).await.unwrap();
    let events = events.collect::<Vec<_>>().await;
    assert_eq!(tool_results(&events).len(), REFUNDS, "{}", dump(&events));
}

/// `threads` other threads, one approved turn each.
async fn elsewhere(engine: &Engine, from: usize, threads: usize) {
    for n in from..from + threads {
        approved_turn(engine, &format!("other-{n}"), 0).await;
    }
}

fn query(thread: &str, limit: usize) -> AuditQuery {
    AuditQuery {
        thread_id: Some(thread.into()),
        limit,
        ..AuditQuery::default()
    }
}

/// A page of `query` and what reading it cost.
async fn page(s: &Setup, query: &AuditQuery) -> (Vec<AuditEntry>, Option<String>, StoreCost) {
    s.store.take();
    let page = s.engine.list_audit(&auditor(), query).await.expect("list");
    (page.entries, page.next_cursor, s.store.take())
}

fn seqs(entries: &[AuditEntry]) -> Vec<u64> {
    entries.iter().map(|e| e.seq).collect()
}

/// Before: the tenant's whole listing was paged through (4 listing calls with 310 entries
/// in the tenant, 7 with 610) and each of the thread's entries read alone (10 reads).
#[test]
fn one_threads_page_costs_the_same_however_much_the_tenant_holds() {
    block_on(async {
        let s = setup();
        approved_turn(&s.engine, "t", 0).await;
        elsewhere(&s.engine, 0, 30).await;
        let (entries, next, cost) = page(&s, &query("t", 100)).await;
        // The head, then the ten entries in one read.
        let read = (cost.lists, cost.scans, cost.gets, cost.keys_read);
        assert_eq!(read, (0, 0, 2, 11), "{cost:?}");
        // Newest first: in chain order (all ten share one time).
        assert_eq!(seqs(&entries), (1..=10).rev().collect::<Vec<_>>());
        assert!(entries.iter().all(|e| e.thread_id == "t"));
        assert!(next.is_none());

        elsewhere(&s.engine, 30, 30).await;
        let (again, _, cost_after) = page(&s, &query("t", 100)).await;
        assert_eq!(again, entries);
        assert_eq!(
            cost_after, cost,
            "the cost grew with other threads' entries"
        );

        // The tenant's listing still holds them all.
        let everything = AuditQuery {
            limit: 100,
            ..AuditQuery::default()
        };
        let (all, next, _) = page(&s, &everything).await;
        assert_eq!(all.len(), 100);
        assert!(next.is_some());
    });
}

#[test]
fn one_threads_pages_read_their_own_entries_and_end() {
    block_on(async {
        let s = setup();
        approved_turn(&s.engine, "t", 0).await;
        elsewhere(&s.engine, 0, 12).await;
        // The cursor key, read once per process, out of the counts below.
        let (_, warm, _) = page(&s, &query("other-0", 1)).await;
        assert!(warm.is_some());

        let mut listing = query("t", 3);
        let (mut shown, mut costs) = (Vec::new(), Vec::new());
        loop {
            let (entries, next, cost) = page(&s, &listing).await;
            shown.extend(seqs(&entries));
            costs.push((cost.lists, cost.gets, cost.keys_read));
            match next {
                Some(cursor) => listing.cursor = Some(cursor),
                None => break,
            }
        }
        // Each page reads one entry past itself (to know whether another follows); only the
        // first reads the head.
        assert_eq!(costs, [(0, 2, 5), (0, 1, 4), (0, 1, 4), (0, 1, 1)]);
        assert_eq!(shown, (1..=10).rev().collect::<Vec<_>>());

        // A thread without a trail: its head, nothing else.
        let (entries, next, cost) = page(&s, &query("nobody", 3)).await;
        assert!(entries.is_empty() && next.is_none());
        assert_eq!((cost.lists, cost.gets, cost.keys_read), (0, 1, 1));
    });
}

#[test]
fn since_ends_one_threads_listing_at_its_first_older_entry() {
    block_on(async {
        let s = setup();
        approved_turn(&s.engine, "t", 0).await;
        s.clock.advance(60_000);
        approved_turn(&s.engine, "t", 1).await;
        elsewhere(&s.engine, 0, 12).await;

        let mut recent = query("t", 100);
        recent.since_ms = Some(T0 + 30_000);
        let (entries, next, cost) = page(&s, &recent).await;
        assert_eq!((cost.lists, cost.gets), (0, 2), "{cost:?}");
        assert_eq!(seqs(&entries), (11..=20).rev().collect::<Vec<_>>());
        assert!(entries.iter().all(|e| e.time_ms >= T0 + 60_000));
        assert!(next.is_none());

        // A page ending just before the older entries has no next page.
        recent.limit = 10;
        let (entries, next, _) = page(&s, &recent).await;
        assert_eq!(entries.len(), 10);
        assert!(
            next.is_none(),
            "the entry past the page is older than since"
        );
    });
}
