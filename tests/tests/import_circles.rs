//! No crate of the workspace has an import circle between its source files.
//!
//! How it is checked (no compiler needed, so it runs in milliseconds):
//! - Every crate's `src/` tree is read; `src/bin/*.rs` are crates of their own.
//! - A file depends on another when it names an item of it: a `use` declaration or a
//!   path written in code (`crate::a::B`, `super::B`, `self::b::C`, `child::f`, or a
//!   path through a module it imported). Comments and string literals are ignored.
//! - A path is followed to the file that defines its item: a name a module only imports
//!   (`pub use history::Ids`, or a private `use` its children see through `super::`) is
//!   followed to where that import points, so a re-export is no shortcut around a circle.
//! - A file's use of its own ancestor (a split-out child naming `super::Engine`) or
//!   descendant (a `mod.rs` calling its child) is not counted: a module and the files it
//!   is split into are one unit. Circles between any other files are.
//! - The strongly connected components of that graph (Tarjan) must all be single files.
//!
//! Circles known when the check was added are listed in [`KNOWN`], each with the crate's
//! files it joins; a new circle fails, and so does a listed one that is gone (delete its
//! line).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Module path of a file inside its crate (`["engine", "claim"]`; the root is `[]`).
type Module = Vec<String>;

/// Circles present when this check was added, in crates this change did not own:
/// `(crate directory, sorted files of the circle)`.
const KNOWN: &[(&str, &[&str])] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace above tests/")
        .to_path_buf()
}

/// The crate directories of the workspace (its `members`).
fn crate_dirs() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("a members list in the workspace's Cargo.toml");
    members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// One crate: its modules, each with its file and its text without comments and strings.
struct Crate {
    files: BTreeMap<Module, (String, String)>,
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crates under one crate directory: the library (or binary) tree of `src/`, and
/// each `src/bin/*.rs` (or `src/bin/*/main.rs`) tree.
fn crates_in(dir: &str) -> Vec<Crate> {
    let src = workspace().join(dir).join("src");
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut crates: BTreeMap<String, Crate> = BTreeMap::new();
    for path in paths {
        let rel = path.strip_prefix(&src).expect("under src/");
        let mut segments: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let root = if segments[0] == "bin" {
            segments.remove(0);
            let bin = segments.remove(0);
            format!("bin/{bin}")
        } else {
            String::from("lib")
        };
        if matches!(
            segments.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            segments.pop();
        }
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let name = format!("src/{}", rel.to_string_lossy());
        crates
            .entry(root)
            .or_insert_with(|| Crate {
                files: BTreeMap::new(),
            })
            .files
            .insert(segments, (name, code_only(&text)));
    }
    crates.into_values().collect()
}

/// `text` with comments removed and string and char literals emptied (newlines kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let newlines = |s: &[u8]| "\n".repeat(s.iter().filter(|&&c| c == b'\n').count());
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, start) = (0, i);
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push_str(&newlines(&b[start..i]));
        } else if b[i] == b'r' && !ident_before && matches!(b.get(i + 1), Some(b'"' | b'#')) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + 2 + hashes;
            let end = text[body..]
                .find(&close)
                .map_or(b.len(), |n| body + n + close.len());
            out.push_str("\"\"");
            out.push_str(&newlines(&b[i..end]));
            i = end;
        } else if b[i] == b'"' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            out.push_str(&newlines(&b[start..i.min(b.len())]));
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let rest = &text[i + 1..];
            let len = if rest.starts_with('\\') {
                rest.find('\'').map(|n| n + 1)
            } else {
                rest.chars()
                    .next()
                    .filter(|c| rest[c.len_utf8()..].starts_with('\''))
                    .map(|c| c.len_utf8() + 1)
            };
            match len {
                Some(len) => {
                    out.push_str("' '");
                    i += 1 + len;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = text[i..].chars().next().expect("a char");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The paths of a `use` tree (`a::{b, c::{d as e}}` gives `a::b` and `a::c::d`), each
/// with the name it binds (`None` for a glob).
fn use_paths(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, Option<String>)>) {
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (i, c) in tree.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&tree[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&tree[start..]);
        for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(open) = part.find('{') {
                let mut path = prefix.to_vec();
                path.extend(segments(part[..open].trim_end_matches(':')));
                walk(&path, &part[open + 1..part.rfind('}').expect("}")], out);
            } else {
                let (path, alias) = match part.split_once(" as ") {
                    Some((path, alias)) => (path, Some(alias.trim().to_owned())),
                    None => (part, None),
                };
                let mut full = prefix.to_vec();
                full.extend(segments(path));
                let bound = match full.last().map(String::as_str) {
                    Some("*") => None,
                    Some("self") => full.get(full.len().wrapping_sub(2)).cloned(),
                    last => alias.or(last.map(str::to_owned)),
                };
                if full.last().is_some_and(|s| s == "self") {
                    full.pop();
                }
                out.push((full, bound));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &[],
        &tree.split_whitespace().collect::<Vec<_>>().join(" "),
        &mut out,
    );
    out
}

fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// How many inline modules (`mod tests { .. }`) enclose byte `at` of `code`.
fn inline_depth(code: &str, at: usize) -> usize {
    let mut depth = 0;
    let mut from = 0;
    while let Some(found) = code[from..].find("mod ") {
        let start = from + found;
        from = start + 4;
        if start > at {
            break;
        }
        let ident_before = code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let head: String = code[from..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || c.is_whitespace())
            .collect();
        let brace = from + head.len();
        if ident_before || head.trim().is_empty() || !code[brace..].starts_with('{') {
            continue;
        }
        let mut open = 0;
        let end = code[brace..]
            .char_indices()
            .find(|&(_, c)| {
                open += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                open == 0
            })
            .map_or(code.len(), |(i, _)| brace + i);
        if start < at && at < end {
            depth += 1;
        }
    }
    depth
}

/// The module a path written in `module` (inside `depth` inline modules) starts from,
/// with the rest of the path; `None` for a path into another crate.
fn absolute(krate: &Crate, module: &Module, path: &[String], depth: usize) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" | "super" => {
            let (mut base, mut depth) = (module.clone(), depth);
            let mut path = path;
            while let Some((head, tail)) = path.split_first() {
                match head.as_str() {
                    "self" => {}
                    "super" if depth > 0 => depth -= 1,
                    "super" => {
                        base.pop();
                    }
                    _ => break,
                }
                path = tail;
            }
            base.extend(path.iter().cloned());
            Some(base)
        }
        _ => {
            let mut child = module.clone();
            child.push(first.clone());
            krate.files.contains_key(&child).then(|| {
                child.extend(rest.iter().cloned());
                child
            })
        }
    }
}

/// Each file's dependencies: the files defining the items it names, with a line each.
fn edges(krate: &Crate) -> BTreeMap<Module, BTreeMap<Module, usize>> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    // What each module's own (top-level) `use` declarations bind, as absolute paths.
    let mut imports: HashMap<Module, HashMap<String, Vec<String>>> = HashMap::new();
    let mut named: Vec<(Module, Vec<String>, usize)> = Vec::new();
    for (module, (_, code)) in &krate.files {
        let line = |at: usize| code[..at].matches('\n').count() + 1;
        let mut from = 0;
        while let Some(found) = code[from..].find("use ") {
            let at = from + found;
            from = at + 4;
            if at > 0 && code[..at].ends_with(is_ident) {
                continue;
            }
            let Some(end) = code[from..].find(';') else {
                break;
            };
            let depth = inline_depth(code, at);
            for (path, bound) in use_paths(&code[from..from + end]) {
                let Some(target) = absolute(krate, module, &path, depth) else {
                    continue;
                };
                if let (0, Some(bound)) = (depth, bound) {
                    imports
                        .entry(module.clone())
                        .or_default()
                        .insert(bound, target.clone());
                }
                named.push((module.clone(), target, line(at)));
            }
        }
    }
    for (module, (_, code)) in &krate.files {
        let line = |at: usize| code[..at].matches('\n').count() + 1;
        let mut at = 0;
        while at < code.len() {
            let start = at;
            let c = code[at..].chars().next().expect("a char");
            if !is_ident(c)
                || (start > 0
                    && (code[..start].ends_with(is_ident) || code[..start].ends_with("::")))
            {
                at += c.len_utf8();
                continue;
            }
            let len = code[start..]
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(code.len() - start);
            at = start + len;
            let text = code[start..at].trim_end_matches(':');
            if !text.contains("::") {
                continue;
            }
            let path: Vec<String> = segments(text).collect();
            let depth = inline_depth(code, start);
            let target = absolute(krate, module, &path, depth).or_else(|| {
                let via = imports.get(module)?.get(&path[0])?;
                Some(via.iter().chain(&path[1..]).cloned().collect())
            });
            if let Some(target) = target {
                named.push((module.clone(), target, line(start)));
            }
        }
    }
    let mut graph: BTreeMap<Module, BTreeMap<Module, usize>> = BTreeMap::new();
    for (module, path, line) in named {
        let Some(target) = defining(krate, &imports, path) else {
            continue;
        };
        let related = target.starts_with(&module) || module.starts_with(&target);
        if !related {
            graph
                .entry(module)
                .or_default()
                .entry(target)
                .or_insert(line);
        }
    }
    graph
}

/// The file defining the item at `path`: the longest prefix that is a module, followed
/// through that module's imports when the next name is one of them.
fn defining(
    krate: &Crate,
    imports: &HashMap<Module, HashMap<String, Vec<String>>>,
    mut path: Vec<String>,
) -> Option<Module> {
    for _ in 0..32 {
        let len = (0..=path.len())
            .rev()
            .find(|&n| krate.files.contains_key(&path[..n]))?;
        let module = path[..len].to_vec();
        match path
            .get(len)
            .and_then(|name| imports.get(&module)?.get(name))
        {
            Some(target) if *target != path[..=len] => {
                path = target.iter().chain(&path[len + 1..]).cloned().collect();
            }
            _ => return Some(module),
        }
    }
    None
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<Module, BTreeMap<Module, usize>>) -> Vec<Vec<Module>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<Module, BTreeMap<Module, usize>>,
        index: HashMap<&'g Module, (usize, usize)>,
        stack: Vec<&'g Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g Module) -> usize {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            let mut low = n;
            for w in self.graph.get(v).into_iter().flat_map(BTreeMap::keys) {
                low = match self.index.get(w) {
                    None => low.min(self.visit(w)),
                    Some(&(i, _)) if self.stack.contains(&w) => low.min(i),
                    Some(_) => low,
                };
            }
            self.index.insert(v, (n, low));
            if low == n {
                let at = self
                    .stack
                    .iter()
                    .rposition(|m| *m == v)
                    .expect("on the stack");
                let component: Vec<Module> = self.stack.drain(at..).cloned().collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
            low
        }
    }
    let mut walk = Walk {
        graph,
        index: HashMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let mut found = BTreeSet::new();
    let mut report = String::new();
    for dir in crate_dirs() {
        for krate in crates_in(&dir) {
            let graph = edges(&krate);
            for circle in circles(&graph) {
                let name = |m: &Module| krate.files[m].0.clone();
                let files: BTreeSet<String> = circle.iter().map(name).collect();
                report.push_str(&format!("{dir}: {files:?}\n"));
                for from in &circle {
                    for (to, line) in graph.get(from).into_iter().flatten() {
                        if circle.contains(to) {
                            report.push_str(&format!(
                                "    {}:{line} -> {}\n",
                                name(from),
                                name(to)
                            ));
                        }
                    }
                }
                found.insert((dir.clone(), files.into_iter().collect::<Vec<_>>()));
            }
        }
    }
    let known: BTreeSet<(String, Vec<String>)> = KNOWN
        .iter()
        .map(|(dir, files)| {
            (
                (*dir).to_owned(),
                files.iter().map(|f| (*f).to_owned()).collect(),
            )
        })
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "new circles: {new:?}\nlisted circles that are gone (delete them from KNOWN): {gone:?}\n\
         every circle, with a line of each import in it:\n{report}"
    );
}

/// The check itself finds a circle, through a re-export and a `super::` path, and does not
/// count a split-out child's use of its parent.
#[test]
fn a_circle_through_a_reexport_is_found_and_a_parent_is_not_one() {
    let krate = Crate {
        files: [
            ("", "mod engine; mod context;"),
            (
                "engine",
                "mod history; pub(crate) use history::Ids; struct Engine; fn run() { history::merge() }",
            ),
            (
                "engine/history",
                "use super::Engine; use crate::context::Log; pub(crate) struct Ids;",
            ),
            ("context", "pub struct Log; fn f() { let _ = crate::engine::Ids; }"),
        ]
        .into_iter()
        .map(|(path, code)| {
            let module: Module = segments(&path.replace('/', "::")).collect();
            (module, (format!("src/{path}.rs"), code_only(code)))
        })
        .collect(),
    };
    let graph = edges(&krate);
    let module = |p: &str| -> Module { segments(p).collect() };
    let mut found = circles(&graph);
    found.iter_mut().for_each(|c| c.sort());
    assert_eq!(
        found,
        vec![vec![module("context"), module("engine::history")]]
    );
    assert!(
        !graph[&module("engine::history")].contains_key(&module("engine")),
        "a child's `super::` is no dependency"
    );
}

#[test]
fn comments_and_strings_name_nothing() {
    let code =
        code_only("let a = \"crate::x\"; // crate::y\n/* crate::z */ let c = 'a'; r#\"crate::w\"#");
    assert!(!code.contains("crate::"), "{code}");
    assert_eq!(code.matches('\n').count(), 1);
}
