//! The command line (design.md §8): clap definitions and dispatch.
//! Each command family lives in its own file; all of them print through
//! [`OutputFormat`] so table, JSON and Markdown stay in step.

mod ask;
mod calls;
mod compare;
mod export;
mod fleet;
mod follow;
mod forks;
mod import;
mod load;
mod progress;
mod queries;
mod redact;
mod review;
mod serve;
pub mod source;
mod synth;
pub mod when;

use crate::dataset::DatasetErrors;
use crate::store::StoreError;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Exit codes: 0 ok, 1 runtime error, 2 usage or input error.
#[derive(Debug)]
pub enum CliError {
    /// The user's input is wrong (exit 2): one or more sentences, each with its location.
    Input(String),
    /// Something failed that the user did not cause (exit 1).
    Runtime(String),
    /// Standard output was closed by its reader (`asof history | head`): not
    /// an error worth a message.
    ClosedOutput,
    /// A row of a store does not decode (a damaged store: bad input, exit 2),
    /// said by the store's reader; [`run`] names the store.
    Damaged(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input(_) | CliError::Damaged(_) => 2,
            CliError::Runtime(_) => 1,
            CliError::ClosedOutput => 0,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            CliError::Input(m) | CliError::Runtime(m) | CliError::Damaged(m) => m,
            CliError::ClosedOutput => "",
        }
    }
}

impl From<DatasetErrors> for CliError {
    fn from(e: DatasetErrors) -> Self {
        CliError::Input(e.to_string())
    }
}

use crate::store::MALFORMED;

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        if let StoreError::Sqlite(failure) = &e {
            // What the store's readers say of rows that do not decode (a
            // damaged store: bad input, exit 2), in their own sentence.
            if let Some(reason) = failure.undecodable() {
                return CliError::Damaged(reason);
            }
            if failure.is_malformed() {
                return CliError::Damaged(MALFORMED.to_owned());
            }
            return CliError::Runtime(format!("store query failed: {failure}"));
        }
        if e.is_input_error() {
            CliError::Input(e.to_string())
        } else {
            CliError::Runtime(e.to_string())
        }
    }
}

impl From<crate::store::LoadError> for CliError {
    fn from(e: crate::store::LoadError) -> Self {
        match e {
            crate::store::LoadError::Dataset(e) => e.into(),
            crate::store::LoadError::Store(e) => e.into(),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::ClosedOutput;
        }
        CliError::Runtime(format!("cannot write output: {e}"))
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "asof",
    version,
    about = "What did the AI agent believe then, on what evidence — and what would it have believed without it?",
    long_about = "asof loads an AI agent's belief/evidence timeline into a bitemporal SQLite store and answers, \
for incident reviewers and auditors, what the agent believed at any recorded time about any valid time.\n\n\
SOURCE is a store (.db), a dataset (.yaml/.yml/.jsonl, loaded in memory), or omitted for the bundled demo.",
    after_help = "Examples:\n  asof believed --at 2026-03-03T12:00:00Z --about 2026-03-02T09:30:00Z\n  \
asof history --topic root-cause --format json\n  asof load incident.yaml --db incident.db\n  \
asof believed incident.db --at now --topic root-cause"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scrub through a timeline interactively (the default, on the bundled demo).
    Tui(TuiArgs),
    /// Validate a dataset and load it atomically into a new store.
    Load(load::LoadArgs),
    /// Check a dataset without loading it; print every error with its location.
    Validate(load::ValidateArgs),
    /// What the agents believed at a recorded time (optionally: about a valid time).
    Believed(queries::BelievedArgs),
    /// Every version of a topic's beliefs, with how and by which event each was closed.
    History(queries::HistoryArgs),
    /// Every evidence item with its lag and the events that cite it.
    Evidence(queries::EvidenceArgs),
    /// What the agents answered on a topic: one claim, or each agent's when they disagree.
    Answer(queries::AnswerArgs),
    /// Versions created and closed in a recorded window (AFTER, UNTIL].
    Changes(queries::ChangesArgs),
    /// Re-derive a store's versions from its event log.
    Rebuild(load::StoreArgs),
    /// Re-derive versions from the log and report any disagreement with the stored ones.
    Check(load::StoreArgs),
    /// Write a deterministic synthetic incident as JSON Lines (benchmarks, scale tests).
    Gen(synth::GenArgs),
    /// Replay SOURCE without some evidence into a new store (a what-if fork) and compare.
    Fork(forks::ForkArgs),
    /// Compare a parent with one of its forks: divergence windows and time to truth.
    Diff(forks::DiffArgs),
    /// Rank every evidence item by what removing it would change (misleading first).
    Influence(forks::InfluenceArgs),
    /// A trace's model calls in order: when each started, the evidence first in
    /// front of the model, what it said and the tool calls it made.
    Calls(calls::CallsArgs),
    /// Compare two runs of one incident: where they parted, what each had seen that
    /// the other had not, and which reached the truth first.
    Compare(compare::CompareArgs),
    /// Read an existing agent memory (Graphiti edges, a facts table) or an agent's
    /// OpenTelemetry trace into a new store, with a summary of what it assumed.
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Receive OTLP/HTTP from a running agent's SDK (POST /v1/traces, /v1/logs) into a
    /// store that `asof tui STORE --follow` can watch; every request answered 200 is
    /// synced to the store's archive first.
    Serve(serve::ServeArgs),
    /// Write an audit report (Markdown, or one self-contained HTML file), a topic's plane (SVG),
    /// or many stores as Parquet for questions across a fleet of incidents.
    Export(export::ExportArgs),
    /// A review's findings (who judged what, when, about which instant): listed,
    /// added from a script, compared between reviewers, or written as
    /// OpenTelemetry evaluations (docs/review.md).
    Review(review::ReviewArgs),
    /// Answer a plain question ("what was the root cause at 2026-03-03 12:00?") with
    /// the query that answers it; an unknown question gets the forms understood.
    Ask(ask::AskArgs),
    /// Print a shell's completion script for asof (see the README to install it).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print asof's manual page (roff): `asof man > asof.1; man -l asof.1`.
    Man,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    #[default]
    Table,
    Json,
    Md,
}

#[derive(Debug, Default, Args)]
pub struct FormatArg {
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Default, Args)]
pub struct SourceArg {
    /// A store (.db), a dataset (.yaml/.yml/.jsonl), or omitted for the bundled demo.
    pub source: Option<PathBuf>,
    /// When SOURCE is an OTLP trace: skip lines that do not parse (counted
    /// on standard error and in the provenance) instead of refusing the file.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

impl SourceArg {
    /// How a trace named as SOURCE is read.
    pub fn trace_options(&self) -> crate::import::otlp::Options {
        crate::import::otlp::Options {
            skip_bad_lines: self.skip_bad_lines,
            ..crate::import::otlp::Options::default()
        }
    }

    /// SOURCE opened read-only ([`source::open_with`]).
    pub fn open(&self) -> Result<crate::store::Store, CliError> {
        source::open_with(self.source.as_deref(), &self.trace_options())
    }

    /// SOURCE opened for one answer ([`source::open_snapshot_with`]).
    pub fn open_snapshot(&self) -> Result<crate::store::Store, CliError> {
        source::open_snapshot_with(self.source.as_deref(), &self.trace_options())
    }
}

#[derive(Debug, Default, clap::Args)]
pub struct TuiArgs {
    /// A store (.db), a dataset (.yaml/.yml/.jsonl), an OTLP trace, or
    /// omitted for the bundled demo.
    pub source: Option<PathBuf>,
    /// The review file: its findings are shown (beside what the agent knew,
    /// never in its place) and `m` appends to it. Default: SOURCE's name with
    /// `.review.jsonl`, beside it (for the demo, in the current directory),
    /// read when it exists. The store is never written.
    #[arg(long)]
    pub review: Option<PathBuf>,
    /// Who makes the findings `m` writes (default: $ASOF_REVIEWER, else $USER).
    #[arg(long)]
    pub reviewer: Option<String>,
    /// Follow a source that is still being written (design.md §6): a JSON Lines
    /// dataset (followed into --db, or into a temporary store), or a store that
    /// `asof load --follow` is writing. The cursor follows the newest event
    /// while it is at the end; End resumes following.
    #[arg(long)]
    pub follow: bool,
    /// With --follow on a dataset: the store to follow it into, kept after the
    /// TUI ends (followed on where an earlier follow of the same file stopped).
    #[arg(long, requires = "follow")]
    pub db: Option<PathBuf>,
    /// Another run of the same incident (a store, dataset or trace): opens the
    /// compare lanes of the two runs, where they parted and what each had seen
    /// (`asof compare`; c opens them again).
    #[arg(long, value_name = "B", conflicts_with = "follow")]
    pub compare: Option<PathBuf>,
    /// With --compare: the clock (default: start when either run is a trace, else absolute).
    #[arg(long, value_enum, requires = "compare")]
    pub align: Option<compare::AlignArg>,
    #[command(flatten)]
    pub trace: import::TraceArgs,
}

/// Parses a time argument as the TUI's jump prompt does (`time::parse_user`): RFC 3339
/// with an offset, `YYYY-MM-DD`, `YYYY-MM-DD HH:MM` (UTC), `HH:MM` (today, UTC) or `now`.
/// `now` is captured once per process, so `--at now --about now` is `current`.
pub fn parse_time_arg(text: &str) -> Result<i64, String> {
    static NOW: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    let now = *NOW.get_or_init(crate::time::now);
    crate::time::parse_user(text, now, now)
}

/// Opens the TUI on SOURCE; when stdout is not a terminal, prints a hint instead.
fn interactive(args: TuiArgs, out: &mut impl std::io::Write) -> Result<(), CliError> {
    use std::io::IsTerminal;
    let source = args.source.as_deref();
    let store = match source {
        Some(path) if source::is_otlp(path) => {
            source::trace_store(import::otlp_draft(&[path], &args.trace)?)?
        }
        _ => {
            if let Some(path) = source {
                args.trace.refuse_for(path)?;
            }
            source::open(source)?
        }
    };
    if !std::io::stdout().is_terminal() {
        writeln!(
            out,
            "asof: not a terminal, so no TUI; for text try `asof believed {0}--at now`, `asof history {0}--topic <id>` or `asof evidence {0}`",
            source
                .map(|p| format!("{} ", p.display()))
                .unwrap_or_default()
        )?;
        return Ok(());
    }
    // A store file is read again by the worker that first needs its log; a
    // dataset or the demo is in memory already.
    let store_path = source.filter(|p| source::is_store(p)).map(|p| p.to_owned());
    let load = match &store_path {
        Some(path) => log_of(path),
        None => {
            let log = store.log()?;
            Box::new(move || Ok(log.clone()))
        }
    };
    let mut app = app_on(store, None, source, args.review)?;
    app.reviewer = args.reviewer.clone();
    if let Some(other) = &args.compare {
        let this = source.unwrap_or(std::path::Path::new("demo"));
        app.whatif.runs = Some(compare::two_runs(
            this,
            other,
            args.align,
            &args.trace.read,
        )?);
        app.update(crate::tui::action::Action::Compare);
    }
    crate::tui::run(app, load, store_path, None, origin_of(source))
        .map_err(|e| CliError::Runtime(format!("terminal: {e}")))
}

/// SOURCE's name and SHA-256, for the TUI's workers to read when a fork's
/// lineage or a report first needs them.
fn origin_of(source: Option<&std::path::Path>) -> crate::tui::OriginOf {
    let source = source.map(std::path::Path::to_owned);
    std::sync::Arc::new(move || {
        source::origin(source.as_deref()).map_err(|e| e.message().to_owned())
    })
}

/// What-if forks read the log of the store at `path` again, on their worker.
fn log_of(path: &std::path::Path) -> crate::tui::fork_worker::LoadLog {
    let path = path.to_owned();
    Box::new(move || crate::store::Store::open(&path).and_then(|s| s.log()))
}

/// The TUI's state on SOURCE as `asof tui SOURCE [--review FILE]` opens it
/// (a store, a dataset, the demo: not a trace or --follow), for tests.
pub fn tui_app(
    source: Option<&std::path::Path>,
    review: Option<PathBuf>,
) -> Result<crate::tui::app::App, CliError> {
    app_on(source::open(source)?, None, source, review)
}

/// The TUI's state on `store` (titled `label` when given), with its review
/// (its review table, and the file `review`, else the one beside SOURCE)
/// shown beside the agent's record; `m` appends to that file.
fn app_on(
    store: crate::store::Store,
    label: Option<String>,
    source: Option<&std::path::Path>,
    review: Option<PathBuf>,
) -> Result<crate::tui::app::App, CliError> {
    app_with(
        store,
        label,
        source,
        review,
        crate::query::timeline::Timeline::load,
    )
}

/// [`app_on`], the timeline read from the store by `load`.
fn app_with(
    store: crate::store::Store,
    label: Option<String>,
    source: Option<&std::path::Path>,
    review: Option<PathBuf>,
    load: impl FnOnce(
        crate::store::Store,
    ) -> Result<crate::query::timeline::Timeline, crate::store::StoreError>,
) -> Result<crate::tui::app::App, CliError> {
    let named: Vec<PathBuf> = review.into_iter().collect();
    let found = review::resolve(&store, source, &named, true)?;
    let mut timeline = load(store)?;
    if let Some(label) = label {
        timeline.label = label;
    }
    let file = found.sources.iter().rev().find_map(|s| match &s.place {
        crate::review::Place::File(p) => Some(p.clone()),
        crate::review::Place::Table { .. } => None,
    });
    timeline.review = std::sync::Arc::new(found);
    let mut app =
        crate::tui::app::App::new(timeline, crate::tui::theme::Theme::from_env(), (80, 24));
    app.review = file;
    Ok(app)
}

/// `asof tui --follow SOURCE`: a store another process writes is watched; a
/// dataset or trace being written is followed into a store first (design.md §6).
fn live(args: TuiArgs, out: &mut impl std::io::Write) -> Result<(), CliError> {
    use std::io::IsTerminal;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let Some(source) = args.source.as_deref() else {
        return Err(CliError::Input(
            "--follow needs a SOURCE: a JSON Lines dataset or trace being written, or a store `asof load --follow` writes".to_owned(),
        ));
    };
    if !std::io::stdout().is_terminal() {
        writeln!(
            out,
            "asof: not a terminal, so no TUI; `asof load {} --db STORE --follow` follows it headless",
            source.display()
        )?;
        return Ok(());
    }
    let stop = Arc::new(AtomicBool::new(false));
    // A temporary store lives as long as the TUI.
    let mut _temporary = None;
    let (store_path, news, label) = if source::is_store(source) {
        args.trace.refuse_for(source)?;
        (source.to_owned(), None, None)
    } else {
        let (path, fresh) = match &args.db {
            Some(db) => (db.clone(), false),
            None => {
                let dir = tempfile::tempdir().map_err(|e| {
                    CliError::Runtime(format!("cannot make a temporary store: {e}"))
                })?;
                let path = dir.path().join("live.db");
                _temporary = Some(dir);
                (path, true)
            }
        };
        let (send, news) = std::sync::mpsc::channel();
        let (file, db, trace) = (source.to_owned(), path.clone(), args.trace);
        let follow = move |go_on: &mut dyn FnMut(&crate::store::follow::Batch) -> bool| {
            let mut told = false;
            follow::run(
                &file,
                &db,
                fresh,
                crate::tui::live::POLL,
                &trace,
                false,
                |batch| {
                    if batch.line == 0 && !std::mem::replace(&mut told, true) {
                        eprintln!(
                            "asof: waiting for the first complete line of {} (Ctrl-C stops)",
                            file.display()
                        );
                    }
                    go_on(batch)
                },
            )
        };
        crate::tui::live::follow_file(follow, stop.clone(), move |item| send.send(item).is_ok())
            .map_err(|stop| match stop {
                crate::store::follow::Stop::Store(e) => CliError::from(e),
                other => CliError::Input(other.to_string()),
            })?;
        let label = match &args.db {
            Some(db) => format!("{} → {}", source.display(), db.display()),
            None => source.display().to_string(),
        };
        (path, Some(news), Some(label))
    };
    let store = crate::store::Store::open(&store_path)?;
    // Read as a live screen reads it, so the watch thread's first read
    // again reads only what changed.
    let mut seed = None;
    let mut app = app_with(store, label, Some(source), args.review, |store| {
        let (timeline, kept) = crate::query::timeline::Timeline::load_live(store)?;
        seed = Some((timeline.clone(), kept));
        Ok(timeline)
    })?;
    app.reviewer = args.reviewer.clone();
    app.go_live();
    let live = crate::tui::LiveSource {
        store: store_path.clone(),
        stop,
        news,
        seed,
    };
    let origin = origin_of(Some(&store_path));
    crate::tui::run(
        app,
        log_of(&store_path),
        Some(store_path),
        Some(live),
        origin,
    )
    .map_err(|e| CliError::Runtime(format!("terminal: {e}")))
}

/// Runs one parsed command line, printing to stdout.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let stores = cli.command.as_ref().map_or_else(Vec::new, Command::stores);
    dispatch(cli).map_err(|e| match e {
        CliError::Damaged(reason) if stores.is_empty() => {
            CliError::Input(format!("not a readable asof store: {reason}"))
        }
        CliError::Damaged(reason) => CliError::Input(format!(
            "{}: not a readable asof store: {reason}",
            stores.join(" or ")
        )),
        e => e,
    })
}

impl Command {
    /// The stores the command reads, as the user named them: the place a
    /// damaged row's error names.
    fn stores(&self) -> Vec<String> {
        let source = |s: &SourceArg| {
            s.source
                .as_ref()
                .map_or_else(|| "demo".to_owned(), |p| p.display().to_string())
        };
        match self {
            Command::Tui(a) => vec![
                a.source
                    .as_ref()
                    .map_or_else(|| "demo".to_owned(), |p| p.display().to_string()),
            ],
            Command::Believed(a) => vec![source(&a.source)],
            Command::History(a) => vec![source(&a.source)],
            Command::Evidence(a) => vec![source(&a.source)],
            Command::Answer(a) => vec![source(&a.source)],
            Command::Changes(a) => vec![source(&a.source)],
            Command::Rebuild(a) | Command::Check(a) => vec![a.store.display().to_string()],
            Command::Fork(a) => vec![source(&a.source)],
            Command::Diff(a) => vec![a.parent.display().to_string(), a.fork.display().to_string()],
            Command::Influence(a) => vec![source(&a.source)],
            Command::Calls(a) => vec![source(&a.source)],
            Command::Review(a) => vec![source(&a.source)],
            Command::Compare(a) => vec![a.a.display().to_string(), a.b.display().to_string()],
            Command::Export(a) => match a.sources.is_empty() {
                true => vec!["demo".to_owned()],
                false => a.sources.iter().map(|p| p.display().to_string()).collect(),
            },
            Command::Ask(a) => vec![a.source().unwrap_or("demo").to_owned()],
            Command::Load(_)
            | Command::Validate(_)
            | Command::Gen(_)
            | Command::Import(_)
            | Command::Serve(_)
            | Command::Completions { .. }
            | Command::Man => Vec::new(),
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match cli.command {
        None => interactive(TuiArgs::default(), &mut out),
        Some(Command::Tui(args)) if args.follow => live(args, &mut out),
        Some(Command::Tui(args)) => interactive(args, &mut out),
        Some(Command::Load(args)) => load::load(args, &mut out),
        Some(Command::Validate(args)) => load::validate(args, &mut out),
        Some(Command::Believed(args)) => queries::believed(args, &mut out),
        Some(Command::History(args)) => queries::history(args, &mut out),
        Some(Command::Evidence(args)) => queries::evidence(args, &mut out),
        Some(Command::Answer(args)) => queries::answer(args, &mut out),
        Some(Command::Changes(args)) => queries::changes(args, &mut out),
        Some(Command::Rebuild(args)) => load::rebuild(args, &mut out),
        Some(Command::Check(args)) => load::check(args, &mut out),
        Some(Command::Gen(args)) => synth::gen_command(args, &mut out),
        Some(Command::Fork(args)) => forks::fork_command(args, &mut out),
        Some(Command::Diff(args)) => forks::diff_command(args, &mut out),
        Some(Command::Influence(args)) => forks::influence_command(args, &mut out),
        Some(Command::Calls(args)) => calls::run(args, &mut out),
        Some(Command::Review(args)) => review::run(args, &mut out),
        Some(Command::Compare(args)) => compare::run(args, &mut out),
        Some(Command::Import(command)) => import::run(command, &mut out),
        Some(Command::Serve(args)) => serve::run(args, &mut out),
        Some(Command::Export(args)) => export::run(args, &mut out),
        Some(Command::Ask(args)) => ask::run(args, &mut out),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "asof",
                &mut out,
            );
            Ok(())
        }
        Some(Command::Man) => {
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
            Ok(())
        }
    }
}

/// Writes `text` to `output` atomically (and says so), or to standard output.
fn write_to(
    output: Option<&std::path::Path>,
    text: &str,
    out: &mut impl std::io::Write,
) -> Result<(), CliError> {
    match output {
        None => out.write_all(text.as_bytes())?,
        Some(path) => {
            crate::export::write_shared(path, text)
                .map_err(|e| CliError::Input(format!("{}: cannot write: {e}", path.display())))?;
            writeln!(out, "wrote {}", path.display())?;
        }
    }
    Ok(())
}
