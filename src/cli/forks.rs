//! `fork` and `diff`: what-if forks of a store and their comparison with the parent.

use super::{CliError, FormatArg, OutputFormat, SourceArg, source};
use crate::export::table::Table;
use crate::fork::diff::{self, Diff};
use crate::fork::{self, PolicyReport};
use crate::store::Store;
use crate::time::{self, Micros};
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ForkArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// Evidence ids to remove, comma-separated (E5,E7).
    #[arg(
        long,
        value_delimiter = ',',
        required_unless_present_any = ["without_rejected", "without_rejected_by"]
    )]
    pub without: Vec<String>,
    /// Remove every evidence item rejected by --at (design.md §4): what the agent
    /// would have believed had it ignored what was later rejected.
    #[arg(long)]
    pub without_rejected: bool,
    /// Remove every evidence item this review rejects (its latest verdict on
    /// the item is `rejected`): what the agent would have believed without
    /// what the reviewer rejected — a what-if of the review, labelled so.
    #[arg(long, value_name = "REVIEW", conflicts_with = "without_rejected")]
    pub without_rejected_by: Option<PathBuf>,
    /// With --without-rejected: rejected by this recorded time (default: the end of the log).
    #[arg(long, value_parser = super::when::parse, requires = "without_rejected")]
    pub at: Option<super::when::TimeArg>,
    /// The fork store to create (default: SOURCE-without-E5.db beside SOURCE).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing file at --out.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct InfluenceArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// Show only the first N items.
    #[arg(long)]
    pub top: Option<usize>,
    /// Only this agent's pairs: the evidence its assertions and retractions
    /// cite, ranked by what removing it changes for this agent alone.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only this topic's pairs: ranked by what removing an item changes on it.
    #[arg(long)]
    pub topic: Option<String>,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The parent: a store, a dataset, or `demo` for the bundled demo.
    pub parent: PathBuf,
    /// The fork store.
    pub fork: PathBuf,
    #[command(flatten)]
    pub format: FormatArg,
}

/// The SHA-256 a parent's lineage records: of its file, or of the bundled demo.
fn parent_sha(source: Option<&Path>) -> Result<String, CliError> {
    Ok(source::origin(source)?.sha256)
}

/// A what-if store's divergence from the record its lineage names (design.md §8),
/// for its reports; `fork_name` is the fork as the user named it. Not shown,
/// with the reason, when the parent cannot be opened or its bytes changed.
pub fn divergence(
    fork_store: &Store,
    fork_name: &str,
    what_if: &fork::WhatIf,
    redact: Option<&crate::redact::Redactor>,
) -> Result<crate::export::Divergence, CliError> {
    use crate::export::Divergence;
    let path = source::named(&what_if.parent);
    let opened = source::open(path).and_then(|p| match redact {
        Some(r) => Ok(p.redacted(&|t| r.redact(t))?),
        None => Ok(p),
    });
    let parent = match opened {
        Ok(p) => p,
        Err(e) => {
            return Ok(Divergence::NotShown(format!(
                "the parent could not be opened ({})",
                e.message()
            )));
        }
    };
    let sha = match parent_sha(path) {
        Ok(sha) => sha,
        Err(e) => return Ok(Divergence::NotShown(e.message().to_owned())),
    };
    if sha != what_if.parent_sha256 {
        return Ok(Divergence::NotShown(format!(
            "the file at {} is no longer the parent this fork was made from (its SHA-256 differs)",
            what_if.parent
        )));
    }
    Ok(Divergence::between(&parent, &sha, fork_store, fork_name)?)
}

fn default_out(source: Option<&Path>, removed: &[String]) -> PathBuf {
    let suffix = format!("-without-{}.db", removed.join("-"));
    match source {
        None => PathBuf::from(format!("payment-outage{suffix}")),
        Some(p) => {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "store".into());
            p.with_file_name(format!("{stem}{suffix}"))
        }
    }
}

pub fn fork_command(args: ForkArgs, out: &mut impl Write) -> Result<(), CliError> {
    let source_path = args.source.source.as_deref();
    let parent = source::open(source_path)?;
    let mut removed: Vec<String> = args
        .without
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    removed.dedup();
    let mut rejected = Vec::new();
    if args.without_rejected {
        let at = match &args.at {
            Some(at) => at.resolve(&parent)?,
            None => crate::query::quality::end_of_log(&parent)?,
        };
        let ledger = crate::query::quality::ledger(&parent)?;
        for (evidence, v) in ledger.rejected(at) {
            if !removed.iter().any(|r| r == evidence) {
                removed.push(evidence.to_owned());
            }
            rejected.push(fork::Rejected {
                evidence: evidence.to_owned(),
                verification: v.id.clone(),
                since: v.since,
                by: v.by.clone(),
                note: v.note.clone(),
            });
        }
        if rejected.is_empty() {
            return Err(CliError::Input(format!(
                "{}: no evidence is rejected by {}, so --without-rejected removes nothing",
                parent.label(),
                time::format(at)
            )));
        }
    }
    let mut review_named = None;
    if let Some(file) = &args.without_rejected_by {
        let review =
            super::review::resolve(&parent, source_path, std::slice::from_ref(file), false)?;
        // Each rejected item with the finding that rejects it (its latest verdict).
        let findings: Vec<crate::review::Finding> = review
            .rejected_evidence()
            .iter()
            .filter_map(|id| review.evidence_verdict(id).cloned())
            .collect();
        if findings.is_empty() {
            return Err(CliError::Input(format!(
                "{}: rejects no evidence (no evidence item's latest verdict is `rejected`), so --without-rejected-by removes nothing",
                file.display()
            )));
        }
        for f in findings {
            let Some(evidence) = f.target.id.clone() else {
                continue;
            };
            if !removed.contains(&evidence) {
                removed.push(evidence.clone());
            }
            rejected.push(fork::Rejected {
                evidence,
                verification: f.id.clone(),
                since: f.made_at,
                by: f.reviewer.clone(),
                note: f.note.clone(),
            });
        }
        let sha = review.sources.iter().rev().find_map(|s| {
            matches!(s.place, crate::review::Place::File(_)).then(|| s.sha256.clone())
        });
        review_named = Some(fork::label::review_named(
            &file.display().to_string(),
            &sha.unwrap_or_default(),
        ));
    }
    if removed.is_empty() {
        return Err(CliError::Input(
            "--without needs at least one evidence id".into(),
        ));
    }
    let path = args
        .out
        .unwrap_or_else(|| default_out(source_path, &removed));
    // A store file is forked by copying it and replaying only the pairs the
    // removed evidence reaches; a dataset or the demo is replayed whole.
    let log;
    let source = match source_path.filter(|p| source::is_store(p)) {
        Some(parent_path) => fork::whatif::Source::File {
            store: &parent,
            path: parent_path,
        },
        None => {
            log = parent.log()?;
            fork::whatif::Source::Log {
                store: &parent,
                log: &log,
                sha256: parent_sha(source_path)?,
            }
        }
    };
    let made = fork::whatif::fork_with(source, &removed, rejected, review_named, &path, args.force)
        .map_err(|e| match e {
            fork::whatif::WhatIfError::Fork(e) => {
                CliError::Input(format!("{}: {e}", parent.label()))
            }
            fork::whatif::WhatIfError::Store(e) => CliError::from(e),
            fork::whatif::WhatIfError::Source(e) => CliError::Input(e),
        })?;
    let fork_store = Store::open(&path)?;
    print(
        &parent,
        &fork_store,
        &made.report,
        &made.diff,
        Some(&made.parent_sha256),
        args.format.format,
        out,
    )
}

pub fn diff_command(args: DiffArgs, out: &mut impl Write) -> Result<(), CliError> {
    let parent_path = (args.parent.as_os_str() != "demo").then_some(args.parent.as_path());
    let parent = source::open(parent_path)?;
    diff_on(&parent, parent_path, &args.fork, args.format.format, out)
}

/// [`diff_command`] with the parent already open (`parent_path`: its file,
/// `None` for the bundled demo), in `format`.
pub fn diff_on(
    parent: &Store,
    parent_path: Option<&std::path::Path>,
    fork: &std::path::Path,
    format: super::OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let fork_store = Store::open(fork)?;
    let report: PolicyReport = match fork_store.meta("fork_report")? {
        Some(text) => serde_json::from_str(&text).map_err(|e| {
            CliError::Input(format!("{}: damaged fork lineage: {e}", fork.display()))
        })?,
        None => {
            return Err(CliError::Input(format!(
                "{}: not a fork (no lineage); make one with `asof fork --without …`",
                fork.display()
            )));
        }
    };
    let sha = parent_sha(parent_path)?;
    let d = diff::compare_stores(parent, &sha, &fork_store)?;
    print(parent, &fork_store, &report, &d, Some(&sha), format, out)
}

fn print(
    parent: &Store,
    fork_store: &Store,
    report: &PolicyReport,
    d: &Diff,
    parent_sha: Option<&str>,
    format: OutputFormat,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let recorded_sha = fork_store.meta("fork_parent_sha256")?;
    let verified = parent_sha.is_some() && recorded_sha.as_deref() == parent_sha;
    match format {
        OutputFormat::Json => {
            let v = diff::json(
                parent.label(),
                fork_store.label(),
                report,
                d,
                recorded_sha,
                verified,
            );
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).map_err(|e| CliError::Runtime(e.to_string()))?
            )?;
        }
        OutputFormat::Table | OutputFormat::Md => {
            let md = format == OutputFormat::Md;
            let render = |t: &Table| if md { t.markdown() } else { t.text() };
            let heading = |s: &str| {
                if md {
                    format!("\n## {s}\n\n")
                } else {
                    format!("\n{s}:\n")
                }
            };
            writeln!(
                out,
                "{}fork {} of {} without {} — a replay, not a causal model{}",
                if md { "# " } else { "" },
                fork_store.label(),
                parent.label(),
                report.removed.join(", "),
                if verified {
                    ""
                } else {
                    " (parent SHA-256 differs from the fork's lineage)"
                },
            )?;
            let list = |ids: &[String]| {
                if ids.is_empty() {
                    "none".to_owned()
                } else {
                    ids.join(", ")
                }
            };
            writeln!(out, "{}", heading("Policy").trim_end())?;
            for r in &report.rejected {
                writeln!(
                    out,
                    "{}removed {}: rejected by {} at {} ({}){}",
                    if md { "- " } else { "  " },
                    r.evidence,
                    if r.by.is_empty() { "someone" } else { &r.by },
                    time::format(r.since),
                    r.verification,
                    r.note
                        .as_ref()
                        .map(|n| format!(": “{n}”"))
                        .unwrap_or_default()
                )?;
            }
            writeln!(
                out,
                "{}dropped assertions: {}",
                if md { "- " } else { "  " },
                list(&report.dropped)
            )?;
            let scaled: Vec<String> = report
                .scaled
                .iter()
                .map(|s| format!("{} {:.3}→{:.3}", s.assertion, s.from, s.to))
                .collect();
            writeln!(
                out,
                "{}scaled assertions: {}",
                if md { "- " } else { "  " },
                list(&scaled)
            )?;
            writeln!(
                out,
                "{}dropped retractions: {}",
                if md { "- " } else { "  " },
                list(&report.dropped_retractions)
            )?;
            writeln!(
                out,
                "{}retractions with nothing to retract: {}",
                if md { "- " } else { "  " },
                list(&report.noop_retractions)
            )?;
            if !report.dropped_verifications.is_empty() {
                writeln!(
                    out,
                    "{}verifications of removed evidence (dropped with it): {}",
                    if md { "- " } else { "  " },
                    list(&report.dropped_verifications)
                )?;
            }
            let mut windows = Table::new(vec!["AGENT", "TOPIC", "FROM", "TO", "PARENT", "FORK"]);
            for ((agent, topic), ws) in &d.divergence {
                for w in ws {
                    windows.row(vec![
                        agent.clone(),
                        topic.clone(),
                        time::format(w.from),
                        time::format(w.to),
                        w.a.clone().unwrap_or_else(|| "(none)".into()),
                        w.b.clone().unwrap_or_else(|| "(none)".into()),
                    ]);
                }
            }
            write!(
                out,
                "{}",
                heading("Divergence windows (the working answer differs)")
            )?;
            if windows.is_empty() {
                writeln!(out, "none: the fork answers exactly like the parent")?;
            } else {
                write!(out, "{}", render(&windows))?;
            }
            let mut truth = Table::new(vec![
                "AGENT",
                "TOPIC",
                "PARENT CONVERGED",
                "PARENT WRONG",
                "FORK CONVERGED",
                "FORK WRONG",
            ]);
            let converged = |t: Option<Micros>| t.map_or("never".to_owned(), time::format);
            for ((agent, topic), p, f) in &d.truth {
                truth.row(vec![
                    agent.clone(),
                    topic.clone(),
                    converged(p.converged_at),
                    time::format_duration(p.time_wrong_ms * 1000),
                    converged(f.converged_at),
                    time::format_duration(f.time_wrong_ms * 1000),
                ]);
            }
            if !truth.is_empty() {
                write!(
                    out,
                    "{}",
                    heading("Time to truth (topics with a resolution)")
                )?;
                write!(out, "{}", render(&truth))?;
            }
        }
    }
    Ok(())
}

pub fn influence_command(args: InfluenceArgs, out: &mut impl Write) -> Result<(), CliError> {
    influence_on(&args.source.open()?, args, out)
}

/// [`influence_command`] on a store already open (`args.source` is not read).
pub fn influence_on(
    store: &crate::store::Store,
    args: InfluenceArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let log = store.log()?;
    let replay = store.replay()?;
    let mut ranking = crate::fork::influence::influence(&log, &replay);
    if let Some(agent) = &args.agent
        && !log.header.agents.iter().any(|a| &a.id == agent)
    {
        return Err(CliError::Input(format!(
            "{}: no agent `{agent}`",
            store.label()
        )));
    }
    if let Some(topic) = &args.topic
        && log.header.topic(topic).is_none()
    {
        return Err(CliError::Input(format!(
            "{}: no topic `{topic}`",
            store.label()
        )));
    }
    if args.agent.is_some() || args.topic.is_some() {
        let keep = |p: &crate::fork::influence::PairInfluence| {
            args.agent.as_ref().is_none_or(|a| &p.agent == a)
                && args.topic.as_ref().is_none_or(|t| &p.topic == t)
        };
        ranking = ranking
            .iter()
            .filter_map(|item| item.restricted(keep))
            .collect();
        crate::fork::influence::rank(&mut ranking);
    }
    if let Some(n) = args.top {
        ranking.truncate(n);
    }
    let any_resolved = log.header.topics.iter().any(|t| t.resolution.is_some());
    let truth_known = |item| crate::fork::influence::truth_known(&log.header, item);
    match args.format.format {
        OutputFormat::Json => {
            let ranking: Vec<serde_json::Value> = ranking
                .iter()
                .map(|item| {
                    let mut v = json!(item);
                    v["truth_known"] = json!(truth_known(item));
                    v
                })
                .collect();
            let v = json!({
                "source": store.label(),
                "agent": args.agent,
                "topic": args.topic,
                "ranking": ranking,
            });
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).map_err(|e| CliError::Runtime(e.to_string()))?
            )?;
        }
        format => {
            let md = format == OutputFormat::Md;
            let summaries: std::collections::HashMap<&str, &str> = log
                .events
                .iter()
                .filter_map(|e| match &e.body {
                    crate::model::EventBody::Evidence(ev) => {
                        Some((ev.id.as_str(), ev.summary.as_str()))
                    }
                    _ => None,
                })
                .collect();
            let (shift_head, divergence_head) = match (&args.agent, &args.topic) {
                (None, None) => ("TRUTH SHIFT (Σ pairs)", "DIVERGENCE (Σ pairs)"),
                _ => ("TRUTH SHIFT (Σ pairs shown)", "DIVERGENCE (Σ pairs shown)"),
            };
            let mut t = Table::new(vec![
                "RANK",
                "EVIDENCE",
                shift_head,
                divergence_head,
                "TOPICS",
                "SUMMARY",
            ]);
            for (i, item) in ranking.iter().enumerate() {
                t.row(vec![
                    (i + 1).to_string(),
                    item.evidence.clone(),
                    if truth_known(item) {
                        time::format_duration(item.truth_shift_ms * 1000)
                    } else {
                        "no resolution".to_owned()
                    },
                    time::format_duration(item.divergence_ms * 1000),
                    if item.topics.is_empty() {
                        "-".into()
                    } else {
                        item.topics.join(",")
                    },
                    summaries
                        .get(item.evidence.as_str())
                        .copied()
                        .unwrap_or("")
                        .to_owned(),
                ]);
            }
            writeln!(
                out,
                "{}{} — evidence ranked by what removing it would change (negative truth shift: the agent would have found the truth sooner without it; a replay, not a causal model)",
                if md { "# " } else { "" },
                store.label()
            )?;
            writeln!(
                out,
                "{}Both columns are sums over the agent-topic pairs an item touches{} (two agents wrong for a day each: 2d); a truth shift needs a topic with a resolution{}.",
                if md { "\n" } else { "" },
                match (&args.agent, &args.topic) {
                    (None, None) => String::new(),
                    (Some(a), None) => format!(", here only {a}'s"),
                    (None, Some(t)) => format!(", here only those on {t}"),
                    (Some(a), Some(t)) => format!(", here only {a} on {t}"),
                },
                if any_resolved {
                    ""
                } else {
                    ", and this store has none: every item says `no resolution`"
                }
            )?;
            if md {
                writeln!(out)?;
            }
            write!(out, "{}", if md { t.markdown() } else { t.text() })?;
        }
    }
    Ok(())
}
