//! No Rust source file of the workspace is over [`MAX_LINES`] lines, tests included: a file
//! that long does more than one thing, and is split along its seams instead.
//!
//! Files over the limit when this check was added, in areas this change did not own, are
//! listed in [`KNOWN`]; a new long file fails, and so does a listed one that is back under
//! the limit (delete its line).

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

/// `(path from the workspace root, why it is not split yet)`.
const KNOWN: &[(&str, &str)] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace above tests/")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, skipping build output, npm packages and vendored code.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "target" | "node_modules" | "vendored") && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_rust_file_is_over_the_limit() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["shared", "functions", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "the walk found the sources: {}",
        files.len()
    );
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let lines = text.lines().count();
        if lines > MAX_LINES {
            let path = file.strip_prefix(&root).expect("under the workspace");
            long.push((path.to_string_lossy().replace('\\', "/"), lines));
        }
    }
    let new: Vec<_> = long
        .iter()
        .filter(|(path, _)| !KNOWN.iter().any(|(known, _)| known == path))
        .collect();
    let gone: Vec<_> = KNOWN
        .iter()
        .filter(|(known, _)| !long.iter().any(|(path, _)| path == known))
        .map(|(known, _)| known)
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "over {MAX_LINES} lines: {new:?}\nlisted but no longer over (delete from KNOWN): {gone:?}"
    );
}
