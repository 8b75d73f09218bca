//! Reads: `get` (one read transaction), `list` and `list_index` (one range scan each).

use handoff_core::store::{IndexHit, Item, StoreError, is_live};
use rusqlite::{OptionalExtension, params};

use crate::prepared::Prepared;
use crate::sql::{ms_from_sql, ms_to_sql, rank_from_sql, sql_err, version_from_sql};

const SELECT_ITEM: &str =
    "SELECT version, value, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const SELECT_KEYS: &str =
    "SELECT key, expires_at_ms FROM items WHERE partition = ?1 AND key >= ?2 ORDER BY key";

// A listing's page: the scope's rows on `items_listing`, in its order (rank descending, then
// partition and key ascending), live at `?2` (the clock's `u64` bits: a negative value is past
// `i64::MAX`, and so is a negative expiry; the two compare as `u64`s do), at most `?3` rows.
// After a hit (`?4`, `?5`, `?6`), the scan starts at its rank and skips the rows of that rank
// up to and including it; row values compare like Rust strings (`BINARY`).
const SELECT_LISTING: &str = "
    SELECT ix_rank, partition, key FROM items
    WHERE ix_scope = ?1
        AND (expires_at_ms IS NULL OR CASE WHEN ?2 >= 0
            THEN expires_at_ms < 0 OR expires_at_ms > ?2
            ELSE expires_at_ms < 0 AND expires_at_ms > ?2 END)
    ORDER BY ix_rank DESC, partition, key LIMIT ?3";
const SELECT_LISTING_AFTER: &str = "
    SELECT ix_rank, partition, key FROM items
    WHERE ix_scope = ?1
        AND ix_rank <= ?4 AND (ix_rank < ?4 OR (partition, key) > (?5, ?6))
        AND (expires_at_ms IS NULL OR CASE WHEN ?2 >= 0
            THEN expires_at_ms < 0 OR expires_at_ms > ?2
            ELSE expires_at_ms < 0 AND expires_at_ms > ?2 END)
    ORDER BY ix_rank DESC, partition, key LIMIT ?3";

pub(crate) fn read_items(
    p: &mut Prepared<'_>,
    partition: &str,
    keys: &[&str],
    now_ms: u64,
) -> Result<Vec<Option<Item>>, StoreError> {
    // Several keys share one read transaction, so every key comes from the same snapshot; a
    // lone key is one statement, a snapshot by itself. (Prepared `BEGIN`/`COMMIT`: no parsing.)
    if keys.len() < 2 {
        return select_items(p, partition, keys, now_ms);
    }
    p.exec("BEGIN")?;
    let items = select_items(p, partition, keys, now_ms);
    let ended = p.exec(if items.is_ok() { "COMMIT" } else { "ROLLBACK" });
    if ended.is_err() && !p.conn().is_autocommit() {
        let _ = p.exec("ROLLBACK");
    }
    let items = items?;
    ended?;
    Ok(items)
}

fn select_items(
    p: &mut Prepared<'_>,
    partition: &str,
    keys: &[&str],
    now_ms: u64,
) -> Result<Vec<Option<Item>>, StoreError> {
    let mut items = Vec::with_capacity(keys.len());
    let select = p.get(SELECT_ITEM)?;
    for &key in keys {
        let row = select
            .query_row(params![partition, key], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, Vec<u8>>(1)?,
                    row.get::<_, Option<i64>>(2)?,
                ))
            })
            .optional()
            .map_err(sql_err)?;
        let item = match row {
            Some((version, value, expires)) if is_live(expires.map(ms_from_sql), now_ms) => {
                Some(Item {
                    key: key.to_owned(),
                    version: version_from_sql(version)?,
                    value,
                    expires_at_ms: expires.map(ms_from_sql),
                })
            }
            _ => None,
        };
        items.push(item);
    }
    Ok(items)
}

pub(crate) fn list_keys(
    p: &mut Prepared<'_>,
    partition: &str,
    prefix: &str,
    now_ms: u64,
) -> Result<Vec<String>, StoreError> {
    // A range scan from the prefix, stopping at the first key without it: no `LIKE`, whose
    // wildcards and case folding would not match `starts_with`.
    let select = p.get(SELECT_KEYS)?;
    let mut rows = select.query(params![partition, prefix]).map_err(sql_err)?;
    let mut keys = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        let key: String = row.get(0).map_err(sql_err)?;
        if !key.starts_with(prefix) {
            break;
        }
        let expires: Option<i64> = row.get(1).map_err(sql_err)?;
        if is_live(expires.map(ms_from_sql), now_ms) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// Up to `limit` live items of `scope` after `after`, in listing order: one statement.
pub(crate) fn list_index(
    p: &mut Prepared<'_>,
    scope: &str,
    after: Option<&IndexHit>,
    limit: usize,
    now_ms: u64,
) -> Result<Vec<IndexHit>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let now = ms_to_sql(now_ms);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // No stored rank is past `i64::MAX` (puts refuse one), so every row comes after a hit
    // ranked there (a caller's "from the top" cursor may be `u64::MAX`).
    let after = after.and_then(|a| Some((i64::try_from(a.rank).ok()?, a)));
    let select = match after {
        None => p.get(SELECT_LISTING)?,
        Some(_) => p.get(SELECT_LISTING_AFTER)?,
    };
    let mut rows = match after {
        None => select.query(params![scope, now, limit]),
        Some((rank, hit)) => select.query(params![scope, now, limit, rank, hit.partition, hit.key]),
    }
    .map_err(sql_err)?;
    let mut hits = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err)? {
        hits.push(IndexHit {
            rank: rank_from_sql(row.get(0).map_err(sql_err)?)?,
            partition: row.get(1).map_err(sql_err)?,
            key: row.get(2).map_err(sql_err)?,
        });
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use handoff_core::store::IndexHit;

    use super::{SELECT_KEYS, SELECT_LISTING, SELECT_LISTING_AFTER, list_index, list_keys};
    use crate::open::test_database;
    use crate::prepared::Prepared;

    #[test]
    fn a_listing_walks_its_index_in_order() {
        let conn = test_database();
        for sql in [SELECT_LISTING, SELECT_LISTING_AFTER] {
            let mut explain = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .expect("explain");
            let bindings = ["s", "1", "10", "5", "p", "k"];
            let bindings = &bindings[..explain.parameter_count()];
            let plan: Vec<String> = explain
                .query_map(rusqlite::params_from_iter(bindings), |row| row.get(3))
                .and_then(Iterator::collect)
                .expect("plan");
            let plan = plan.join("; ");
            assert!(
                plan.contains("USING INDEX items_listing (ix_scope=?"),
                "{sql}: {plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "{sql}: no sort: {plan}");
            if sql == SELECT_LISTING_AFTER {
                assert!(
                    plan.contains("ix_rank<?"),
                    "seeks to the hit's rank: {plan}"
                );
            }
        }
    }

    #[test]
    fn kept_listings_are_not_re_prepared_for_new_bindings() {
        let conn = test_database();
        let mut prepared = Prepared::new(&conn);
        for rank in [1, 2, 3, 4] {
            let after = IndexHit {
                rank,
                partition: "p".to_owned(),
                key: "k".to_owned(),
            };
            list_index(&mut prepared, "s", None, 10, rank).expect("list");
            list_index(&mut prepared, "s", Some(&after), 10, rank).expect("list");
        }
        for sql in [SELECT_LISTING, SELECT_LISTING_AFTER] {
            let statement = prepared.get(sql).expect("prepared");
            assert_eq!(statement.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }

    #[test]
    fn a_kept_range_scan_is_not_re_prepared_for_new_bindings() {
        let conn = test_database();
        let mut prepared = Prepared::new(&conn);
        for prefix in ["a", "b", "c", "d"] {
            list_keys(&mut prepared, "p", prefix, 1).expect("list");
        }
        let statement = prepared.get(SELECT_KEYS).expect("prepared");
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0);
    }
}
