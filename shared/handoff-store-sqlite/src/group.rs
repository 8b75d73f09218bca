//! Group commit: the commits queued together run in one `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint, and are acknowledged after its one `COMMIT` (one fsync).

use handoff_core::store::StoreError;

use crate::prepared::Prepared;
use crate::stats::Counters;
use crate::write::{Commit, Purger, apply};

const BEGIN: &str = "BEGIN IMMEDIATE";
const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";
const SAVEPOINT: &str = "SAVEPOINT handoff_commit";
const RELEASE: &str = "RELEASE handoff_commit";
const ROLLBACK_TO: &str = "ROLLBACK TO handoff_commit";

/// Runs `commits` in queue order in one transaction and returns each one's answer, in the same
/// order: each answer is what the commit would get if they ran one after another, and a commit
/// answered `Ok` is durable. If the transaction fails as a whole (taking the lock, `COMMIT`, an
/// error that makes SQLite roll back, a panic), nothing of the group was applied and every
/// commit answers that error. A `COMMIT` that succeeded counts in `counters.transactions`.
pub(crate) fn apply_group(
    p: &mut Prepared<'_>,
    commits: Vec<Commit>,
    purger: &mut Purger,
    counters: &Counters,
) -> Vec<Result<(), StoreError>> {
    let count = commits.len();
    // A transaction the group left open (a failed COMMIT or ROLLBACK, a panic) is rolled back
    // whole, and every commit in it answers the error.
    p.contain(|p| run_group(p, commits, purger, counters))
        .unwrap_or_else(|e| vec![Err(e); count])
}

/// `Err` means the transaction is lost (or was never started): the caller rolls back what is left.
fn run_group(
    p: &mut Prepared<'_>,
    commits: Vec<Commit>,
    purger: &mut Purger,
    counters: &Counters,
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    // Takes the write lock up front (waiting up to the busy timeout), so the conditions checked
    // below still hold when the writes land.
    p.exec(BEGIN)?;
    // A lone commit needs no savepoint: if it fails, the whole transaction is rolled back.
    let savepoints = commits.len() > 1;
    let mut answers = Vec::with_capacity(commits.len());
    let mut latest_applied: Option<u64> = None;
    for commit in commits {
        let now_ms = commit.now_ms;
        if savepoints {
            p.exec(SAVEPOINT)?;
        }
        let answer = apply(p, commit);
        if p.conn().is_autocommit() {
            // Some errors (I/O, disk full) make SQLite roll back the whole transaction.
            return Err(answer.err().unwrap_or_else(|| {
                StoreError::Backend("sqlite: the transaction ended unexpectedly".to_owned())
            }));
        }
        if savepoints {
            if answer.is_err() {
                p.exec(ROLLBACK_TO)?;
            }
            p.exec(RELEASE)?;
        }
        if answer.is_ok() {
            latest_applied = Some(latest_applied.map_or(now_ms, |latest| latest.max(now_ms)));
        }
        answers.push(answer);
    }
    let Some(now_ms) = latest_applied else {
        // Nothing to keep: release the lock without writing anything. Every answer is already
        // an error of its own; if even `ROLLBACK` fails, `apply_group` retries it.
        let _ = p.exec(ROLLBACK);
        return Ok(answers);
    };
    // Housekeeping, once per group: if it fails, the commits still stand (the statement
    // changed nothing), unless SQLite gave up the transaction.
    if purger.run(p, now_ms).is_err() && p.conn().is_autocommit() {
        return Err(StoreError::Backend(
            "sqlite: the transaction ended while purging expired rows".to_owned(),
        ));
    }
    p.exec(COMMIT)?;
    counters.transaction_committed();
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use handoff_core::store::{Condition, StoreError, Write};
    use rusqlite::Connection;

    use crate::prepared::Prepared;

    use super::apply_group;
    use crate::open::test_database;
    use crate::options::Purge;
    use crate::stats::Counters;
    use crate::write::{Commit, Purger};

    const NOW: u64 = 1_700_000_000_000;

    fn database() -> Connection {
        test_database()
    }

    fn commit(partition: &str, writes: Vec<Write>) -> Commit {
        Commit {
            partition: partition.to_owned(),
            writes,
            now_ms: NOW,
        }
    }

    fn put(key: &str, condition: Condition, value: &str) -> Write {
        Write::put(key, condition, value.as_bytes().to_vec(), None)
    }

    /// Every row as (partition, key, version, value).
    fn rows(conn: &Connection) -> Vec<(String, String, i64, String)> {
        let mut select = conn
            .prepare("SELECT partition, key, version, value FROM items ORDER BY partition, key")
            .expect("prepare");
        select
            .query_map([], |row| {
                let value: Vec<u8> = row.get(3)?;
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    String::from_utf8(value).expect("utf-8"),
                ))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    fn row(partition: &str, key: &str, version: i64, value: &str) -> (String, String, i64, String) {
        (
            partition.to_owned(),
            key.to_owned(),
            version,
            value.to_owned(),
        )
    }

    #[test]
    fn a_group_answers_as_if_its_commits_ran_one_after_another() {
        let conn = database();
        let group = vec![
            commit("p", vec![put("a", Condition::Absent, "1")]),
            // Sees the first commit of its group.
            commit("p", vec![put("a", Condition::Absent, "2")]),
            commit("p", vec![put("a", Condition::Version(1), "3")]),
            // Fails on its second write: its first write leaves no trace.
            commit(
                "p",
                vec![
                    put("b", Condition::Absent, "x"),
                    put("a", Condition::Version(1), "4"),
                ],
            ),
            commit("p", vec![Write::delete("a", Condition::Version(2))]),
            commit("p", vec![put("a", Condition::Absent, "5")]),
            commit("q", vec![put("b", Condition::Absent, "y")]),
            commit("q", vec![Write::check("b", Condition::Version(2))]),
            commit("q", vec![put("b", Condition::Always, "z")]),
        ];
        let answers = apply_group(
            &mut Prepared::new(&conn),
            group,
            &mut Purger::new(Purge::NEVER),
            &Counters::default(),
        );
        assert_eq!(
            answers,
            vec![
                Ok(()),
                Err(StoreError::ConditionFailed { index: 0 }),
                Ok(()),
                Err(StoreError::ConditionFailed { index: 1 }),
                Ok(()),
                Ok(()),
                Ok(()),
                Err(StoreError::ConditionFailed { index: 0 }),
                Ok(()),
            ]
        );
        assert!(conn.is_autocommit(), "the transaction is closed");
        assert_eq!(
            rows(&conn),
            vec![row("p", "a", 1, "5"), row("q", "b", 2, "z")]
        );
    }

    #[test]
    fn a_group_where_every_commit_fails_writes_nothing() {
        let conn = database();
        let group = vec![
            commit("p", vec![put("a", Condition::Version(1), "1")]),
            commit(
                "p",
                vec![
                    put("a", Condition::Absent, "2"),
                    Write::check("b", Condition::Version(3)),
                ],
            ),
        ];
        let answers = apply_group(
            &mut Prepared::new(&conn),
            group,
            &mut Purger::new(Purge::NEVER),
            &Counters::default(),
        );
        assert_eq!(
            answers,
            vec![
                Err(StoreError::ConditionFailed { index: 0 }),
                Err(StoreError::ConditionFailed { index: 1 }),
            ]
        );
        assert!(conn.is_autocommit());
        assert!(rows(&conn).is_empty());
    }

    #[test]
    fn a_lone_failing_commit_leaves_no_trace() {
        let conn = database();
        let group = vec![commit(
            "p",
            vec![
                put("a", Condition::Absent, "1"),
                Write::check("b", Condition::Version(1)),
            ],
        )];
        assert_eq!(
            apply_group(
                &mut Prepared::new(&conn),
                group,
                &mut Purger::new(Purge::NEVER),
                &Counters::default()
            ),
            vec![Err(StoreError::ConditionFailed { index: 1 })]
        );
        assert!(conn.is_autocommit());
        assert!(rows(&conn).is_empty());
    }

    #[test]
    fn when_the_transaction_fails_every_commit_answers_its_error() {
        let conn = database();
        // A transaction already open makes `BEGIN IMMEDIATE` fail.
        conn.execute_batch("BEGIN").expect("begin");
        let group = vec![
            commit("p", vec![put("a", Condition::Absent, "1")]),
            commit("p", vec![put("b", Condition::Absent, "2")]),
        ];
        let answers = apply_group(
            &mut Prepared::new(&conn),
            group,
            &mut Purger::new(Purge::NEVER),
            &Counters::default(),
        );
        assert_eq!(answers.len(), 2);
        assert!(
            answers
                .iter()
                .all(|answer| matches!(answer, Err(StoreError::Backend(_)))),
            "{answers:?}"
        );
        assert_eq!(answers[0], answers[1]);
        assert!(conn.is_autocommit(), "rolled back");
        assert!(rows(&conn).is_empty());
    }

    #[test]
    fn a_group_purges_once_with_its_latest_clock() {
        let conn = database();
        let hour = 60 * 60 * 1000;
        let expiring =
            |key: &str, at: u64| Write::put(key, Condition::Absent, b"old".to_vec(), Some(at));
        let seed = vec![commit(
            "p",
            vec![expiring("x", NOW - 3 * hour), expiring("y", NOW - 2 * hour)],
        )];
        assert_eq!(
            apply_group(
                &mut Prepared::new(&conn),
                seed,
                &mut Purger::new(Purge::NEVER),
                &Counters::default()
            ),
            vec![Ok(())]
        );
        let purge = Purge {
            after_ms: Some(hour),
            batch: 100,
        };
        let mut early = commit("q", vec![put("a", Condition::Absent, "1")]);
        early.now_ms = NOW - 2 * hour - 1; // alone, it would purge nothing
        let late = commit("q", vec![put("b", Condition::Absent, "2")]);
        let failed = Commit {
            now_ms: NOW + 10 * hour, // fails, so its clock does not count
            ..commit("q", vec![put("a", Condition::Absent, "3")])
        };
        assert_eq!(
            apply_group(
                &mut Prepared::new(&conn),
                vec![early, late, failed],
                &mut Purger::new(purge),
                &Counters::default()
            ),
            vec![
                Ok(()),
                Ok(()),
                Err(StoreError::ConditionFailed { index: 0 })
            ]
        );
        // `late` (NOW) purges both rows expired at least an hour before NOW.
        assert_eq!(
            rows(&conn),
            vec![row("q", "a", 1, "1"), row("q", "b", 1, "2")]
        );
    }
}
