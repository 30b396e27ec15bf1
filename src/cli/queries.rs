//! The query commands: `believed`, `history`, `evidence`, `changes`, and the
//! no-argument demo summary.

use super::when::{self, TimeArg};
use super::{CliError, FormatArg, OutputFormat, SourceArg};
use crate::engine::quality::{self as rules, AnswerStatus, Freshness, Ledger, Quality, Support};
use crate::export::table::Table;
use crate::fork::WhatIf;
use crate::model::{ASSUMED_LEGEND, Assumed, VerifyState, permille};
use crate::query::{self, Belief, Filter, json, quality};
use crate::store::Store;
use crate::time::{self, Interval};
use clap::Args;
use std::io::Write;

/// `--agent` and `--topic`, the filter `believed` and `changes` share.
#[derive(Debug, Default, Clone, Args)]
pub struct FilterArgs {
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
}

impl FilterArgs {
    /// The query's filter, once the store is found to hold what it names
    /// (an unknown id gets the sentence every command gives it).
    fn checked(self, store: &Store) -> Result<Filter, CliError> {
        check_filter(store, self.agent.as_deref(), self.topic.as_deref())?;
        Ok(Filter {
            agent: self.agent,
            topic: self.topic,
        })
    }
}

#[derive(Debug, Args)]
pub struct BelievedArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// Recorded time T′: what was held then (RFC 3339, YYYY-MM-DD or `now`).
    #[arg(long, value_parser = when::parse)]
    pub at: TimeArg,
    /// Valid time T: only beliefs about this instant.
    #[arg(long, value_parser = when::parse)]
    pub about: Option<TimeArg>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub review: super::review::ReviewArg,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// The topic (may be left out when the store has only one).
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this agent.
    #[arg(long)]
    pub agent: Option<String>,
    #[command(flatten)]
    pub review: super::review::ReviewArg,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct EvidenceArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// Only this item, shown whole: every field and the whole text the agent
    /// read (tables show a 200-character summary).
    #[arg(long)]
    pub id: Option<String>,
    /// As of this recorded time (default: the end of the log): the items
    /// recorded by then, the citations recorded by then, the verification
    /// states then.
    #[arg(long, value_parser = when::parse)]
    pub at: Option<TimeArg>,
    /// With --at: list the items recorded after it too, marked `not yet recorded`.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub review: super::review::ReviewArg,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct AnswerArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// The topic.
    #[arg(long)]
    pub topic: String,
    /// Recorded time T′: what the agents held then.
    #[arg(long, value_parser = when::parse)]
    pub at: TimeArg,
    /// Valid time T: their claims about this instant (default: each agent's working answer).
    #[arg(long, value_parser = when::parse)]
    pub about: Option<TimeArg>,
    /// Only this agent's working answer.
    #[arg(long)]
    pub agent: Option<String>,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct ChangesArgs {
    #[command(flatten)]
    pub source: SourceArg,
    /// Start of the recorded window (exclusive).
    #[arg(long, value_parser = when::parse)]
    pub after: TimeArg,
    /// End of the recorded window (inclusive).
    #[arg(long, value_parser = when::parse)]
    pub until: TimeArg,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub redact: super::redact::RedactArg,
    #[command(flatten)]
    pub format: FormatArg,
}

/// What a fork store's outputs open with (design.md §8): in a table the banner
/// and the lineage on their own lines, in Markdown a quoted banner; a JSON
/// output carries the same as its `what_if` object (see [`print_json`]).
fn write_banner(
    out: &mut impl Write,
    what_if: Option<&WhatIf>,
    format: OutputFormat,
) -> std::io::Result<()> {
    match (what_if, format) {
        (Some(w), OutputFormat::Table) => writeln!(out, "{}\n{}", w.banner(), w.lineage()),
        (Some(w), OutputFormat::Md) => {
            writeln!(out, "> **{}**  \n> {}\n", w.banner(), w.lineage())
        }
        _ => Ok(()),
    }
}

/// A Markdown heading's first words: `What-if: ` on a fork store.
fn md_prefix(what_if: Option<&WhatIf>) -> &'static str {
    if what_if.is_some() { "What-if: " } else { "" }
}

/// Refuses agent and topic ids the store does not know, naming the known ones.
pub(super) fn check_filter(
    store: &Store,
    agent: Option<&str>,
    topic: Option<&str>,
) -> Result<(), CliError> {
    let header = store.header();
    // A store with none yet (a receiver's before its first belief) says so,
    // rather than list nothing.
    let known = |kind: &str, ids: Vec<&str>, wanted: &str| match ids.is_empty() {
        true => format!(": the store has no {kind}s yet (no belief is recorded in it)"),
        false => format!("; {kind}s are: {}", crate::model::known_ids(ids, wanted)),
    };
    if let Some(a) = agent
        && !header.agents.iter().any(|x| x.id == a)
    {
        return Err(CliError::Input(format!(
            "{}: unknown agent `{a}`{}",
            store.label(),
            known(
                "agent",
                header.agents.iter().map(|x| x.id.as_str()).collect(),
                a
            )
        )));
    }
    if let Some(t) = topic
        && header.topic(t).is_none()
    {
        return Err(CliError::Input(format!(
            "{}: unknown topic `{t}`{}",
            store.label(),
            known(
                "topic",
                header.topics.iter().map(|x| x.id.as_str()).collect(),
                t
            )
        )));
    }
    Ok(())
}

fn interval(v: Interval) -> String {
    format!("[{}, {})", time::format(v.from), time::format(v.to))
}

fn confidence(c: f64) -> String {
    format!("{c:.2}")
}

fn ids<S: AsRef<str>>(list: &[S]) -> String {
    if list.is_empty() {
        "-".to_owned()
    } else {
        list.iter()
            .map(AsRef::as_ref)
            .collect::<Vec<&str>>()
            .join(",")
    }
}

/// "0.60", or "0.60→0.42" when decay has lowered it.
fn confidences(stated: f64, q: &Quality) -> String {
    if permille(stated) == permille(q.effective_confidence) {
        confidence(stated)
    } else {
        format!(
            "{}→{}",
            confidence(stated),
            confidence(q.effective_confidence)
        )
    }
}

/// What is worth saying about a version's quality: "⌛ stale", "unsupported"…
fn quality_words(q: &Quality) -> String {
    let mut words = Vec::new();
    match q.freshness {
        Freshness::Stale => words.push("⌛ stale".to_owned()),
        Freshness::Unknown => {}
        other => words.push(other.as_str().to_owned()),
    }
    if q.support != Support::Ok {
        words.push(q.support.as_str().to_owned());
    }
    if words.is_empty() {
        "-".to_owned()
    } else {
        words.join(", ")
    }
}

/// Beliefs with their quality (`quality_of` says at which time); SINCE is
/// when the agent began holding the claim (`since`, from
/// [`query::held_since`]), not when the row was made.
/// Whether any of `beliefs` has a field its importer assumed: the table then
/// marks them, and [`ASSUMED_LEGEND`] follows it.
fn any_assumed(beliefs: &[Belief], ledger: &Ledger) -> bool {
    beliefs
        .iter()
        .any(|b| !ledger.assumed(&b.version.assertion).is_empty())
}

/// Writes [`ASSUMED_LEGEND`] after a table that marks assumed fields.
fn assumed_legend(out: &mut impl Write, any: bool) -> std::io::Result<()> {
    if any {
        writeln!(out, "{ASSUMED_LEGEND} (JSON: `assumed`)")?;
    }
    Ok(())
}

fn beliefs_table(
    beliefs: &[Belief],
    since: &[i64],
    ledger: &Ledger,
    quality_of: impl Fn(&Belief) -> Quality,
    review: Option<&crate::review::Review>,
) -> Table {
    let mut head = vec![
        "TOPIC",
        "AGENT",
        "CLAIM",
        "CONF",
        "VALID",
        "SINCE",
        "EVIDENCE",
        "ASSERTION",
        "QUALITY",
    ];
    if review.is_some() {
        head.push("REVIEW");
    }
    let mut t = Table::new(head);
    for (b, since) in beliefs.iter().zip(since) {
        let v = &b.version;
        let q = quality_of(b);
        let assumed = ledger.assumed(&v.assertion);
        let mut row = vec![
            v.topic.to_string(),
            Assumed::Agent.mark(assumed, v.agent.to_string()),
            v.claim.to_string(),
            Assumed::Confidence.mark(assumed, confidences(v.confidence, &q)),
            Assumed::ValidFrom.mark(assumed, interval(v.valid)),
            time::format(*since),
            Assumed::SupportedBy.mark(assumed, ids(&b.supported_by)),
            v.assertion.to_string(),
            quality_words(&q),
        ];
        if let Some(r) = review {
            row.push(review_cell(
                r.assertion_verdict(&v.assertion),
                r.about_assertion(&v.assertion),
            ));
        }
        t.row(row);
    }
    t
}

/// `value` with each evidence item and assertion that an imported trace
/// evaluated (`gen_ai.evaluation.result`, kept in the import summary)
/// carrying its `evaluations`; and with `review` (`--with-review`) each evidence item and
/// version carrying the review's findings about it as `review`, beside what
/// the agent knew (never in its place), and the review's sources as
/// `review_sources`.
fn reviewed<T: serde::Serialize>(
    store: &Store,
    value: T,
    review: Option<&crate::review::Review>,
) -> Result<Evaluated<T>, CliError> {
    let evaluations = query::evaluations(store)?;
    if evaluations.is_empty() && review.is_none() {
        return Ok(Evaluated::As(value));
    }
    let mut value = serde_json::to_value(&value).map_err(|e| CliError::Runtime(e.to_string()))?;
    if let Some(review) = review {
        with_review(&mut value, review);
        if let serde_json::Value::Object(map) = &mut value {
            let sources = super::review::review_json(review)["review"].clone();
            map.insert("review_sources".into(), sources);
        }
    }
    fn walk(
        v: &mut serde_json::Value,
        by: &std::collections::BTreeMap<String, Vec<serde_json::Value>>,
    ) {
        match v {
            serde_json::Value::Object(map) => {
                let key = ["id", "assertion", "event"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(|v| v.as_str()))
                    .and_then(|id| by.get(id));
                if let Some(list) = key {
                    map.insert("evaluations".into(), serde_json::Value::from(list.clone()));
                }
                for child in map.values_mut() {
                    walk(child, by);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|c| walk(c, by)),
            _ => {}
        }
    }
    walk(&mut value, &evaluations);
    Ok(Evaluated::With(value))
}

/// Attaches the review's findings: an evidence item's (an object with `id`
/// and `summary`) and a version's (`assertion` and `claim`) as `review`,
/// each in §20's shape.
fn with_review(v: &mut serde_json::Value, review: &crate::review::Review) {
    match v {
        serde_json::Value::Object(map) => {
            let text = |k: &str| map.get(k).and_then(|v| v.as_str()).map(str::to_owned);
            let findings: Option<Vec<serde_json::Value>> = match (
                text("id"),
                text("summary"),
                text("assertion"),
                text("claim"),
            ) {
                (Some(id), Some(_), _, _) => Some(
                    review
                        .about_evidence(&id)
                        .map(crate::review::Finding::to_json)
                        .collect(),
                ),
                (_, _, Some(a), Some(_)) => Some(
                    review
                        .about_assertion(&a)
                        .map(crate::review::Finding::to_json)
                        .collect(),
                ),
                _ => None,
            };
            for child in map.values_mut() {
                with_review(child, review);
            }
            if let Some(list) = findings {
                map.insert("review".into(), serde_json::Value::from(list));
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|c| with_review(c, review)),
        _ => {}
    }
}

/// Under a table with a REVIEW column: what the column is and is not.
fn review_legend(out: &mut impl Write, shown: bool) -> std::io::Result<()> {
    if shown {
        writeln!(
            out,
            "REVIEW: the review's latest verdict (finding id, reviewer), made later about the log — not something the agent knew; `asof review` lists the findings"
        )?;
    }
    Ok(())
}

/// The REVIEW cell of a table row: the review's latest verdict and who gave
/// it, with how many findings in all (`rejected F2 ana (+1)`), or `-`.
fn review_cell<'a>(
    latest: Option<&crate::review::Finding>,
    all: impl Iterator<Item = &'a crate::review::Finding>,
) -> String {
    let n = all.count();
    match latest {
        Some(f) if n > 1 => format!("{} {} {} (+{})", f.verdict, f.id, f.reviewer, n - 1),
        Some(f) => format!("{} {} {}", f.verdict, f.id, f.reviewer),
        None if n > 0 => format!("{n} note(s)"),
        None => "-".into(),
    }
}

/// A JSON output as built, or with evaluations attached.
enum Evaluated<T> {
    As(T),
    With(serde_json::Value),
}

impl<T: serde::Serialize> serde::Serialize for Evaluated<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Evaluated::As(v) => v.serialize(s),
            Evaluated::With(v) => v.serialize(s),
        }
    }
}

/// Pretty JSON, written as it is serialized (an all-topics answer at a
/// million events is tens of megabytes: no second copy of it in memory). On a
/// fork store the object carries `what_if` (the lineage and the banner)
/// beside its own keys.
fn print_json(
    out: &mut impl Write,
    what_if: Option<&WhatIf>,
    value: &impl serde::Serialize,
) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::new(out);
    match what_if {
        None => serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?,
        Some(w) => {
            let mut object = serde_json::Map::new();
            object.insert("what_if".into(), w.json());
            match serde_json::to_value(value).map_err(std::io::Error::from)? {
                serde_json::Value::Object(rest) => object.extend(rest),
                other => {
                    object.insert("value".into(), other);
                }
            }
            serde_json::to_writer_pretty(&mut out, &object).map_err(std::io::Error::from)?;
        }
    }
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

pub fn believed(args: BelievedArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (store, redactor) = args.redact.apply(args.source.open_snapshot()?)?;
    believed_on(&store, args, out)?;
    said_redacted(redactor.as_deref());
    Ok(())
}

/// What `--redact` replaced, on standard error (the answer is standard output).
fn said_redacted(r: Option<&crate::redact::Redactor>) {
    if let Some(r) = r {
        eprintln!("asof: {}", r.provenance_line());
    }
}

/// [`believed`] on a store already open (`args.source` is not read).
pub fn believed_on(
    store: &crate::store::Store,
    args: BelievedArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let filter = args.filter.clone().checked(store)?;
    let (at, about, read_as) = as_of(store, &args.at, args.about.as_ref())?;
    let beliefs = query::believed(store, at, about, &filter)?;
    let ledger = quality::ledger(store)?;
    let since = query::held_since(store, &beliefs)?;
    let review = args
        .review
        .shown(store, args.source.source.as_deref(), &args.redact)?;
    let table = || {
        beliefs_table(
            &beliefs,
            &since,
            &ledger,
            |b| ledger.quality(&b.version, &b.supported_by, at),
            review.as_ref(),
        )
    };
    let title = match about {
        Some(t) => format!("as of {} about {}", time::format(at), time::format(t)),
        None => format!("as of {}", time::format(at)),
    };
    let what_if = WhatIf::of(store)?;
    let w = what_if.as_ref();
    write_banner(out, w, args.format.format)?;
    match args.format.format {
        OutputFormat::Json => print_json(
            out,
            w,
            &reviewed(
                store,
                json::believed(at, about, &beliefs, &ledger).read_as(read_as),
                review.as_ref(),
            )?,
        ),
        OutputFormat::Table => {
            writeln!(
                out,
                "{} — {title}: {} belief(s)",
                store.label(),
                beliefs.len()
            )?;
            if !beliefs.is_empty() {
                write!(out, "{}", table().text())?;
            }
            assumed_legend(out, any_assumed(&beliefs, &ledger))?;
            review_legend(out, review.is_some())?;
            Ok(())
        }
        OutputFormat::Md => {
            writeln!(out, "## {}Beliefs {title}\n", md_prefix(w))?;
            if beliefs.is_empty() {
                writeln!(out, "_No beliefs held._")?;
            } else {
                write!(out, "{}", table().markdown())?;
            }
            if any_assumed(&beliefs, &ledger) {
                writeln!(out)?;
            }
            assumed_legend(out, any_assumed(&beliefs, &ledger))?;
            Ok(())
        }
    }
}

fn history_table(
    h: &query::History,
    ledger: &Ledger,
    end: i64,
    review: Option<&crate::review::Review>,
) -> (Table, Table) {
    let mut head = vec![
        "RECORDED",
        "UNTIL",
        "AGENT",
        "CLAIM",
        "CONF",
        "VALID",
        "ORIGIN",
        "CLOSED",
        "EVIDENCE",
        "ASSERTION",
        "QUALITY",
    ];
    if review.is_some() {
        head.push("REVIEW");
    }
    let mut t = Table::new(head);
    for b in &h.versions {
        let v = &b.version;
        let q = ledger.quality_in_history(v, &b.supported_by, end);
        let closed = match &v.closed {
            Some(c) => c.to_string(),
            None => "held".to_owned(),
        };
        let origin = match &v.clipped_by {
            Some(by) => format!("{} (clipped by {by})", v.origin.as_str()),
            None => v.origin.as_str().to_owned(),
        };
        let assumed = ledger.assumed(&v.assertion);
        let mut row = vec![
            time::format(v.recorded_at),
            time::format(v.superseded_at),
            Assumed::Agent.mark(assumed, v.agent.to_string()),
            v.claim.to_string(),
            Assumed::Confidence.mark(assumed, confidences(v.confidence, &q)),
            Assumed::ValidFrom.mark(assumed, interval(v.valid)),
            origin,
            closed,
            Assumed::SupportedBy.mark(assumed, ids(&b.supported_by)),
            v.assertion.to_string(),
            match v.closed {
                // How it ended is in CLOSED already.
                Some(_) if q.support == Support::Ok => "-".to_owned(),
                Some(_) => q.support.as_str().to_owned(),
                None => quality_words(&q),
            },
        ];
        if let Some(r) = review {
            row.push(review_cell(
                r.assertion_verdict(&v.assertion),
                r.about_assertion(&v.assertion),
            ));
        }
        t.row(row);
    }
    let mut notes = Table::new(vec![
        "RECORDED", "EVENT", "AGENT", "EFFECT", "CLAIM", "EVIDENCE",
    ]);
    for n in &h.notes {
        notes.row(vec![
            time::format(n.recorded_at),
            n.event.clone(),
            n.agent.clone(),
            n.effect.as_str().replace('_', "-"),
            n.claim.clone().unwrap_or_else(|| "-".to_owned()),
            ids(&n.cites),
        ]);
    }
    (t, notes)
}

pub fn history(args: HistoryArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (store, redactor) = args.redact.apply(args.source.open_snapshot()?)?;
    history_on(&store, args, out)?;
    said_redacted(redactor.as_deref());
    Ok(())
}

/// [`history`] on a store already open (`args.source` is not read).
pub fn history_on(
    store: &crate::store::Store,
    mut args: HistoryArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let topic = match args.topic.take() {
        Some(t) => t,
        None => match store.header().topics.as_slice() {
            [only] => only.id.clone(),
            [] => {
                return Err(CliError::Input(format!(
                    "{}: the store holds no topic, so there is no history to show",
                    store.label()
                )));
            }
            topics => {
                let ids: Vec<&str> = topics.iter().map(|t| t.id.as_str()).collect();
                return Err(CliError::Input(format!(
                    "{}: name a topic with --topic; the store has {}: {}",
                    store.label(),
                    ids.len(),
                    ids.join(", ")
                )));
            }
        },
    };
    let args = HistoryArgs {
        topic: Some(topic),
        ..args
    };
    let topic = args.topic.as_deref().unwrap_or_default();
    check_filter(store, args.agent.as_deref(), Some(topic))?;
    let h = query::history(store, topic, args.agent.as_deref())?;
    let ledger = quality::ledger(store)?;
    let end = quality::end_of_log(store)?;
    let review = args
        .review
        .shown(store, args.source.source.as_deref(), &args.redact)?;
    let (versions, notes) = history_table(&h, &ledger, end, review.as_ref());
    let what_if = WhatIf::of(store)?;
    let w = what_if.as_ref();
    write_banner(out, w, args.format.format)?;
    match args.format.format {
        OutputFormat::Json => print_json(
            out,
            w,
            &reviewed(
                store,
                json::history(args.agent.as_deref(), topic, &h, &ledger, end),
                review.as_ref(),
            )?,
        ),
        OutputFormat::Table => {
            let question = store
                .header()
                .topic(topic)
                .map(|t| t.question.as_str())
                .unwrap_or("");
            writeln!(
                out,
                "{} — history of `{}`: {question}",
                store.label(),
                topic
            )?;
            write!(out, "{}", versions.text())?;
            writeln!(
                out,
                "(quality of held versions at the end of the log, {}; of closed ones when they closed)",
                time::format(end)
            )?;
            assumed_legend(out, any_assumed(&h.versions, &ledger))?;
            review_legend(out, review.is_some())?;
            if !notes.is_empty() {
                writeln!(out, "\nEvents that changed no version:")?;
                write!(out, "{}", notes.text())?;
            }
            Ok(())
        }
        OutputFormat::Md => {
            writeln!(out, "## {}History of `{}`\n", md_prefix(w), topic)?;
            write!(out, "{}", versions.markdown())?;
            if !notes.is_empty() {
                writeln!(out, "\n### Events that changed no version\n")?;
                write!(out, "{}", notes.markdown())?;
            }
            Ok(())
        }
    }
}

/// `--at` and `--about` read against `store`, and how they were read, in one
/// sentence (`read_as` in JSON).
fn as_of(
    store: &Store,
    at: &TimeArg,
    about: Option<&TimeArg>,
) -> Result<(i64, Option<i64>, Option<String>), CliError> {
    let (at, at_said) = at.resolve_said(store)?;
    let (about, about_said) = match about {
        Some(t) => {
            let (about, said) = t.resolve_said(store)?;
            (Some(about), said)
        }
        None => (None, None),
    };
    let read_as = match (at_said, about_said) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    Ok((at, about, read_as))
}

/// Each verification in force at `at` of the items listed: by whom, when and
/// why (the VERIFIED column names the verdict and its id).
fn verification_notes(
    out: &mut impl Write,
    items: &[query::EvidenceItem],
    ledger: &Ledger,
    at: i64,
) -> std::io::Result<()> {
    let mut first = true;
    for i in items {
        let Some(v) = ledger.verdict(&i.evidence.id, at) else {
            continue;
        };
        if first {
            writeln!(out, "\nVerifications in force at {}:", time::format(at))?;
            first = false;
        }
        writeln!(
            out,
            "  {} {} at {}{}",
            i.evidence.id,
            v.said(),
            time::format(v.since),
            v.note_said()
        )?;
    }
    Ok(())
}

/// What `evidence --at T --all` says of an item recorded after T.
const NOT_YET_RECORDED: &str = "not yet recorded";

pub fn evidence(args: EvidenceArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (store, redactor) = args.redact.apply(args.source.open_snapshot()?)?;
    evidence_on(&store, args, out)?;
    said_redacted(redactor.as_deref());
    Ok(())
}

fn evidence_on(store: &Store, args: EvidenceArgs, out: &mut impl Write) -> Result<(), CliError> {
    let review = args
        .review
        .shown(store, args.source.source.as_deref(), &args.redact)?;
    let mut items = query::evidence(store)?;
    if let Some(id) = &args.id {
        items.retain(|i| i.evidence.id == *id);
        if items.is_empty() {
            return Err(CliError::Input(format!(
                "--id {id}: {} has no evidence item {id}; `asof evidence {}` lists them",
                store.label(),
                args.source
                    .source
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )));
        }
    }
    let (at, read_as) = match &args.at {
        Some(at) => at.resolve_said(store)?,
        None => (quality::end_of_log(store)?, None),
    };
    // As of `at`, only what was recorded by then (the rest with --all, marked).
    // An item named by --id is shown whenever it was recorded.
    let total = items.len();
    if !args.all && args.id.is_none() {
        items.retain(|i| i.evidence.recorded_at <= at);
    }
    let ledger = quality::ledger(store)?;
    let mut head = vec![
        "ID", "KIND", "SOURCE", "OBSERVED", "RECORDED", "LAG", "REL", "CITED BY", "VERIFIED",
    ];
    // The review's verdict has a column of its own, beside the agent's.
    if review.is_some() {
        head.push("REVIEW");
    }
    head.push("SUMMARY");
    let mut t = Table::new(head);
    for i in &items {
        let e = &i.evidence;
        let verified = match ledger.verdict(&e.id, at) {
            _ if e.recorded_at > at => NOT_YET_RECORDED.to_owned(),
            None => VerifyState::Candidate.as_str().to_owned(),
            Some(v) => v.said(),
        };
        let mut row = vec![
            e.id.clone(),
            e.kind.clone(),
            e.source.clone(),
            time::format_observed(e.observed_at, e.observed_until, false),
            time::format(e.recorded_at),
            time::format_duration(e.lag()),
            format!("{:.2}", e.reliability),
            ids(i.cited_by_at(at)),
            verified,
        ];
        if let Some(r) = &review {
            row.push(review_cell(
                r.evidence_verdict(&e.id),
                r.about_evidence(&e.id),
            ));
        }
        row.push(e.summary_shown().into_owned());
        t.row(row);
    }
    let what_if = WhatIf::of(store)?;
    let w = what_if.as_ref();
    write_banner(out, w, args.format.format)?;
    if let (Some(item), Some(_), false) = (
        items.first(),
        &args.id,
        args.format.format == OutputFormat::Json,
    ) {
        return whole_item(out, item, &t, args.format.format);
    }
    match args.format.format {
        OutputFormat::Json => print_json(
            out,
            w,
            &reviewed(
                store,
                {
                    let mut v = json::evidence(&items, &ledger, at);
                    if let Some(said) = read_as {
                        v["read_as"] = said.into();
                    }
                    v
                },
                review.as_ref(),
            )?,
        ),
        OutputFormat::Table => {
            let known = items
                .iter()
                .filter(|i| i.evidence.recorded_at <= at)
                .count();
            writeln!(
                out,
                "{} — {known} evidence item(s) recorded by {} (of {total}{}); citations and verification as of then",
                store.label(),
                time::format(at),
                match (known < items.len(), known < total) {
                    (true, _) => format!("; {} not yet recorded, listed", items.len() - known),
                    (false, true) => "; --all lists the rest".to_owned(),
                    (false, false) => String::new(),
                }
            )?;
            write!(out, "{}", t.text())?;
            review_legend(out, review.is_some())?;
            verification_notes(out, &items, &ledger, at)?;
            Ok(())
        }
        OutputFormat::Md => {
            writeln!(out, "## {}Evidence\n", md_prefix(w))?;
            write!(out, "{}", t.markdown())?;
            verification_notes(out, &items, &ledger, at)?;
            Ok(())
        }
    }
}

/// `evidence --id`: the item's row, its locator, then the whole text it held.
fn whole_item(
    out: &mut impl Write,
    item: &query::EvidenceItem,
    row: &Table,
    format: OutputFormat,
) -> Result<(), CliError> {
    let e = &item.evidence;
    let text = e.content.as_deref().unwrap_or(&e.summary);
    let size = crate::text::size(text);
    match format {
        OutputFormat::Md => {
            writeln!(
                out,
                "## Evidence {}
",
                e.id
            )?;
            write!(out, "{}", row.markdown())?;
            writeln!(
                out,
                "\nLocator: `{}`\n\nWhat it held ({size}):\n",
                e.locator
            )?;
            writeln!(out, "{}", crate::text::fenced(text))?;
        }
        _ => {
            write!(out, "{}", row.text())?;
            writeln!(out, "locator: {}", e.locator)?;
            writeln!(out, "what it held ({size}):")?;
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

pub fn changes(args: ChangesArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (store, redactor) = args.redact.apply(args.source.open_snapshot()?)?;
    changes_on(&store, args, out)?;
    said_redacted(redactor.as_deref());
    Ok(())
}

/// [`changes`] on a store already open (`args.source` is not read).
pub fn changes_on(store: &Store, args: ChangesArgs, out: &mut impl Write) -> Result<(), CliError> {
    let filter = args.filter.clone().checked(store)?;
    let (after, until) = (args.after.resolve(store)?, args.until.resolve(store)?);
    if until < after {
        return Err(CliError::Input("--until is before --after".to_owned()));
    }
    let c = query::changes(store, after, until, &filter)?;
    let (created_since, closed_since) = (
        query::held_since(store, &c.created)?,
        query::held_since(store, &c.closed)?,
    );
    let ledger = quality::ledger(store)?;
    let quality_of = |b: &Belief| match b.version.superseded_at <= until {
        true => ledger.quality_in_history(&b.version, &b.supported_by, until),
        false => ledger.quality(&b.version, &b.supported_by, until),
    };
    let window = format!("({}, {}]", time::format(after), time::format(until));
    let what_if = WhatIf::of(store)?;
    let w = what_if.as_ref();
    write_banner(out, w, args.format.format)?;
    match args.format.format {
        OutputFormat::Json => print_json(out, w, &json::changes(after, until, &c, &ledger)),
        OutputFormat::Table => {
            writeln!(
                out,
                "{} — changes in {window}: {} created, {} closed",
                store.label(),
                c.created.len(),
                c.closed.len()
            )?;
            if !c.created.is_empty() {
                writeln!(out, "\nCreated:")?;
                write!(
                    out,
                    "{}",
                    beliefs_table(&c.created, &created_since, &ledger, quality_of, None).text()
                )?;
            }
            if !c.closed.is_empty() {
                writeln!(out, "\nClosed:")?;
                write!(
                    out,
                    "{}",
                    beliefs_table(&c.closed, &closed_since, &ledger, quality_of, None).text()
                )?;
            }
            Ok(())
        }
        OutputFormat::Md => {
            writeln!(
                out,
                "## {}Changes in {window}\n\n### Created\n",
                md_prefix(w)
            )?;
            write!(
                out,
                "{}",
                beliefs_table(&c.created, &created_since, &ledger, quality_of, None).markdown()
            )?;
            writeln!(out, "\n### Closed\n")?;
            write!(
                out,
                "{}",
                beliefs_table(&c.closed, &closed_since, &ledger, quality_of, None).markdown()
            )?;
            Ok(())
        }
    }
}

/// `asof answer`: what the agents answered on a topic (design.md §4) — one claim,
/// or every agent's claim when they differ, never one picked.
pub fn answer(args: AnswerArgs, out: &mut impl Write) -> Result<(), CliError> {
    let (store, redactor) = args.redact.apply(args.source.open_snapshot()?)?;
    answer_on(&store, args, out)?;
    said_redacted(redactor.as_deref());
    Ok(())
}

/// [`answer`] on a store already open (`args.source` is not read); returns the
/// assertions the agents' answers rest on.
/// An assertion an answer names, and the instants at which later assertions
/// of the same claim and confidence covered its version (by the answer's
/// instant): what the answer rests on.
pub struct Answering {
    pub assertion: String,
    pub restated_at: Vec<crate::time::Micros>,
}

pub fn answer_on(
    store: &crate::store::Store,
    args: AnswerArgs,
    out: &mut impl Write,
) -> Result<Vec<Answering>, CliError> {
    check_filter(store, args.agent.as_deref(), Some(&args.topic))?;
    let filter = Filter {
        agent: args.agent.clone(),
        topic: Some(args.topic.clone()),
    };
    let (at, about, read_as) = as_of(store, &args.at, args.about.as_ref())?;
    let held = query::believed(store, at, None, &filter)?;
    let ledger = quality::ledger(store)?;
    let answer = rules::answer(
        &ledger,
        held.iter().map(|b| (&b.version, &b.supported_by[..])),
        store
            .header()
            .topic(&args.topic)
            .map(|t| t.cardinality)
            .unwrap_or_default(),
        at,
        about,
    );
    let when = match about {
        Some(t) => format!("as of {} about {}", time::format(at), time::format(t)),
        None => format!("as of {}", time::format(at)),
    };
    let mut t = Table::new(vec![
        "AGENT",
        "CLAIM",
        "EFF",
        "FRESHNESS",
        "SUPPORT",
        "ASSERTION",
    ]);
    for c in &answer.agents {
        t.row(vec![
            c.agent.to_string(),
            c.claim.to_string(),
            confidence(c.effective_confidence),
            match c.freshness {
                Freshness::Stale => "⌛ stale".to_owned(),
                other => other.as_str().to_owned(),
            },
            c.support.as_str().to_owned(),
            c.assertion.to_string(),
        ]);
    }
    // An answer is only as good as the beliefs giving it: say when the
    // agents answering are stale or have lost their support.
    let caveats: Vec<String> = answer
        .agents
        .iter()
        .filter_map(|c| {
            let mut words = Vec::new();
            if c.freshness == Freshness::Stale {
                words.push("⌛ stale");
            }
            if c.support != Support::Ok {
                words.push(c.support.as_str());
            }
            (!words.is_empty()).then(|| format!("{} {}", c.agent, words.join(", ")))
        })
        .collect();
    let caveat = if caveats.is_empty() {
        String::new()
    } else {
        format!(" ({})", caveats.join("; "))
    };
    let verdict = match answer.status {
        AnswerStatus::None => "none: no agent holds a belief".to_owned(),
        AnswerStatus::Answered => format!("answered: {}{caveat}", answer.claims.join(" + ")),
        AnswerStatus::Conflicted => {
            let claims: Vec<String> = answer
                .agents
                .iter()
                .map(|c| format!("{} says {}", c.agent, c.claim))
                .collect();
            format!("⚠ conflicted: {}", claims.join("; "))
        }
    };
    // Each answering assertion, and when assertions recorded by `at` restated
    // (covered) the version it answers with: those supported it anew.
    let named = answer
        .agents
        .iter()
        .map(|c| {
            let version = held
                .iter()
                .map(|b| &b.version)
                .find(|v| v.agent == c.agent && v.assertion == c.assertion);
            Answering {
                assertion: c.assertion.to_string(),
                restated_at: version.map_or_else(Vec::new, |v| {
                    v.reconfirmed
                        .iter()
                        .copied()
                        .filter(|&t| t <= at && t != v.supported_at)
                        .collect()
                }),
            }
        })
        .collect();
    let what_if = WhatIf::of(store)?;
    let w = what_if.as_ref();
    write_banner(out, w, args.format.format)?;
    let written = match args.format.format {
        OutputFormat::Json => {
            let mut v = json::answer(&args.topic, at, about, &answer);
            if let Some(said) = read_as {
                v["read_as"] = said.into();
            }
            print_json(out, w, &v)
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "{} — `{}` {when}: {verdict}",
                store.label(),
                args.topic
            )?;
            if !t.is_empty() {
                write!(out, "{}", t.text())?;
            }
            Ok(())
        }
        OutputFormat::Md => {
            writeln!(
                out,
                "## {}`{}` {when}\n\n{verdict}\n",
                md_prefix(w),
                args.topic
            )?;
            if !t.is_empty() {
                write!(out, "{}", t.markdown())?;
            }
            Ok(())
        }
    };
    written.map(|()| named)
}
