//! No source file of the repository is over [`MAX_LINES`] lines, in any language and tests
//! included: a file that long does more than one thing, and is split along its seams instead.
//!
//! "Source" is what we write: Rust, JavaScript and TypeScript, Python, shell, TOML, YAML,
//! JSON settings, Markdown, HTML and CSS, Makefiles and extensionless scripts (`#!`), such as
//! `.ci/run`. Not counted: build output and installed packages ([`SKIPPED_DIRS`]), code we did
//! not write or generate ([`SKIPPED_PATHS`]: vendored crates, the console's committed bundle),
//! lockfiles, and data (fixtures and corpora, [`SKIPPED_DIRS`]).
//!
//! A file that has to stay long, because it is data, is listed in [`KNOWN`] with the
//! reason; a new long file fails, and so does a listed one that is back under the limit
//! (delete its line).

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

/// `(path from the repository root, why it is long)`.
const KNOWN: &[(&str, &str)] = &[];

/// Directories skipped wherever they are: build output, installed packages, data.
const SKIPPED_DIRS: &[&str] = &[
    "target",
    "node_modules",
    // worker-build's output (functions/*/build), gitignored.
    "build",
    "dist",
    // Recorded wire data the tests replay (JSON, SSE, PEM keys), not code.
    "fixtures",
    "sample-corpus",
];

/// Paths skipped (from the repository root): code we did not write or that is generated.
const SKIPPED_PATHS: &[&str] = &[
    // Upstream's lambda_runtime_api_client, patched in one line.
    "shared/vendored",
    // The console's bundle, built from shared/handoff-console/web and committed.
    "shared/handoff-console/assets",
    // Test output (gitignored).
    "tests/out",
];

/// Extensions of the languages we write.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "mjs", "cjs", "js", "jsx", "ts", "tsx", "py", "sh", "toml", "yaml", "yml", "json", "md",
    "html", "css",
];

/// Lockfiles: written by cargo and npm.
const LOCKFILES: &[&str] = &["Cargo.lock", "package-lock.json"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository above tests/")
        .to_path_buf()
}

/// `path` from the repository root, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    let path = path.strip_prefix(root).expect("under the repository");
    path.to_string_lossy().replace('\\', "/")
}

fn is_source(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if LOCKFILES.contains(&name) {
        return false;
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some(extension) => SOURCE_EXTENSIONS.contains(&extension),
        // Makefiles, and scripts without an extension (`.ci/run`).
        None => {
            name == "Makefile" || std::fs::read(path).is_ok_and(|bytes| bytes.starts_with(b"#!"))
        }
    }
}

/// Every source file under `dir` (see the module docs for what is skipped).
fn source_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            // Hidden directories are tools' (.git, .venv, .wrangler), except CI's own.
            let hidden = name.starts_with('.') && name != ".ci";
            let skipped = SKIPPED_DIRS.contains(&name)
                || SKIPPED_PATHS.contains(&relative(root, &path).as_str());
            if !hidden && !skipped {
                source_files(root, &path, out);
            }
        } else if is_source(&path) {
            out.push(path);
        }
    }
}

fn all_sources() -> (PathBuf, Vec<String>) {
    let root = repository();
    let mut files = Vec::new();
    source_files(&root, &root, &mut files);
    let files = files.iter().map(|file| relative(&root, file)).collect();
    (root, files)
}

#[test]
fn no_source_file_is_over_the_limit() {
    let (root, files) = all_sources();
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(&file)).expect("a readable text file");
        let lines = text.lines().count();
        if lines > MAX_LINES {
            long.push((file, lines));
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

/// The walk reaches every language it claims to check, and none of what it skips: without
/// this, a wrong skip rule would pass the check above by finding nothing.
#[test]
fn the_walk_finds_every_kind_of_source_and_skips_the_rest() {
    let (_, files) = all_sources();
    assert!(
        files.len() > 300,
        "the walk found the sources: {}",
        files.len()
    );
    for expected in [
        "shared/handoff/src/lib.rs",
        "tests/node/lib/devserver.mjs",
        "shared/handoff-console/web/build.mjs",
        "Cargo.toml",
        "infra/template.yaml",
        "README.md",
        "docs/demo.md",
        "Makefile",
        ".ci/run",
    ] {
        assert!(files.iter().any(|f| f == expected), "{expected} is checked");
    }
    for skipped in [
        "Cargo.lock",
        "shared/vendored/",
        "shared/handoff-console/assets/",
        "node_modules/",
        "tests/fixtures/",
        "target/",
    ] {
        let found = files
            .iter()
            .find(|f| f.starts_with(skipped) || f.contains(&format!("/{skipped}")));
        assert!(found.is_none(), "{skipped} is skipped, found {found:?}");
    }
}
