//! The README's table of error codes lists exactly the registry's codes
//! (`handoff_core::codes::ALL`), each with the status it is answered with.

use handoff_core::codes::{ALL, Code};

/// `(code, status)` of every code named in the first column of the README's
/// "Error codes" table; the status is `None` for rows without one (in-stream only).
fn documented() -> Vec<(String, Option<u16>)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let table = readme
        .split("### Error codes")
        .nth(1)
        .expect("an \"### Error codes\" section");
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
        "codes missing from the README's table: {missing:?}"
    );
    for (name, status) in &rows {
        let code = Code::named(name)
            .unwrap_or_else(|| panic!("the README lists {name}, which is not registered"));
        if let Some(status) = status {
            assert_eq!(*status, code.status, "{name}'s status in the README");
        }
    }
}
