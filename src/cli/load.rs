//! `load`, `validate`, `rebuild`, `check`: commands that read datasets or write stores.

use super::CliError;
use crate::dataset;
use crate::engine;
use crate::store::Store;
use crate::store::stream::Loaded;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The dataset (.yaml, .yml or .jsonl), or an OTLP/JSON trace (imported with
    /// `asof import otlp`'s defaults).
    pub dataset: PathBuf,
    /// The store to create (must not exist unless --force).
    #[arg(long)]
    pub db: PathBuf,
    /// Replace an existing store (atomically: the old one stays if the load fails).
    #[arg(long)]
    pub force: bool,
    /// A review file (the TUI's `m` writes one): its `verify` events are merged
    /// into the new store after the dataset's events.
    #[arg(long)]
    pub review: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The dataset (.yaml, .yml or .jsonl).
    pub dataset: PathBuf,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store (.db).
    pub store: PathBuf,
}

pub fn load(args: LoadArgs, out: &mut impl Write) -> Result<(), CliError> {
    // An OTLP trace is imported with the default options (`asof import otlp`
    // takes the others).
    if let Some(review) = &args.review {
        if super::source::is_otlp(&args.dataset) {
            return Err(CliError::Input(format!(
                "{}: --review merges into an asof dataset (.yaml, .yml or .jsonl), not into a trace",
                args.dataset.display()
            )));
        }
        let parsed = dataset::review::merge(dataset::read_path(&args.dataset)?, review)?;
        let replay = Store::load(
            &args.db,
            &parsed,
            args.force,
            &[("review", review.display().to_string())],
        )?;
        writeln!(
            out,
            "loaded {} with review {} into {}: {}",
            parsed.file,
            review.display(),
            args.db.display(),
            Loaded::of(&parsed, replay.versions.len())
        )?;
        return Ok(());
    }
    if super::source::is_otlp(&args.dataset) {
        let draft = super::import::otlp_default(&args.dataset)?;
        let target = super::import::Target {
            db: args.db,
            force: args.force,
            format: super::FormatArg::default(),
        };
        return super::import::store(draft, &target, out);
    }
    // JSON Lines (the format for scale) stream; YAML is small by its size limit.
    if dataset::Format::from_path(&args.dataset) == Some(dataset::Format::Jsonl) {
        let loaded = crate::store::stream::load_jsonl(&args.dataset, &args.db, args.force)?;
        writeln!(
            out,
            "loaded {} into {}: {}",
            loaded.file,
            args.db.display(),
            loaded
        )?;
        return Ok(());
    }
    let parsed = dataset::read_path(&args.dataset)?;
    let replay = Store::load(&args.db, &parsed, args.force, &[])?;
    writeln!(
        out,
        "loaded {} into {}: {}",
        parsed.file,
        args.db.display(),
        Loaded::of(&parsed, replay.versions.len())
    )?;
    Ok(())
}

pub fn validate(args: ValidateArgs, out: &mut impl Write) -> Result<(), CliError> {
    if super::source::is_otlp(&args.dataset) {
        let draft = super::import::otlp_default(&args.dataset)?;
        let file = draft.report.input.clone();
        let (_, report, replay) = crate::import::finish(&file, draft)?;
        writeln!(
            out,
            "{file}: valid OTLP trace: {}, {} belief versions",
            report.headline(),
            replay.versions.len()
        )?;
        write!(out, "{}", crate::export::summary::details(&report, false))?;
        return Ok(());
    }
    // JSON Lines in recorded order are checked as they stream; others whole.
    if dataset::Format::from_path(&args.dataset) == Some(dataset::Format::Jsonl)
        && let Some(checked) = crate::store::stream::validate_jsonl(&args.dataset)?
    {
        writeln!(out, "{}: valid: {checked}", checked.file)?;
        return Ok(());
    }
    let parsed = dataset::read_path(&args.dataset)?;
    let replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    parsed.check_replay(&replay)?;
    writeln!(
        out,
        "{}: valid: {}",
        parsed.file,
        Loaded::of(&parsed, replay.versions.len())
    )?;
    Ok(())
}

pub fn rebuild(args: StoreArgs, out: &mut impl Write) -> Result<(), CliError> {
    let mut store = Store::open_for_write(&args.store)?;
    let versions = store.rebuild()?;
    writeln!(
        out,
        "rebuilt {}: {versions} belief versions derived from the log",
        args.store.display()
    )?;
    Ok(())
}

pub fn check(args: StoreArgs, out: &mut impl Write) -> Result<(), CliError> {
    let store = Store::open(&args.store)?;
    let report = store.check()?;
    if report.differences.is_empty() {
        writeln!(
            out,
            "{}: ok: the {} stored versions are exactly what the log derives",
            args.store.display(),
            report.versions
        )?;
        return Ok(());
    }
    for d in &report.differences {
        writeln!(out, "{d}")?;
    }
    Err(CliError::Input(format!(
        "{}: {} disagreement(s) between the stored versions and the log; run `asof rebuild` to re-derive them",
        args.store.display(),
        report.differences.len()
    )))
}
