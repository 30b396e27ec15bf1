//! Importers: the temporal memories agent stacks already keep, read into an asof
//! dataset that is then validated, replayed and loaded like any other.
//!
//! An importer translates its input into raw dataset events (as if read from a
//! YAML or JSONL file), each tagged with the input record it came from; the
//! dataset validation then applies every rule of SPEC §2 and names that record in
//! its errors ("edges.json edge 12: …", "memory.db row 7: …"). What an input
//! cannot say in asof's terms is skipped and reported, never silently dropped.
//! See `docs/import.md` for each mapping.

pub mod facts;
pub mod graphiti;

use crate::dataset::raw::{RawEvent, RawHeader};
use crate::dataset::{DatasetError, DatasetErrors, Location, Parsed};
use crate::engine;
use crate::model::EventBody;
use serde::Serialize;
use std::collections::HashSet;

/// One input record left out of the store, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Where it is in the input ("edge 12", "row 7").
    pub location: String,
    pub reason: String,
}

/// What an import read, made and left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// `graphiti` or `facts`.
    pub format: String,
    pub input: String,
    /// Records read from the input (edges, rows).
    pub records: usize,
    pub agents: usize,
    pub topics: usize,
    pub evidence: usize,
    pub assertions: usize,
    pub retractions: usize,
    pub skipped: Vec<Skipped>,
    /// Assumptions the mapping made for this input (see docs/import.md).
    pub notes: Vec<String>,
}

/// An importer's output before validation.
pub struct Draft {
    pub header: RawHeader,
    pub events: Vec<RawEvent>,
    /// Where each event came from.
    pub origins: Vec<Location>,
    pub report: ImportReport,
}

/// Validates a draft like a dataset file, then drops the retractions that find
/// nothing to retract (an input may close a fact twice: once by a newer value,
/// once by marking it expired), reporting each as skipped.
pub fn finish(file: &str, draft: Draft) -> Result<(Parsed, ImportReport), DatasetErrors> {
    let Draft {
        header,
        events,
        origins,
        mut report,
    } = draft;
    let mut parsed = crate::dataset::from_raw(file, header, events, origins)?;
    let replay = engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    let unmatched: HashSet<u64> = replay.unmatched_retractions().collect();
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
                report.skipped.push(Skipped {
                    location: location.map_or_else(String::new, describe),
                    reason: format!(
                        "retraction {} finds nothing held to retract (already replaced or retracted)",
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
    Ok((parsed, report))
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
fn instant(t: crate::time::Micros) -> String {
    crate::time::format(t)
}
