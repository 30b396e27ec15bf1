//! `asof compare A B`: two runs of one incident side by side (design.md §5,
//! "Two runs") — where they parted, what each had seen that the other had
//! not, and which reached the truth first.

use super::import::TraceOptions;
use super::{CliError, source};
use crate::engine::answers::{Steps, answers_of};
use crate::engine::compare::{self, Align, Maps, Run};
use crate::export::compare as written;
use crate::import::otlp;
use crate::model::Dataset;
use crate::store::Store;
use clap::{Args, ValueEnum};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlignArg {
    /// Each run's time since its first event (the default when either is a trace).
    Start,
    /// Recorded time as recorded (the default otherwise; a fork and its parent).
    Absolute,
    /// The n-th assertion of each run on a topic.
    Step,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
    Md,
    /// One self-contained HTML file: the runs' lanes per topic, and the rest.
    Html,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run A: a store, a dataset, an OTLP trace, or `demo`.
    pub a: PathBuf,
    /// Run B: a store, a dataset, an OTLP trace, or `demo`.
    pub b: PathBuf,
    /// The clock the runs are set side by side on.
    #[arg(long, value_enum)]
    pub align: Option<AlignArg>,
    /// A's topics as B names them: `a=b,…` (others match by id).
    #[arg(long, value_name = "A=B,…")]
    pub topic_map: Option<String>,
    /// A's agents as B names them: `a=b,…` (default: by id, or the only agent of each run).
    #[arg(long, value_name = "A=B,…")]
    pub agent_map: Option<String>,
    /// The true claim of topics (A's ids): `topic=claim,…`; otherwise a run's resolution.
    #[arg(long, value_name = "TOPIC=CLAIM,…")]
    pub truth: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// The file to write (default: standard output). Written atomically.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// How a run that is an OTLP trace is read (both, when both are).
    #[command(flatten)]
    pub trace: TraceOptions,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
}

/// `a=b,c=d` as pairs; `what` names the option in the error.
fn pairs(what: &str, text: &str) -> Result<BTreeMap<String, String>, CliError> {
    let mut map = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
                map.insert(k.trim().to_owned(), v.trim().to_owned());
            }
            _ => {
                return Err(CliError::Input(format!(
                    "{what} {text}: `{item}` is not NAME=NAME; give pairs separated by commas"
                )));
            }
        }
    }
    Ok(map)
}

/// Refuses a name that is not one of `known` (a run's topics or agents).
fn known(what: &str, run: &str, kind: &str, name: &str, known: &[String]) -> Result<(), CliError> {
    if known.iter().any(|k| k == name) {
        return Ok(());
    }
    Err(CliError::Input(format!(
        "{what}: run {run} has no {kind} {name}; its {kind}s are: {}",
        known.join(", ")
    )))
}

/// Each (agent, topic)'s answers over recorded time.
type Answers = BTreeMap<(String, String), Steps>;

/// A run's store (`demo`: the bundled demo; a trace read with `options`),
/// its log, and its answers.
fn read(
    path: &Path,
    options: &otlp::Options,
    redact: Option<&crate::redact::Redactor>,
) -> Result<(Store, Dataset, Answers), CliError> {
    let store = source::open_with((path.as_os_str() != "demo").then_some(path), options)?;
    // Redacted, each run is compared as it will be shown: a secret never
    // reaches the comparison, so no cut of it reaches the output.
    let store = match redact {
        Some(r) => store.redacted(&|t| r.redact(t))?,
        None => store,
    };
    let log = store.log()?;
    let answers = answers_of(store.versions()?.iter());
    Ok((store, log, answers))
}

/// Both runs read: each store, log and answers.
struct Both {
    a: (Store, Dataset, Answers),
    b: (Store, Dataset, Answers),
}

/// Reads runs `a` and `b` at once, one on each core; a trace with `trace`'s
/// options (refused when neither is a trace).
fn read_both(
    a: &Path,
    b: &Path,
    trace: &TraceOptions,
    redact: Option<&crate::redact::Redactor>,
) -> Result<Both, CliError> {
    if !source::is_otlp(a) && !source::is_otlp(b) {
        trace.refuse_for(a)?;
    }
    let options = trace.options()?;
    let (read_a, read_b) = std::thread::scope(|scope| {
        let read_b = scope.spawn(|| read(b, &options, redact));
        (read(a, &options, redact), read_b.join())
    });
    Ok(Both {
        a: read_a?,
        b: read_b.map_err(|_| CliError::Runtime("reading run B failed".to_owned()))??,
    })
}

/// The clock `align` names, or the default for these runs.
fn clock(align: Option<AlignArg>, a: &Path, b: &Path) -> Align {
    match align {
        Some(AlignArg::Start) => Align::Start,
        Some(AlignArg::Absolute) => Align::Absolute,
        Some(AlignArg::Step) => Align::Step,
        None if source::is_otlp(a) || source::is_otlp(b) => Align::Start,
        None => Align::Absolute,
    }
}

/// `asof tui A --compare B`: the two runs for the TUI's compare view.
pub fn two_runs(
    a: &Path,
    b: &Path,
    align: Option<AlignArg>,
    trace: &TraceOptions,
) -> Result<crate::tui::compare_view::TwoRuns, CliError> {
    let Both {
        a: (store_a, log_a, answers_a),
        b: (store_b, log_b, answers_b),
    } = read_both(a, b, trace, None)?;
    let (run_a, run_b) = (Run::of(&log_a, answers_a), Run::of(&log_b, answers_b));
    let compared = compare::compare(
        &run_a,
        &run_b,
        clock(align, a, b),
        &Maps::default(),
        &BTreeMap::new(),
    );
    Ok(crate::tui::compare_view::TwoRuns::of(
        store_a.label(),
        store_b.label(),
        &compared,
        &run_a,
        &run_b,
    ))
}

pub fn run(args: CompareArgs, out: &mut impl Write) -> Result<(), CliError> {
    let redactor = args.redact.redactor()?;
    let Both {
        a: (store_a, log_a, answers_a),
        b: (store_b, log_b, answers_b),
    } = read_both(&args.a, &args.b, &args.trace, redactor.as_deref())?;
    let run_a = Run::of(&log_a, answers_a);
    let run_b = Run::of(&log_b, answers_b);
    let maps = Maps {
        topics: pairs("--topic-map", args.topic_map.as_deref().unwrap_or(""))?,
        agents: pairs("--agent-map", args.agent_map.as_deref().unwrap_or(""))?,
    };
    for (x, y) in &maps.topics {
        known("--topic-map", "A", "topic", x, &run_a.topics)?;
        known("--topic-map", "B", "topic", y, &run_b.topics)?;
    }
    for (x, y) in &maps.agents {
        known("--agent-map", "A", "agent", x, &run_a.agents)?;
        known("--agent-map", "B", "agent", y, &run_b.agents)?;
    }
    let truth = pairs("--truth", args.truth.as_deref().unwrap_or(""))?;
    for topic in truth.keys() {
        known("--truth", "A", "topic", topic, &run_a.topics)?;
    }
    let align = clock(args.align, &args.a, &args.b);
    let compared = compare::compare(&run_a, &run_b, align, &maps, &truth);
    let (la, lb) = (store_a.label(), store_b.label());
    // Where each run came from (its bytes' SHA-256, how it was read), for the
    // reports that are read apart from the command that made them (Markdown
    // and HTML; hashing two large stores is not worth it for the terminal).
    let reports = matches!(args.format, CompareFormat::Md | CompareFormat::Html);
    let provenance = [("A", &args.a, &store_a), ("B", &args.b, &store_b)]
        .into_iter()
        .filter(|_| reports)
        .map(|(side, path, store)| -> Result<String, CliError> {
            let origin = super::source::origin(Some(path))?;
            // A trace's store names the options it was read with.
            let line = crate::export::Provenance::of(store, origin)?.line();
            Ok(format!("{side}: {line}"))
        })
        .chain(
            redactor
                .as_ref()
                .filter(|_| reports)
                .map(|r| Ok(r.provenance_line())),
        )
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(r) = &redactor {
        eprintln!("asof: {}", r.provenance_line());
    }
    let text = match args.format {
        CompareFormat::Json => format!(
            "{}\n",
            written::json(la, lb, &compared).map_err(|e| CliError::Runtime(e.to_string()))?
        ),
        CompareFormat::Html => written::html(la, lb, &compared, &run_a, &run_b, &provenance),
        CompareFormat::Table | CompareFormat::Md => written::text(
            la,
            lb,
            &compared,
            (&run_a, &run_b),
            &provenance,
            args.format == CompareFormat::Md,
        ),
    };
    super::write_to(args.output.as_deref(), &text, out)
}
