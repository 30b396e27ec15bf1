//! `import graphiti|facts|otlp`: an existing agent memory or trace into a new
//! store, with the import summary.

use super::{CliError, FormatArg, OutputFormat};
use crate::import::{self, ImportReport, facts, graphiti, otlp};
use crate::model::Cardinality;
use crate::store::Store;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// A Graphiti/Zep export of entity edges (JSON: an array, or {edges, nodes, episodes}).
    Graphiti(GraphitiArgs),
    /// A SQLite table of bitemporal facts (subject, predicate, object, valid_from,
    /// valid_to, ingested_at, expired_at, source, confidence).
    Facts(FactsArgs),
    /// An OpenTelemetry trace of an agent run (OTLP/JSON: one request, or JSON Lines
    /// as the Collector's file exporter writes them), in the GenAI conventions,
    /// their older event form, OpenInference or OpenLLMetry.
    Otlp(OtlpArgs),
}

#[derive(Debug, Args)]
pub struct OtlpArgs {
    /// The OTLP/JSON files of the run, read as one: traces, and the logs the
    /// older GenAI conventions write message content to (one request a line,
    /// or one request a file; a line may be either).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub target: Target,
}

/// How an OpenTelemetry trace is read (design.md §7): by `import otlp`, and by
/// `load`, `validate` and `tui` when their file is a trace.
#[derive(Debug, Default, Args)]
pub struct TraceArgs {
    /// Another OTLP/JSON file of the same run, read with the first: the logs
    /// export beside a trace (instrumentations on the older GenAI conventions
    /// put message content there), or more of its spans. Repeatable.
    #[arg(
        long = "with",
        value_name = "FILE",
        help_heading = "Reading an OTLP trace"
    )]
    pub with: Vec<PathBuf>,
    #[command(flatten)]
    pub read: TraceOptions,
}

/// How the spans are read, whatever brings them (files, or `asof serve`'s
/// clients).
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Reading an OTLP trace")]
pub struct TraceOptions {
    /// A rules file that reads beliefs from the agent's prose (docs/import.md).
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// The agent of every span (default: the nearest agent span's name, else service.name).
    #[arg(long)]
    pub agent: Option<String>,
    /// The tool whose calls record a belief (arguments: topic, claim, confidence, …)
    /// [default: record_belief].
    #[arg(long)]
    pub belief_tool: Option<String>,
    /// The tool whose calls retract a belief (arguments: topic, claim, reason, …)
    /// [default: retract_belief].
    #[arg(long)]
    pub retract_tool: Option<String>,
    /// Where beliefs naming no valid_from start: a time, or `trace-start` [default: trace-start].
    #[arg(long, value_parser = parse_valid_from)]
    pub valid_from: Option<otlp::ValidFrom>,
    /// Multi-valued topics, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub many: Vec<String>,
    /// Skip lines that do not parse (counted on standard error and in the
    /// store's provenance) instead of refusing the file.
    #[arg(long)]
    pub skip_bad_lines: bool,
}

impl TraceArgs {
    /// The import options, with the rules file read.
    pub fn options(&self) -> Result<otlp::Options, CliError> {
        self.read.options()
    }

    /// Refuses these options for `file`, which is not a trace, when any was given.
    pub fn refuse_for(&self, file: &std::path::Path) -> Result<(), CliError> {
        if !self.with.is_empty() {
            return refuse("--with", file);
        }
        self.read.refuse_for(file)
    }
}

impl TraceOptions {
    /// The import options, with the rules file read.
    pub fn options(&self) -> Result<otlp::Options, CliError> {
        let (rules, rules_file) = match &self.rules {
            Some(path) => {
                let name = path.display().to_string();
                let text = import::read_text(path, 16 << 20)?;
                let sha = crate::fork::sha256_hex(text.as_bytes());
                (otlp::rules::parse(&name, &text)?, Some((name, sha)))
            }
            None => (Vec::new(), None),
        };
        let defaults = otlp::Options::default();
        Ok(otlp::Options {
            agent: self.agent.clone(),
            belief_tool: self.belief_tool.clone().unwrap_or(defaults.belief_tool),
            retract_tool: self.retract_tool.clone().unwrap_or(defaults.retract_tool),
            valid_from: self.valid_from.unwrap_or(defaults.valid_from),
            many: self.many.clone(),
            rules,
            skip_bad_lines: self.skip_bad_lines,
            rules_file,
        })
    }

    /// Refuses these options for `file`, which is not a trace, when any was given.
    pub fn refuse_for(&self, file: &std::path::Path) -> Result<(), CliError> {
        let given = [
            ("--rules", self.rules.is_some()),
            ("--agent", self.agent.is_some()),
            ("--belief-tool", self.belief_tool.is_some()),
            ("--retract-tool", self.retract_tool.is_some()),
            ("--valid-from", self.valid_from.is_some()),
            ("--many", !self.many.is_empty()),
            ("--skip-bad-lines", self.skip_bad_lines),
        ];
        match given.iter().find(|(_, given)| *given) {
            Some((flag, _)) => refuse(flag, file),
            None => Ok(()),
        }
    }
}

/// `flag` given for `file`, an asof dataset.
fn refuse(flag: &str, file: &std::path::Path) -> Result<(), CliError> {
    Err(CliError::Input(format!(
        "{}: {flag} is for reading an OTLP trace, and this is an asof dataset",
        file.display()
    )))
}

/// `--valid-from`: `trace-start` or a timestamp.
fn parse_valid_from(text: &str) -> Result<otlp::ValidFrom, String> {
    if text == "trace-start" {
        return Ok(otlp::ValidFrom::TraceStart);
    }
    crate::time::parse(text)
        .map(otlp::ValidFrom::At)
        .map_err(|e| format!("{e}, or `trace-start`"))
}

#[derive(Debug, Args)]
pub struct Target {
    /// The store to create (must not exist unless --force).
    #[arg(long)]
    pub db: PathBuf,
    /// Replace an existing store (atomically: the old one stays if the import fails).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct GraphitiArgs {
    /// The JSON export of the graph's entity edges.
    pub input: PathBuf,
    /// What an edge claims: the target entity's name, or the edge's fact sentence.
    #[arg(long, value_enum, default_value_t = graphiti::ClaimFrom::Target)]
    pub claim: graphiti::ClaimFrom,
    /// Treat each (source entity, relation) as single-valued: a new target replaces the old.
    #[arg(long)]
    pub single: bool,
    /// How close two writes must be to belong to one episode's processing: an edge
    /// expired this soon after its creation was born expired (e.g. 60s, 2m).
    #[arg(long, default_value = "60s", value_parser = parse_window)]
    pub episode_window: crate::time::Micros,
    #[command(flatten)]
    pub target: Target,
}

#[derive(Debug, Args)]
pub struct FactsArgs {
    /// The SQLite file holding the facts table.
    pub input: PathBuf,
    /// The table to read.
    #[arg(long, default_value = "facts")]
    pub table: String,
    /// The agent whose memory this is.
    #[arg(long, default_value = "memory")]
    pub agent: String,
    /// Multi-valued predicates, comma-separated (`*`: all); the others are single-valued.
    #[arg(long, value_delimiter = ',')]
    pub many: Vec<String>,
    #[command(flatten)]
    pub target: Target,
}

pub fn run(command: ImportCommand, out: &mut impl Write) -> Result<(), CliError> {
    let (draft, target) = match command {
        ImportCommand::Graphiti(args) => {
            let name = args.input.display().to_string();
            let text = import::read_text(&args.input, graphiti::MAX_BYTES)?;
            let options = graphiti::Options {
                claim: args.claim,
                cardinality: if args.single {
                    Cardinality::One
                } else {
                    Cardinality::Many
                },
                episode_window: args.episode_window,
            };
            (graphiti::read(&name, &text, options)?, args.target)
        }
        ImportCommand::Facts(args) => {
            let options = facts::Options {
                table: args.table,
                agent: args.agent,
                many: args.many,
            };
            (facts::read(&args.input, &options)?, args.target)
        }
        ImportCommand::Otlp(args) => {
            let paths: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
            (otlp_draft(&paths, &args.trace)?, args.target)
        }
    };
    store(draft, &target, out)
}

/// The import of the OTLP files `paths`, and those of `--with`, with
/// `trace`'s options: `import otlp`, and `load`, `validate` and `tui` of a trace.
pub fn otlp_draft(paths: &[&Path], trace: &TraceArgs) -> Result<import::Draft, CliError> {
    let options = trace.options()?;
    let all: Vec<&Path> = paths
        .iter()
        .copied()
        .chain(trace.with.iter().map(PathBuf::as_path))
        .collect();
    let names: Vec<String> = all.iter().map(|p| p.display().to_string()).collect();
    let files: Vec<(&str, &Path)> = names
        .iter()
        .map(String::as_str)
        .zip(all.iter().copied())
        .collect();
    let mut bar = super::progress::Progress::new(
        &format!("reading {}", names.join(", ")),
        super::progress::Unit::Bytes,
    );
    let draft = otlp::read_files(&files, &options, &mut |done, total| bar.show(done, total));
    bar.clear();
    let mut draft = draft?;
    // An archive of `asof serve` is in segments: one read without the one
    // after or before it is said, not left to look whole.
    for path in &all {
        let next = asof_core::segments::after(path);
        if next.is_file() && !all.contains(&next.as_path()) {
            draft.report.notes.push(format!(
                "{} goes on in {} (asof serve's archive, in segments), not read: import {}* to read them all",
                path.display(),
                next.display(),
                path.display()
            ));
        }
        if let Some(earlier) = asof_core::segments::before(path)
            && earlier.is_file()
            && !all.contains(&earlier.as_path())
        {
            draft.report.notes.push(format!(
                "{} follows {} (asof serve's archive, in segments), not read: what the agent did before it is missing",
                path.display(),
                earlier.display()
            ));
        }
    }
    Ok(draft)
}

/// Validates and replays an importer's draft, writes the store and prints the summary.
pub fn store(draft: import::Draft, target: &Target, out: &mut impl Write) -> Result<(), CliError> {
    store_reviewed(draft, target, None, out)
}

/// [`store`], with a review's findings in the store's review table
/// (`asof load TRACE --review FILE`).
pub fn store_reviewed(
    draft: import::Draft,
    target: &Target,
    review: Option<&std::path::Path>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let input = draft.report.input.clone();
    let (parsed, report, _) = import::finish(&input, draft)?;
    let review = match review {
        Some(path) => Some(super::review::ForLoad::read(path, &parsed.dataset)?),
        None => None,
    };
    let meta = report
        .meta_rows()
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    let versions = Store::load_reviewed(
        &target.db,
        &parsed,
        target.force,
        &meta,
        review.as_ref().map(super::review::ForLoad::as_stored),
    )?
    .versions
    .len();
    print(&report, &target.db, versions, target.format.format, out)?;
    if let Some(r) = &review {
        // On stderr: stdout may be the import summary's JSON.
        eprintln!(
            "asof: with {} review finding(s) from {} in the store's review table (not in its log)",
            r.findings.len(),
            r.file
        );
    }
    Ok(())
}

fn print(
    report: &ImportReport,
    db: &std::path::Path,
    versions: usize,
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if let Some(note) = report.bad_lines_note() {
        eprintln!("asof: {note}");
    }
    if format == OutputFormat::Json {
        let mut v = serde_json::to_value(report).map_err(|e| CliError::Runtime(e.to_string()))?;
        v["store"] = db.display().to_string().into();
        v["versions"] = versions.into();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| CliError::Runtime(e.to_string()))?
        )?;
        return Ok(());
    }
    let md = format == OutputFormat::Md;
    writeln!(
        out,
        "{}imported {} ({}) into {}: {}, {} belief versions",
        if md { "# " } else { "" },
        report.input,
        report.format,
        db.display(),
        report.headline(),
        versions
    )?;
    if md {
        writeln!(out)?;
    }
    write!(out, "{}", crate::export::summary::details(report, md))?;
    Ok(())
}

/// `--episode-window`: a duration as datasets write them.
fn parse_window(text: &str) -> Result<crate::time::Micros, String> {
    crate::time::parse_duration(text).map_err(|e| e.to_string())
}
