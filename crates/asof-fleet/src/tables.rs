//! The fleet's ten tables of one incident store (docs/fleet.md has the schema
//! for readers; this file is where it is made).
//!
//! Every table is built from what the store holds and what asof's own queries
//! answer on it — the log, the stored versions, `evidence`, `influence` and the
//! working answers and truths of `diff` — so a fleet question over the files
//! gives what asking each store would. Columns are named as the JSON outputs
//! name them; a JSON object becomes columns prefixed with its key
//! (`verification.state` → `verification_state`). Instants are UTC
//! microsecond timestamps, an open end is null; durations are milliseconds
//! (`_ms`), as in the JSON.
//!
//! The incident itself is not a column: it is the Hive partition
//! (`incident=<id>`) every file sits in, which the readers add.

use crate::parquet::{Column, Kind, Table, opt, req};
use asof_core::engine::answers::{self, Steps, Truth};
use asof_core::engine::quality::Ledger;
use asof_core::model::{Dataset, EventBody, RetractTarget};
use asof_core::time::{Micros, OPEN};
use asof_store::fork::influence::{influence_of, truth_known};
use asof_store::query;
use asof_store::store::{Store, StoreError};
use std::collections::HashMap;

/// The version of the schema below; readers find it in every file's metadata
/// (`asof.schema_version`) and in `incidents.schema_version`. It changes when
/// a column changes meaning, goes, or is renamed (adding one is compatible).
pub const SCHEMA_VERSION: u32 = 1;

use Kind::{Bool, Float, Int, List, Str, Time};

/// `incidents`: one row, the store (docs/fleet.md has every column).
pub const INCIDENTS: &[Column] = &[
    req("id", Str),
    req("title", Str),
    req("store", Str),
    req("sha256", Str),
    opt("source", Str),
    opt("loaded_at", Str),
    opt("import_report", Str),
    req("agents", Int),
    req("topics", Int),
    req("events", Int),
    req("evidence", Int),
    req("assertions", Int),
    req("retractions", Int),
    req("verifications", Int),
    opt("first_recorded_at", Time),
    opt("last_recorded_at", Time),
    req("schema_version", Int),
];

/// `agents`: one row per agent.
pub const AGENTS: &[Column] = &[req("agent", Str), req("name", Str)];

/// `topics`: one row per topic.
pub const TOPICS: &[Column] = &[
    req("topic", Str),
    req("question", Str),
    req("cardinality", Str),
    opt("resolution", Str),
    opt("half_life_ms", Int),
    opt("stale_after_ms", Int),
];

/// `evidence`: one row per item, as at the end of the log.
pub const EVIDENCE: &[Column] = &[
    req("seq", Int),
    req("id", Str),
    req("kind", Str),
    req("source", Str),
    req("locator", Str),
    req("observed_at", Time),
    opt("observed_until", Time),
    req("recorded_at", Time),
    req("lag_ms", Int),
    req("lag_from_end_ms", Int),
    req("reliability", Float),
    req("summary", Str),
    req("content", Str),
    req("cited_by", List),
    req("verification_state", Str),
    opt("verification_since", Time),
    opt("verification_by", Str),
    opt("verification_note", Str),
    opt("verification_id", Str),
];

/// `events`: assertions, retractions and verifications, in log order.
pub const EVENTS: &[Column] = &[
    req("seq", Int),
    req("id", Str),
    req("kind", Str),
    req("recorded_at", Time),
    opt("agent", Str),
    opt("topic", Str),
    opt("claim", Str),
    opt("assertion", Str),
    opt("confidence", Float),
    opt("valid_from", Time),
    opt("valid_to", Time),
    opt("clip", Bool),
    req("cites", List),
    opt("rationale", Str),
    opt("reason", Str),
    opt("evidence", Str),
    opt("state", Str),
    opt("by", Str),
    opt("note", Str),
];

/// `versions`: every belief version, held or closed.
pub const VERSIONS: &[Column] = &[
    req("id", Int),
    req("agent", Str),
    req("topic", Str),
    req("claim", Str),
    req("confidence", Float),
    req("valid_from", Time),
    opt("valid_to", Time),
    req("recorded_at", Time),
    opt("superseded_at", Time),
    req("assertion", Str),
    req("origin", Str),
    opt("closed_by", Str),
    opt("closed_kind", Str),
    opt("clipped_by", Str),
    opt("requested_valid_to", Time),
    req("supported_by", List),
    opt("last_support", Time),
    req("effective_confidence", Float),
    req("freshness", Str),
    req("support", Str),
];

/// `answers`: each agent's working answer per topic, one row per change.
pub const ANSWERS: &[Column] = &[
    req("agent", Str),
    req("topic", Str),
    req("recorded_at", Time),
    opt("claim", Str),
];

/// `agreement`: per topic, the agents' working answers side by side, one row per change.
pub const AGREEMENT: &[Column] = &[
    req("topic", Str),
    req("recorded_at", Time),
    req("until", Time),
    req("agents", Int),
    req("claims", List),
    req("conflicted", Bool),
];

/// `influence`: the ranking of `asof influence`.
pub const INFLUENCE: &[Column] = &[
    req("rank", Int),
    req("evidence", Str),
    req("truth_shift_ms", Int),
    req("divergence_ms", Int),
    req("topics", List),
    req("truth_known", Bool),
];

/// `outcomes`: per (agent, topic) with a resolution, how the agent converged on it.
pub const OUTCOMES: &[Column] = &[
    req("agent", Str),
    req("topic", Str),
    req("truth", Str),
    opt("converged_at", Time),
    opt("time_to_truth_ms", Int),
    req("time_wrong_ms", Int),
    opt("final_claim", Str),
    req("right_at_end", Bool),
];

/// The tables in the order they are written: `incidents` last, so an
/// incident listed there has every other table beside it.
pub const TABLES: [(&str, &[Column]); 10] = [
    ("agents", AGENTS),
    ("topics", TOPICS),
    ("evidence", EVIDENCE),
    ("events", EVENTS),
    ("versions", VERSIONS),
    ("answers", ANSWERS),
    ("agreement", AGREEMENT),
    ("influence", INFLUENCE),
    ("outcomes", OUTCOMES),
    ("incidents", INCIDENTS),
];

/// Where a store came from, for its `incidents` row.
#[derive(Debug, Clone)]
pub struct Origin<'a> {
    /// The store as the user named it.
    pub store: &'a str,
    /// SHA-256 of its bytes.
    pub sha256: &'a str,
}

/// Builds every table of one store, in [`TABLES`]' order.
pub fn tables(store: &Store, origin: &Origin) -> Result<Vec<Table>, StoreError> {
    let log = store.log()?;
    let versions = store.versions()?;
    let items = query::evidence(store)?;
    let ledger = Ledger::of_log(&log);
    let span = log.span();
    let end = span.map_or(0, |(_, last)| last);
    let header = &log.header;

    let mut agents = Table::new(AGENTS);
    for a in &header.agents {
        agents.row().str(&a.id).str(&a.name).end();
    }
    let mut topics = Table::new(TOPICS);
    for t in &header.topics {
        topics
            .row()
            .str(&t.id)
            .str(&t.question)
            .str(t.cardinality.as_str())
            .opt_str(t.resolution.as_deref())
            .opt_int(t.half_life.map(|d| d / 1000))
            .opt_int(t.stale_after.map(|d| d / 1000))
            .end();
    }

    let mut evidence = Table::new(EVIDENCE);
    for i in &items {
        let e = &i.evidence;
        let verdict = ledger.verdict(&e.id, end);
        evidence
            .row()
            .int(i.seq as i64)
            .str(&e.id)
            .str(&e.kind)
            .str(&e.source)
            .str(&e.locator)
            .time(e.observed_at)
            .time(e.observed_until.unwrap_or(OPEN))
            .time(e.recorded_at)
            .int(e.lag_from_start() / 1000)
            .int(e.lag() / 1000)
            .float(e.reliability)
            .str(&e.summary)
            .str(e.content.as_deref().unwrap_or(&e.summary))
            .list(i.cited_by.iter().map(String::as_str))
            .str(verdict.map_or("candidate", |v| v.state.as_str()))
            .time(verdict.map_or(OPEN, |v| v.since))
            .opt_str(verdict.map(|v| v.by.as_str()).filter(|by| !by.is_empty()))
            .opt_str(verdict.and_then(|v| v.note.as_deref()))
            .opt_str(verdict.map(|v| v.id.as_str()))
            .end();
    }

    let events = events_table(&log);

    // Each assertion's evidence, for its versions' `supported_by`.
    let cited: HashMap<&str, &[String]> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Believe(a) => Some((a.id.as_str(), &a.supported_by[..])),
            _ => None,
        })
        .collect();
    let mut versions_table = Table::new(VERSIONS);
    for v in &versions {
        let supported_by: Vec<asof_core::model::Name> = cited
            .get(&*v.assertion)
            .map(|c| c.iter().map(|s| s.as_str().into()).collect())
            .unwrap_or_default();
        let q = ledger.quality_in_history(v, &supported_by, end);
        versions_table
            .row()
            .int(v.id as i64)
            .str(&v.agent)
            .str(&v.topic)
            .str(&v.claim)
            .float(v.confidence)
            .time(v.valid.from)
            .time(v.valid.to)
            .time(v.recorded_at)
            .time(v.superseded_at)
            .str(&v.assertion)
            .str(v.origin.as_str())
            .opt_str(v.closed.as_ref().map(|c| c.event.as_str()))
            .opt_str(v.closed.as_ref().map(|c| c.kind.as_str()))
            .opt_str(v.clipped_by.as_deref())
            .time(v.requested_valid_to)
            .list(supported_by.iter().map(|s| s.as_str()))
            .time(q.last_support)
            .float(q.effective_confidence)
            .str(q.freshness.as_str())
            .str(q.support.as_str())
            .end();
    }

    let steps = answers::answers_of(versions.iter());
    let mut answers_table = Table::new(ANSWERS);
    for ((agent, topic), list) in &steps {
        for (at, claim) in list {
            answers_table
                .row()
                .str(agent)
                .str(topic)
                .time(*at)
                .opt_str(claim.as_deref())
                .end();
        }
    }

    let agreement = agreement_table(&steps, end);

    let mut influence = Table::new(INFLUENCE);
    for (rank, item) in influence_of(&log, &versions).iter().enumerate() {
        influence
            .row()
            .int(rank as i64 + 1)
            .str(&item.evidence)
            .int(item.truth_shift_ms)
            .int(item.divergence_ms)
            .list(item.topics.iter().map(String::as_str))
            .bool(truth_known(header, item))
            .end();
    }

    let outcomes = outcomes_table(&log, &store.truths()?, &steps, span);
    let incidents = incidents_table(store, &log, origin)?;
    Ok(vec![
        agents,
        topics,
        evidence,
        events,
        versions_table,
        answers_table,
        agreement,
        influence,
        outcomes,
        incidents,
    ])
}

/// What an event row holds besides its seq, id and instant: each kind fills
/// its own columns, the rest stay null.
#[derive(Default)]
struct EventFields<'a> {
    agent: Option<&'a str>,
    topic: Option<&'a str>,
    claim: Option<&'a str>,
    assertion: Option<&'a str>,
    confidence: Option<f64>,
    valid: Option<asof_core::time::Interval>,
    clip: Option<bool>,
    cites: &'a [String],
    rationale: Option<&'a str>,
    reason: Option<&'a str>,
    evidence: Option<&'a str>,
    state: Option<&'a str>,
    by: Option<&'a str>,
    note: Option<&'a str>,
}

/// Assertions, retractions and verifications, in file order (`seq`); the
/// evidence table holds evidence.
fn events_table(log: &Dataset) -> Table {
    let mut t = Table::new(EVENTS);
    for e in &log.events {
        let (kind, f) = match &e.body {
            EventBody::Evidence(_) => continue,
            EventBody::Believe(a) => (
                "believe",
                EventFields {
                    agent: Some(&a.agent),
                    topic: Some(&a.topic),
                    claim: Some(&a.claim),
                    confidence: Some(a.confidence),
                    valid: Some(a.valid),
                    clip: Some(a.clip),
                    cites: &a.supported_by,
                    rationale: a.rationale.as_deref(),
                    ..Default::default()
                },
            ),
            EventBody::Retract(r) => {
                let (topic, claim, assertion) = match &r.target {
                    RetractTarget::Topic { topic, claim } => {
                        (Some(topic.as_str()), claim.as_deref(), None)
                    }
                    RetractTarget::Assertion(id) => (None, None, Some(id.as_str())),
                };
                (
                    "retract",
                    EventFields {
                        agent: Some(&r.agent),
                        topic,
                        claim,
                        assertion,
                        valid: r.valid,
                        cites: &r.because,
                        reason: r.reason.as_deref(),
                        ..Default::default()
                    },
                )
            }
            EventBody::Verify(v) => (
                "verify",
                EventFields {
                    evidence: Some(&v.evidence),
                    state: Some(v.state.as_str()),
                    by: Some(&v.by),
                    note: v.note.as_deref(),
                    ..Default::default()
                },
            ),
        };
        t.row()
            .int(e.seq as i64)
            .str(e.id())
            .str(kind)
            .time(e.recorded_at())
            .opt_str(f.agent)
            .opt_str(f.topic)
            .opt_str(f.claim)
            .opt_str(f.assertion)
            .opt_float(f.confidence)
            .time(f.valid.map_or(OPEN, |v| v.from))
            .time(f.valid.map_or(OPEN, |v| v.to))
            .opt_bool(f.clip)
            .list(f.cites.iter().map(String::as_str))
            .opt_str(f.rationale)
            .opt_str(f.reason)
            .opt_str(f.evidence)
            .opt_str(f.state)
            .opt_str(f.by)
            .opt_str(f.note)
            .end();
    }
    t
}

/// Per topic, the agents' working answers side by side over recorded time: at
/// every instant one of them changes, how many agents hold an answer and the
/// distinct claims they name (sorted), one row per change of either, each
/// until the next or the log's `end`.
fn agreement_table(
    steps: &std::collections::BTreeMap<(String, String), Steps>,
    end: Micros,
) -> Table {
    let mut t = Table::new(AGREEMENT);
    let mut by_topic: std::collections::BTreeMap<&str, Vec<&Steps>> = Default::default();
    for ((_, topic), list) in steps {
        by_topic.entry(topic).or_default().push(list);
    }
    for (topic, agents) in by_topic {
        let mut instants: Vec<Micros> = agents.iter().flat_map(|s| s.iter().map(|x| x.0)).collect();
        instants.sort_unstable();
        instants.dedup();
        let mut rows: Vec<(Micros, usize, Vec<&str>)> = Vec::new();
        for at in instants {
            let held: Vec<&str> = agents
                .iter()
                .filter_map(|s| answers::value_at(s, at))
                .collect();
            let mut claims = held.clone();
            claims.sort_unstable();
            claims.dedup();
            if rows
                .last()
                .is_none_or(|r| (r.1, &r.2) != (held.len(), &claims))
            {
                rows.push((at, held.len(), claims));
            }
        }
        for (i, (at, holding, claims)) in rows.iter().enumerate() {
            let until = rows.get(i + 1).map_or(end.max(*at), |next| next.0);
            t.row()
                .str(topic)
                .time(*at)
                .time(until)
                .int(*holding as i64)
                .list(claims.iter().copied())
                .bool(claims.len() > 1)
                .end();
        }
    }
    t
}

/// Per (agent, topic) with versions whose topic has a resolution: its truth as
/// the store keeps it (`diff`'s convergence over the log's span, derived when
/// the store was written), its time to truth from the first event, and the
/// answer at the last event.
fn outcomes_table(
    log: &Dataset,
    truths: &std::collections::BTreeMap<(String, String), Truth>,
    steps: &std::collections::BTreeMap<(String, String), Steps>,
    span: Option<(Micros, Micros)>,
) -> Table {
    let mut t = Table::new(OUTCOMES);
    let Some(span) = span else {
        return t;
    };
    let resolutions = log.header.resolutions();
    for ((agent, topic), outcome) in truths {
        let Some(&truth) = resolutions.get(topic.as_str()) else {
            continue;
        };
        let last = steps
            .get(&(agent.clone(), topic.clone()))
            .and_then(|s| answers::value_at(s, span.1));
        t.row()
            .str(agent)
            .str(topic)
            .str(truth)
            .time(outcome.converged_at.unwrap_or(OPEN))
            .opt_int(outcome.converged_at.map(|at| (at - span.0) / 1000))
            .int(outcome.time_wrong_ms)
            .opt_str(last)
            .bool(last == Some(truth))
            .end();
    }
    t
}

fn incidents_table(store: &Store, log: &Dataset, origin: &Origin) -> Result<Table, StoreError> {
    let mut t = Table::new(INCIDENTS);
    let count = |f: fn(&EventBody) -> bool| log.events.iter().filter(|e| f(&e.body)).count() as i64;
    let span = log.span();
    t.row()
        .str(&log.header.incident.id)
        .str(&log.header.incident.title)
        .str(origin.store)
        .str(origin.sha256)
        .opt_str(store.meta("source")?.as_deref())
        .opt_str(store.meta("loaded_at")?.as_deref())
        .opt_str(store.meta("import_report")?.as_deref())
        .int(log.header.agents.len() as i64)
        .int(log.header.topics.len() as i64)
        .int(log.events.len() as i64)
        .int(count(|b| matches!(b, EventBody::Evidence(_))))
        .int(count(|b| matches!(b, EventBody::Believe(_))))
        .int(count(|b| matches!(b, EventBody::Retract(_))))
        .int(count(|b| matches!(b, EventBody::Verify(_))))
        .time(span.map_or(OPEN, |s| s.0))
        .time(span.map_or(OPEN, |s| s.1))
        .int(i64::from(SCHEMA_VERSION))
        .end();
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    /// The events table of the bundled demo, read back: every assertion,
    /// retraction and verification once, each with its own columns.
    #[test]
    fn the_events_table_holds_each_kind_with_its_columns() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../datasets/payment-outage.yaml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let log = asof_core::dataset::read_str("demo", asof_core::dataset::Format::Yaml, &text)
            .unwrap()
            .dataset;
        let mut bytes = Vec::new();
        events_table(&log).write(&mut bytes, &[]).unwrap();
        let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
        let rows: Vec<String> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().to_string())
            .collect();
        let of = |kind: &str| {
            rows.iter()
                .filter(|r| r.contains(&format!("kind: \"{kind}\"")))
                .collect::<Vec<_>>()
        };
        let count = |f: fn(&EventBody) -> bool| log.events.iter().filter(|e| f(&e.body)).count();
        assert_eq!(
            of("believe").len(),
            count(|b| matches!(b, EventBody::Believe(_)))
        );
        assert_eq!(
            of("retract").len(),
            count(|b| matches!(b, EventBody::Retract(_)))
        );
        assert_eq!(
            of("verify").len(),
            count(|b| matches!(b, EventBody::Verify(_)))
        );
        assert_eq!(
            rows.len(),
            of("believe").len() + of("retract").len() + of("verify").len()
        );
        let verify = of("verify")[0];
        assert!(
            verify.contains("state: \"") && verify.contains("agent: null"),
            "{verify}"
        );
        assert!(
            verify.contains("cites: []") && verify.contains("valid_from: null"),
            "{verify}"
        );
        let retract = of("retract")[0];
        assert!(
            !retract.contains("cites: []") && retract.contains("confidence: null"),
            "{retract}"
        );
        let believe = of("believe")[0];
        assert!(
            believe.contains("claim: \"") && believe.contains("state: null"),
            "{believe}"
        );
    }
}
