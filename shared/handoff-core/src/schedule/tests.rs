//! The tick semantics: two claimers of one tick, one wins; missed ticks run once.

use futures::executor::block_on;
use serde_json::json;

use super::*;
use crate::store::memory::MemoryStore;

const T0: u64 = 1_764_421_200_000; // 2025-11-29T13:00:00Z

fn every(seconds: u64, id: &str, tenant: &str) -> Schedule {
    let cadence = Cadence::EverySeconds(seconds);
    Schedule {
        id: id.to_owned(),
        owner: Principal::new(tenant, "alice"),
        agent_id: "demo".to_owned(),
        next_due_ms: cadence.first_due(T0).unwrap(),
        cadence,
        messages: vec![json!({ "role": "user", "content": "report" })],
        thread_id: None,
        created_ms: T0,
        ticks: 0,
        last_run: None,
    }
}

#[test]
fn of_two_claimers_that_read_the_same_tick_one_wins() {
    let store = MemoryStore::new();
    block_on(create(&store, &every(2, "s1", "acme"), T0)).unwrap();
    let now = T0 + 2_000;
    // Both instances find it due before either claims.
    let first = block_on(due(&store, now, 10)).unwrap();
    let second = block_on(due(&store, now, 10)).unwrap();
    assert_eq!((first.len(), second.len()), (1, 1));
    let a = block_on(claim(&store, &first[0], "run-a", now)).unwrap();
    let b = block_on(claim(&store, &second[0], "run-b", now)).unwrap();
    let won = a.expect("the first claim wins");
    assert!(b.is_none(), "the second claim of the same tick loses");
    assert_eq!(won.run.tick_ms, T0 + 2_000);
    assert_eq!(won.run.thread_id, format!("s1-{}-run-a", T0 + 2_000));
    // The tick is gone from the due listing; the next one is due in 2 s.
    assert!(block_on(due(&store, now, 10)).unwrap().is_empty());
    let stored = block_on(get(&store, "acme", "s1", now)).unwrap().unwrap();
    assert_eq!(stored.next_due_ms, T0 + 4_000);
    assert_eq!(stored.ticks, 1);
    assert_eq!(stored.last_run.unwrap().run_id, "run-a");
}

#[test]
fn ticks_missed_while_nobody_ran_run_once() {
    let store = MemoryStore::new();
    block_on(create(&store, &every(2, "s1", "acme"), T0)).unwrap();
    // Every instance was down for 11 s: five ticks passed (T0+2 s … T0+10 s).
    let now = T0 + 11_000;
    let found = block_on(due(&store, now, 10)).unwrap();
    assert_eq!(found.len(), 1, "one schedule, one due entry");
    let tick = block_on(claim(&store, &found[0], "run-1", now))
        .unwrap()
        .unwrap();
    assert_eq!(
        tick.run.tick_ms,
        T0 + 2_000,
        "the oldest missed tick is the one run"
    );
    assert_eq!(
        tick.schedule.next_due_ms,
        T0 + 12_000,
        "the next is after now"
    );
    assert!(
        block_on(due(&store, now, 10)).unwrap().is_empty(),
        "nothing else is due: the missed ticks collapsed into one"
    );
    assert_eq!(block_on(due(&store, T0 + 12_000, 10)).unwrap().len(), 1);
}

#[test]
fn a_deleted_schedule_is_not_claimed() {
    let store = MemoryStore::new();
    block_on(create(&store, &every(2, "s1", "acme"), T0)).unwrap();
    let now = T0 + 2_000;
    let found = block_on(due(&store, now, 10)).unwrap();
    block_on(delete(&store, "acme", "s1", now)).unwrap();
    assert_eq!(block_on(claim(&store, &found[0], "r", now)).unwrap(), None);
    assert!(block_on(due(&store, now, 10)).unwrap().is_empty());
}

#[test]
fn schedules_are_listed_per_tenant_and_due_across_tenants() {
    let store = MemoryStore::new();
    block_on(create(&store, &every(5, "a", "acme"), T0)).unwrap();
    block_on(create(&store, &every(3, "b", "globex"), T0)).unwrap();
    let acme = block_on(list(&store, "acme", T0)).unwrap();
    assert_eq!(acme.iter().map(|s| &s.id).collect::<Vec<_>>(), ["a"]);
    let found = block_on(due(&store, T0 + 5_000, 10)).unwrap();
    let ids: Vec<&str> = found.iter().map(|d| d.schedule.id.as_str()).collect();
    assert_eq!(ids, ["b", "a"], "soonest due first");
    assert!(block_on(due(&store, T0 + 2_999, 10)).unwrap().is_empty());
    assert_eq!(block_on(next_due(&store, T0)).unwrap(), Some(T0 + 3_000));
    assert_eq!(block_on(next_due(&MemoryStore::new(), T0)).unwrap(), None);
}

#[test]
fn cron_patterns_are_five_fields_in_utc() {
    let hourly = Cadence::parse(Some("0 * * * *"), None).unwrap();
    // T0 is 13:00:00 UTC: the next match is 14:00, and from 13:30 too.
    assert_eq!(hourly.first_due(T0).unwrap(), T0 + 3_600_000);
    assert_eq!(
        hourly.next_after(T0, T0 + 1_800_000).unwrap(),
        T0 + 3_600_000
    );
    // Missed: due at 14:00, back at 16:20: the next is 17:00.
    let back = T0 + 3 * 3_600_000 + 1_200_000;
    assert_eq!(
        hourly.next_after(T0 + 3_600_000, back).unwrap(),
        T0 + 4 * 3_600_000
    );
    for bad in ["0 * * * * *", "* * *", "61 * * * *", "0 0 30 2 *", ""] {
        let err = Cadence::parse(Some(bad), None).unwrap_err();
        assert_eq!(
            crate::codes::ErrorCode::code(&err),
            codes::INVALID_SCHEDULE,
            "{bad}"
        );
    }
    assert!(Cadence::parse(Some("* * * * *"), Some(5)).is_err());
    assert!(Cadence::parse(None, None).is_err());
    assert!(Cadence::parse(None, Some(0)).is_err());
    assert!(Cadence::parse(None, Some(MAX_EVERY_SECONDS + 1)).is_err());
}

#[test]
fn a_tick_sends_the_messages_under_ids_of_its_own_as_its_owner() {
    let mut schedule = every(2, "s1", "acme");
    schedule.thread_id = Some("daily".to_owned());
    let run = TickRun {
        tick_ms: T0,
        claimed_ms: T0,
        thread_id: tick_thread(&schedule, T0, "run-9"),
        run_id: "run-9".to_owned(),
    };
    let tick = Tick { schedule, run };
    let input = tick.input().unwrap();
    assert_eq!(input.thread_id.to_string(), "daily");
    assert_eq!(input.messages.len(), 1);
    assert_eq!(input.messages[0].id().as_str(), "run-9-m0");
    assert_eq!(tick.options().principal, Principal::new("acme", "alice"));
    assert!(check_messages(&[]).is_err());
    assert!(check_messages(&[json!({ "role": "wizard" })]).is_err());
    assert!(check_thread_id("bad\u{1}id").is_err());
}
