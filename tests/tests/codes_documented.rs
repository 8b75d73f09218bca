//! The table of error codes in `handoff_core::codes`' module docs
//! (`shared/handoff-core/src/codes.rs`, the registry's own file) lists exactly the
//! registry's codes (`handoff_core::codes::ALL`), each with the status it is answered with.

use handoff_core::codes::{ALL, Code};

/// Where the table lives, relative to this crate.
const TABLE_FILE: &str = "shared/handoff-core/src/codes.rs";

/// `(code, status)` of every code named in the first column of the table under the
/// module docs' "# Every code" heading; the status is `None` for rows without one
/// (in-stream only).
fn documented() -> Vec<(String, Option<u16>)> {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/handoff-core/src/codes.rs"
    ))
    .expect(TABLE_FILE);
    // The module docs as markdown: every `//!` line, its marker removed.
    let docs: String = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .flat_map(|l| [l, "\n"])
        .collect();
    let table = docs
        .split("\n# Every code\n")
        .nth(1)
        .unwrap_or_else(|| panic!("a \"# Every code\" section in {TABLE_FILE}'s module docs"));
    let mut rows = Vec::new();
    for line in table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (names, status) = (cells[1], cells[2]);
        let status = status
            .split_whitespace()
            .next()
            .and_then(|s| s.parse().ok());
        for name in names.split(',').map(str::trim) {
            if let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
                rows.push((name.to_owned(), status));
            }
        }
    }
    rows
}

#[test]
fn every_registered_code_is_documented_with_its_status_and_nothing_else_is() {
    let rows = documented();
    let missing: Vec<&str> = ALL
        .iter()
        .filter(|c| !rows.iter().any(|(name, _)| name == c.name))
        .map(|c| c.name)
        .collect();
    assert!(
        missing.is_empty(),
        "codes missing from the table in {TABLE_FILE}: {missing:?}"
    );
    for (name, status) in &rows {
        let code = Code::named(name).unwrap_or_else(|| {
            panic!("{TABLE_FILE}'s table lists {name}, which is not registered")
        });
        if let Some(status) = status {
            assert_eq!(
                *status, code.status,
                "{name}'s status in {TABLE_FILE}'s table"
            );
        }
    }
}
