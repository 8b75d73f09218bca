//! The README stays a five-minute read whose code is real: at most 250 lines, none over 160
//! characters outside code blocks, its "Your own agent" block the compiled example
//! `shared/handoff/examples/own_agent.rs` word for word, its `[patch.crates-io]` entry the
//! workspace's own, and every `docs/` page it links to present.

use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The fenced blocks opened with "```{lang}", in order.
fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    markdown
        .split(open.as_str())
        .skip(1)
        .map(|rest| &rest[..rest.find("```\n").expect("a closed block")])
        .collect()
}

#[test]
fn the_readme_is_short_and_its_lines_fit() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines (at most 250)");
    let mut in_code = false;
    for (n, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            let width = line.chars().count();
            assert!(width <= 160, "README.md:{}: {width} characters", n + 1);
        }
    }
    // The first two lines of commands are the project's contract with CI and newcomers.
    let first = blocks(&readme, "sh")[0];
    assert!(first.starts_with("make dev "), "{first}");
    assert!(
        first
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("make test ")
    );
}

#[test]
fn the_own_agent_block_is_the_compiled_example() {
    let readme = read("README.md");
    let example = read("shared/handoff/examples/own_agent.rs");
    let rust = blocks(&readme, "rust");
    assert!(
        rust.contains(&example.as_str()),
        "README.md's \"Your own agent\" block differs from shared/handoff/examples/own_agent.rs: \
         copy the file into the README"
    );
}

#[test]
fn the_readme_carries_the_workspace_patch() {
    let patch_of = |toml: &str| -> String {
        let section = toml
            .split("[patch.crates-io]\n")
            .nth(1)
            .expect("a [patch.crates-io] section");
        let line = section
            .lines()
            .find(|l| l.starts_with("lambda_runtime_api_client"))
            .expect("the lambda_runtime_api_client patch");
        // The same crate, whatever the path's prefix: `shared/vendored/...` from the root.
        let at = line.find("shared/vendored/").expect("the vendored copy");
        line[at..].to_owned()
    };
    let workspace = patch_of(&read("Cargo.toml"));
    let readme = read("README.md");
    let in_readme = blocks(&readme, "toml")
        .into_iter()
        .find(|b| b.contains("[patch.crates-io]"))
        .expect("a toml block with the patch in README.md");
    assert_eq!(patch_of(in_readme), workspace);
    assert_eq!(
        patch_of(&read("functions/starter/.cargo/config.toml")),
        workspace
    );
}

#[test]
fn every_linked_doc_exists_and_its_lines_fit() {
    let readme = read("README.md");
    let mut linked = 0;
    for part in readme.split("](docs/").skip(1) {
        let name = &part[..part.find(')').expect("a closed link")];
        let doc = read(&format!("docs/{name}"));
        linked += 1;
        let mut in_code = false;
        for (n, line) in doc.lines().enumerate() {
            if line.starts_with("```") {
                in_code = !in_code;
            } else if !in_code && !line.starts_with('|') {
                let width = line.chars().count();
                assert!(width <= 160, "docs/{name}:{}: {width} characters", n + 1);
            }
        }
    }
    assert!(linked >= 10, "README.md links {linked} docs/ pages");
}
