//! Conversions between SQLite's values and errors and the store's.

use handoff_core::store::{IndexEntry, StoreError};
use rusqlite::ErrorCode;

/// `u64` milliseconds as the `i64` with the same bits (exact round trip).
pub(crate) fn ms_to_sql(ms: u64) -> i64 {
    i64::from_ne_bytes(ms.to_ne_bytes())
}

pub(crate) fn ms_from_sql(ms: i64) -> u64 {
    u64::from_ne_bytes(ms.to_ne_bytes())
}

/// A put's index entry as its `ix_scope` and `ix_rank` (both NULL without one). A rank past
/// `i64::MAX` is refused: stored with the same bits it would be negative and sort below every
/// other rank (the engine's ranks are millisecond timestamps, far below it).
pub(crate) fn index_to_sql(
    entry: Option<&IndexEntry>,
) -> Result<(Option<&str>, Option<i64>), StoreError> {
    let Some(entry) = entry else {
        return Ok((None, None));
    };
    let rank = i64::try_from(entry.rank).map_err(|_| {
        StoreError::Backend(format!(
            "index rank {} is past i64::MAX, the most this store keeps",
            entry.rank
        ))
    })?;
    Ok((Some(entry.scope.as_str()), Some(rank)))
}

pub(crate) fn rank_from_sql(rank: i64) -> Result<u64, StoreError> {
    u64::try_from(rank).map_err(|_| StoreError::Backend(format!("corrupt row: index rank {rank}")))
}

pub(crate) fn version_from_sql(version: i64) -> Result<u64, StoreError> {
    u64::try_from(version)
        .map_err(|_| StoreError::Backend(format!("corrupt row: version {version}")))
}

pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

pub(crate) fn sql_err(e: rusqlite::Error) -> StoreError {
    if is_busy(&e) {
        return StoreError::Unavailable(format!(
            "sqlite: another connection held the database lock past the busy timeout ({e})"
        ));
    }
    match e.sqlite_error_code() {
        Some(ErrorCode::TooBig) => StoreError::TooLarge(format!("sqlite: {e}")),
        _ => StoreError::Backend(format!("sqlite: {e}")),
    }
}

pub(crate) fn with_context(e: StoreError, context: &str) -> StoreError {
    match e {
        StoreError::Unavailable(m) => StoreError::Unavailable(format!("{context}: {m}")),
        StoreError::TooLarge(m) => StoreError::TooLarge(format!("{context}: {m}")),
        StoreError::Backend(m) => StoreError::Backend(format!("{context}: {m}")),
        other => other,
    }
}
