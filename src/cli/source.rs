//! Resolving a SOURCE argument: a store, a dataset file, an OTLP trace (read
//! with the import's default options), or the bundled demo.

use super::CliError;
use crate::dataset::{self, Format, Parsed};
use crate::engine;
use crate::import::{self, otlp};
use crate::store::Store;
use std::io::Read;
use std::path::Path;

/// The bundled demo incident, compiled into the binary.
pub const DEMO_YAML: &str = include_str!("../../datasets/payment-outage.yaml");
pub const DEMO_NAME: &str = "payment-outage.yaml (bundled demo)";

/// Opens SOURCE read-only: a `.db` store, a dataset loaded into memory, or the demo.
pub fn open(source: Option<&Path>) -> Result<Store, CliError> {
    open_with(source, &otlp::Options::default())
}

/// [`open`] for a command that asks once and exits: a store is read in one
/// transaction ([`Store::open_snapshot`]).
pub fn open_snapshot(source: Option<&Path>) -> Result<Store, CliError> {
    open_as(source, &otlp::Options::default(), Store::open_snapshot)
}

/// [`open_snapshot`], reading a trace with `options`.
pub fn open_snapshot_with(
    source: Option<&Path>,
    options: &otlp::Options,
) -> Result<Store, CliError> {
    open_as(source, options, Store::open_snapshot)
}

/// [`open`], reading a trace with `options`.
pub fn open_with(source: Option<&Path>, options: &otlp::Options) -> Result<Store, CliError> {
    open_as(source, options, Store::open)
}

/// What a SOURCE may be, said when it is none of them.
pub const WHAT_ASOF_READS: &str = "asof reads a store (a .db written by `asof load` or `asof import`), a dataset (.yaml or .jsonl) or an OTLP trace or logs file (OTLP/JSON)";

/// [`open_with`], opening a store file with `open_store`.
fn open_as(
    source: Option<&Path>,
    options: &otlp::Options,
    open_store: fn(&Path) -> crate::store::Result<Store>,
) -> Result<Store, CliError> {
    let Some(path) = source else {
        return demo();
    };
    if path.is_dir() {
        return Err(CliError::Input(format!(
            "{}: is a directory; {WHAT_ASOF_READS}",
            path.display()
        )));
    }
    if !path.exists() {
        return Err(CliError::Input(format!(
            "{}: no such store or file; {WHAT_ASOF_READS}",
            path.display()
        )));
    }
    // A SQLite file is a store (and is not read as text to find out).
    if crate::store::is_sqlite_file(path) {
        return open_store(path).map_err(CliError::from);
    }
    if is_otlp(path) {
        let name = path.display().to_string();
        let draft = otlp::read_files(&[(name.as_str(), path)], options, &mut |_, _| {})?;
        return trace_store(draft);
    }
    // Named like a store but not SQLite: a damaged store, said so by the
    // store's reader. Neither SQLite nor a trace, nor named like a dataset
    // or a store: nothing asof reads.
    let store_named = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "db" | "sqlite" | "sqlite3"));
    if Format::from_path(path).is_none() && store_named {
        return open_store(path).map_err(CliError::from);
    }
    if Format::from_path(path).is_none() {
        return Err(CliError::Input(format!(
            "{}: is not something asof reads (not SQLite, not named .yaml or .jsonl, not OTLP/JSON); {WHAT_ASOF_READS}",
            path.display()
        )));
    }
    let parsed = dataset::read_path(path)?;
    in_memory(&parsed)
}

/// An imported trace as an in-memory store.
pub fn trace_store(draft: import::Draft) -> Result<Store, CliError> {
    let name = draft.report.input.clone();
    if let Some(note) = draft.report.bad_lines_note() {
        eprintln!("asof: {note}");
    }
    let (parsed, report, replay) = import::finish(&name, draft)?;
    // The import summary rides along, as in a store `import otlp` writes:
    // the evaluations the trace made are read from it.
    let meta = report
        .meta_rows()
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    Ok(Store::in_memory_with(
        &parsed.file,
        &parsed.dataset,
        &replay,
        meta,
    )?)
}

/// Whether SOURCE names a store file (SQLite, or neither an OTLP trace nor
/// named like a dataset).
pub fn is_store(path: &Path) -> bool {
    crate::store::is_sqlite_file(path) || (Format::from_path(path).is_none() && !is_otlp(path))
}

/// Whether the file is an OTLP/JSON trace, by its first bytes.
pub fn is_otlp(path: &Path) -> bool {
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok() && otlp::looks_like(&String::from_utf8_lossy(&head))
}

/// SOURCE as the user named it and the SHA-256 of its bytes (for the bundled
/// demo, of its embedded dataset): what reports and lineages record.
pub fn origin(source: Option<&Path>) -> Result<crate::export::Origin, CliError> {
    match source {
        None => Ok(crate::export::Origin {
            name: DEMO_NAME.to_owned(),
            sha256: crate::fork::sha256_hex(DEMO_YAML.as_bytes()),
        }),
        Some(p) => {
            let sha256 = std::fs::File::open(p)
                .and_then(crate::fork::sha256_of)
                .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", p.display())))?;
            Ok(crate::export::Origin {
                name: p.display().to_string(),
                sha256,
            })
        }
    }
}

/// The source a lineage names as a fork's parent: `None` for the bundled demo.
pub fn named(parent: &str) -> Option<&Path> {
    (parent != DEMO_NAME).then(|| Path::new(parent))
}

/// The bundled demo as an in-memory store.
pub fn demo() -> Result<Store, CliError> {
    let parsed = dataset::read_str(DEMO_NAME, Format::Yaml, DEMO_YAML)?;
    in_memory(&parsed)
}

fn in_memory(parsed: &Parsed) -> Result<Store, CliError> {
    let replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    parsed.check_replay(&replay)?;
    Ok(Store::in_memory(&parsed.file, &parsed.dataset, &replay)?)
}
