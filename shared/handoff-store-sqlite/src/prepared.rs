//! The statements a store thread runs, prepared once per connection and kept for its life.
//!
//! rusqlite's `prepare_cached` trims and hashes the SQL text, allocates a key and clears
//! the bindings on every use (about 1,300 instructions, some 45 times per engine turn under
//! the load benchmark); the store's statements are a few fixed constants, so a thread keeps
//! each one and finds it by the constant's address. A connection shared between callers
//! (an inline reader) cannot keep statements beside itself; its callers borrow them from
//! the connection's own cache instead, for one call.

use std::panic::{self, AssertUnwindSafe};
use std::ptr;

use handoff_core::store::StoreError;
use rusqlite::{CachedStatement, Connection, Statement};

use crate::sql::sql_err;

/// A connection and the statements prepared on it.
pub(crate) struct Prepared<'c> {
    conn: &'c Connection,
    statements: Vec<(&'static str, Kept<'c>)>,
    /// Statements come from (and go back to) the connection's cache.
    from_cache: bool,
}

enum Kept<'c> {
    Own(Statement<'c>),
    Cached(CachedStatement<'c>),
}

impl<'c> Prepared<'c> {
    /// Statements prepared on first use and kept for as long as this value lives.
    pub(crate) fn new(conn: &'c Connection) -> Self {
        Self {
            conn,
            statements: Vec::new(),
            from_cache: false,
        }
    }

    /// Statements taken from the connection's cache on first use and returned to it when this
    /// value is dropped: for a connection that outlives any one caller's `Prepared`.
    pub(crate) fn from_cache(conn: &'c Connection) -> Self {
        Self {
            from_cache: true,
            ..Self::new(conn)
        }
    }

    pub(crate) fn conn(&self) -> &'c Connection {
        self.conn
    }

    /// The statement for `sql`, prepared on its first use. Every caller binds all of its
    /// parameters, and rusqlite resets a statement after each `execute` and query.
    pub(crate) fn get(&mut self, sql: &'static str) -> Result<&mut Statement<'c>, StoreError> {
        // By address (one comparison per statement); by text when the compiler emitted a
        // constant at two addresses.
        let found = self
            .statements
            .iter()
            .position(|(known, _)| ptr::eq(*known, sql))
            .or_else(|| self.statements.iter().position(|(known, _)| *known == sql));
        let index = match found {
            Some(index) => index,
            None => {
                let statement = if self.from_cache {
                    Kept::Cached(self.conn.prepare_cached(sql).map_err(sql_err)?)
                } else {
                    Kept::Own(self.conn.prepare(sql).map_err(sql_err)?)
                };
                self.statements.push((sql, statement));
                self.statements.len() - 1
            }
        };
        Ok(match &mut self.statements[index].1 {
            Kept::Own(statement) => statement,
            Kept::Cached(statement) => statement,
        })
    }

    /// Runs a statement without parameters or results (`BEGIN`, `SAVEPOINT`, ...).
    pub(crate) fn exec(&mut self, sql: &'static str) -> Result<(), StoreError> {
        self.get(sql)?.execute([]).map(drop).map_err(sql_err)
    }

    /// Runs `work` on this connection and leaves it as `work` found it: a panic is answered as
    /// an error, and a transaction `work` left open (a failed `COMMIT`, a panic between `BEGIN`
    /// and its end) is rolled back, so the connection neither pins an old snapshot nor fails
    /// its next `BEGIN`. If even that fails, the next `BEGIN` fails and its caller retries.
    pub(crate) fn contain<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| work(self)))
            .unwrap_or_else(|_| Err(StoreError::Backend("sqlite call panicked".to_owned())));
        if !self.conn.is_autocommit() {
            let _ = self.exec("ROLLBACK");
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use handoff_core::store::StoreError;
    use rusqlite::StatementStatus;

    use super::Prepared;
    use crate::open::test_database;

    const COUNT: &str = "SELECT count(*) FROM items WHERE partition = ?1";

    #[test]
    fn a_panic_inside_a_transaction_is_an_error_and_the_transaction_is_rolled_back() {
        let conn = test_database();
        let mut prepared = Prepared::new(&conn);
        let outcome: Result<(), _> = prepared.contain(|p| {
            p.exec("BEGIN").expect("begin");
            let _: i64 = p
                .get(COUNT)
                .expect("prepare")
                .query_row(["p"], |row| row.get(0))
                .expect("count");
            panic!("a read gone wrong");
        });
        assert!(
            matches!(outcome, Err(StoreError::Backend(_))),
            "{outcome:?}"
        );
        assert!(conn.is_autocommit(), "rolled back");
        prepared.exec("BEGIN").expect("the next transaction begins");
        prepared.exec("COMMIT").expect("commit");
        // Work that returns keeps its own result, and a transaction it ended stays ended.
        let rows = prepared.contain(|p| {
            p.exec("BEGIN")?;
            let rows: i64 = p
                .get(COUNT)?
                .query_row(["p"], |row| row.get(0))
                .map_err(crate::sql::sql_err)?;
            p.exec("COMMIT")?;
            Ok(rows)
        });
        assert_eq!(rows, Ok(0));
    }

    #[test]
    fn a_statement_is_prepared_once_and_reused() {
        let conn = test_database();
        let mut prepared = Prepared::new(&conn);
        for _ in 0..3 {
            let rows: i64 = prepared
                .get(COUNT)
                .expect("prepare")
                .query_row(["p"], |row| row.get(0))
                .expect("count");
            assert_eq!(rows, 0);
            prepared.exec("BEGIN").expect("begin");
            prepared.exec("COMMIT").expect("commit");
        }
        assert_eq!(prepared.statements.len(), 3, "COUNT, BEGIN, COMMIT");
        // The same text from another address is the same statement.
        let copy: &'static str = String::from(COUNT).leak();
        let statement = prepared.get(copy).expect("found by text");
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0);
        assert_eq!(prepared.statements.len(), 3);
    }
}
