//! The starter is a template a user copies out of the repository: copied to a temporary
//! directory the way its crate docs say (its `../../shared/` paths pointed at this clone), it
//! builds on its own, and its Lambda builds resolve the vendored `lambda_runtime_api_client`
//! (TCP_NODELAY), not the one on crates.io.
//!
//! The copy's build directory is `target/starter-copy` (its own, so it never waits on the
//! workspace's lock, and kept between runs); the repository's `Cargo.lock` and
//! `rust-toolchain.toml` go along, so it resolves offline to the versions tested here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

/// Copies `from` into `to`, leaving out build output (Worker bundles, wrangler's state).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    for entry in std::fs::read_dir(from).expect("read the starter") {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name();
        if ["build", ".wrangler", "node_modules", "target"]
            .iter()
            .any(|skip| name == *skip)
        {
            continue;
        }
        let path = entry.path();
        if entry.file_type().expect("its type").is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).expect("copy a file");
        }
    }
}

/// The starter, copied as its crate docs say: every `../../shared/` pointed at this clone.
fn copied_starter(dir: &Path) {
    let repo = repo();
    copy_tree(&repo.join("functions/starter"), dir);
    for file in ["Cargo.lock", "rust-toolchain.toml"] {
        std::fs::copy(repo.join(file), dir.join(file)).expect("copy from the repository");
    }
    let shared = format!("{}/shared/", repo.display());
    for file in ["Cargo.toml", ".cargo/config.toml", "wrangler.toml"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("the starter's file");
        assert!(
            text.contains("../../shared/"),
            "{file} no longer names ../../shared/: update the copying instructions"
        );
        std::fs::write(&path, text.replace("../../shared/", &shared)).expect("rewrite it");
    }
}

/// `cargo <args>` in the copy, offline, with the copy's own build directory.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    // Through rustup's proxy, so the copied rust-toolchain.toml picks the toolchain.
    let output = Command::new("cargo")
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo().join("target/starter-copy"))
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo {args:?} in the copy failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_copy_of_the_starter_builds_outside_the_workspace_with_the_patched_lambda_client() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("my-agent");
    copied_starter(&dir);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        !manifest.contains(".workspace") && !manifest.contains("workspace = true"),
        "the starter inherits from the workspace, so a copy cannot build"
    );

    // The Lambda host's Runtime API client is the vendored one (a path, not crates.io).
    let tree = cargo(
        &dir,
        &["tree", "-i", "lambda_runtime_api_client", "-e", "normal"],
    );
    let tree = String::from_utf8_lossy(&tree.stdout);
    let vendored = repo().join("shared/vendored/lambda_runtime_api_client");
    let first = tree.lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("({})", vendored.display())),
        "lambda_runtime_api_client is not the vendored copy:\n{tree}"
    );

    // Builds as a user's crate: default features (the local server and Lambda), binaries too.
    cargo(&dir, &["check", "--bins", "--lib"]);
    let lock = std::fs::read_to_string(dir.join("Cargo.lock")).expect("the copy's Cargo.lock");
    let entry = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"lambda_runtime_api_client\""))
        .expect("lambda_runtime_api_client in the copy's Cargo.lock");
    assert!(
        !entry.contains("source ="),
        "the lock takes lambda_runtime_api_client from a registry:\n{entry}"
    );
}
