//! Queries over a store (design.md §3). The same functions serve the CLI, the TUI,
//! forks and export; JSON shapes (design.md §8) live beside them in [`json`].
//! The SQL they run is the store's (`store/lookup.rs`); here they are
//! ordered and put together as each answer says.

pub mod json;
pub mod quality;
pub mod timeline;

use crate::store::Store;
use asof_core::time::Micros;

pub use crate::store::lookup::{Belief, EvidenceItem, Filter, Note};

/// Evidence that reached the agent at least this long (µs) after it happened is
/// "late-arriving": marked in the TUI, listed apart in the audit report.
pub const LATE: i64 = 3_600_000_000;

use asof_core::model::Cited;

/// `believed(T′)` and `believed(T′, about T)`: versions held at recorded time `at`
/// (`recorded_at ≤ at < superseded_at`), and if `about` is given, only those whose
/// valid interval contains it.
pub fn believed(
    store: &Store,
    at: Micros,
    about: Option<Micros>,
    filter: &Filter,
) -> crate::store::Result<Vec<Belief>> {
    store.beliefs_held(at, about, filter)
}

/// [`believed`] for all topics read from the version rows, one range per
/// lifespan, instead of the version pages: the path the pages replaced, kept
/// as the reference they are tested against (and measured beside them).
pub fn believed_by_rows(
    store: &Store,
    at: Micros,
    about: Option<Micros>,
    filter: &Filter,
) -> crate::store::Result<Vec<Belief>> {
    store.beliefs_held_by_rows(at, about, filter)
}

/// `current`: what is believed now about now, with one captured `now`.
pub fn current(store: &Store, now: Micros, filter: &Filter) -> crate::store::Result<Vec<Belief>> {
    believed(store, now, Some(now), filter)
}

/// A topic's history (`asof history`).
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// Every version, by recorded time, seq and valid time.
    pub versions: Vec<Belief>,
    /// The events that changed no version.
    pub notes: Vec<Note>,
}

/// The versions of [`history`] alone (what answers are computed from).
pub fn versions_of(
    store: &Store,
    topic: &str,
    agent: Option<&str>,
) -> crate::store::Result<Vec<Belief>> {
    let filter = Filter {
        agent: agent.map(str::to_owned),
        topic: Some(topic.to_owned()),
    };
    let mut beliefs = store.topic_versions(&filter)?;
    beliefs.sort_by_key(|b| {
        let v = &b.version;
        (v.recorded_at, v.created_by, v.valid.from, v.id)
    });
    Ok(beliefs)
}

/// `history(agent, topic)`: every version ordered by `recorded_at`, `seq`,
/// `valid_from`, with the reconfirmations and zero-width events beside them.
pub fn history(store: &Store, topic: &str, agent: Option<&str>) -> crate::store::Result<History> {
    let versions = versions_of(store, topic, agent)?;
    let notes = store.notes_of(topic, agent)?;
    Ok(History { versions, notes })
}

/// `changes(T1, T2]`: versions created and versions closed in a recorded window.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    /// Versions recorded in the window, in recorded order.
    pub created: Vec<Belief>,
    /// Versions closed in the window, in the order they were closed.
    pub closed: Vec<Belief>,
}

/// `changes(T1, T2]`: the versions `filter` admits that were created or closed after `after` and by
/// `until`.
pub fn changes(
    store: &Store,
    after: Micros,
    until: Micros,
    filter: &Filter,
) -> crate::store::Result<Changes> {
    let mut created = store.created_in(after, until, filter)?;
    created.sort_by_key(|b| {
        let v = &b.version;
        (v.recorded_at, v.created_by, v.valid.from, v.id)
    });
    let mut closed = store.closed_in(after, until, filter)?;
    closed.sort_by_key(|b| {
        let v = &b.version;
        (
            v.superseded_at,
            v.closed.as_ref().map(|c| c.seq),
            v.valid.from,
            v.id,
        )
    });
    Ok(Changes { created, closed })
}

/// `answer(agent, topic, T′)`: the claim of the held version with the greatest
/// `valid_from` (ties: the later `recorded_at`), or none.
pub fn answer(
    store: &Store,
    agent: &str,
    topic: &str,
    at: Micros,
) -> crate::store::Result<Option<String>> {
    store.claim_held(agent, topic, at)
}

/// Every evidence item, in recorded order.
pub fn evidence(store: &Store) -> crate::store::Result<Vec<EvidenceItem>> {
    store.evidence_items()
}

/// When each belief's agent began holding its claim without a break
/// (design.md §8, SINCE): the recorded time of its origin assertion — the version's own
/// for an asserted version, the assertion's for a split piece of it (a split
/// re-inserts what was held, it does not start holding it). Only split
/// versions are looked up.
pub fn held_since(store: &Store, beliefs: &[Belief]) -> crate::store::Result<Vec<Micros>> {
    let mut looked_up: std::collections::HashMap<&str, Micros> = Default::default();
    let mut since = Vec::with_capacity(beliefs.len());
    for b in beliefs {
        let v = &b.version;
        if v.origin != asof_core::model::Origin::Split {
            since.push(v.recorded_at);
            continue;
        }
        let t = match looked_up.get(&*v.assertion) {
            Some(&t) => t,
            None => {
                let t = store.recorded_at_of(&v.assertion)?.unwrap_or(v.recorded_at);
                looked_up.insert(&v.assertion, t);
                t
            }
        };
        since.push(t);
    }
    Ok(since)
}

/// The first and last recorded instants of the log, if it has any events.
pub fn recorded_span(store: &Store) -> crate::store::Result<Option<(Micros, Micros)>> {
    store.recorded_span()
}

/// The evaluations an imported trace made of its evidence and assertions
/// (`gen_ai.evaluation.result`, kept in the import summary's
/// `evaluations`), by evidence or assertion id; none for any other store.
pub fn evaluations(
    store: &Store,
) -> crate::store::Result<std::collections::BTreeMap<String, Vec<serde_json::Value>>> {
    let Some(json) = store.meta("import_report")? else {
        return Ok(Default::default());
    };
    Ok(serde_json::from_str::<serde_json::Value>(&json)
        .ok()
        .and_then(|report| report.get("evaluations").cloned())
        .and_then(|by_id| serde_json::from_value(by_id).ok())
        .unwrap_or_default())
}

/// A trace's model calls in order, kept with the import summary of a store
/// `asof import otlp` wrote (or a trace read as a SOURCE); `None` when the
/// store was not read from a trace.
pub fn model_calls(
    store: &Store,
) -> crate::store::Result<Option<Vec<asof_core::model::ModelCall>>> {
    let Some(json) = store.meta("import_report")? else {
        return Ok(None);
    };
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&json) else {
        return Ok(None);
    };
    if report.get("format").and_then(|f| f.as_str()) != Some("otlp") {
        return Ok(None);
    }
    // A row each in their table; a store written before, inside the summary.
    if let Some(calls) = store.model_call_rows()? {
        return Ok(Some(calls));
    }
    Ok(Some(
        report
            .get("calls")
            .cloned()
            .and_then(|calls| serde_json::from_value(calls).ok())
            .unwrap_or_default(),
    ))
}
