//! `load`, `validate`, `rebuild`, `check`: commands that read datasets or write stores.

use super::CliError;
use crate::dataset;
use crate::engine;
use crate::store::Store;
use crate::store::follow::Again;
use crate::store::stream::Loaded;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The dataset (.yaml, .yml or .jsonl), or an OTLP/JSON trace (imported as
    /// `asof import otlp` imports it, with the options below).
    pub dataset: PathBuf,
    /// The store to create (must not exist unless --force).
    #[arg(long)]
    pub db: PathBuf,
    /// Replace an existing store (atomically: the old one stays if the load fails).
    #[arg(long)]
    pub force: bool,
    /// A review file (the TUI's `m` and `asof review --add` write one): its
    /// findings are kept in the store's review table, apart from the log —
    /// never as events of it (docs/review.md).
    #[arg(long)]
    pub review: Option<PathBuf>,
    /// Keep reading a JSON Lines dataset, or an OTLP trace in JSON Lines, that
    /// is still being written: each batch of complete new lines is checked and
    /// applied in one transaction, until the file is truncated, replaced or
    /// turned invalid (exit 1) or Ctrl-C. Run again on the same store and file,
    /// it goes on where it stopped.
    #[arg(long, conflicts_with = "review")]
    pub follow: bool,
    #[command(flatten)]
    pub trace: super::import::TraceArgs,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The dataset (.yaml, .yml or .jsonl), or an OTLP/JSON trace.
    pub dataset: PathBuf,
    #[command(flatten)]
    pub trace: super::import::TraceArgs,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store (.db).
    pub store: PathBuf,
}

pub fn load(args: LoadArgs, out: &mut impl Write) -> Result<(), CliError> {
    if args.follow {
        return follow(&args, out);
    }
    // An OTLP trace is imported as `asof import otlp` imports it.
    let trace = super::source::is_otlp(&args.dataset);
    if !trace {
        args.trace.refuse_for(&args.dataset)?;
    }
    if let Some(review) = &args.review {
        if trace {
            let draft = super::import::otlp_draft(&[&args.dataset], &args.trace)?;
            let target = super::import::Target {
                db: args.db.clone(),
                force: args.force,
                format: super::FormatArg::default(),
            };
            return super::import::store_reviewed(draft, &target, Some(review), out);
        }
        let parsed = dataset::read_path(&args.dataset)?;
        let found = super::review::ForLoad::read(review, &parsed.dataset)?;
        let replay =
            Store::load_reviewed(&args.db, &parsed, args.force, &[], Some(found.as_stored()))?;
        writeln!(
            out,
            "loaded {} into {}: {}; with {} review finding{} from {} in its review table (not in its log)",
            parsed.file,
            args.db.display(),
            Loaded::of(&parsed, replay.versions.len()),
            found.findings.len(),
            if found.findings.len() == 1 { "" } else { "s" },
            review.display(),
        )?;
        return Ok(());
    }
    if trace {
        let draft = super::import::otlp_draft(&[&args.dataset], &args.trace)?;
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

/// How often `load --follow` looks at its file.
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// `load --follow`: a line per batch applied; a stop after the start is a
/// runtime failure (exit 1), a refusal at the start bad input (exit 2).
fn follow(args: &LoadArgs, out: &mut impl Write) -> Result<(), CliError> {
    // Started: the store holds the file's first lines (line 0 is still waiting).
    let mut started = false;
    let mut waiting = false;
    // Traces converted again, as the last batch said.
    let mut again_before = Again::default();
    let mut applied = 0;
    let mut failed = None;
    let followed = super::follow::run(
        &args.dataset,
        &args.db,
        args.force,
        FOLLOW_POLL,
        &args.trace,
        false,
        |batch| {
            applied = batch.total;
            let left_out = match batch.skipped {
                0 => String::new(),
                n => format!(
                    "; {n} record{} of the trace left out, `asof export {} --format md` says why",
                    if n == 1 { "" } else { "s" },
                    args.db.display()
                ),
            };
            let line = if batch.line == 0 {
                if std::mem::replace(&mut waiting, true) {
                    return true;
                }
                format!(
                    "waiting for the first complete line of {}; Ctrl-C stops",
                    args.dataset.display()
                )
            } else if !started {
                started = true;
                // A store taken up again: what converting its lines now
                // changed in it (a follow of a dataset replays it instead).
                let header = match batch.header {
                    true => "; its agents or topics changed: every version derived again",
                    false => "",
                };
                let again = if batch.whole {
                    "; the store written again whole".to_owned()
                } else if batch.rewritten > 0 {
                    format!(
                        "{header}; {} of the events it held written again, as the options given now convert them",
                        batch.rewritten
                    )
                } else {
                    header.to_owned()
                };
                format!(
                    "following {} into {}: {} events (line {}{again}{left_out}); Ctrl-C stops",
                    args.dataset.display(),
                    args.db.display(),
                    batch.total,
                    batch.line
                )
            } else if batch.lines > 0 {
                let header = match batch.header {
                    true => "; the trace's agents or topics changed: every version derived again",
                    false => "",
                };
                let again = if batch.whole {
                    "; the store written again whole".to_owned()
                } else if batch.rewritten > 0 {
                    format!(
                        "{header}; it changed {} earlier event{} (written again)",
                        batch.rewritten,
                        if batch.rewritten == 1 { "" } else { "s" }
                    )
                } else if batch.header {
                    header.to_owned()
                } else if batch.replayed {
                    "; recorded before the last applied instant: replayed again from there"
                        .to_owned()
                } else {
                    String::new()
                };
                let now = batch.converted_again;
                let before = std::mem::replace(&mut again_before, now);
                // Traces converted again are for later spans; every line
                // converted again has causes of its own (design.md §7).
                let traces = |a: Again| Again { whole: 0, ..a };
                let new = Again {
                    from_checkpoint: now.from_checkpoint - before.from_checkpoint,
                    from_start: now.from_start - before.from_start,
                    whole: 0,
                };
                let mut again = match (new.describe(), traces(now).describe()) {
                    (Some(new), Some(so_far)) if new != so_far => format!(
                        "{again}; {new}, later spans having changed what earlier ones meant (since the follow started: {so_far})"
                    ),
                    (Some(new), _) => {
                        format!("{again}; {new}: later spans changed what earlier ones meant")
                    }
                    (None, _) => again,
                };
                if now.whole > before.whole {
                    let so_far = Again {
                        whole: now.whole,
                        ..Again::default()
                    };
                    if let Some(so_far) = so_far.describe() {
                        again.push_str(&format!(
                            "; every line read back from the file and converted again (since the follow started: {so_far})"
                        ));
                    }
                }
                format!(
                    "+{} events (line {}, {} in all{again}{left_out})",
                    batch.events, batch.line, batch.total
                )
            } else {
                return true;
            };
            match writeln!(out, "{line}").and_then(|()| out.flush()) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        },
    );
    if let Some(e) = failed {
        return Err(e.into());
    }
    match followed {
        Ok(()) => Ok(()),
        Err(stop) if started => Err(CliError::Runtime(format!(
            "{stop}\nthe follow stopped; {} keeps the {applied} events applied before it",
            args.db.display()
        ))),
        Err(crate::store::follow::Stop::Store(e)) => Err(e.into()),
        Err(stop) => Err(CliError::Input(stop.to_string())),
    }
}

pub fn validate(args: ValidateArgs, out: &mut impl Write) -> Result<(), CliError> {
    if super::source::is_otlp(&args.dataset) {
        let draft = super::import::otlp_draft(&[&args.dataset], &args.trace)?;
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
    args.trace.refuse_for(&args.dataset)?;
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
    // A file SQLite reports damaged is written again from its log, into a
    // new file (its damaged pages may not even be deleted); a whole one is
    // re-derived in place.
    let diagnosis = crate::store::health::diagnose(&args.store)?;
    if !diagnosis.is_whole() {
        let versions = crate::store::health::salvage(&args.store, &diagnosis)?;
        writeln!(
            out,
            "rebuilt {}: written again from its log, which is whole ({versions} belief versions derived); the damaged file is replaced",
            args.store.display()
        )?;
        return Ok(());
    }
    let mut store = Store::open_for_write(&args.store)?;
    let versions = store.rebuild()?;
    writeln!(
        out,
        "rebuilt {}: {versions} belief versions derived from the log",
        args.store.display()
    )?;
    Ok(())
}

/// What a store written by `asof serve` or a follow has not yet taken in of
/// the file it follows ([`crate::store::follow::behind`], the file's applied
/// bytes checked to be the ones the store took in), said in a sentence;
/// `None` when it is up to date or follows nothing that is there.
fn behind(store: &Store, path: &std::path::Path) -> Result<Option<String>, CliError> {
    let Some(behind) = crate::store::follow::behind(store, path, true)? else {
        return Ok(None);
    };
    let bytes = behind.bytes;
    let by = match behind.lines {
        _ if bytes == 0 => return Ok(None),
        0 => format!("{bytes} bytes of a line still being written"),
        n => format!(
            "{} ({bytes} bytes)",
            crate::text::count(n as usize, "complete line", "complete lines")
        ),
    };
    Ok(Some(format!(
        "{}: behind {}: {by} not yet taken in; the store answers as of the lines before them until `asof serve --db {}` (or the follow) runs again",
        path.display(),
        behind.file.display(),
        path.display()
    )))
}

pub fn check(args: StoreArgs, out: &mut impl Write) -> Result<(), CliError> {
    // SQLite's integrity check and the log's checksums first: the derived
    // rows are compared with a fresh replay only when the file is whole.
    let diagnosis = crate::store::health::diagnose(&args.store)?;
    if !diagnosis.is_whole() {
        let name = args.store.display().to_string();
        for line in &diagnosis.sqlite {
            writeln!(out, "SQLite: {line}")?;
        }
        for line in &diagnosis.log {
            writeln!(out, "log: {line}")?;
        }
        let (what, way_out) = match diagnosis.log.is_empty() {
            true => (
                "SQLite reports the file damaged, but its log is whole",
                "write it again from the log",
            ),
            false => ("its log is damaged", "load it again from its source"),
        };
        return Err(CliError::Input(format!(
            "{name}: damaged: {what}; {way_out}: `{}`",
            diagnosis.recovery(&name)
        )));
    }
    let store = Store::open(&args.store)?;
    let report = store.check()?;
    if report.differences.is_empty() {
        writeln!(
            out,
            "{}: ok: the {} stored versions are exactly what the log derives",
            args.store.display(),
            report.versions
        )?;
        if let Some(behind) = behind(&store, &args.store)? {
            writeln!(out, "{behind}")?;
        }
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
