//! The shape of the code, read from its `use` lines: the top-level modules form
//! no cycle, the core never reaches for a front end, and no panel's state
//! imports a view (STYLE.md, "Architecture we want").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every file under src with its path relative to src and its code outside
/// `#[cfg(test)]` modules.
fn files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            // Code only: outside test modules, without comments.
            let code = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or("")
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (rel, code)
        })
        .collect()
}

/// The `crate::x` modules a file names.
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let tail = &rest[i + 7..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
        rest = &rest[i + 7..];
    }
    out
}

fn top(rel: &str) -> String {
    rel.split('/')
        .next()
        .unwrap()
        .trim_end_matches(".rs")
        .to_owned()
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, code) in files() {
        let from = top(&rel);
        if from == "lib" || from == "main" {
            continue;
        }
        for to in crate_refs(&code) {
            if to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if !done.insert(node.to_owned()) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(node, &edges, &mut path, &mut done) {
            panic!("a cycle between modules: {}\n{edges:#?}", cycle.join(" → "));
        }
    }
    // The graph is the one the layers describe: the core below the front ends.
    for core in [
        "time", "model", "dataset", "engine", "store", "query", "fork", "import", "export",
    ] {
        for front in ["cli", "tui"] {
            assert!(
                !edges.get(core).is_some_and(|e| e.contains(front)),
                "{core} reaches for the {front} front end"
            );
        }
    }
}

#[test]
fn no_panel_state_imports_a_view_and_the_core_imports_no_terminal() {
    for (rel, code) in files() {
        if rel.starts_with("tui/state/")
            || rel.starts_with("tui/layout")
            || rel.starts_with("tui/app/")
        {
            assert!(
                !code.contains("tui::ui") && !code.contains("super::ui"),
                "{rel} imports a view"
            );
        }
        let core = !rel.starts_with("tui/")
            && !rel.starts_with("cli/")
            && rel != "main.rs"
            && rel != "lib.rs";
        if core {
            for term in ["ratatui", "crossterm"] {
                assert!(
                    !code.contains(term),
                    "{rel} uses {term}: the core knows no terminal"
                );
            }
        }
    }
}

/// Drawing never reads the store (STYLE: no SQL in the draw path): the views
/// use only the timeline's keys and what the state read beforehand
/// (`cached_belief`, `cached_evidence`), never a method that reads rows.
#[test]
fn the_views_never_read_the_store() {
    let reading = [
        ".belief(",
        ".beliefs(",
        ".belief_by_id(",
        ".believed(",
        ".topic_versions(",
        ".marks_at(",
        ".latest_marks(",
        ".topic_marks(",
        ".mark_by_id(",
        ".evidence_item(",
        ".evidence_items(",
        ".evidence_by_id(",
        ".evidence_matching(",
        ".has_event(",
        "connection()",
    ];
    let mut views = 0;
    for (rel, code) in files() {
        if rel.starts_with("tui/ui/") {
            views += 1;
            for call in reading {
                assert!(!code.contains(call), "{rel} calls {call} while drawing");
            }
            // No query function either (types and constants are fine).
            for (at, _) in code.match_indices("query::") {
                let name: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let called = code[at + 7 + name.len()..].starts_with('(');
                assert!(!called, "{rel} calls query::{name} while drawing");
            }
        }
    }
    assert!(views >= 10, "{views} view files");
}
