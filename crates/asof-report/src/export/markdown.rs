//! `asof export --format md`: an audit report a person can read without the TUI.
//!
//! ```text
//! # Audit report — <incident title>
//! summary table (incident, store, events, recorded span)
//! ## How this store was made      loaded from a dataset, imported (the import
//!                                 summary: read, made, cases, defaults, no-ops,
//!                                 skipped), or forked
//! ## Agents / ## Topics
//! ## Topic <id> — <question>      per topic: working answer over recorded time,
//!                                 time to the resolution, every version with its
//!                                 evidence (locators), reconfirmations, no-ops
//! ## Evidence / ## Late-arriving evidence / ## Retractions
//! ## Quality at the end of the log  stale / unsupported / contested beliefs,
//!                                 conflicted topics, verifications (design.md §4)
//! ## Fork lineage                 for a fork: parent, removed evidence, policy, diff
//! ```

use super::ExportError;
use super::table::Table;
use super::{Divergence, Provenance};
use asof_core::engine::EffectKind;
use asof_core::engine::answers::{self, Steps};
use asof_core::engine::quality::{self as rules, Freshness, Support};
use asof_core::model::{ASSUMED_LEGEND, Assumed, EventBody, RetractTarget};
use asof_core::time::{self, Interval, Micros, OPEN};
use asof_store::fork::PolicyReport;
use asof_store::query::{self, Belief, EvidenceItem, LATE, Note};
use asof_store::store::Store;
use std::collections::HashMap;
use std::fmt::Write;

/// The whole report for `store`, opening with `prov` (design.md §8: the source,
/// its SHA-256, the asof version and the export time; for a what-if the
/// banner, its lineage and its divergence from the record).
pub fn report(store: &Store, prov: &Provenance) -> Result<String, ExportError> {
    let header = store.header();
    let log = store.log()?;
    let evidence = query::evidence(store)?;
    let span = query::recorded_span(store)?;
    let locator: HashMap<&str, &EvidenceItem> = evidence
        .iter()
        .map(|e| (e.evidence.id.as_str(), e))
        .collect();
    let mut out = String::new();
    let w = &mut out;

    front_matter(w, store, prov, &log, span)?;
    let _ = write!(w, "{}", super::findings::markdown(prov.review.as_ref()));
    provenance(w, store)?;
    lineage(w, store, prov)?;
    agents_and_topics(w, header);

    // Versions closed per event, counted from the histories read below (each
    // version is in exactly one topic's history), for the retractions table.
    let mut closed_by: HashMap<String, usize> = HashMap::new();
    let ledger = query::quality::ledger(store)?;
    for topic in &header.topics {
        let history = query::history(store, &topic.id, None)?;
        for v in history.versions.iter().map(|b| &b.version) {
            if let Some(c) = &v.closed {
                *closed_by.entry(c.event.to_string()).or_default() += 1;
            }
        }
        let _ = writeln!(w, "## Topic `{}` — {}\n", topic.id, topic.question);
        if let Some(r) = &topic.resolution {
            let _ = writeln!(w, "Resolution (ground truth): “{r}”.\n");
        }
        if history.versions.is_empty() {
            let _ = writeln!(w, "No agent held a belief about this topic.\n");
            continue;
        }
        answers(
            w,
            store,
            topic.resolution.as_deref(),
            &history.versions,
            span,
        );
        versions(w, &history.versions, &ledger, &locator);
        unchanged(w, &history.notes, &locator);
    }

    let _ = writeln!(w, "## Evidence\n");
    let _ = writeln!(w, "{}", evidence_table(evidence.iter()).markdown());
    whole_texts(w, &evidence);
    late_evidence(w, &evidence);
    retractions(w, &log, &locator, &closed_by);
    quality(w, store, &log, span)?;
    Ok(out)
}

/// The title, the what-if banner, the table of where the report comes from
/// and what the log holds, and how to read the times.
fn front_matter(
    w: &mut String,
    store: &Store,
    prov: &Provenance,
    log: &asof_core::model::Dataset,
    span: Option<(Micros, Micros)>,
) -> Result<(), ExportError> {
    let header = store.header();
    let count = |f: fn(&EventBody) -> bool| log.events.iter().filter(|e| f(&e.body)).count();
    let _ = writeln!(
        w,
        "# {}Audit report — {}\n",
        prov.title_prefix(),
        header.incident.title
    );
    if let Some(what_if) = &prov.what_if {
        let _ = writeln!(w, "> **{}**  \n> {}\n", what_if.banner(), what_if.lineage());
    }
    let mut t = Table::new(vec!["", ""]);
    for (label, value) in prov.rows() {
        t.row(vec![label.into(), value]);
    }
    t.row(vec!["incident".into(), header.incident.id.clone()]);
    if let Some(source) = store.meta("source")?.filter(|s| *s != prov.origin.name) {
        t.row(vec!["loaded from".into(), source]);
    }
    t.row(vec![
        "events".into(),
        format!(
            "{} ({} evidence, {} assertions, {} retractions{})",
            log.events.len(),
            count(|b| matches!(b, EventBody::Evidence(_))),
            count(|b| matches!(b, EventBody::Believe(_))),
            count(|b| matches!(b, EventBody::Retract(_))),
            match count(|b| matches!(b, EventBody::Verify(_))) {
                0 => String::new(),
                n => format!(", {n} verifications"),
            }
        ),
    ]);
    if let Some((first, last)) = span {
        t.row(vec![
            "recorded span".into(),
            format!("{} → {}", time::format(first), time::format(last)),
        ]);
    }
    let _ = writeln!(w, "{}", t.markdown());
    let _ = writeln!(
        w,
        "Times are UTC. *Valid* time is when something was true in the world; *recorded* time is \
when the agent held the belief. Every row below is derived by replaying the store's event log \
(asof's replay semantics, `docs/semantics.md`); the log itself is unchanged.\n"
    );
    Ok(())
}

/// The agents and the topics, one table each.
fn agents_and_topics(w: &mut String, header: &asof_core::model::Header) {
    let _ = writeln!(w, "## Agents\n");
    let mut t = Table::new(vec!["id", "name"]);
    for a in &header.agents {
        t.row(vec![a.id.clone(), a.name.clone()]);
    }
    let _ = writeln!(w, "{}", t.markdown());

    let _ = writeln!(w, "## Topics\n");
    let mut t = Table::new(vec!["id", "question", "cardinality", "resolution"]);
    for topic in &header.topics {
        t.row(vec![
            topic.id.clone(),
            topic.question.clone(),
            topic.cardinality.as_str().into(),
            topic.resolution.clone().unwrap_or_else(|| "—".into()),
        ]);
    }
    let _ = writeln!(w, "{}", t.markdown());
}

/// A topic's versions, each with how it ended, its assertion and evidence;
/// what an importer assumed is marked.
fn versions(
    w: &mut String,
    versions: &[Belief],
    ledger: &asof_core::engine::quality::Ledger,
    locator: &HashMap<&str, &EvidenceItem>,
) {
    let _ = writeln!(w, "### Versions\n");
    let mut any_assumed = false;
    let mut t = Table::new(vec![
        "agent",
        "claim",
        "conf",
        "valid",
        "held (recorded)",
        "how it ended",
        "assertion",
        "evidence",
    ]);
    for b in versions {
        let v = &b.version;
        let mut claim = v.claim.to_string();
        if v.origin == asof_core::model::Origin::Split {
            claim.push_str(" (split piece)");
        }
        if let Some(by) = &v.clipped_by {
            claim.push_str(&format!(" (open end clipped by {by})"));
        }
        let assumed = ledger.assumed(&v.assertion);
        t.row(vec![
            Assumed::Agent.mark(assumed, v.agent.to_string()),
            claim,
            Assumed::Confidence.mark(assumed, format!("{:.2}", v.confidence)),
            Assumed::ValidFrom.mark(assumed, interval(v.valid)),
            interval(Interval::new(v.recorded_at, v.superseded_at)),
            match &v.closed {
                Some(c) => c.to_string(),
                None => "still held".into(),
            },
            v.assertion.to_string(),
            Assumed::SupportedBy.mark(assumed, cited(&b.supported_by, locator)),
        ]);
        any_assumed |= !assumed.is_empty();
    }
    let _ = writeln!(w, "{}", t.markdown());
    if any_assumed {
        let _ = writeln!(w, "{ASSUMED_LEGEND}.\n");
    }
}

/// A topic's events that changed no version (reconfirmations, zero-width
/// beliefs, retractions that found nothing), if it has any.
fn unchanged(w: &mut String, notes: &[Note], locator: &HashMap<&str, &EvidenceItem>) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(w, "### Events that changed no version\n");
    let mut t = Table::new(vec!["recorded", "event", "agent", "what", "evidence"]);
    for n in notes {
        let what = match n.effect {
            EffectKind::Reconfirmed => {
                format!("reconfirmed “{}”", n.claim.as_deref().unwrap_or_default())
            }
            EffectKind::ZeroWidth => "closed at the instant it was recorded (not stored)".into(),
            _ => "retraction that found nothing held".into(),
        };
        t.row(vec![
            time::format(n.recorded_at),
            n.event.clone(),
            n.agent.clone(),
            what,
            cited(&n.cites, locator),
        ]);
    }
    let _ = writeln!(w, "{}", t.markdown());
}

/// The evidence that reached the agent [`LATE`] or more after it happened,
/// longest lag first.
fn late_evidence(w: &mut String, evidence: &[EvidenceItem]) {
    let mut late: Vec<&EvidenceItem> = evidence
        .iter()
        .filter(|e| e.evidence.lag() >= LATE)
        .collect();
    late.sort_by_key(|e| std::cmp::Reverse(e.evidence.lag()));
    let _ = writeln!(
        w,
        "## Late-arriving evidence\n\nItems that reached the agent {} or more after they happened, longest lag first.\n",
        time::format_duration(LATE)
    );
    if late.is_empty() {
        let _ = writeln!(w, "None.\n");
    } else {
        let _ = writeln!(w, "{}", evidence_table(late.into_iter()).markdown());
    }
}

/// Every retraction in the log, with how many versions it closed.
fn retractions(
    w: &mut String,
    log: &asof_core::model::Dataset,
    locator: &HashMap<&str, &EvidenceItem>,
    closed_by: &HashMap<String, usize>,
) {
    let _ = writeln!(w, "## Retractions\n");
    let mut t = Table::new(vec![
        "recorded",
        "event",
        "agent",
        "what",
        "portion",
        "because",
        "reason",
        "versions closed",
    ]);
    for e in &log.events {
        let EventBody::Retract(r) = &e.body else {
            continue;
        };
        let what = match &r.target {
            RetractTarget::Assertion(a) => format!("what descends from {a}"),
            RetractTarget::Topic { topic, claim: None } => format!("topic {topic}"),
            RetractTarget::Topic {
                topic,
                claim: Some(c),
            } => format!("“{c}” on {topic}"),
        };
        t.row(vec![
            time::format(r.recorded_at),
            r.id.clone(),
            r.agent.clone(),
            what,
            r.valid.map_or("all valid time".into(), interval),
            cited(&r.because, locator),
            r.reason.clone().unwrap_or_default(),
            closed_by.get(&r.id).copied().unwrap_or(0).to_string(),
        ]);
    }
    if t.is_empty() {
        let _ = writeln!(w, "None.\n");
    } else {
        let _ = writeln!(w, "{}", t.markdown());
    }
}

/// "Quality at the end of the log" (design.md §4): what was held then and had gone
/// stale, lost its support or rested on contested evidence; the topics on
/// which the agents disagreed; every verification recorded.
fn quality(
    w: &mut String,
    store: &Store,
    log: &asof_core::model::Dataset,
    span: Option<(Micros, Micros)>,
) -> Result<(), ExportError> {
    let _ = writeln!(
        w,
        "## Quality at the end of the log
"
    );
    let Some((_, end)) = span else {
        let _ = writeln!(
            w,
            "The log is empty.
"
        );
        return Ok(());
    };
    let held = query::believed(store, end, None, &query::Filter::default())?;
    let ledger = query::quality::ledger(store)?;
    let _ = writeln!(
        w,
        "Read at {}, the log's last event. A belief is *stale* when held its topic's `stale_after` or longer since its last support (its assertion, or a later assertion that restated it), *unsupported* when every item it cites was later rejected or marked stale, *contested* when an item it cites is conflicted. Effective confidence halves every `half_life` without support.\n",
        time::format(end)
    );
    let mut t = Table::new(vec![
        "topic",
        "agent",
        "claim",
        "conf → effective",
        "last support",
        "freshness",
        "support",
        "evidence",
    ]);
    for b in &held {
        let v = &b.version;
        let q = ledger.quality(v, &b.supported_by, end);
        if q.freshness != Freshness::Stale && q.support == Support::Ok {
            continue;
        }
        t.row(vec![
            v.topic.to_string(),
            v.agent.to_string(),
            v.claim.to_string(),
            format!("{:.2} → {:.2}", v.confidence, q.effective_confidence),
            time::format(q.last_support),
            q.freshness.as_str().to_owned(),
            q.support.as_str().to_owned(),
            b.supported_by.join(", "),
        ]);
    }
    let _ = writeln!(w, "### Stale, unsupported and contested beliefs\n");
    if t.is_empty() {
        let _ = writeln!(
            w,
            "None: every belief held at the end is fresh (or its topic sets no `stale_after`) and rests on evidence that holds up.\n"
        );
    } else {
        let _ = writeln!(w, "{}", t.markdown());
    }

    let _ = writeln!(w, "### Conflicted topics\n");
    let mut t = Table::new(vec!["topic", "agent", "claim", "effective", "support"]);
    for topic in &store.header().topics {
        let of_topic = held.iter().filter(|b| *b.version.topic == *topic.id);
        let answer = rules::answer(
            &ledger,
            of_topic.map(|b| (&b.version, &b.supported_by[..])),
            topic.cardinality,
            end,
            None,
        );
        if answer.status != rules::AnswerStatus::Conflicted {
            continue;
        }
        for c in &answer.agents {
            t.row(vec![
                topic.id.clone(),
                c.agent.to_string(),
                c.claim.to_string(),
                format!("{:.2}", c.effective_confidence),
                c.support.as_str().to_owned(),
            ]);
        }
    }
    if t.is_empty() {
        let _ = writeln!(
            w,
            "None: on every topic, the agents that held an answer at the end held the same one.\n"
        );
    } else {
        let _ = writeln!(
            w,
            "Every agent's working answer is listed; none is picked.\n\n{}",
            t.markdown()
        );
    }

    let _ = writeln!(w, "### Verifications\n");
    let mut t = Table::new(vec!["recorded", "event", "evidence", "state", "by", "note"]);
    for e in &log.events {
        if let EventBody::Verify(v) = &e.body {
            t.row(vec![
                time::format(v.recorded_at),
                v.id.clone(),
                v.evidence.clone(),
                v.state.as_str().to_owned(),
                v.by.clone(),
                v.note.clone().unwrap_or_default(),
            ]);
        }
    }
    if t.is_empty() {
        let _ = writeln!(
            w,
            "None: no evidence was verified; every item is a candidate.\n"
        );
    } else {
        let _ = writeln!(w, "{}", t.markdown());
    }
    Ok(())
}

/// The working answer per agent over recorded time, and time to the resolution.
fn answers(
    w: &mut String,
    store: &Store,
    resolution: Option<&str>,
    versions: &[Belief],
    span: Option<(Micros, Micros)>,
) {
    let by_pair = answers::answers_of(versions.iter().map(|b| &b.version));
    let mut pairs: Vec<(&(String, String), &Steps)> = by_pair.iter().collect();
    pairs.sort_by_key(|((agent, _), _)| store.agent_rank(agent));
    let _ = writeln!(w, "### Working answer over recorded time\n");
    let mut t = Table::new(vec!["agent", "from", "until", "answer"]);
    for ((agent, _), steps) in &pairs {
        for (i, (from, claim)) in steps.iter().enumerate() {
            let until = steps.get(i + 1).map_or(OPEN, |s| s.0);
            t.row(vec![
                agent.clone(),
                time::format(*from),
                time::format_opt(until).unwrap_or_else(|| "—".into()),
                claim
                    .as_deref()
                    .map_or("(none held)".into(), |c| c.to_owned()),
            ]);
        }
    }
    let _ = writeln!(w, "{}", t.markdown());
    if let (Some(r), Some(span)) = (resolution, span) {
        for ((agent, _), steps) in &pairs {
            let truth = answers::truth(steps, r, span);
            let _ = writeln!(
                w,
                "- {agent}: {}; answer other than the resolution for {} in total.",
                match truth.converged_at {
                    Some(t) => format!("right from {} to the end of the log", time::format(t)),
                    None => "not right at the end of the log".into(),
                },
                time::format_duration(truth.time_wrong_ms * 1000)
            );
        }
        let _ = writeln!(w);
    }
}

fn evidence_table<'a>(items: impl Iterator<Item = &'a EvidenceItem>) -> Table {
    let mut t = Table::new(vec![
        "id", "kind", "source", "locator", "observed", "recorded", "lag", "cited by", "summary",
    ]);
    for item in items {
        let e = &item.evidence;
        t.row(vec![
            e.id.clone(),
            e.kind.clone(),
            e.source.clone(),
            e.locator.clone(),
            time::format_observed(e.observed_at, e.observed_until, false),
            time::format(e.recorded_at),
            time::format_duration(e.lag()),
            if item.cited_by.is_empty() {
                "—".into()
            } else {
                item.cited_by.join(", ")
            },
            e.summary_shown().into_owned(),
        ]);
    }
    t
}

/// What each item whose summary is cut held, whole: what the agent read.
fn whole_texts(w: &mut String, evidence: &[EvidenceItem]) {
    let whole: Vec<(&str, &str)> = evidence
        .iter()
        .filter_map(|i| Some((i.evidence.id.as_str(), i.evidence.content.as_deref()?)))
        .collect();
    if whole.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "### What each item held, whole

The summaries above end in `…` where the item held more; this is all of it, as the agent read it.
"
    );
    for (id, text) in whole {
        let _ = writeln!(
            w,
            "**{id}** ({})\n\n{}\n",
            asof_core::text::size(text),
            asof_core::text::fenced(text)
        );
    }
}

/// For a fork: where it came from, what the policy did, and how it differs.
/// "How this store was made": the import summary kept in meta, or where the log
/// was loaded from, or that it is a fork.
fn provenance(w: &mut String, store: &Store) -> Result<(), ExportError> {
    let _ = writeln!(w, "## How this store was made\n");
    if let Some(json) = store.meta("import_report")? {
        match serde_json::from_str::<asof_import::import::ImportReport>(&json) {
            Ok(report) => {
                let _ = writeln!(
                    w,
                    "Imported from `{}` ({}) with `asof import {}`: {}.\n",
                    report.input,
                    report.format,
                    report.format,
                    report.headline()
                );
                let _ = writeln!(w, "{}", crate::export::summary::details(&report, true));
            }
            Err(e) => {
                let _ = writeln!(
                    w,
                    "Imported, but the import summary kept in the store cannot be read ({e}).\n"
                );
            }
        }
    } else if store.meta("fork_parent")?.is_some() {
        let _ = writeln!(
            w,
            "A what-if fork of another store: its parent's log replayed without some evidence (see *Fork lineage* next).\n"
        );
    } else {
        let source = store.meta("source")?;
        let _ = writeln!(
            w,
            "Loaded with `asof load` from {}: every event is in the log as the dataset wrote it; nothing was assumed.\n",
            source.map_or_else(|| "a dataset".to_owned(), |s| format!("`{s}`"))
        );
    }
    Ok(())
}

fn lineage(w: &mut String, store: &Store, prov: &Provenance) -> Result<(), ExportError> {
    if prov.what_if.is_none() {
        return Ok(());
    }
    let _ = writeln!(
        w,
        "## Fork lineage\n\nThis store is a what-if fork: its parent's log replayed without some evidence \
(a replay, not a causal model).\n"
    );
    let mut t = Table::new(vec!["", ""]);
    for (key, label) in [
        ("fork_parent", "parent"),
        ("fork_parent_sha256", "parent SHA-256"),
        ("fork_removed", "removed evidence"),
        ("fork_policy", "policy"),
        ("fork_created_at", "created"),
    ] {
        if let Some(value) = store.meta(key)? {
            t.row(vec![label.into(), value]);
        }
    }
    let _ = writeln!(w, "{}", t.markdown());
    let report: Option<PolicyReport> = store
        .meta("fork_report")?
        .and_then(|r| serde_json::from_str(&r).ok());
    if let Some(r) = &report {
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        let _ = writeln!(
            w,
            "- dropped assertions (no evidence left): {}",
            list(&r.dropped)
        );
        let scaled: Vec<String> = r
            .scaled
            .iter()
            .map(|s| format!("{} {:.3} → {:.3}", s.assertion, s.from, s.to))
            .collect();
        let _ = writeln!(w, "- scaled confidences: {}", list(&scaled));
        let _ = writeln!(w, "- dropped retractions: {}", list(&r.dropped_retractions));
        let _ = writeln!(
            w,
            "- retractions that found nothing: {}\n",
            list(&r.noop_retractions)
        );
    }
    // The divergence from the record, when the parent could be read as it was.
    let d = match &prov.divergence {
        Some(Divergence::Shown { diff, .. }) => diff,
        Some(Divergence::NotShown(why)) => {
            let _ = writeln!(
                w,
                "**Divergence from the record is not shown**: {why}. `asof diff PARENT {}` compares them.\n",
                prov.origin.name
            );
            return Ok(());
        }
        None => return Ok(()),
    };
    let _ = writeln!(w, "### Where the answers diverge\n");
    let mut t = Table::new(vec!["agent", "topic", "from", "until", "parent", "fork"]);
    for ((agent, topic), windows) in &d.divergence {
        for win in windows {
            t.row(vec![
                agent.clone(),
                topic.clone(),
                time::format(win.from),
                time::format_opt(win.to).unwrap_or_else(|| "—".into()),
                win.a.clone().unwrap_or_else(|| "(none)".into()),
                win.b.clone().unwrap_or_else(|| "(none)".into()),
            ]);
        }
    }
    if t.is_empty() {
        let _ = writeln!(w, "Nowhere: every answer is the same.\n");
    } else {
        let _ = writeln!(w, "{}", t.markdown());
    }
    if !d.truth.is_empty() {
        let _ = writeln!(w, "### Time to the resolution\n");
        let mut t = Table::new(vec![
            "agent",
            "topic",
            "parent right from",
            "fork right from",
            "parent wrong for",
            "fork wrong for",
        ]);
        let at = |c: Option<Micros>| c.map_or("never".into(), time::format);
        for ((agent, topic), p, f) in &d.truth {
            t.row(vec![
                agent.clone(),
                topic.clone(),
                at(p.converged_at),
                at(f.converged_at),
                time::format_duration(p.time_wrong_ms * 1000),
                time::format_duration(f.time_wrong_ms * 1000),
            ]);
        }
        let _ = writeln!(w, "{}", t.markdown());
    }
    Ok(())
}

fn interval(v: Interval) -> String {
    let from = if v.from == i64::MIN {
        "−∞".to_owned()
    } else {
        time::format(v.from)
    };
    format!("[{from}, {})", time::format(v.to))
}

/// Evidence ids with their locators: `E4 (PD-48213)`.
fn cited<S: AsRef<str>>(ids: &[S], locator: &HashMap<&str, &EvidenceItem>) -> String {
    if ids.is_empty() {
        return "—".into();
    }
    ids.iter()
        .map(|id| {
            let id = id.as_ref();
            match locator.get(id) {
                Some(item) => format!("{id} ({})", item.evidence.locator),
                None => id.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
