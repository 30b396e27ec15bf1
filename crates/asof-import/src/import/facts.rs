//! `asof import facts MEMORY.db`: a SQLite table of bitemporal facts — subject,
//! predicate, object, `valid_from`, `valid_to`, `ingested_at`, `expired_at`,
//! `source`, `confidence` — the minimal memory many agents keep.
//!
//! Such a memory edits rows in place: when a newer value arrives, the old row's
//! `valid_to` and `expired_at` are filled and a new row is added. The final
//! table still holds the history if each row is read by its case (design.md §7):
//!
//! ```text
//! valid_to  expired_at             the memory held               replay
//! NULL      NULL                   [vf, ∞) since ingested_at     assert [vf, ∞) at ingested_at
//! set       NULL or = ingested_at  [vf, vt), stored closed       assert [vf, vt) at ingested_at
//! set       later                  [vf, ∞) until expired_at,     assert [vf, ∞) at ingested_at,
//!                                  then [vf, vt)                 retract [vt, ∞) of it at expired_at
//! NULL      set                    [vf, ∞) until expired_at      assert at ingested_at, retract
//!                                                                that assertion at expired_at
//! ```
//!
//! Each row is an assertion about the topic "subject predicate" claiming the
//! object; each distinct `source` is one evidence item. Predicates are
//! single-valued (a new object replaces the old) unless named in `--many`.

use super::{Draft, ImportReport, error, instant};
use asof_core::dataset::raw::{RawBelieve, RawEvent, RawEvidence, RawRetract, RawTime};
use asof_core::dataset::{DatasetError, DatasetErrors, Location};
use asof_core::model::{Assumed, Cardinality};
use asof_core::time::{self, Micros};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// How `asof import facts` reads a facts table.
#[derive(Debug, Clone)]
pub struct Options {
    /// The table to read.
    pub table: String,
    /// The agent whose memory this is.
    pub agent: String,
    /// Multi-valued predicates (a subject holds a set of objects); `*` for all.
    pub many: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            table: "facts".into(),
            agent: "memory".into(),
            many: Vec::new(),
        }
    }
}

const REQUIRED: [&str; 5] = [
    "subject",
    "predicate",
    "object",
    "valid_from",
    "ingested_at",
];
const OPTIONAL: [&str; 4] = ["valid_to", "expired_at", "source", "confidence"];

struct Row {
    rowid: i64,
    subject: String,
    predicate: String,
    object: String,
    valid_from: Micros,
    valid_to: Option<Micros>,
    ingested: Micros,
    expired: Option<Micros>,
    source: Option<String>,
    confidence: Option<f64>,
}

/// Reads the facts table of the SQLite file at `path` (opened read-only).
pub fn read(path: &Path, options: &Options) -> Result<Draft, DatasetErrors> {
    let file = path.display().to_string();
    let whole = |message: String| DatasetErrors(vec![error(&file, None, message)]);
    if !path.is_file() {
        return Err(whole("no such file".into()));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| whole(format!("cannot open as SQLite: {e}")))?;
    let columns: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| whole(format!("not a readable SQLite database: {e}")))?;
        stmt.query_map([&options.table], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| whole(format!("not a readable SQLite database: {e}")))?
    };
    if columns.is_empty() {
        return Err(whole(format!("has no table named `{}`", options.table)));
    }
    let missing: Vec<&str> = REQUIRED
        .iter()
        .filter(|c| !columns.iter().any(|x| x.eq_ignore_ascii_case(c)))
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(whole(format!(
            "table `{}` lacks the column(s) {}; it needs {} (and may have {})",
            options.table,
            missing.join(", "),
            REQUIRED.join(", "),
            OPTIONAL.join(", ")
        )));
    }
    let select: Vec<String> = REQUIRED
        .iter()
        .chain(OPTIONAL.iter())
        .map(|c| {
            if columns.iter().any(|x| x.eq_ignore_ascii_case(c)) {
                format!("\"{c}\"")
            } else {
                "NULL".to_owned()
            }
        })
        .collect();
    let sql = format!(
        "SELECT rowid, {} FROM \"{}\" ORDER BY rowid",
        select.join(", "),
        options.table.replace('"', "\"\"")
    );
    let mut stmt = conn
        .prepare(&sql)
        .map_err(|e| whole(format!("cannot read table `{}`: {e}", options.table)))?;
    let mut rows = stmt
        .query([])
        .map_err(|e| whole(format!("cannot read table `{}`: {e}", options.table)))?;

    let mut errors: Vec<DatasetError> = Vec::new();
    let mut facts: Vec<Row> = Vec::new();
    let mut records = 0usize;
    loop {
        let r = match rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                errors.push(error(&file, None, format!("cannot read a row: {e}")));
                break;
            }
        };
        records += 1;
        let rowid: i64 = r.get(0).unwrap_or(records as i64);
        let at = Some(Location::record("row", rowid.max(0) as usize));
        let mut problems: Vec<String> = Vec::new();
        let cell = |i: usize| r.get_ref(i).unwrap_or(ValueRef::Null);
        let mut text = |i: usize, name: &str| -> Option<String> {
            match cell(i) {
                ValueRef::Text(t) => match std::str::from_utf8(t) {
                    Ok(s) if !s.trim().is_empty() => Some(s.to_owned()),
                    Ok(_) => {
                        problems.push(format!("{name} is empty"));
                        None
                    }
                    Err(_) => {
                        problems.push(format!("{name} is not valid UTF-8"));
                        None
                    }
                },
                ValueRef::Integer(n) => Some(n.to_string()),
                ValueRef::Real(x) => Some(x.to_string()),
                ValueRef::Null => {
                    problems.push(format!("{name} is NULL"));
                    None
                }
                ValueRef::Blob(_) => {
                    problems.push(format!("{name} is a blob, not text"));
                    None
                }
            }
        };
        let subject = text(1, "subject");
        let predicate = text(2, "predicate");
        let object = text(3, "object");
        let mut when = |i: usize, name: &str, required: bool| -> Option<Micros> {
            match timestamp(cell(i)) {
                Ok(Some(t)) => Some(t),
                Ok(None) if required => {
                    problems.push(format!("{name} is NULL"));
                    None
                }
                Ok(None) => None,
                Err(e) => {
                    problems.push(format!("{name}: {e}"));
                    None
                }
            }
        };
        let valid_from = when(4, "valid_from", true);
        let ingested = when(5, "ingested_at", true);
        let valid_to = when(6, "valid_to", false);
        let expired = when(7, "expired_at", false);
        let source = match cell(8) {
            ValueRef::Text(t) => {
                Some(String::from_utf8_lossy(t).into_owned()).filter(|s| !s.is_empty())
            }
            ValueRef::Null => None,
            ValueRef::Integer(n) => Some(n.to_string()),
            ValueRef::Real(x) => Some(x.to_string()),
            ValueRef::Blob(_) => {
                problems.push("source is a blob, not text".into());
                None
            }
        };
        let confidence = match cell(9) {
            ValueRef::Null => None,
            ValueRef::Integer(n) => Some(n as f64),
            ValueRef::Real(x) => Some(x),
            ValueRef::Text(t) => match std::str::from_utf8(t)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                Some(x) => Some(x),
                None => {
                    problems.push(format!(
                        "confidence {:?} is not a number",
                        String::from_utf8_lossy(t)
                    ));
                    None
                }
            },
            ValueRef::Blob(_) => {
                problems.push("confidence is a blob, not a number".into());
                None
            }
        };
        if let (Some(i), Some(e)) = (ingested, expired)
            && e < i
        {
            problems.push(format!(
                "expired_at {} is before ingested_at {}",
                instant(e),
                instant(i)
            ));
        }
        match (subject, predicate, object, valid_from, ingested) {
            (Some(subject), Some(predicate), Some(object), Some(valid_from), Some(ingested))
                if problems.is_empty() =>
            {
                facts.push(Row {
                    rowid,
                    subject,
                    predicate,
                    object,
                    valid_from,
                    valid_to,
                    ingested,
                    expired,
                    source,
                    confidence,
                });
            }
            _ => errors.push(error(&file, at, problems.join("; "))),
        }
    }
    if !errors.is_empty() {
        return Err(DatasetErrors(errors));
    }
    Ok(draft(&file, options, records, facts))
}

/// A timestamp cell: RFC 3339 text (or a bare date), or a number of seconds since
/// the Unix epoch (integer, real, or digits in a TEXT column). NULL is `None`.
fn timestamp(cell: ValueRef) -> Result<Option<Micros>, String> {
    let seconds = |s: f64| -> Result<Option<Micros>, String> {
        let micros = (s * 1e6).round();
        if !micros.is_finite() || micros.abs() > 253_402_300_799e6 {
            return Err(format!("{s} seconds since the epoch is out of range"));
        }
        time::format_opt(micros as i64)
            .and_then(|t| time::parse(&t).ok())
            .map(Some)
            .ok_or_else(|| format!("{s} seconds since the epoch is out of range"))
    };
    match cell {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(n) => seconds(n as f64),
        ValueRef::Real(x) => seconds(x),
        ValueRef::Text(t) => {
            let s = std::str::from_utf8(t).map_err(|_| "not valid UTF-8".to_owned())?;
            // A TEXT column turns stored numbers into digits: seconds since the epoch.
            let digits = !s.is_empty() && s.trim().chars().all(|c| c.is_ascii_digit() || c == '.');
            match s.trim().parse::<f64>() {
                Ok(x) if digits => seconds(x),
                _ => time::parse(s).map(Some).map_err(|e| e.to_string()),
            }
        }
        ValueRef::Blob(_) => Err("a blob, not a timestamp".into()),
    }
}

/// Which of design.md §7's four cases a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// `valid_to` and `expired_at` NULL: held open-ended since `ingested_at`.
    Open,
    /// `valid_to` set, `expired_at` NULL or equal to `ingested_at`: stored closed.
    StoredClosed,
    /// `valid_to` set, `expired_at` later: open-ended until `expired_at`, then
    /// `[valid_from, valid_to)`.
    ClosedLater,
    /// `valid_to` NULL, `expired_at` set: held until `expired_at`, then dropped.
    Dropped,
}

impl Case {
    fn of(r: &Row) -> Case {
        match (r.valid_to, r.expired) {
            (None, None) => Case::Open,
            (Some(_), None) => Case::StoredClosed,
            (Some(_), Some(e)) if e == r.ingested => Case::StoredClosed,
            (Some(_), Some(_)) => Case::ClosedLater,
            (None, Some(_)) => Case::Dropped,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Case::Open => "open rows (held from valid_from on)",
            Case::StoredClosed => "rows stored closed (held over [valid_from, valid_to))",
            Case::ClosedLater => {
                "rows closed in place (held open until expired_at, then [valid_from, valid_to))"
            }
            Case::Dropped => "rows expired without an end (held until expired_at, then dropped)",
        }
    }
}

fn draft(file: &str, options: &Options, records: usize, rows: Vec<Row>) -> Draft {
    let many: HashSet<&str> = options.many.iter().map(String::as_str).collect();
    let all_many = many.contains("*");
    let agent = options.agent.clone();
    let topic_of = |r: &Row| format!("{} {}", r.subject, r.predicate);

    // Sources as evidence, recorded with the first row citing them.
    let mut first_use: BTreeMap<&str, (Micros, i64)> = BTreeMap::new();
    for r in &rows {
        if let Some(s) = &r.source {
            let e = first_use.entry(s.as_str()).or_insert((r.ingested, r.rowid));
            *e = (*e).min((r.ingested, r.rowid));
        }
    }
    let mut sources: Vec<(&str, (Micros, i64))> = first_use.into_iter().collect();
    sources.sort_by_key(|&(s, (t, row))| (t, row, s));
    let evidence_id: HashMap<&str, String> = sources
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (*s, format!("S{}", i + 1)))
        .collect();

    let mut events = Vec::new();
    let mut origins = Vec::new();
    for (s, (t, row)) in &sources {
        events.push(RawEvent::Evidence(RawEvidence {
            id: evidence_id[s].clone(),
            kind: "other".into(),
            source: "facts".into(),
            locator: (*s).to_owned(),
            observed_at: RawTime::at(*t),
            observed_until: None,
            recorded_at: RawTime::at(*t),
            reliability: None,
            summary: asof_core::text::first_chars(s, 500).to_owned(),
            content: (s.chars().count() > 500).then(|| (*s).to_owned()),
        }));
        origins.push(Location::record("row", (*row).max(0) as usize));
    }
    let mut report = ImportReport {
        format: "facts".into(),
        input: file.to_owned(),
        records,
        ..ImportReport::default()
    };
    report.read.add("rows", records);
    let mut retractions = Vec::new();
    for r in &rows {
        let at = Location::record("row", r.rowid.max(0) as usize);
        let id = format!("F{}", r.rowid);
        let case = Case::of(r);
        report.cases.bump(case.describe());
        if r.confidence.is_none() {
            report.defaults.bump("rows without a confidence: 1");
        }
        if r.source.is_none() {
            report
                .defaults
                .bump("rows without a source: no evidence cited");
        }
        let valid_to = match case {
            Case::StoredClosed => r.valid_to,
            Case::Open | Case::ClosedLater | Case::Dropped => None,
        };
        events.push(RawEvent::Believe(RawBelieve {
            id: Some(id.clone()),
            agent: agent.clone(),
            topic: topic_of(r),
            claim: r.object.clone(),
            confidence: r.confidence,
            valid_from: RawTime::at(r.valid_from),
            valid_to: valid_to.map(RawTime::at),
            clip: None,
            recorded_at: RawTime::at(r.ingested),
            supported_by: r
                .source
                .as_deref()
                .map(|s| vec![evidence_id[s].clone()])
                .unwrap_or_default(),
            rationale: Some(format!("{} row {}", options.table, r.rowid)),
            assumed: r
                .confidence
                .is_none()
                .then(|| Assumed::Confidence.as_str().to_owned())
                .into_iter()
                .collect(),
        }));
        report.assertions_by_source.bump("rows");
        origins.push(at);
        let (expired, from, reason) = match (case, r.expired, r.valid_to) {
            (Case::ClosedLater, Some(expired), Some(end)) => (
                expired,
                Some(end),
                format!(
                    "closed in place at {}: valid_to {} filled in",
                    instant(expired),
                    instant(end)
                ),
            ),
            (Case::Dropped, Some(expired), _) => (
                expired,
                None,
                format!("expired in the memory at {}", instant(expired)),
            ),
            _ => continue,
        };
        retractions.push((
            RawEvent::Retract(RawRetract {
                id: Some(format!("X{}", r.rowid)),
                agent: Some(agent.clone()),
                topic: None,
                assertion: Some(id),
                claim: None,
                valid_from: from.map(RawTime::at),
                valid_to: None,
                recorded_at: RawTime::at(expired),
                because: Vec::new(),
                reason: Some(reason),
            }),
            at,
        ));
    }
    for (event, at) in retractions {
        events.push(event);
        origins.push(at);
    }

    let mut topics: Vec<(String, String)> = Vec::new();
    let mut seen = HashSet::new();
    for r in &rows {
        let id = topic_of(r);
        if seen.insert(id.clone()) {
            topics.push((id, r.predicate.clone()));
        }
    }
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "facts".into());
    report.notes.push(if all_many {
        "every predicate is multi-valued".to_owned()
    } else if many.is_empty() {
        "every predicate is single-valued (a new object replaces the old); --many names multi-valued ones".to_owned()
    } else {
        let mut list: Vec<&str> = many.iter().copied().collect();
        list.sort();
        format!("multi-valued predicates: {}", list.join(", "))
    });
    Draft {
        header: super::header(
            stem,
            format!("Facts imported from table {} of {file}", options.table),
            [(format!("The agent whose memory is {file}"), agent.clone())],
            topics.into_iter().map(|(id, predicate)| {
                let cardinality = if all_many || many.contains(predicate.as_str()) {
                    Cardinality::Many
                } else {
                    Cardinality::One
                };
                (format!("{id} → ?"), cardinality, id)
            }),
        ),
        events,
        origins,
        report,
    }
}
