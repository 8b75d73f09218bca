//! Reads: `get` (one read transaction) and `list` (one range scan).

use handoff_core::store::{Item, StoreError, is_live};
use rusqlite::{OptionalExtension, params};

use crate::prepared::Prepared;
use crate::sql::{ms_from_sql, sql_err, version_from_sql};

const SELECT_ITEM: &str =
    "SELECT version, value, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
const SELECT_KEYS: &str =
    "SELECT key, expires_at_ms FROM items WHERE partition = ?1 AND key >= ?2 ORDER BY key";

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

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::{SELECT_KEYS, list_keys};
    use crate::open::test_database;
    use crate::prepared::Prepared;

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
