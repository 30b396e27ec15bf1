//! What the crate boundaries cannot hold, read from the TUI's source: no
//! panel's state imports a view, and drawing never reads the store. (The
//! layering itself — the core below the store below the front ends, no SQL
//! outside the store crate, no terminal in the core — is the workspace's:
//! the compiler refuses the reverse dependency.)

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

/// Every file of the TUI crate with its path relative to its `src` and its
/// code outside `#[cfg(test)]` modules.
fn files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/asof-tui/src");
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

#[test]
fn no_panel_state_imports_a_view() {
    let mut states = 0;
    for (rel, code) in files() {
        if rel.starts_with("tui/state/")
            || rel.starts_with("tui/layout")
            || rel.starts_with("tui/app/")
        {
            states += 1;
            assert!(
                !code.contains("tui::ui") && !code.contains("super::ui"),
                "{rel} imports a view"
            );
        }
    }
    assert!(states >= 10, "{states} state files");
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

/// Crates name each other (`asof_core::model::…`, `asof_store::query::…`):
/// only the front `asof` crate re-exports another crate's items, for users
/// outside the workspace, so a reader of a library crate sees where it ends.
#[test]
fn only_the_front_crate_re_exports_other_crates() {
    let mut files = Vec::new();
    sources(Path::new("crates"), &mut files);
    assert!(files.len() > 50, "the crates' sources are found");
    let mut found = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("pub use asof_") || line.starts_with("pub(crate) use asof_") {
                found.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "re-exports of another crate:\n{}",
        found.join("\n")
    );
}

/// The rows of design.md between `<!-- NAME` and `<!-- /NAME -->` that are
/// table rows (not the header or its rule), split into cells.
fn design_rows(name: &str) -> Vec<Vec<String>> {
    let design = std::fs::read_to_string("docs/design.md").unwrap();
    let start = design
        .find(&format!("<!-- {name}"))
        .unwrap_or_else(|| panic!("design.md has no `<!-- {name}` block"));
    let end = design[start..]
        .find(&format!("<!-- /{name} -->"))
        .map(|e| start + e)
        .unwrap_or_else(|| panic!("design.md's {name} block is not closed"));
    design[start..end]
        .lines()
        .filter(|l| {
            l.starts_with('|')
                && !l.starts_with("|---")
                && !l.starts_with("| crate")
                && !l.starts_with("| step")
        })
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect()
        })
        .collect()
}

/// Each workspace crate with the names of its normal (not dev, not build)
/// dependencies, as `cargo metadata` reads Cargo.toml.
fn dependencies() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut all = std::collections::BTreeMap::new();
    for p in meta["packages"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap().to_owned();
        if !name.starts_with("asof") {
            continue;
        }
        let deps = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .map(str::to_owned)
            .collect();
        all.insert(name, deps);
    }
    all
}

/// design.md §10's crate graph is the workspace's, as `cargo metadata` says.
#[test]
fn the_crate_graph_in_design_md_is_the_workspaces() {
    let real: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        dependencies()
            .into_iter()
            .map(|(name, deps)| {
                let ours = deps.into_iter().filter(|d| d.starts_with("asof")).collect();
                (name, ours)
            })
            .collect();
    let mut drawn = std::collections::BTreeMap::new();
    for row in design_rows("crate-graph") {
        let name = row[0]
            .split_whitespace()
            .next()
            .unwrap()
            .trim_matches('`')
            .to_owned();
        let deps: std::collections::BTreeSet<String> = row[1]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "–")
            .map(str::to_owned)
            .collect();
        drawn.insert(name, deps);
    }
    assert_eq!(drawn, real, "design.md §10 against cargo metadata");
}

/// The store is sealed: no crate but asof-store links SQLite, except the
/// importers of foreign SQLite files (asof-import: facts tables) and the
/// binary's process tuning (`src/runtime.rs`, SQLite's global configuration,
/// and nothing else of the binary names rusqlite).
#[test]
fn only_the_store_speaks_sqlite() {
    let linking: Vec<String> = dependencies()
        .into_iter()
        .filter(|(_, deps)| deps.contains("rusqlite"))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(linking, ["asof", "asof-import", "asof-store"]);
    // The files under `dir` that name rusqlite.
    let naming = |dir: &str| -> Vec<String> {
        let mut files = Vec::new();
        sources(Path::new(dir), &mut files);
        files
            .iter()
            .filter(|p| std::fs::read_to_string(p).unwrap().contains("rusqlite"))
            .map(|p| p.display().to_string())
            .collect()
    };
    assert_eq!(naming("src"), ["src/runtime.rs"]);
    assert_eq!(
        naming("crates/asof-import/src"),
        ["crates/asof-import/src/import/facts.rs"]
    );
    // Inside asof-store, SQL is the store module's alone: the queries, the
    // timeline and the forks ask it by method, and its connection is private.
    let mut store = Vec::new();
    sources(Path::new("crates/asof-store/src"), &mut store);
    let outside: Vec<String> = store
        .iter()
        .filter(|p| !p.starts_with("crates/asof-store/src/store"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("rusqlite") || text.contains("connection()")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(outside.is_empty(), "SQL outside store/: {outside:?}");
    let connection = std::fs::read_to_string("crates/asof-store/src/store/mod.rs").unwrap();
    assert!(
        connection.contains("    fn connection(&self) -> &Connection {"),
        "the store's connection is private to store/"
    );
    // No SQLite type in a public signature of the store: its error is its own.
    let mut public = Vec::new();
    for path in store {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let line = line.trim_start();
            if !(line.starts_with("pub use ")
                || line.starts_with("pub type ")
                || line.starts_with("pub fn "))
            {
                continue;
            }
            // The whole item head: a signature may run over several lines.
            let head: String = lines[n..]
                .iter()
                .take_while(|l| !l.contains('{') && !l.trim_end().ends_with(';'))
                .chain(
                    lines[n..]
                        .iter()
                        .find(|l| l.contains('{') || l.trim_end().ends_with(';')),
                )
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let head = head.split('{').next().unwrap_or_default();
            if ["rusqlite", "Connection", "Transaction", "&Row"]
                .iter()
                .any(|k| head.contains(k))
            {
                public.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert!(public.is_empty(), "{public:?}");
}

/// Every entry function design.md §10 names is defined in the file it names.
#[test]
fn the_entry_functions_in_design_md_are_where_it_says() {
    let rows = design_rows("flows");
    assert!(rows.len() >= 20, "the flows are read: {rows:?}");
    let mut missing = Vec::new();
    for row in rows {
        let (function, file) = (&row[1], &row[2]);
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let defined =
            text.contains(&format!("fn {function}(")) || text.contains(&format!("fn {function}<"));
        if !defined {
            missing.push(format!("{function} in {file}"));
        }
    }
    assert!(missing.is_empty(), "not found: {missing:?}");
}

/// Every library crate forbids unsafe code, documents every public item and
/// never unwraps outside its tests (clippy, run with `-D warnings`, makes
/// the warnings errors). The front crate's command line is clap's: its doc
/// comments are its help text, so it is held by the CLI's tests instead.
#[test]
fn every_library_crate_is_documented_safe_and_unwrap_free() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir("crates").unwrap() {
        let lib = entry.unwrap().path().join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).unwrap();
        for lint in [
            "#![forbid(unsafe_code)]",
            "#![warn(missing_docs)]",
            "#![warn(clippy::unwrap_used)]",
            "#![cfg_attr(test, allow(clippy::unwrap_used))]",
        ] {
            if !text.contains(lint) {
                missing.push(format!("{}: {lint}", lib.display()));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
