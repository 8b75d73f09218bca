//! One row's statements that both write paths use (the general one in `write` and the
//! single-statement conditional one in `conditional`): its live version and its delete.
//! They sit below both so that neither path imports from the other's module for them.

use handoff_core::store::{Item, StoreError, is_live};
use rusqlite::{OptionalExtension, params};

use crate::prepared::Prepared;
use crate::sql::{ms_from_sql, sql_err, version_from_sql};

const SELECT_VERSION: &str =
    "SELECT version, expires_at_ms FROM items WHERE partition = ?1 AND key = ?2";
pub(crate) const DELETE: &str = "DELETE FROM items WHERE partition = ?1 AND key = ?2";

/// The row's version and expiry if it is live at `now_ms` (the item carries no key or value).
pub(crate) fn live_version(
    p: &mut Prepared<'_>,
    partition: &str,
    key: &str,
    now_ms: u64,
) -> Result<Option<Item>, StoreError> {
    let row = p
        .get(SELECT_VERSION)?
        .query_row(params![partition, key], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Option<i64>>(1)?))
        })
        .optional()
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
