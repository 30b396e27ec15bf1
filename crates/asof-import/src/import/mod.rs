//! Importers: the temporal memories agent stacks already keep, read into an asof
//! dataset that is then validated, replayed and loaded like any other (design.md §7).
//!
//! An importer translates its input into raw dataset events (as if read from a
//! YAML or JSONL file), each tagged with the input record it came from; the
//! dataset validation then applies every rule of design.md §2 and names that record in
//! its errors ("edges.json edge 12: …", "memory.db row 7: …"). What an input
//! cannot say in asof's terms is skipped and reported, never silently dropped,
//! and every assumption the mapping makes is counted in the [`ImportReport`]
//! (printed by `asof import`, kept in the store's meta, shown by the audit
//! report). See `docs/import.md` for each mapping.

pub mod facts;
pub mod graphiti;
pub mod otlp;

use asof_core::dataset::raw::{RawEvent, RawHeader};
use asof_core::dataset::{DatasetError, DatasetErrors, Location, Parsed};
use asof_core::engine;
use asof_core::model::EventBody;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One input record left out of the store (or kept with no effect), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Where it is in the input ("edge 12", "row 7").
    pub location: String,
    /// Why, in one sentence.
    pub reason: String,
}

/// How often something happened during an import: a kind of record read, a
/// rule applied, a default used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// What was counted.
    pub what: String,
    /// How often.
    pub count: usize,
}

/// Counts kept in the order they were first met.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Tally(pub Vec<Count>);

impl Tally {
    /// Adds `n` to `what` (a zero `n` still lists it).
    pub fn add(&mut self, what: &str, n: usize) {
        match self.0.iter_mut().find(|c| c.what == what) {
            Some(c) => c.count += n,
            None => self.0.push(Count {
                what: what.to_owned(),
                count: n,
            }),
        }
    }

    /// Adds one to `what`.
    pub fn bump(&mut self, what: &str) {
        self.add(what, 1);
    }

    /// Whether every count is zero.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|c| c.count == 0)
    }
}

/// What an import read, made, assumed and left out: the import summary of
/// design.md §7, printed by `asof import` and kept in the store's meta as
/// `import_report`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    /// `graphiti`, `facts` or `otlp`.
    pub format: String,
    /// The input as the user named it.
    pub input: String,
    /// Records read from the input (edges, rows, spans).
    pub records: usize,
    /// What was read, by kind ("rows", "edges", "episodes", "spans").
    #[serde(default)]
    pub read: Tally,
    /// Agents in the dataset made.
    pub agents: usize,
    /// Topics in the dataset made.
    pub topics: usize,
    /// Evidence items in it.
    pub evidence: usize,
    /// Assertions in it.
    pub assertions: usize,
    /// Retractions in it.
    pub retractions: usize,
    /// Assertions by where they came from ("rows", "edges", "episodes merged later").
    #[serde(default)]
    pub assertions_by_source: Tally,
    /// How each record was read: which rule of design.md §7 applied, how often.
    #[serde(default)]
    pub cases: Tally,
    /// Defaults applied for missing values, and how often.
    #[serde(default)]
    pub defaults: Tally,
    /// Events the input implies that change nothing (a retraction with nothing
    /// left to retract): reported, not loaded.
    #[serde(default)]
    pub noops: Vec<Skipped>,
    /// Records left out, with the reason.
    pub skipped: Vec<Skipped>,
    /// The options the input was read with, as flags (`--rules FILE
    /// --valid-from trace-start`): the ids of what was said follow from
    /// them, so every report names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_with: Option<String>,
    /// The SHA-256 of the rules file named in `read_with`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_sha256: Option<String>,
    /// Input lines that did not parse and were skipped (`--skip-bad-lines`;
    /// without it such a line refuses the input). Each is in `skipped` too.
    #[serde(default)]
    pub bad_lines: usize,
    /// Assumptions the mapping made for this input (see docs/import.md).
    pub notes: Vec<String>,
    /// Evaluations of what the agent read or said (`gen_ai.evaluation.result`),
    /// by evidence or assertion id: kept and shown, never turned into
    /// verifications (design.md §7).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub evaluations: std::collections::BTreeMap<String, Vec<serde_json::Value>>,
    /// A trace's model calls in order (`asof calls`): kept with the summary
    /// in the store, as nothing else in it says what the model had read when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<asof_core::model::ModelCall>,
}

impl ImportReport {
    /// The store's meta rows for this summary: `import_report`, and a
    /// trace's model calls in a row of their own (`model_calls`), so that
    /// what reads the summary — a following TUI at every change — does not
    /// read every call with it.
    pub fn meta_rows(&self) -> serde_json::Result<Vec<(&'static str, String)>> {
        let calls = serde_json::to_string(&self.calls)?;
        let summary = ImportReport {
            calls: Vec::new(),
            ..self.clone()
        };
        let mut rows = vec![("import_report", serde_json::to_string(&summary)?)];
        if self.format == "otlp" {
            rows.push(("model_calls", calls));
        }
        Ok(rows)
    }

    /// What was skipped for not parsing, said on standard error when an
    /// input is read with `--skip-bad-lines` (`None` when nothing was).
    pub fn bad_lines_note(&self) -> Option<String> {
        (self.bad_lines > 0).then(|| {
            let lines: Vec<&str> = self
                .skipped
                .iter()
                .map(|s| s.location.as_str())
                .filter(|l| l.contains("line "))
                .take(5)
                .collect();
            format!(
                "{}: {} line(s) did not parse and were skipped (--skip-bad-lines): {}{}",
                self.input,
                self.bad_lines,
                lines.join(", "),
                if self.bad_lines > lines.len() {
                    ", …"
                } else {
                    ""
                }
            )
        })
    }

    /// "12 rows → 2 evidence, 5 assertions, 1 retraction; 1 agent, 3 topics".
    pub fn headline(&self) -> String {
        format!(
            "{} records → {} evidence, {} assertions, {} retractions; {} agents, {} topics",
            self.records,
            self.evidence,
            self.assertions,
            self.retractions,
            self.agents,
            self.topics
        )
    }
}

/// An importer's output before validation.
pub struct Draft {
    /// The header made.
    pub header: RawHeader,
    /// The events made, in log order.
    pub events: Vec<RawEvent>,
    /// Where each event came from.
    pub origins: Vec<Location>,
    /// The import summary so far.
    pub report: ImportReport,
}

/// Validates a draft like a dataset file, then drops the retractions that find
/// nothing to retract (an input may close a fact twice: once by a newer value,
/// once by marking it expired), reporting each as a no-op. Returns the replay
/// too: dropping retractions that matched nothing changes no version, so it is
/// the replay of what is returned, and callers need not replay again.
pub fn finish(
    file: &str,
    draft: Draft,
) -> Result<(Parsed, ImportReport, engine::Replay), DatasetErrors> {
    let Draft {
        header,
        events,
        origins,
        mut report,
    } = draft;
    let mut parsed = asof_core::dataset::from_raw(file, header, events, origins)?;
    let mut replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    let unmatched: HashSet<u64> = replay.unmatched_retractions().collect();
    replay.outcomes.retain(|o| !unmatched.contains(&o.seq));
    if !unmatched.is_empty() {
        let mut kept_events = Vec::with_capacity(parsed.dataset.events.len());
        let mut kept_locations = Vec::with_capacity(parsed.locations.len());
        for (event, location) in parsed
            .dataset
            .events
            .drain(..)
            .zip(parsed.locations.drain(..))
        {
            if unmatched.contains(&event.seq) {
                report.noops.push(Skipped {
                    location: location.map_or_else(String::new, describe),
                    reason: format!(
                        "retraction {} finds nothing held to retract (already superseded or retracted): not loaded",
                        event.id()
                    ),
                });
            } else {
                kept_events.push(event);
                kept_locations.push(location);
            }
        }
        parsed.dataset.events = kept_events;
        parsed.locations = kept_locations;
    }
    let count =
        |f: fn(&EventBody) -> bool| parsed.dataset.events.iter().filter(|e| f(&e.body)).count();
    report.evidence = count(|b| matches!(b, EventBody::Evidence(_)));
    report.assertions = count(|b| matches!(b, EventBody::Believe(_)));
    report.retractions = count(|b| matches!(b, EventBody::Retract(_)));
    report.agents = parsed.dataset.header.agents.len();
    report.topics = parsed.dataset.header.topics.len();
    Ok((parsed, report, replay))
}

/// Reads a whole input file as UTF-8 text, refusing one over `max` bytes.
pub fn read_text(path: &std::path::Path, max: u64) -> Result<String, DatasetErrors> {
    let name = path.display().to_string();
    let whole = |message: String| DatasetErrors(vec![error(&name, None, message)]);
    let size = std::fs::metadata(path)
        .map_err(|e| whole(format!("cannot read: {e}")))?
        .len();
    if size > max {
        return Err(whole(format!(
            "the input is {size} bytes, over the {max}-byte limit"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| whole(format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        whole(format!(
            "not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// An evidence item's whole text, as the dataset keeps it: `None` when the
/// summary is all of it; over the dataset's limit, its first
/// `MAX_CONTENT` bytes, counted in the summary (nothing is cut silently).
pub fn whole_content(mut text: String, summary: &str, report: &mut ImportReport) -> Option<String> {
    if text == summary || text.is_empty() {
        return None;
    }
    let max = asof_core::dataset::MAX_CONTENT;
    if text.len() <= max {
        return Some(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    report.defaults.bump(&format!(
        "evidence longer than {} MiB: its first {} MiB kept whole",
        max >> 20,
        max >> 20
    ));
    text.truncate(end);
    Some(text)
}

/// "edge 12", "row 7".
pub fn describe(location: Location) -> String {
    match location.unit {
        Some(unit) => format!("{unit} {}", location.line),
        None => format!("line {}", location.line),
    }
}

/// One import error: the input, the record, what is wrong.
pub fn error(file: &str, location: Option<Location>, message: impl Into<String>) -> DatasetError {
    DatasetError {
        file: file.to_owned(),
        location,
        event: None,
        message: message.into(),
    }
}

/// A timestamp as the dataset format writes it.
fn instant(t: asof_core::time::Micros) -> String {
    asof_core::time::format(t)
}

/// The dataset header every importer writes: the incident (id and title),
/// the agents as `(name, id)` and the topics as `(question, cardinality, id)`.
pub(crate) fn header(
    incident: String,
    title: String,
    agents: impl IntoIterator<Item = (String, String)>,
    topics: impl IntoIterator<Item = (String, asof_core::model::Cardinality, String)>,
) -> RawHeader {
    use asof_core::dataset::raw::{RawAgent, RawIncident, RawTopic};
    RawHeader {
        asof: 1,
        incident: RawIncident {
            id: incident,
            title,
        },
        agents: agents
            .into_iter()
            .map(|(name, id)| RawAgent {
                name: Some(name),
                id,
            })
            .collect(),
        topics: topics
            .into_iter()
            .map(|(question, cardinality, id)| RawTopic {
                question,
                cardinality: Some(cardinality),
                id,
                resolution: None,
                half_life: None,
                stale_after: None,
            })
            .collect(),
    }
}

/// An input's file name without its directory (`fallback` when it has none).
pub(crate) fn file_base(file: &str, fallback: &str) -> String {
    std::path::Path::new(file)
        .file_name()
        .map_or_else(|| fallback.to_owned(), |s| s.to_string_lossy().into_owned())
}

/// The incident id an import gives: the input's file name with `suffixes`
/// trimmed in turn (`x.otlp.jsonl` → `x`), or its stem when none are given;
/// `fallback` when nothing is left.
pub(crate) fn incident_id(file: &str, fallback: &str, suffixes: &[&str]) -> String {
    let id = if suffixes.is_empty() {
        std::path::Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        let mut id = file_base(file, fallback);
        for suffix in suffixes {
            id = id.trim_end_matches(suffix).to_owned();
        }
        id
    };
    if id.is_empty() {
        fallback.to_owned()
    } else {
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace's model calls go in a row of their own, out of the summary
    /// a follower reads at every change; other imports have none.
    #[test]
    fn a_traces_calls_are_kept_beside_its_summary() {
        let call = asof_core::model::ModelCall {
            n: 1,
            agent: "a".into(),
            trace: "t".into(),
            span: "s".into(),
            started: 0,
            ended: 1,
            model: None,
            read_new: vec!["T1".into()],
            said: Vec::new(),
            tool_calls: Vec::new(),
        };
        let report = ImportReport {
            format: "otlp".into(),
            calls: vec![call],
            ..ImportReport::default()
        };
        let rows = report.meta_rows().expect("rows");
        assert_eq!(rows[0].0, "import_report");
        assert!(!rows[0].1.contains("\"calls\""), "{}", rows[0].1);
        assert_eq!(rows[1].0, "model_calls");
        assert!(rows[1].1.contains("\"read_new\":[\"T1\"]"), "{}", rows[1].1);
        let facts = ImportReport {
            format: "facts".into(),
            ..ImportReport::default()
        };
        assert_eq!(facts.meta_rows().expect("rows").len(), 1);
    }
}
