//! Reads: `get` (one read transaction) and `list` (one range scan).

use handoff_core::store::{Item, StoreError, is_live};
use rusqlite::{Connection, OptionalExtension, params};

use crate::sql::{exec, ms_from_sql, sql_err, version_from_sql};

const SELECT_ITEM: &str =
    "SELECT version, value, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const SELECT_KEYS: &str =
    "SELECT key, expires_at_ms FROM items WHERE partition = ?1 AND key >= ?2 ORDER BY key";

pub(crate) fn read_items(
    conn: &mut Connection,
    partition: &str,
    keys: Vec<String>,
    now_ms: u64,
) -> Result<Vec<Option<Item>>, StoreError> {
    // Several keys share one read transaction, so every key comes from the same snapshot; a
    // lone key is one statement, a snapshot by itself. (Prepared `BEGIN`/`COMMIT`: no parsing.)
    if keys.len() < 2 {
        return select_items(conn, partition, keys, now_ms);
    }
    exec(conn, "BEGIN")?;
    let items = select_items(conn, partition, keys, now_ms);
    let ended = exec(conn, if items.is_ok() { "COMMIT" } else { "ROLLBACK" });
    if ended.is_err() && !conn.is_autocommit() {
        let _ = exec(conn, "ROLLBACK");
    }
    let items = items?;
    ended?;
    Ok(items)
}

fn select_items(
    conn: &Connection,
    partition: &str,
    keys: Vec<String>,
    now_ms: u64,
) -> Result<Vec<Option<Item>>, StoreError> {
    let mut items = Vec::with_capacity(keys.len());
    let mut select = conn.prepare_cached(SELECT_ITEM).map_err(sql_err)?;
    for key in keys {
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
                    key,
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
    conn: &mut Connection,
    partition: &str,
    prefix: &str,
    now_ms: u64,
) -> Result<Vec<String>, StoreError> {
    // A range scan from the prefix, stopping at the first key without it: no `LIKE`, whose
    // wildcards and case folding would not match `starts_with`.
    let mut select = conn.prepare_cached(SELECT_KEYS).map_err(sql_err)?;
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

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::{SELECT_KEYS, list_keys};
    use crate::open::test_database;

    #[test]
    fn a_cached_range_scan_is_not_re_prepared_for_new_bindings() {
        let mut conn = test_database();
        for prefix in ["a", "b", "c", "d"] {
            list_keys(&mut conn, "p", prefix, 1).expect("list");
        }
        let statement = conn.prepare_cached(SELECT_KEYS).expect("cached");
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0);
    }
}
