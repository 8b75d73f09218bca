//! The SQLite store answers every commit and read exactly as the reference (memory) store
//! does, over seeded random batches: every condition on every op, expiries at and around
//! the clock and past `i64::MAX`, versions at the edges, and batches that name a key twice
//! (the general path) beside those that do not (conditions carried by the writes).

use futures::executor::block_on;
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Condition, Store, Write};
use handoff_store_sqlite::SqliteStore;

const START: u64 = 1_700_000_000_000;
const KEYS: [&str; 3] = ["a", "b", "c"];

/// A small deterministic generator (xorshift64*): the same seed, the same batches.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

fn condition(rng: &mut Rng) -> Condition {
    match rng.below(4) {
        0 => Condition::Always,
        1 => Condition::Absent,
        _ => Condition::Version(rng.pick(&[
            0,
            1,
            2,
            3,
            4,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            u64::MAX,
        ])),
    }
}

fn expiry(rng: &mut Rng, now: u64) -> Option<u64> {
    match rng.below(8) {
        0 | 1 => None,
        2 => Some(now),
        3 => Some(now + 1),
        4 => Some(now + 1 + rng.below(4)),
        5 => Some(now.saturating_sub(1)),
        6 => Some(u64::MAX),
        _ => Some((1 << 63) + rng.below(4)),
    }
}

fn write(rng: &mut Rng, key: &str, now: u64, serial: u64) -> Write {
    let condition = condition(rng);
    match rng.below(6) {
        0 => Write::delete(key, condition),
        1 => Write::check(key, condition),
        _ => Write::put(
            key,
            condition,
            format!("{key}{serial}").into_bytes(),
            expiry(rng, now),
        ),
    }
}

#[test]
fn every_commit_and_read_matches_the_reference_store() {
    let sqlite = SqliteStore::in_memory().expect("open");
    let reference = MemoryStore::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut now = START;
    let mut failed = 0;
    for serial in 0..3_000u64 {
        // The clock stands still, steps or jumps (rows expire in between).
        now += rng.pick(&[0, 0, 1, 2, 5]);
        let partition = rng.pick(&["p", "q"]);
        let count = 1 + rng.below(3) as usize;
        let mut keys: Vec<&str> = (0..count).map(|_| rng.pick(&KEYS)).collect();
        // Most batches name each key once (the path whose conditions ride on the writes).
        if rng.below(4) != 0 {
            keys.sort_unstable();
            keys.dedup();
        }
        let writes: Vec<Write> = keys
            .iter()
            .map(|key| write(&mut rng, key, now, serial))
            .collect();
        let expected = block_on(reference.commit(partition, writes.clone(), now));
        let actual = block_on(sqlite.commit(partition, writes.clone(), now));
        assert_eq!(actual, expected, "commit {serial} at {now}: {writes:?}");
        failed += usize::from(expected.is_err());
        for partition in ["p", "q"] {
            let expected = block_on(reference.get(partition, &KEYS, now)).expect("reference");
            let actual = block_on(sqlite.get(partition, &KEYS, now)).expect("sqlite");
            assert_eq!(
                actual, expected,
                "after commit {serial} at {now}: {writes:?}"
            );
        }
    }
    // Both outcomes were exercised often.
    assert!((500..2_500).contains(&failed), "{failed} of 3000 failed");
}
