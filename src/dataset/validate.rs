//! Raw shapes → a validated [`Dataset`], every rule of SPEC §2 checked and every
//! broken rule reported with its location.

use super::raw::{RawBelieve, RawEvent, RawEvidence, RawHeader, RawRetract, RawTime};
use super::{DatasetError, DatasetErrors, Location, MAX_TEXT, Parsed};
use crate::engine::Replay;
use crate::model::{
    Agent, Assertion, Dataset, EVIDENCE_KINDS, Event, EventBody, EventKind, Evidence, Header,
    Incident, RetractTarget, Retraction, Topic,
};
use crate::time::{self, Interval, Micros, OPEN};
use std::collections::{HashMap, HashSet};

/// Where things are in the source file, as each reader knows it.
pub(crate) trait Positions {
    /// The event at `index` (0-based position in the file's event list).
    fn event(&self, index: usize) -> Option<Location>;
    /// A field of that event (`kind` is `evidence`, `believe` or `retract`).
    fn field(&self, index: usize, kind: &str, field: &str) -> Option<Location>;
    /// A header path such as `topics[2].id`.
    fn header(&self, path: &str) -> Option<Location>;
}

/// An event that failed to parse into a raw shape: its location and message.
pub(crate) struct RawEventError {
    pub location: Option<Location>,
    pub message: String,
}

struct Collector<'a> {
    file: &'a str,
    pos: &'a dyn Positions,
    errors: Vec<DatasetError>,
}

impl Collector<'_> {
    fn push(&mut self, location: Option<Location>, event: Option<&str>, message: String) {
        self.errors.push(DatasetError {
            file: self.file.to_owned(),
            location,
            event: event.map(str::to_owned),
            message,
        });
    }

    fn header(&mut self, path: &str, message: String) {
        let location = self.pos.header(path);
        self.push(location, None, message);
    }

    fn field(&mut self, index: usize, kind: &str, field: &str, id: &str, message: String) {
        let location = self
            .pos
            .field(index, kind, field)
            .or_else(|| self.pos.event(index));
        self.push(location, Some(id), message);
    }

    fn text(&mut self, index: usize, kind: &str, field: &str, id: &str, value: &str) {
        if value.len() > MAX_TEXT {
            self.field(
                index,
                kind,
                field,
                id,
                format!(
                    "`{field}` is {} bytes long, over the {MAX_TEXT}-byte limit",
                    value.len()
                ),
            );
        }
    }

    fn time(
        &mut self,
        index: usize,
        kind: &str,
        field: &str,
        id: &str,
        value: &RawTime,
    ) -> Option<Micros> {
        match &value.parsed {
            Ok(t) => Some(*t),
            Err(e) => {
                self.field(index, kind, field, id, format!("`{field}`: {e}"));
                None
            }
        }
    }

    fn unit(&mut self, index: usize, kind: &str, field: &str, id: &str, value: Option<f64>) -> f64 {
        let v = value.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&v) {
            self.field(
                index,
                kind,
                field,
                id,
                format!("`{field}` is {v}; it must be between 0 and 1"),
            );
        }
        v
    }
}

pub(crate) fn validate(
    file: &str,
    header: RawHeader,
    events: Vec<Result<RawEvent, RawEventError>>,
    pos: &dyn Positions,
) -> Result<Parsed, DatasetErrors> {
    let mut c = Collector {
        file,
        pos,
        errors: Vec::new(),
    };
    let header = check_header(&mut c, header);

    let mut parsed: Vec<Option<Event>> = Vec::with_capacity(events.len());
    for (index, raw) in events.into_iter().enumerate() {
        let seq = index as u64 + 1;
        let event = match raw {
            Err(e) => {
                c.push(e.location, None, e.message);
                None
            }
            Ok(RawEvent::Evidence(raw)) => evidence(&mut c, index, raw).map(EventBody::Evidence),
            Ok(RawEvent::Believe(raw)) => believe(&mut c, index, seq, raw).map(EventBody::Believe),
            Ok(RawEvent::Retract(raw)) => retract(&mut c, index, seq, raw).map(EventBody::Retract),
        };
        parsed.push(event.map(|body| Event { seq, body }));
    }

    check_references(&mut c, &header, &mut parsed);

    if !c.errors.is_empty() {
        return Err(DatasetErrors(c.errors));
    }
    let locations = (0..parsed.len()).map(|i| pos.event(i)).collect();
    let events = parsed.into_iter().flatten().collect();
    Ok(Parsed {
        file: file.to_owned(),
        dataset: Dataset { header, events },
        locations,
    })
}

fn check_header(c: &mut Collector, raw: RawHeader) -> Header {
    if raw.asof != 1 {
        c.header(
            "asof",
            format!(
                "format version {} is not supported; this asof reads version 1",
                raw.asof
            ),
        );
    }
    if raw.incident.id.trim().is_empty() {
        c.header("incident", "`incident.id` is empty".to_owned());
    }
    let mut texts: Vec<(String, usize)> = vec![
        ("incident.id".into(), raw.incident.id.len()),
        ("incident.title".into(), raw.incident.title.len()),
    ];
    for (i, a) in raw.agents.iter().enumerate() {
        texts.push((
            format!("agents[{i}]"),
            a.id.len() + a.name.as_ref().map_or(0, String::len),
        ));
    }
    for (i, t) in raw.topics.iter().enumerate() {
        let resolution = t.resolution.as_ref().map_or(0, String::len);
        texts.push((
            format!("topics[{i}]"),
            t.id.len() + t.question.len() + resolution,
        ));
    }
    for (path, len) in texts {
        if len > MAX_TEXT {
            c.header(
                &path,
                format!("`{path}` is {len} bytes long, over the {MAX_TEXT}-byte limit"),
            );
        }
    }
    let mut seen = HashSet::new();
    let mut agents = Vec::with_capacity(raw.agents.len());
    for (i, a) in raw.agents.into_iter().enumerate() {
        if a.id.trim().is_empty() {
            c.header(
                &format!("agents[{i}]"),
                "an agent has an empty `id`".to_owned(),
            );
        } else if !seen.insert(a.id.clone()) {
            c.header(
                &format!("agents[{i}]"),
                format!("agent id `{}` is used twice", a.id),
            );
        }
        let name = a.name.unwrap_or_else(|| a.id.clone());
        agents.push(Agent { id: a.id, name });
    }
    let mut seen = HashSet::new();
    let mut topics = Vec::with_capacity(raw.topics.len());
    for (i, t) in raw.topics.into_iter().enumerate() {
        if t.id.trim().is_empty() {
            c.header(
                &format!("topics[{i}]"),
                "a topic has an empty `id`".to_owned(),
            );
        } else if !seen.insert(t.id.clone()) {
            c.header(
                &format!("topics[{i}]"),
                format!("topic id `{}` is used twice", t.id),
            );
        }
        topics.push(Topic {
            id: t.id,
            question: t.question,
            cardinality: t.cardinality.unwrap_or_default(),
            resolution: t.resolution,
        });
    }
    Header {
        incident: Incident {
            id: raw.incident.id,
            title: raw.incident.title,
        },
        agents,
        topics,
    }
}

fn evidence(c: &mut Collector, index: usize, raw: RawEvidence) -> Option<Evidence> {
    const K: &str = "evidence";
    let id = raw.id;
    if id.trim().is_empty() {
        c.field(index, K, "id", "?", "evidence has an empty `id`".to_owned());
    }
    if !EVIDENCE_KINDS.contains(&raw.kind.as_str()) {
        c.field(
            index,
            K,
            "kind",
            &id,
            format!(
                "`kind` is `{}`; expected one of {}",
                raw.kind,
                EVIDENCE_KINDS.join(", ")
            ),
        );
    }
    for (field, value) in [
        ("source", &raw.source),
        ("locator", &raw.locator),
        ("summary", &raw.summary),
    ] {
        c.text(index, K, field, &id, value);
    }
    let observed_at = c.time(index, K, "observed_at", &id, &raw.observed_at);
    let observed_until = raw
        .observed_until
        .as_ref()
        .map(|t| c.time(index, K, "observed_until", &id, t));
    let recorded_at = c.time(index, K, "recorded_at", &id, &raw.recorded_at);
    let reliability = c.unit(index, K, "reliability", &id, raw.reliability);
    if let (Some(from), Some(Some(until))) = (observed_at, observed_until)
        && until < from
    {
        c.field(
            index,
            K,
            "observed_until",
            &id,
            "`observed_until` is before `observed_at`".to_owned(),
        );
    }
    Some(Evidence {
        id,
        kind: raw.kind,
        source: raw.source,
        locator: raw.locator,
        observed_at: observed_at?,
        observed_until: observed_until.flatten(),
        recorded_at: recorded_at?,
        reliability,
        summary: raw.summary,
    })
}

fn believe(c: &mut Collector, index: usize, seq: u64, raw: RawBelieve) -> Option<Assertion> {
    const K: &str = "believe";
    let id = raw.id.unwrap_or_else(|| format!("A{seq}"));
    if id.trim().is_empty() {
        c.field(
            index,
            K,
            "id",
            "?",
            "an assertion has an empty `id`".to_owned(),
        );
    }
    if raw.claim.trim().is_empty() {
        c.field(index, K, "claim", &id, "`claim` is empty".to_owned());
    }
    c.text(index, K, "claim", &id, &raw.claim);
    if let Some(r) = &raw.rationale {
        c.text(index, K, "rationale", &id, r);
    }
    let confidence = c.unit(index, K, "confidence", &id, raw.confidence);
    let recorded_at = c.time(index, K, "recorded_at", &id, &raw.recorded_at);
    let valid = interval(
        c,
        index,
        K,
        &id,
        Some(&raw.valid_from),
        raw.valid_to.as_ref(),
    );
    check_citations(c, index, K, "supported_by", &id, &raw.supported_by);
    Some(Assertion {
        id,
        agent: raw.agent,
        topic: raw.topic,
        claim: raw.claim,
        confidence,
        valid: valid?,
        clip: raw.clip.unwrap_or(true),
        recorded_at: recorded_at?,
        supported_by: raw.supported_by,
        rationale: raw.rationale,
    })
}

fn retract(c: &mut Collector, index: usize, seq: u64, raw: RawRetract) -> Option<Retraction> {
    const K: &str = "retract";
    let id = raw.id.unwrap_or_else(|| format!("R{seq}"));
    if id.trim().is_empty() {
        c.field(
            index,
            K,
            "id",
            "?",
            "a retraction has an empty `id`".to_owned(),
        );
    }
    if let Some(r) = &raw.reason {
        c.text(index, K, "reason", &id, r);
    }
    let recorded_at = c.time(index, K, "recorded_at", &id, &raw.recorded_at);
    let valid = if raw.valid_from.is_some() || raw.valid_to.is_some() {
        Some(interval(
            c,
            index,
            K,
            &id,
            raw.valid_from.as_ref(),
            raw.valid_to.as_ref(),
        )?)
    } else {
        None
    };
    check_citations(c, index, K, "because", &id, &raw.because);
    let target = match (raw.topic, raw.assertion) {
        (Some(topic), None) => RetractTarget::Topic {
            topic,
            claim: raw.claim,
        },
        (None, Some(assertion)) => {
            if raw.claim.is_some() {
                c.field(index, K, "claim", &id, "`claim` narrows a `topic` retraction; a retraction of an `assertion` takes none".to_owned());
            }
            RetractTarget::Assertion(assertion)
        }
        (Some(_), Some(_)) => {
            c.field(
                index,
                K,
                "assertion",
                &id,
                "a retraction names either a `topic` or an `assertion`, not both".to_owned(),
            );
            return None;
        }
        (None, None) => {
            c.field(
                index,
                K,
                "recorded_at",
                &id,
                "a retraction needs a `topic` or an `assertion`".to_owned(),
            );
            return None;
        }
    };
    let agent = match (&target, raw.agent) {
        (_, Some(agent)) => agent,
        // Filled in from the assertion when references are checked.
        (RetractTarget::Assertion(_), None) => String::new(),
        (RetractTarget::Topic { .. }, None) => {
            c.field(
                index,
                K,
                "topic",
                &id,
                "a retraction of a `topic` needs an `agent`".to_owned(),
            );
            return None;
        }
    };
    Some(Retraction {
        id,
        agent,
        target,
        valid,
        recorded_at: recorded_at?,
        because: raw.because,
        reason: raw.reason,
    })
}

/// `[from, to)` from optional text ends; a missing `from` means the beginning of time.
fn interval(
    c: &mut Collector,
    index: usize,
    kind: &str,
    id: &str,
    from: Option<&RawTime>,
    to: Option<&RawTime>,
) -> Option<Interval> {
    let from = match from {
        Some(t) => c.time(index, kind, "valid_from", id, t),
        None => Some(i64::MIN),
    };
    let to = match to {
        Some(t) => c.time(index, kind, "valid_to", id, t),
        None => Some(OPEN),
    };
    let (from, to) = (from?, to?);
    if to <= from {
        c.field(
            index,
            kind,
            "valid_to",
            id,
            "`valid_to` must be after `valid_from`".to_owned(),
        );
        return None;
    }
    Some(Interval::new(from, to))
}

fn check_citations(
    c: &mut Collector,
    index: usize,
    kind: &str,
    field: &str,
    id: &str,
    ids: &[String],
) {
    let mut seen = HashSet::new();
    for cited in ids {
        if !seen.insert(cited) {
            c.field(
                index,
                kind,
                field,
                id,
                format!("`{field}` cites `{cited}` twice"),
            );
        }
    }
}

struct Known {
    index: usize,
    kind: EventKind,
    recorded_at: Micros,
    agent: Option<String>,
}

fn check_references(c: &mut Collector, header: &Header, events: &mut [Option<Event>]) {
    let agents: HashSet<&str> = header.agents.iter().map(|a| a.id.as_str()).collect();
    let topics: HashSet<&str> = header.topics.iter().map(|t| t.id.as_str()).collect();

    let mut known: HashMap<String, Known> = HashMap::with_capacity(events.len());
    for (index, event) in events.iter().enumerate() {
        let Some(event) = event else { continue };
        let id = event.id();
        if let Some(first) = known.get(id) {
            let first_line = c
                .pos
                .event(first.index)
                .map(|l| format!(" (first at line {})", l.line))
                .unwrap_or_default();
            c.field(
                index,
                event.kind().as_str(),
                "id",
                id,
                format!("id `{id}` is used twice{first_line}"),
            );
            continue;
        }
        let agent = match &event.body {
            EventBody::Believe(a) => Some(a.agent.clone()),
            _ => None,
        };
        known.insert(
            id.to_owned(),
            Known {
                index,
                kind: event.kind(),
                recorded_at: event.recorded_at(),
                agent,
            },
        );
    }

    for (index, slot) in events.iter_mut().enumerate() {
        let Some(event) = slot else { continue };
        let kind = event.kind().as_str();
        let recorded_at = event.recorded_at();
        let id = event.id().to_owned();
        let field = if event.kind() == EventKind::Believe {
            "supported_by"
        } else {
            "because"
        };
        for cited in event.cites() {
            match known.get(cited) {
                None => c.field(
                    index,
                    kind,
                    field,
                    &id,
                    format!("cites evidence `{cited}`, which does not exist"),
                ),
                Some(k) if k.kind != EventKind::Evidence => c.field(
                    index,
                    kind,
                    field,
                    &id,
                    format!(
                        "cites `{cited}`, which is a {} event, not evidence",
                        k.kind.as_str()
                    ),
                ),
                Some(k) if k.recorded_at > recorded_at => c.field(
                    index,
                    kind,
                    field,
                    &id,
                    format!(
                        "cites evidence `{cited}` recorded at {}, after this event ({})",
                        time::format(k.recorded_at),
                        time::format(recorded_at)
                    ),
                ),
                Some(_) => {}
            }
        }
        match &mut event.body {
            EventBody::Evidence(_) => {}
            EventBody::Believe(a) => {
                if !agents.contains(a.agent.as_str()) {
                    c.field(
                        index,
                        kind,
                        "agent",
                        &id,
                        format!("agent `{}` is not declared under `agents`", a.agent),
                    );
                }
                if !topics.contains(a.topic.as_str()) {
                    c.field(
                        index,
                        kind,
                        "topic",
                        &id,
                        format!("topic `{}` is not declared under `topics`", a.topic),
                    );
                }
            }
            EventBody::Retract(r) => {
                if !r.agent.is_empty() && !agents.contains(r.agent.as_str()) {
                    c.field(
                        index,
                        kind,
                        "agent",
                        &id,
                        format!("agent `{}` is not declared under `agents`", r.agent),
                    );
                }
                match &r.target {
                    RetractTarget::Topic { topic, .. } => {
                        if !topics.contains(topic.as_str()) {
                            c.field(
                                index,
                                kind,
                                "topic",
                                &id,
                                format!("topic `{topic}` is not declared under `topics`"),
                            );
                        }
                    }
                    RetractTarget::Assertion(target) => {
                        match known.get(target) {
                            None => c.field(
                                index,
                                kind,
                                "assertion",
                                &id,
                                format!("assertion `{target}` does not exist"),
                            ),
                            Some(k) if k.kind != EventKind::Believe => c.field(
                                index,
                                kind,
                                "assertion",
                                &id,
                                format!(
                                    "`{target}` is a {} event, not an assertion",
                                    k.kind.as_str()
                                ),
                            ),
                            Some(k) => {
                                let owner = k.agent.clone().unwrap_or_default();
                                if r.agent.is_empty() {
                                    r.agent = owner;
                                } else if r.agent != owner {
                                    c.field(
                                    index,
                                    kind,
                                    "agent",
                                    &id,
                                    format!("assertion `{target}` belongs to agent `{owner}`, not `{}`", r.agent),
                                );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Errors that only replay reveals: a retraction that matched no held version.
pub fn replay_errors(parsed: &Parsed, replay: &Replay) -> Vec<DatasetError> {
    replay
        .unmatched_retractions()
        .map(|seq| {
            let index = seq as usize - 1;
            let id = parsed.dataset.events.get(index).map(|e| e.id().to_owned());
            DatasetError {
                file: parsed.file.clone(),
                location: parsed.locations.get(index).copied().flatten(),
                event: id,
                message: "the retraction matches no belief held at its recorded time".to_owned(),
            }
        })
        .collect()
}
