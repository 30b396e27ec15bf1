//! The review record (docs/review.md): which review a command reads, the
//! one line that says so, and `asof review` — findings listed, added from
//! a script, compared between reviewers, exchanged as OpenTelemetry.
//!
//! A review is read only when named (`--review FILE`) or when it sits
//! beside SOURCE under SOURCE's name (`incident.db` → `incident.review.jsonl`;
//! the bundled demo: `payment-outage.review.jsonl` in the working
//! directory), plus a store's own review table (`asof load --review`).
//! Whatever is read is announced on standard error.

use super::when::{self, TimeArg};
use super::{CliError, SourceArg};
use crate::review::{self, Finding, Place, Review, Source, Target, TargetKind, Verdict};
use crate::store::Store;
use crate::time;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--review FILE` and `--with-review`, for the commands that show what the
/// agent knew.
#[derive(Debug, Default, Clone, Args)]
pub struct ReviewArg {
    /// A review file to read (JSON Lines of findings, or the OTLP/JSON logs
    /// `asof review --format otlp` writes). Default: SOURCE's name with
    /// `.review.jsonl`, beside it, when it exists. Whatever is read is
    /// announced on standard error.
    #[arg(long = "review", value_name = "FILE")]
    pub review: Option<PathBuf>,
    /// Show the review's verdicts beside what the agent knew (never in its
    /// place): evidence gets `review`, versions `review` (JSON) or a REVIEW
    /// column.
    #[arg(long)]
    pub with_review: bool,
}

impl ReviewArg {
    /// The review SOURCE's command reads (announced), or `None`.
    pub fn read(&self, store: &Store, source: Option<&Path>) -> Result<Option<Review>, CliError> {
        let named: Vec<PathBuf> = self.review.iter().cloned().collect();
        let review = resolve(store, source, &named, false)?;
        if let Some(line) = review.announce() {
            let hint = if self.with_review {
                ""
            } else {
                " (shown with --with-review)"
            };
            eprintln!("asof: {line}{hint}");
        }
        Ok((!review.sources.is_empty()).then_some(review))
    }

    /// [`ReviewArg::read`], kept only with `--with-review`; its texts
    /// redacted when `redact` asks for it.
    pub fn shown(
        &self,
        store: &Store,
        source: Option<&Path>,
        redact: &super::redact::RedactArg,
    ) -> Result<Option<Review>, CliError> {
        let mut review = self.read(store, source)?.filter(|_| self.with_review);
        if let (Some(review), Some(r)) = (&mut review, redact.redactor()?) {
            redact_review(review, &r);
        }
        Ok(review)
    }
}

/// The review file beside SOURCE, under its name: `incident.db` →
/// `incident.review.jsonl`; the bundled demo's in the working directory.
pub fn beside(source: Option<&Path>) -> PathBuf {
    match source {
        None => PathBuf::from("payment-outage.review.jsonl"),
        Some(p) => {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "store".into());
            p.with_file_name(format!("{stem}.review.jsonl"))
        }
    }
}

/// The review of `store` (read from SOURCE `source`): its review table,
/// then the files `named`, else the file beside SOURCE when it exists.
/// With `for_writing`, one named file that does not exist yet is the
/// review's place for new findings (a source marked `missing`).
pub fn resolve(
    store: &Store,
    source: Option<&Path>,
    named: &[PathBuf],
    for_writing: bool,
) -> Result<Review, CliError> {
    let mut review = Review::default();
    if let Some(table) = store.review()? {
        review
            .add(
                Source {
                    place: Place::Table {
                        store: store.label().to_owned(),
                        loaded_from: table.file,
                    },
                    sha256: table.sha256,
                    findings: 0,
                    missing: false,
                },
                table.findings,
            )
            .map_err(CliError::Input)?;
    }
    let files: Vec<PathBuf> = if named.is_empty() {
        let by = beside(source);
        if by.is_file() || for_writing {
            vec![by]
        } else {
            Vec::new()
        }
    } else {
        named.to_vec()
    };
    for file in files {
        if !file.exists() {
            if for_writing {
                review.sources.push(Source {
                    place: Place::File(file),
                    sha256: String::new(),
                    findings: 0,
                    missing: true,
                });
                continue;
            }
            return Err(CliError::Input(format!(
                "{}: no such review file (a review file is JSON Lines of findings, or OTLP/JSON logs `asof review --format otlp` wrote)",
                file.display()
            )));
        }
        let findings = review::read_file(&file)?;
        // What the findings name, read by id: not the whole log.
        let named = findings.iter().filter_map(|(_, f)| f.target.id.as_deref());
        review::check(
            &file.display().to_string(),
            &findings,
            &store.subjects_of(named)?,
        )?;
        let sha256 = std::fs::File::open(&file)
            .and_then(crate::fork::sha256_of)
            .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", file.display())))?;
        review
            .add(
                Source {
                    place: Place::File(file),
                    sha256,
                    findings: 0,
                    missing: false,
                },
                findings.into_iter().map(|(_, f)| f).collect(),
            )
            .map_err(CliError::Input)?;
    }
    Ok(review)
}

/// A review file read for `asof load --review`: its name, SHA-256 and
/// findings, checked against the log they judge.
pub struct ForLoad {
    pub file: String,
    pub sha256: String,
    pub findings: Vec<Finding>,
}

impl ForLoad {
    pub fn read(path: &Path, dataset: &crate::model::Dataset) -> Result<ForLoad, CliError> {
        let findings = review::read_file(path)?;
        let file = path.display().to_string();
        review::check(&file, &findings, &review::Subjects::of(dataset))?;
        let sha256 = std::fs::File::open(path)
            .and_then(crate::fork::sha256_of)
            .map_err(|e| CliError::Input(format!("{file}: cannot read: {e}")))?;
        Ok(ForLoad {
            file,
            sha256,
            findings: findings.into_iter().map(|(_, f)| f).collect(),
        })
    }

    /// What [`crate::store::Store::load_reviewed`] takes.
    pub fn as_stored(&self) -> (&str, &str, &[Finding]) {
        (&self.file, &self.sha256, &self.findings)
    }
}

/// What `asof review` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReviewFormat {
    #[default]
    Table,
    Json,
    Md,
    /// OTLP/JSON logs: one `gen_ai.evaluation.result` record per finding,
    /// linked to the target's trace and span when SOURCE was a trace.
    Otlp,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
asof review incident.db\n  \
asof review incident.db --add E15 --verdict rejected --note \"a traffic lull\" --about 2026-03-03T12:10:00Z\n  \
asof review incident.db --add version:B19 --verdict misleading\n  \
asof review incident.db --review ana.review.jsonl --review bob.review.jsonl   # where they disagree\n  \
asof review trace.otlp.jsonl --format otlp -o findings.otlp.json")]
pub struct ReviewArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// The review file(s) to read; several are listed together, with where
    /// their reviewers disagree. Default: SOURCE's name with `.review.jsonl`,
    /// beside it. With --add: the one file the finding is appended to.
    #[arg(long = "review", value_name = "FILE")]
    pub review: Vec<PathBuf>,
    /// Add a finding about TARGET: an evidence or assertion id (`E15`,
    /// `B19`), `version:ASSERTION`, `topic:TOPIC[@AGENT]` or `instant`.
    #[arg(long, value_name = "TARGET")]
    pub add: Option<String>,
    /// With --add: the verdict. Evidence: candidate, direct-read,
    /// claim-supported, conflicted, stale, rejected; an assertion or version:
    /// right, wrong, unsupported, misleading; anything: note.
    #[arg(long, requires = "add")]
    pub verdict: Option<String>,
    /// With --add: why.
    #[arg(long, requires = "add")]
    pub note: Option<String>,
    /// With --add: the instant of the log the finding is about (default: the
    /// end of the log).
    #[arg(long, requires = "add", value_parser = when::parse)]
    pub about: Option<TimeArg>,
    /// With --add: who is reviewing (default: $ASOF_REVIEWER, else $USER).
    #[arg(long, requires = "add")]
    pub reviewer: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Table)]
    pub format: ReviewFormat,
    /// The file to write (default: standard output). Written atomically.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
}

pub fn run(args: ReviewArgs, out: &mut impl Write) -> Result<(), CliError> {
    let source = args.source.source.as_deref();
    let store = args.source.open_snapshot()?;
    if let Some(target) = &args.add {
        return add(&args, &store, source, target, out);
    }
    let review = resolve(&store, source, &args.review, false)?;
    if let Some(line) = review.announce() {
        eprintln!("asof: {line}");
    }
    if review.sources.is_empty() {
        return Err(CliError::Input(format!(
            "{}: has no review: no review table, and no {} beside it (name one with --review FILE; add a finding with --add)",
            store.label(),
            beside(source).display()
        )));
    }
    let redactor = args.redact.redactor()?;
    let mut review = review;
    if let Some(r) = &redactor {
        redact_review(&mut review, r);
    }
    let text = match args.format {
        ReviewFormat::Otlp => {
            let links = links(&store)?;
            let logs = review::otlp::to_logs(&review.findings, |t| links.of(t));
            let mut text = serde_json::to_string_pretty(&logs)
                .map_err(|e| CliError::Runtime(e.to_string()))?;
            text.push('\n');
            text
        }
        ReviewFormat::Json => {
            let mut v = review_json(&review);
            v["source"] = serde_json::json!(store.label());
            if let Some(r) = &redactor {
                v["redacted"] = r.provenance_json();
            }
            let mut text =
                serde_json::to_string_pretty(&v).map_err(|e| CliError::Runtime(e.to_string()))?;
            text.push('\n');
            text
        }
        format => {
            let md = format == ReviewFormat::Md;
            let mut text = String::new();
            if md {
                text.push_str(&format!("## Review findings — {}\n\n", store.label()));
            }
            for s in &review.sources {
                let line = format!(
                    "{}: {} finding{}, SHA-256 {}",
                    s.name(),
                    s.findings,
                    if s.findings == 1 { "" } else { "s" },
                    if s.sha256.is_empty() { "-" } else { &s.sha256 }
                );
                text.push_str(&if md {
                    format!("- {line}\n")
                } else {
                    format!("{line}\n")
                });
            }
            if let Some(r) = &redactor {
                let line = r.provenance_line();
                text.push_str(&if md {
                    format!("- {line}\n")
                } else {
                    format!("{line}\n")
                });
            }
            text.push('\n');
            let t = crate::export::findings::table(&review.findings);
            text.push_str(&if md { t.markdown() } else { t.text() });
            if let Some(t) = crate::export::findings::disagreements(&review) {
                text.push('\n');
                text.push_str(if md {
                    "### Where reviewers disagree\n\n"
                } else {
                    "WHERE REVIEWERS DISAGREE\n"
                });
                text.push_str(&if md { t.markdown() } else { t.text() });
            }
            text
        }
    };
    super::write_to(args.output.as_deref(), &text, out)
}

/// `asof review --format json`'s body: the sources and the findings in §20's
/// shape, and where reviewers disagree.
pub fn review_json(review: &Review) -> serde_json::Value {
    serde_json::json!({
        "review": review.sources.iter().map(|s| serde_json::json!({
            "name": s.name(),
            "sha256": s.sha256,
            "findings": s.findings,
        })).collect::<Vec<_>>(),
        "findings": review.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        "disagreements": review.disagreements().iter().map(|d| serde_json::json!({
            "target": d.target.to_json(),
            "verdicts": d.verdicts.iter().map(|f| serde_json::json!({
                "id": f.id,
                "reviewer": f.reviewer,
                "verdict": f.verdict.as_str(),
                "made_at": time::format(f.made_at),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// `--add`: one finding appended to the review file (and synced).
fn add(
    args: &ReviewArgs,
    store: &Store,
    source: Option<&Path>,
    target: &str,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if args.review.len() > 1 {
        return Err(CliError::Input(
            "--add appends to one review file: name at most one --review FILE".into(),
        ));
    }
    if args.format != ReviewFormat::Table || args.output.is_some() || args.redact.any() {
        return Err(CliError::Input(
            "--add writes one finding to the review file; --format, -o and --redact are for listing findings".into(),
        ));
    }
    let review = resolve(store, source, &args.review, true)?;
    let Some(file) = review.sources.iter().rev().find_map(|s| match &s.place {
        Place::File(p) => Some(p.clone()),
        Place::Table { .. } => None,
    }) else {
        return Err(CliError::Runtime("no review file to write to".into()));
    };
    let subjects = store.subjects()?;
    let target = Target::parse_user(target, &subjects)
        .map_err(|e| CliError::Input(format!("--add: {e}")))?;
    let Some(verdict) = &args.verdict else {
        return Err(CliError::Input(format!(
            "--add needs --verdict: for {} one of {}",
            target.kind.as_str(),
            review::names(target.kind)
        )));
    };
    let verdict = Verdict::parse(verdict)
        .filter(|v| v.fits(target.kind))
        .ok_or_else(|| {
            CliError::Input(format!(
                "--verdict {verdict} is not one for {} (one of: {})",
                target.kind.as_str(),
                review::names(target.kind)
            ))
        })?;
    // How --about was read is said once, by resolve (or here, for the default).
    let about = match &args.about {
        Some(t) => t.resolve(store)?,
        None => {
            let last = crate::query::recorded_span(store)?.map(|(_, last)| last);
            let at = last.unwrap_or_else(time::now);
            eprintln!(
                "asof: --about not given: the finding is about {} ({})",
                time::format(at),
                if last.is_some() {
                    "the log's last event"
                } else {
                    "now: the log is empty"
                }
            );
            at
        }
    };
    let finding = Finding {
        id: review.next_id(),
        target,
        verdict,
        note: args.note.clone().filter(|n| !n.trim().is_empty()),
        reviewer: args
            .reviewer
            .clone()
            .unwrap_or_else(review::reviewer_from_env),
        made_at: time::now(),
        about,
    };
    // The same rules as a finding read back from the file.
    Finding::from_json(&finding.to_json()).map_err(|e| CliError::Input(format!("--add: {e}")))?;
    if let Some(why) = subjects.refuse(&finding) {
        return Err(CliError::Input(format!("--add: the finding {why}")));
    }
    review::append(&file, &finding)
        .map_err(|e| CliError::Input(format!("{}: cannot append: {e}", file.display())))?;
    writeln!(out, "added to {}: {}", file.display(), finding.line())?;
    Ok(())
}

/// Each evidence item's and assertion's trace and span, when the store was
/// read from a trace: from the evidence's locator (`trace T span S …`) and
/// from the model call that said an assertion.
pub struct Links {
    evidence: std::collections::HashMap<String, (String, String)>,
    said: std::collections::HashMap<String, (String, String)>,
}

impl Links {
    pub fn of(&self, target: &Target) -> Option<(String, String)> {
        let id = target.id.as_deref()?;
        match target.kind {
            TargetKind::Evidence => self.evidence.get(id).cloned(),
            TargetKind::Assertion | TargetKind::Version => self.said.get(id).cloned(),
            TargetKind::Topic | TargetKind::Instant => None,
        }
    }
}

pub fn links(store: &Store) -> Result<Links, CliError> {
    let mut links = Links {
        evidence: Default::default(),
        said: Default::default(),
    };
    let Some(calls) = crate::query::model_calls(store)? else {
        return Ok(links);
    };
    for c in &calls {
        for a in &c.said {
            links
                .said
                .insert(a.clone(), (c.trace.clone(), c.span.clone()));
        }
    }
    for e in store.log()?.events {
        if let crate::model::EventBody::Evidence(ev) = e.body
            && let Some(link) = trace_span(&ev.locator)
        {
            links.evidence.insert(ev.id, link);
        }
    }
    Ok(links)
}

/// `trace T span S …` (an imported evidence item's locator) as (T, S).
fn trace_span(locator: &str) -> Option<(String, String)> {
    let mut words = locator.split_whitespace();
    if words.next()? != "trace" {
        return None;
    }
    let trace = words.next()?;
    if words.next()? != "span" {
        return None;
    }
    let span = words.next()?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(trace, 32) && hex(span, 16)).then(|| (trace.to_owned(), span.to_owned()))
}

/// Every text of the findings through `r`.
pub fn redact_review(review: &mut Review, r: &crate::redact::Redactor) {
    for f in &mut review.findings {
        if let Some(note) = &mut f.note {
            *note = r.redact(note);
        }
        f.reviewer = r.redact(&f.reviewer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locator_names_its_trace_and_span() {
        let t = "0000005e5a1700000000000000000001";
        let s = "0000005e3c6ef363";
        assert_eq!(
            trace_span(&format!("trace {t} span {s} input message 0")),
            Some((t.to_owned(), s.to_owned()))
        );
        assert_eq!(trace_span("grafana://payments/errors"), None);
        assert_eq!(trace_span("trace abc span def"), None);
    }

    #[test]
    fn the_review_beside_a_source_takes_its_name() {
        assert_eq!(
            beside(Some(Path::new("runs/incident.db"))),
            PathBuf::from("runs/incident.review.jsonl")
        );
        assert_eq!(beside(None), PathBuf::from("payment-outage.review.jsonl"));
    }
}
