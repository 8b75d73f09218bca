//! The store a native host uses, chosen by `HANDOFF_STORE` (see the crate docs' table).

use std::sync::Arc;

use handoff_core::store::memory::{self, MemoryStore};
use handoff_core::{Store, StoreError};
#[cfg(feature = "sqlite")]
use handoff_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

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
                    "HANDOFF_STORE=sqlite: this build has no embedded store (handoff-host-native's \
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
}
