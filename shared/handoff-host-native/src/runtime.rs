//! Time, ids, timers and background work for a tokio host, injected into the core.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use handoff_core::{Clock, IdGen, Runtime, Sleep, Spawn};

/// The system wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // Hosts are where time comes from.
    fn now_ms(&self) -> u64 {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Random (UUID v4) ids, from a thread-local ChaCha generator seeded by the OS (uuid's
/// `fast-rng`): as unguessable as asking the OS for every id, without a `getrandom` system
/// call per id (a pair of demo runs makes about seven ids).
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdGen for RandomIds {
    fn next_id(&self, prefix: &str) -> String {
        // Joined into an exactly-sized string (`format!` costs several times more).
        let mut hex = uuid::Uuid::encode_buffer();
        let hex = uuid::Uuid::new_v4().simple().encode_lower(&mut hex);
        [prefix, "-", hex].concat()
    }
}

/// Tokio timers.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioSleep;

impl Sleep for TokioSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(millis)))
    }
}

/// Tokio tasks: runs outlive their responses.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioSpawn;

impl Spawn for TokioSpawn {
    fn spawn(&self, future: BoxFuture<'static, ()>) {
        tokio::spawn(future);
    }
}

/// Clock, ids, sleep and a spawner for a tokio host.
pub fn runtime() -> Runtime {
    Runtime::new(SystemClock, RandomIds, TokioSleep).with_spawner(TokioSpawn)
}

#[cfg(test)]
mod tests {
    use handoff_core::IdGen;

    use super::RandomIds;

    #[test]
    fn random_ids_are_the_prefix_and_a_v4_uuid_in_lowercase_hex() {
        let ids = [RandomIds.next_id("msg"), RandomIds.next_id("msg")];
        for id in &ids {
            let hex = id.strip_prefix("msg-").expect("prefix");
            assert_eq!(hex.len(), 32, "{id}");
            assert!(
                hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{id}"
            );
            let uuid = uuid::Uuid::parse_str(hex).expect("a uuid");
            assert_eq!(uuid.get_version_num(), 4, "{id}");
            assert_eq!(id.capacity(), id.len(), "exactly sized");
        }
        assert_ne!(ids[0], ids[1]);
    }
}
