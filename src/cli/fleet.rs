//! `export --format parquet`: many stores into one Hive-partitioned directory
//! (docs/fleet.md), with a progress bar on a terminal.

use super::CliError;
use crate::fleet::export::Outcome;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Exports `sources` into `dir` with `jobs` threads (default: one per core).
pub fn export(
    sources: &[PathBuf],
    dir: Option<&Path>,
    jobs: Option<u32>,
    redact: Option<std::sync::Arc<crate::redact::Redactor>>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let Some(dir) = dir else {
        return Err(CliError::Input(
            "--format parquet writes a directory: name it with --out DIR".into(),
        ));
    };
    if sources.is_empty() {
        return Err(CliError::Input(
            "--format parquet exports stores: name them (`asof export stores/*.db --format parquet --out DIR`)".into(),
        ));
    }
    if let Some(dir) = sources.iter().find(|p| p.is_dir()) {
        return Err(CliError::Input(format!(
            "{}: is a directory: name the stores in it (`{}/*.db`)",
            dir.display(),
            dir.display()
        )));
    }
    if let Some(bad) = sources.iter().find(|p| !p.is_file()) {
        return Err(CliError::Input(format!(
            "{}: no such store (--format parquet exports store files; load a dataset or import a trace first)",
            bad.display()
        )));
    }
    if let Some(dataset) = sources
        .iter()
        .find(|p| crate::dataset::Format::from_path(p).is_some())
    {
        return Err(CliError::Input(format!(
            "{}: is a dataset, and --format parquet exports stores: load it first (`asof load {} --db STORE.db`)",
            dataset.display(),
            dataset.display()
        )));
    }
    let jobs = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(2, usize::from),
        |n| n as usize,
    );
    let started = std::time::Instant::now();
    let total = sources.len();
    let mut bar =
        super::progress::Progress::new("exporting", super::progress::Unit::Count("stores"));
    let mut done = 0;
    let results = crate::fleet::export::export(sources, dir, jobs, redact.as_deref(), |store| {
        done += 1;
        if let Outcome::Failed { reason } = &store.outcome {
            bar.say(&format!("asof: not exported: {reason}"));
        }
        bar.show(done, total as u64);
    })
    .map_err(|e| CliError::Input(e.to_string()))?;
    bar.clear();
    let count = |f: fn(&Outcome) -> bool| results.iter().filter(|d| f(&d.outcome)).count();
    let written = count(|o| matches!(o, Outcome::Written { .. }));
    let replaced = count(|o| matches!(o, Outcome::Written { replaced: true, .. }));
    let unchanged = count(|o| matches!(o, Outcome::Unchanged { .. }));
    let failed = count(|o| matches!(o, Outcome::Failed { .. }));
    writeln!(
        out,
        "exported {} of {total} stores to {} in {:.1} s: {written} written{}, {unchanged} unchanged, {failed} not exported",
        written + unchanged,
        dir.display(),
        started.elapsed().as_secs_f64(),
        match replaced {
            0 => String::new(),
            n => format!(" ({n} replacing an earlier export of their incident)"),
        }
    )?;
    if let Some(r) = &redact {
        writeln!(out, "{}", r.provenance_line())?;
    }
    match failed {
        0 => Ok(()),
        n => Err(CliError::Input(format!(
            "{n} of {total} stores could not be exported (each is named above); the others were"
        ))),
    }
}
