//! `export`: an audit report (Markdown, or self-contained HTML) or a topic's
//! plane (SVG), to a file or stdout; or many stores as Parquet for a fleet's
//! questions (docs/fleet.md).

use super::{CliError, source};
use crate::export::{ExportError, Provenance, html, markdown, svg};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The audit report.
    Md,
    /// The report as one self-contained HTML file with a recorded-time slider (for sharing).
    Html,
    /// One topic's valid × recorded plane (needs --topic).
    Svg,
    /// Every STORE's tables as Hive-partitioned Parquet under --out DIR, for DuckDB,
    /// Spark, Trino or ClickHouse (docs/fleet.md).
    Parquet,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  asof export incident.db --format html -o report.html\n  asof export stores/*.db --format parquet --out fleet/"
)]
pub struct ExportArgs {
    /// A store (.db), a dataset (.yaml/.yml/.jsonl), or omitted for the bundled demo;
    /// with --format parquet, any number of stores.
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<PathBuf>,
    /// What to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The topic to draw (svg).
    #[arg(long)]
    pub topic: Option<String>,
    /// The agent whose beliefs to draw (svg; default: the first holding any).
    #[arg(long)]
    pub agent: Option<String>,
    /// With --format html: a what-if fork of SOURCE whose divergence and time to the
    /// truth the report adds.
    #[arg(long)]
    pub fork: Option<PathBuf>,
    /// The file to write (default: standard output). Written atomically.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// With --format parquet: the directory to write (created if missing); an
    /// incident already there from an unchanged store is skipped.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --format parquet: how many stores to export at once (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// The review whose findings the report adds (a "Review findings" section
    /// and its provenance). Default: SOURCE's name with `.review.jsonl`,
    /// beside it, when it exists, and a store's own review table.
    #[arg(long, value_name = "FILE")]
    pub review: Option<PathBuf>,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
}

impl ExportArgs {
    /// The one SOURCE of a report (none: the bundled demo).
    pub fn source(&self) -> Option<&std::path::Path> {
        self.sources.first().map(PathBuf::as_path)
    }
}

pub fn run(args: ExportArgs, out: &mut impl Write) -> Result<(), CliError> {
    if args.format == ExportFormat::Parquet {
        if args.output.is_some()
            || args.topic.is_some()
            || args.agent.is_some()
            || args.fork.is_some()
        {
            return Err(CliError::Input(
                "--format parquet takes stores, --out DIR and --jobs; -o, --topic, --agent and --fork are for reports".into(),
            ));
        }
        if args.review.is_some() {
            return Err(CliError::Input(
                "--review adds findings to a report (md, html, svg); Parquet holds each store's log and derived tables".into(),
            ));
        }
        let redactor = args.redact.redactor()?;
        return super::fleet::export(&args.sources, args.out.as_deref(), args.jobs, redactor, out);
    }
    if args.sources.len() > 1 {
        return Err(CliError::Input(format!(
            "--format {} writes one source's report, and {} were given: only --format parquet takes many stores",
            args.format
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_owned()),
            args.sources.len()
        )));
    }
    if args.out.is_some() || args.jobs.is_some() {
        return Err(CliError::Input(
            "--out and --jobs go with --format parquet; a report is written with -o FILE".into(),
        ));
    }
    let source_path = args.source();
    let store = source::open(source_path)?;
    let named: Vec<PathBuf> = args.review.iter().cloned().collect();
    let mut review = super::review::resolve(&store, source_path, &named, false)?;
    if let Some(line) = review.announce() {
        eprintln!("asof: {line}");
    }
    let (store, redactor) = args.redact.apply(store)?;
    if let Some(r) = &redactor {
        super::review::redact_review(&mut review, r);
    }
    let label = store.label().to_owned();
    let origin = source::origin(source_path)?;
    let mut prov = Provenance::of(&store, origin)?;
    if let Some(what_if) = &prov.what_if {
        prov.divergence = Some(super::forks::divergence(
            &store,
            &prov.origin.name,
            what_if,
            redactor.as_deref(),
        )?);
    }
    prov.review = (!review.sources.is_empty()).then_some(review);
    prov.redacted = redactor.as_ref().map(|r| r.provenance_line());
    let failed = |e: ExportError| match e {
        ExportError::Store(e) => CliError::from(e),
        other => CliError::Input(format!("{label}: {other}")),
    };
    if args.fork.is_some() && args.format != ExportFormat::Html {
        return Err(CliError::Input(
            "--fork adds a fork's divergence to the HTML report: use it with --format html (a fork's own Markdown report has its diff: `asof export FORK.db --format md`)".into(),
        ));
    }
    let text = match args.format {
        // Handled above.
        ExportFormat::Parquet => return Ok(()),
        ExportFormat::Md => markdown::report(&store, &prov).map_err(failed)?,
        ExportFormat::Html => {
            let diff = match &args.fork {
                Some(fork) => {
                    let mut json = Vec::new();
                    super::forks::diff_on(
                        &store,
                        source_path,
                        fork,
                        super::OutputFormat::Json,
                        &mut json,
                    )?;
                    let mut diff: serde_json::Value = serde_json::from_slice(&json)
                        .map_err(|e| CliError::Runtime(e.to_string()))?;
                    if let Some(r) = &redactor {
                        super::redact::redact_json(&mut diff, r);
                    }
                    Some(diff)
                }
                None => None,
            };
            html::report(&store, diff.as_ref(), &prov).map_err(failed)?
        }
        ExportFormat::Svg => {
            let Some(topic) = args.topic.as_deref() else {
                let topics: Vec<&str> = store
                    .header()
                    .topics
                    .iter()
                    .map(|t| t.id.as_str())
                    .collect();
                return Err(CliError::Input(format!(
                    "{label}: --format svg draws one topic: name it with --topic; the topics are: {}",
                    topics.join(", ")
                )));
            };
            // Unknown ids get the same sentence as in every query command.
            super::queries::check_filter(&store, args.agent.as_deref(), Some(topic))?;
            svg::standalone(&store, topic, args.agent.as_deref(), &prov).map_err(failed)?
        }
    };
    // The counts are known once everything written was read through it.
    let text = match &redactor {
        Some(r) => {
            let line = r.provenance_line();
            eprintln!("asof: {line}");
            text
        }
        None => text,
    };
    super::write_to(args.output.as_deref(), &text, out)
}
