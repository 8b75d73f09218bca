//! One commit's conditions and writes, and the purge of long-expired rows; [`crate::group`]
//! runs them inside its transaction.

use std::collections::HashMap;

use handoff_core::store::{StoreError, Write, WriteOp, condition_holds, is_live};
use rusqlite::params;

use crate::conditional;
use crate::options::Purge;
use crate::prepared::Prepared;
use crate::row::{DELETE, live_version};
use crate::sql::{index_to_sql, ms_to_sql, sql_err};

/// A put of the general path, its listing columns (`?6`, `?7`) included.
const UPSERT: &str = "
    INSERT INTO items (partition, key, version, value, expires_at_ms, ix_scope, ix_rank)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
    ON CONFLICT (partition, key) DO UPDATE SET
        version = excluded.version, value = excluded.value, expires_at_ms = excluded.expires_at_ms,
        ix_scope = excluded.ix_scope, ix_rank = excluded.ix_rank";
/// The sweep's next window, the `?2` rows after rowid `?1`: its last rowid, how many rows it
/// has and how many of them expired at or before `?3`.
const SWEEP_WINDOW: &str =
    "SELECT max(rowid), count(*), count(*) FILTER (WHERE expires_at_ms BETWEEN 0 AND ?3)
    FROM (SELECT rowid, expires_at_ms FROM items WHERE rowid > ?1 ORDER BY rowid LIMIT ?2)";
/// Deletes the window's rows (rowids in `(?1, ?2]`) that expired at or before `?3`.
const PURGE: &str =
    "DELETE FROM items WHERE rowid > ?1 AND rowid <= ?2 AND expires_at_ms BETWEEN 0 AND ?3";

/// One queued [`Store::commit`](handoff_core::Store::commit).
pub(crate) struct Commit {
    pub(crate) partition: String,
    pub(crate) writes: Vec<Write>,
    pub(crate) now_ms: u64,
}

/// Checks every condition of `commit` and applies its writes, inside the caller's open
/// transaction. On an error some writes may have been applied: the caller rolls them back.
pub(crate) fn apply(p: &mut Prepared<'_>, commit: Commit) -> Result<(), StoreError> {
    // A rank the table cannot keep refuses the batch whole, before any condition, on either
    // path (no SQL: a look at each put).
    for write in &commit.writes {
        if matches!(write.op, WriteOp::Put { .. }) {
            index_to_sql(write.index.as_ref())?;
        }
    }
    if conditional::applies_to(&commit.writes, commit.now_ms) {
        return conditional::apply(p, &commit.partition, commit.writes, commit.now_ms);
    }
    apply_checked(p, commit)
}

/// The general path (a key named twice, a clock past `i64::MAX`): every condition is checked
/// against the rows as they were before the batch, then the writes apply in order, `live`
/// tracking each key's live version as they do.
fn apply_checked(p: &mut Prepared<'_>, commit: Commit) -> Result<(), StoreError> {
    let Commit {
        partition,
        writes,
        now_ms,
    } = commit;
    let mut live: HashMap<String, Option<u64>> = HashMap::with_capacity(writes.len());
    for (index, write) in writes.iter().enumerate() {
        let current = live_version(p, &partition, &write.key, now_ms)?;
        if !condition_holds(write.condition, current.as_ref()) {
            return Err(StoreError::ConditionFailed { index });
        }
        live.entry(write.key.clone())
            .or_insert(current.map(|item| item.version));
    }
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
                let (scope, rank) = index_to_sql(write.index.as_ref())?;
                p.get(UPSERT)?
                    .execute(params![
                        partition,
                        write.key,
                        sql_version,
                        value,
                        expires_at_ms.map(ms_to_sql),
                        scope,
                        rank
                    ])
                    .map_err(sql_err)?;
                live.insert(write.key, is_live(expires_at_ms, now_ms).then_some(version));
            }
            WriteOp::Delete => {
                p.get(DELETE)?
                    .execute(params![partition, write.key])
                    .map_err(sql_err)?;
                live.insert(write.key, None);
            }
            WriteOp::Check => {}
        }
    }
    Ok(())
}

/// The shortest wait between two sweeps, by the commits' clock: with a small horizon (tests),
/// a sweep that found nothing would otherwise start again at once.
const MIN_SWEEP_PAUSE_MS: u64 = 1_000;

/// Deletes long-expired rows for the writer's groups by sweeping the table in rowid order: a
/// group examines the next `batch` rows and deletes those among them that expired at least
/// the horizon before its clock. Once a sweep reaches the end of the table, the next one
/// starts a horizon later (at least [`MIN_SWEEP_PAUSE_MS`]): a row is gone within about two
/// horizons of its expiry, and between sweeps a group costs nothing.
///
/// Why not an index on `expires_at_ms`: every put moves a row's expiry, so the index took a
/// b-tree delete and insert, and about a quarter of the WAL pages, on every write; a sweep
/// reads each row once per horizon.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Purger {
    purge: Purge,
    /// The last rowid the running sweep examined (0 before its first window); `None` between
    /// sweeps.
    cursor: Option<i64>,
    /// When the last sweep ended.
    ended_at_ms: Option<u64>,
}

impl Purger {
    pub(crate) fn new(purge: Purge) -> Self {
        Self {
            purge,
            cursor: None,
            ended_at_ms: None,
        }
    }

    /// Examines the sweep's next window and deletes its long-expired rows (one statement: on
    /// an error it changed nothing), unless no sweep is due.
    pub(crate) fn run(&mut self, p: &mut Prepared<'_>, now_ms: u64) -> Result<(), StoreError> {
        let purge = self.purge;
        let Some(after_ms) = purge.after_ms.filter(|_| purge.batch > 0) else {
            return Ok(());
        };
        let Some(cutoff) = now_ms.checked_sub(after_ms) else {
            return Ok(());
        };
        let pause = after_ms.max(MIN_SWEEP_PAUSE_MS);
        let from = match self.cursor {
            Some(cursor) => cursor,
            // A clock that went back (or a wild one) ends the pause rather than extending it.
            None if self
                .ended_at_ms
                .is_some_and(|at| at <= now_ms && now_ms - at < pause) =>
            {
                return Ok(());
            }
            None => 0,
        };
        let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
        let window = p
            .get(SWEEP_WINDOW)?
            .query_row(params![from, purge.batch, cutoff], |row| {
                Ok((
                    row.get::<_, Option<i64>>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })
            .map_err(sql_err)?;
        let (last, examined, expired) = window;
        if expired > 0
            && let Some(last) = last
        {
            p.get(PURGE)?
                .execute(params![from, last, cutoff])
                .map_err(sql_err)?;
        }
        if examined < i64::from(purge.batch) {
            self.cursor = None;
            self.ended_at_ms = Some(now_ms);
        } else {
            self.cursor = last;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::{StatementStatus, params};

    use super::{MIN_SWEEP_PAUSE_MS, PURGE, Purger, SWEEP_WINDOW};
    use crate::open::test_database;
    use crate::options::Purge;
    use crate::prepared::Prepared;

    #[test]
    fn sweep_statements_are_not_re_prepared_for_each_new_cutoff() {
        let conn = test_database();
        for n in 1..=4i64 {
            conn.execute(
                "INSERT INTO items (partition, key, version, value, expires_at_ms) VALUES ('p', ?1, 1, x'00', ?2)",
                params![format!("k{n}"), n * 10_000 - 5_000],
            )
            .expect("row");
        }
        let mut prepared = Prepared::new(&conn);
        let mut purger = Purger::new(Purge {
            after_ms: Some(1_000),
            batch: 10,
        });
        for n in 1..=4 {
            purger
                .run(&mut prepared, n * 10 * MIN_SWEEP_PAUSE_MS)
                .expect("purge");
            let left: i64 = conn
                .query_row("SELECT count(*) FROM items", [], |r| r.get(0))
                .expect("count");
            assert_eq!(left, 4 - n as i64, "one row more has expired at each run");
        }
        for sql in [SWEEP_WINDOW, PURGE] {
            let statement = prepared.get(sql).expect("prepared");
            assert_eq!(statement.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }
}
