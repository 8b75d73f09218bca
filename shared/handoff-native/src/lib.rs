//! Runtime services for native hosts (the dev server, Lambda): the wall clock,
//! random ids and tokio timers that the core receives by injection, the store chosen
//! by `HANDOFF_STORE`, and the one outbound HTTP client ([`outbound::UreqOutbound`]:
//! A2A, key sets, models, MCP, the trace exporter).
//!
//! # Store settings
//!
//! [`store_from_env`] (through [`StoreChoice::from_lookup`]) reads:
//!
//! | variable | default | what |
//! |---|---|---|
//! | `HANDOFF_STORE` | `sqlite`: the embedded SQLite store | `memory` keeps state in the process (Lambda refuses it without `HANDOFF_ALLOW_LOCAL_STORE=true`, and refuses `sqlite`, which its builds do not link) |
//! | `HANDOFF_DATA_DIR` | `.handoff` | where the embedded store's file lives |
//! | `HANDOFF_SQLITE_SYNC` | `full` | the embedded store's durability: `full` survives a crash of the machine or a power loss; `normal`, WAL with `synchronous=NORMAL`, survives a crash of the process but may lose the last commits to a power loss, for fewer fsyncs |
//! | `HANDOFF_MEMORY_MAX_BYTES` | 16 MiB | the memory store's budget for threads, `0` = none: over it, the threads written least recently are forgotten whole, as if they had expired early, so a busy process keeps a bounded size; data stored without an expiry, an application's own records, is neither counted nor dropped; the demo's refund ledger expires 30 days after an order's last change, like the effect records that keep its refunds exactly once, so the budget counts and may drop it too |
//!
//! ```no_run
//! let runtime = handoff_native::runtime();
//! let store = handoff_native::store_from_env(|k| std::env::var(k).ok()).unwrap();
//! # let _ = (runtime, store);
//! ```

pub mod a2a;
pub mod outbound;
#[cfg(feature = "otel")]
pub mod telemetry;

/// The W3C `traceparent` of the current span for an outgoing request (model, A2A,
/// webhook), when traces are exported.
#[cfg_attr(not(feature = "otel"), allow(clippy::missing_const_for_fn))]
pub(crate) fn traceparent() -> Option<String> {
    #[cfg(feature = "otel")]
    return telemetry::traceparent();
    #[cfg(not(feature = "otel"))]
    None
}

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use handoff_core::store::memory::{self, MemoryStore};
use handoff_core::{Clock, IdGen, Runtime, Sleep, Spawn, Store, StoreError};
#[cfg(feature = "sqlite")]
use handoff_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

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

/// Which store a native host uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChoice {
    /// Embedded SQLite file in this directory (the default).
    Sqlite {
        /// Where the file lives (`HANDOFF_DATA_DIR`).
        dir: std::path::PathBuf,
        /// `HANDOFF_SQLITE_SYNC=normal`: WAL with `synchronous = NORMAL`, which survives a
        /// crash of the process but not a power loss; `full` (the default) survives both.
        normal_sync: bool,
    },
    /// Process memory (`HANDOFF_STORE=memory`), kept within a budget
    /// (`HANDOFF_MEMORY_MAX_BYTES`, see [`memory::max_bytes_from_lookup`]).
    Memory {
        /// The budget; `None`: every live item is kept.
        max_bytes: Option<usize>,
    },
}

impl StoreChoice {
    /// `HANDOFF_STORE` (`sqlite` | `memory`), `HANDOFF_DATA_DIR` (default `.handoff`) and
    /// `HANDOFF_SQLITE_SYNC` (`full` | `normal`, default `full`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, StoreError> {
        match lookup("HANDOFF_STORE").as_deref().unwrap_or("sqlite") {
            "memory" => Ok(StoreChoice::Memory {
                max_bytes: memory::max_bytes_from_lookup(&lookup)?,
            }),
            "sqlite" | "" => Ok(StoreChoice::Sqlite {
                dir: lookup("HANDOFF_DATA_DIR")
                    .unwrap_or_else(|| ".handoff".to_owned())
                    .into(),
                normal_sync: match lookup("HANDOFF_SQLITE_SYNC").as_deref().map(str::trim) {
                    None | Some("" | "full") => false,
                    Some("normal") => true,
                    Some(other) => {
                        return Err(StoreError::Backend(format!(
                            "HANDOFF_SQLITE_SYNC `{other}` is not full or normal"
                        )));
                    }
                },
            }),
            other => Err(StoreError::Backend(format!(
                "unknown HANDOFF_STORE `{other}` (use sqlite or memory)"
            ))),
        }
    }

    /// Opens the store.
    pub fn open(&self) -> Result<Arc<dyn Store>, StoreError> {
        Ok(match self {
            StoreChoice::Memory { max_bytes } => Arc::new(MemoryStore::with_budget(*max_bytes)),
            #[cfg(feature = "sqlite")]
            StoreChoice::Sqlite { dir, normal_sync } => {
                let sync = match normal_sync {
                    true => Synchronous::Normal,
                    false => Synchronous::Full,
                };
                let options = SqliteOptions::default().with_synchronous(sync);
                Arc::new(SqliteStore::open_with(
                    dir.join("handoff.sqlite3"),
                    options,
                )?)
            }
            #[cfg(not(feature = "sqlite"))]
            StoreChoice::Sqlite { .. } => {
                return Err(StoreError::Backend(
                    "HANDOFF_STORE=sqlite: this build has no embedded store (handoff-native's \
                     `sqlite` feature is off); use memory"
                        .to_owned(),
                ));
            }
        })
    }
}

/// Opens the store the environment asks for.
pub fn store_from_env(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Store>, StoreError> {
    StoreChoice::from_lookup(lookup)?.open()
}

#[cfg(test)]
mod tests {
    use handoff_core::IdGen;

    use super::RandomIds;

    #[test]
    fn handoff_sqlite_sync_picks_the_durability_and_refuses_anything_else() {
        use super::StoreChoice;
        let choice = |sync: Option<&'static str>| {
            StoreChoice::from_lookup(move |name| match name {
                "HANDOFF_SQLITE_SYNC" => sync.map(str::to_owned),
                _ => None,
            })
        };
        let normal = |choice: StoreChoice| {
            matches!(
                choice,
                StoreChoice::Sqlite {
                    normal_sync: true,
                    ..
                }
            )
        };
        assert!(!normal(choice(None).unwrap()));
        assert!(!normal(choice(Some("full")).unwrap()));
        assert!(normal(choice(Some("normal")).unwrap()));
        let refused = choice(Some("off")).unwrap_err().to_string();
        assert!(refused.contains("HANDOFF_SQLITE_SYNC"), "{refused}");
    }

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
