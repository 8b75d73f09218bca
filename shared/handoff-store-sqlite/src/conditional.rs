//! Writes that carry their own condition: for a batch that names every key once, a put under
//! `Version(v)` is one `UPDATE … WHERE version = v`, a put under `Absent` an upsert that only
//! replaces an expired row, and a statement that changed no row is the failed condition. No
//! write reads its row's version first (that read was half of a commit's statements).
//!
//! With every key named once, no write can change another's row, so checking each condition as
//! its write applies finds the same first failure as checking them all first; the caller rolls
//! back the writes before it.

use handoff_core::store::{Condition, StoreError, Write, WriteOp, condition_holds};
use rusqlite::params;

use crate::prepared::Prepared;
use crate::row::{DELETE, live_version};
use crate::sql::{index_to_sql, ms_to_sql, sql_err};

// A row is live while `expires_at_ms` is NULL or after now (`?5`, or `?4` in a delete). A
// negative value is an expiry past `i64::MAX` as `u64` (see `ms_to_sql`): live, since this
// path runs only with a `now` that fits an `i64`.

// Every put sets the row's listing columns in the same statement: `?6` and `?7` are the
// write's `ix_scope` and `ix_rank` (both NULL without an entry, which takes the row out of any
// listing).

/// Put under `Always`: the live version + 1, or 1 over a missing or expired row.
const PUT_ALWAYS: &str = "
    INSERT INTO items (partition, key, version, value, expires_at_ms, ix_scope, ix_rank)
    VALUES (?1, ?2, 1, ?3, ?4, ?6, ?7)
    ON CONFLICT (partition, key) DO UPDATE SET
        version = CASE
            WHEN items.expires_at_ms IS NULL OR items.expires_at_ms < 0 OR items.expires_at_ms > ?5
            THEN items.version + 1 ELSE 1 END,
        value = excluded.value,
        expires_at_ms = excluded.expires_at_ms,
        ix_scope = excluded.ix_scope,
        ix_rank = excluded.ix_rank";

/// Put under `Absent`: creates the row, or replaces an expired one; a live row is left alone
/// (no change: the condition failed).
const PUT_ABSENT: &str = "
    INSERT INTO items (partition, key, version, value, expires_at_ms, ix_scope, ix_rank)
    VALUES (?1, ?2, 1, ?3, ?4, ?6, ?7)
    ON CONFLICT (partition, key) DO UPDATE SET
        version = 1, value = excluded.value, expires_at_ms = excluded.expires_at_ms,
        ix_scope = excluded.ix_scope, ix_rank = excluded.ix_rank
    WHERE items.expires_at_ms IS NOT NULL AND items.expires_at_ms >= 0 AND items.expires_at_ms <= ?5";

/// Put under `Version(?9)`: changes the live row at that version only, to version `?8`.
const PUT_VERSION: &str = "
    UPDATE items SET version = ?8, value = ?3, expires_at_ms = ?4, ix_scope = ?6, ix_rank = ?7
    WHERE partition = ?1 AND key = ?2 AND version = ?9
        AND (expires_at_ms IS NULL OR expires_at_ms < 0 OR expires_at_ms > ?5)";

/// Delete under `Version(?3)`.
const DELETE_VERSION: &str = "
    DELETE FROM items WHERE partition = ?1 AND key = ?2 AND version = ?3
        AND (expires_at_ms IS NULL OR expires_at_ms < 0 OR expires_at_ms > ?4)";

/// Whether `apply` may take this batch: every key named once (few writes: a pairwise look),
/// and a clock that fits SQL's integers.
pub(crate) fn applies_to(writes: &[Write], now_ms: u64) -> bool {
    const MOST_WRITES: usize = 16;
    writes.len() <= MOST_WRITES
        && i64::try_from(now_ms).is_ok()
        && writes
            .iter()
            .enumerate()
            .all(|(i, write)| writes[..i].iter().all(|before| before.key != write.key))
}

/// Applies `writes` in order, each checking its own condition; stops at the first that fails
/// (the writes before it stay applied: the caller rolls them back). Only for batches
/// [`applies_to`] accepts.
pub(crate) fn apply(
    p: &mut Prepared<'_>,
    partition: &str,
    writes: Vec<Write>,
    now_ms: u64,
) -> Result<(), StoreError> {
    let now = ms_to_sql(now_ms);
    for (index, write) in writes.into_iter().enumerate() {
        let failed = StoreError::ConditionFailed { index };
        let Write {
            key,
            condition,
            op,
            index: entry,
        } = write;
        let changed = match (op, condition) {
            (
                WriteOp::Put {
                    value,
                    expires_at_ms,
                },
                condition,
            ) => {
                let expires = expires_at_ms.map(ms_to_sql);
                let (scope, rank) = index_to_sql(entry.as_ref())?;
                match condition {
                    Condition::Always => p
                        .get(PUT_ALWAYS)?
                        .execute(params![partition, key, value, expires, now, scope, rank]),
                    Condition::Absent => p
                        .get(PUT_ABSENT)?
                        .execute(params![partition, key, value, expires, now, scope, rank]),
                    Condition::Version(version) => {
                        let Some((expected, next)) = i64::try_from(version)
                            .ok()
                            .and_then(|v| Some((v, v.checked_add(1)?)))
                        else {
                            // No row can be past `i64::MAX`; one at it cannot move on.
                            let current = live_version(p, partition, &key, now_ms)?;
                            return Err(if condition_holds(condition, current.as_ref()) {
                                StoreError::Backend(format!("version overflow on {key}"))
                            } else {
                                failed
                            });
                        };
                        p.get(PUT_VERSION)?.execute(params![
                            partition, key, value, expires, now, scope, rank, next, expected
                        ])
                    }
                }
            }
            (WriteOp::Delete, Condition::Always) => p
                .get(DELETE)?
                .execute(params![partition, key])
                // Deleting nothing satisfies `Always`.
                .map(|_| 1),
            (WriteOp::Delete, Condition::Version(version)) => {
                let Ok(expected) = i64::try_from(version) else {
                    return Err(failed);
                };
                p.get(DELETE_VERSION)?
                    .execute(params![partition, key, expected, now])
            }
            // Rare: the row is read, as on the general path.
            (op, condition) => {
                let current = live_version(p, partition, &key, now_ms)?;
                if !condition_holds(condition, current.as_ref()) {
                    return Err(failed);
                }
                if op == WriteOp::Delete {
                    p.get(DELETE)?
                        .execute(params![partition, key])
                        .map_err(sql_err)?;
                }
                continue;
            }
        }
        .map_err(sql_err)?;
        if changed == 0 {
            return Err(failed);
        }
    }
    Ok(())
}
