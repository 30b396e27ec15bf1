//! Review files (design.md §4): a reviewer's `verify` events, kept apart from the
//! log they judge. The TUI appends one JSON line per mark; `asof load DATASET
//! --review FILE` merges them into a new store after the dataset's events; the
//! TUI reads one back so the marks show again. The loaded store is never
//! written.
//!
//! ```text
//! {"verify": {"id": "RV1", "evidence": "E15", "state": "rejected", "by": "reviewer",
//!             "recorded_at": "2026-03-04T09:45:00Z", "note": "a traffic lull"}}
//! ```

use super::raw::RawEvent;
use super::{DatasetError, DatasetErrors, Location, MAX_JSONL_LINE, Parsed};
use crate::model::{Event, EventBody, Verification};
use crate::time::{self, Micros};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Reads the review file at `path` against a log whose evidence was recorded
/// at `evidence` (id → recorded_at) and whose ids are `taken`; verifications
/// are numbered from seq `first_seq`. Every broken rule is reported with its line.
pub fn read(
    path: &Path,
    evidence: &HashMap<String, Micros>,
    taken: &HashSet<String>,
    first_seq: u64,
) -> Result<Vec<Verification>, DatasetErrors> {
    let file = path.display().to_string();
    let error = |line: Option<usize>, event: Option<&str>, message: String| DatasetError {
        file: file.clone(),
        location: line.map(Location::line),
        event: event.map(str::to_owned),
        message,
    };
    let text = std::fs::read(path).map_err(|e| {
        DatasetErrors(vec![error(
            None,
            None,
            format!("cannot read the file: {e}"),
        )])
    })?;
    let text = String::from_utf8(text).map_err(|e| {
        DatasetErrors(vec![error(
            None,
            None,
            format!(
                "the file is not valid UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )])
    })?;
    let mut errors = Vec::new();
    let mut out: Vec<Verification> = Vec::new();
    let mut ids: HashSet<String> = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_JSONL_LINE {
            errors.push(error(
                Some(line_no),
                None,
                format!("the line is over the {MAX_JSONL_LINE}-byte limit"),
            ));
            continue;
        }
        let raw = match serde_json::from_str::<RawEvent>(line) {
            Ok(RawEvent::Verify(raw)) => raw,
            Ok(_) => {
                errors.push(error(
                    Some(line_no),
                    None,
                    "a review file holds only `verify` events".into(),
                ));
                continue;
            }
            Err(e) => {
                errors.push(error(
                    Some(line_no),
                    None,
                    super::strip_location(&e.to_string()),
                ));
                continue;
            }
        };
        let seq = first_seq + out.len() as u64;
        let v = match super::validate::verification(&file, line_no, seq, raw) {
            Ok(v) => v,
            Err(mut e) => {
                errors.append(&mut e);
                continue;
            }
        };
        let id = Some(v.id.as_str());
        if taken.contains(&v.id) || !ids.insert(v.id.clone()) {
            errors.push(error(
                Some(line_no),
                id,
                format!("id `{}` is used twice", v.id),
            ));
        }
        match evidence.get(&v.evidence) {
            None => errors.push(error(
                Some(line_no),
                id,
                format!("verifies evidence `{}`, which does not exist", v.evidence),
            )),
            Some(&at) if at > v.recorded_at => errors.push(error(
                Some(line_no),
                id,
                format!(
                    "verifies evidence `{}` recorded at {}, after this event ({})",
                    v.evidence,
                    time::format(at),
                    time::format(v.recorded_at)
                ),
            )),
            Some(_) => {}
        }
        out.push(v);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(DatasetErrors(errors))
    }
}

/// The evidence (id → recorded_at) and the ids of `events`.
pub fn known<'a>(
    events: impl IntoIterator<Item = (&'a str, Option<Micros>)>,
) -> (HashMap<String, Micros>, HashSet<String>) {
    let mut evidence = HashMap::new();
    let mut ids = HashSet::new();
    for (id, recorded) in events {
        if let Some(at) = recorded {
            evidence.insert(id.to_owned(), at);
        }
        ids.insert(id.to_owned());
    }
    (evidence, ids)
}

/// `parsed` with the review file's verifications appended after its events.
pub fn merge(mut parsed: Parsed, path: &Path) -> Result<Parsed, DatasetErrors> {
    let (evidence, ids) = known(parsed.dataset.events.iter().map(|e| {
        let at = match &e.body {
            EventBody::Evidence(ev) => Some(ev.recorded_at),
            _ => None,
        };
        (e.id(), at)
    }));
    let first = parsed.dataset.events.len() as u64 + 1;
    for (i, v) in read(path, &evidence, &ids, first)?.into_iter().enumerate() {
        parsed.dataset.events.push(Event {
            seq: first + i as u64,
            body: EventBody::Verify(v),
        });
        parsed.locations.push(None);
    }
    Ok(parsed)
}

/// One verification as a review file's line.
pub fn line(v: &Verification) -> String {
    let value = serde_json::json!({"verify": {
        "id": v.id,
        "evidence": v.evidence,
        "state": v.state.as_str(),
        "by": v.by,
        "recorded_at": time::format(v.recorded_at),
        "note": v.note,
    }});
    value.to_string()
}
