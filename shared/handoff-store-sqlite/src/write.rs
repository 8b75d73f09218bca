//! One commit's conditions and writes, and the purge of long-expired rows; [`crate::group`]
//! runs them inside its transaction.

use std::collections::HashMap;

use handoff_core::store::{Item, StoreError, Write, WriteOp, condition_holds, is_live};
use rusqlite::{Connection, OptionalExtension, params};

use crate::conditional;
use crate::options::Purge;
use crate::sql::{ms_from_sql, ms_to_sql, sql_err, version_from_sql};

const SELECT_VERSION: &str =
    "SELECT version, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const UPSERT: &str =
    "INSERT INTO items (partition, key, version, value, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (partition, key) DO UPDATE SET
        version = excluded.version, value = excluded.value, expires_at_ms = excluded.expires_at_ms";
pub(crate) const DELETE: &str = "DELETE FROM items WHERE partition = ?1 AND key = ?2";
const PURGE: &str = "DELETE FROM items WHERE rowid IN (
    SELECT rowid FROM items
    WHERE expires_at_ms IS NOT NULL AND expires_at_ms BETWEEN 0 AND ?1
    ORDER BY expires_at_ms LIMIT ?2)";

/// One queued [`Store::commit`](handoff_core::Store::commit).
pub(crate) struct Commit {
    pub(crate) partition: String,
    pub(crate) writes: Vec<Write>,
    pub(crate) now_ms: u64,
}

/// Checks every condition of `commit` and applies its writes, inside the caller's open
/// transaction. On an error some writes may have been applied: the caller rolls them back.
pub(crate) fn apply(conn: &Connection, commit: Commit) -> Result<(), StoreError> {
    if conditional::applies_to(&commit.writes, commit.now_ms) {
        return conditional::apply(conn, &commit.partition, commit.writes, commit.now_ms);
    }
    apply_checked(conn, commit)
}

/// The general path (a key named twice, a clock past `i64::MAX`): every condition is checked
/// against the rows as they were before the batch, then the writes apply in order, `live`
/// tracking each key's live version as they do.
fn apply_checked(conn: &Connection, commit: Commit) -> Result<(), StoreError> {
    let Commit {
        partition,
        writes,
        now_ms,
    } = commit;
    let mut live: HashMap<String, Option<u64>> = HashMap::with_capacity(writes.len());
    for (index, write) in writes.iter().enumerate() {
        let current = live_version(conn, &partition, &write.key, now_ms)?;
        if !condition_holds(write.condition, current.as_ref()) {
            return Err(StoreError::ConditionFailed { index });
        }
        live.entry(write.key.clone())
            .or_insert(current.map(|item| item.version));
    }
    let mut put = conn.prepare_cached(UPSERT).map_err(sql_err)?;
    let mut delete = conn.prepare_cached(DELETE).map_err(sql_err)?;
    for write in writes {
        match write.op {
            WriteOp::Put {
                value,
                expires_at_ms,
            } => {
                // The live version + 1, or 1 over a missing or expired row.
                let version = live.get(&write.key).copied().flatten().map_or(1, |v| v + 1);
                let sql_version = i64::try_from(version).map_err(|_| {
                    StoreError::Backend(format!("version overflow on {}", write.key))
                })?;
                put.execute(params![
                    partition,
                    write.key,
                    sql_version,
                    value,
                    expires_at_ms.map(ms_to_sql)
                ])
                .map_err(sql_err)?;
                live.insert(write.key, is_live(expires_at_ms, now_ms).then_some(version));
            }
            WriteOp::Delete => {
                delete
                    .execute(params![partition, write.key])
                    .map_err(sql_err)?;
                live.insert(write.key, None);
            }
            WriteOp::Check => {}
        }
    }
    Ok(())
}

/// The row's version and expiry if it is live at `now_ms` (the item carries no key or value).
pub(crate) fn live_version(
    conn: &Connection,
    partition: &str,
    key: &str,
    now_ms: u64,
) -> Result<Option<Item>, StoreError> {
    let row = conn
        .prepare_cached(SELECT_VERSION)
        .and_then(|mut select| {
            select
                .query_row(params![partition, key], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, Option<i64>>(1)?))
                })
                .optional()
        })
        .map_err(sql_err)?;
    match row {
        Some((version, expires)) if is_live(expires.map(ms_from_sql), now_ms) => Ok(Some(Item {
            key: String::new(),
            version: version_from_sql(version)?,
            value: Vec::new(),
            expires_at_ms: expires.map(ms_from_sql),
        })),
        _ => Ok(None),
    }
}

/// While nothing is left to purge, the purge waits this long (by the commits' clock) before
/// it looks again: most groups would otherwise run a `DELETE` that finds nothing.
const PURGE_PAUSE_MS: u64 = 1_000;

/// Deletes long-expired rows for the writer's groups: a bounded batch per group while there
/// are any, then nothing for [`PURGE_PAUSE_MS`] once a batch comes back short.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Purger {
    purge: Purge,
    /// When the last purge found fewer rows than a batch (nothing more to delete).
    paused_at_ms: Option<u64>,
}

impl Purger {
    pub(crate) fn new(purge: Purge) -> Self {
        Self {
            purge,
            paused_at_ms: None,
        }
    }

    /// Deletes a bounded batch of rows that expired at least the purge horizon before
    /// `now_ms` (one statement: on an error it changed nothing), unless paused.
    pub(crate) fn run(&mut self, conn: &Connection, now_ms: u64) -> Result<(), StoreError> {
        // A clock that went back (or a wild one) ends the pause rather than extending it.
        if self
            .paused_at_ms
            .is_some_and(|at| at <= now_ms && now_ms - at < PURGE_PAUSE_MS)
        {
            return Ok(());
        }
        let purge = self.purge;
        if let Some(after_ms) = purge.after_ms
            && let Some(cutoff) = now_ms.checked_sub(after_ms)
            && purge.batch > 0
        {
            let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
            let deleted = conn
                .prepare_cached(PURGE)
                .map_err(sql_err)?
                .execute(params![cutoff, purge.batch])
                .map_err(sql_err)?;
            self.paused_at_ms = (deleted < purge.batch as usize).then_some(now_ms);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::{PURGE, PURGE_PAUSE_MS, Purger};
    use crate::open::test_database;
    use crate::options::Purge;

    #[test]
    fn a_purge_is_not_re_prepared_for_each_new_cutoff() {
        let conn = test_database();
        let mut purger = Purger::new(Purge {
            after_ms: Some(1_000),
            batch: 10,
        });
        for n in 1..=4 {
            purger.run(&conn, n * 10 * PURGE_PAUSE_MS).expect("purge");
        }
        let statement = conn.prepare_cached(PURGE).expect("cached");
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0);
    }
}
