//! Raw shapes → a validated [`Dataset`], every rule of design.md §2 checked and every
//! broken rule reported with its location.

use super::raw::{RawBelieve, RawEvent, RawEvidence, RawHeader, RawRetract, RawTime, RawVerify};
use super::{DatasetError, DatasetErrors, Location, MAX_CONTENT, MAX_TEXT, Parsed};
use crate::engine::Replay;
use crate::model::{
    Agent, Assertion, Dataset, EVIDENCE_KINDS, Event, EventBody, EventKind, Evidence, Header,
    IdMap, IdSet, Incident, RetractTarget, Retraction, Topic, Verification, VerifyState,
};
use crate::time::{self, Interval, Micros, OPEN};
use std::collections::HashSet;

/// Where things are in the source file, as each reader knows it.
pub trait Positions {
    /// The event at `index` (0-based position in the file's event list).
    fn event(&self, index: usize) -> Option<Location>;
    /// A field of that event (`kind` is `evidence`, `believe` or `retract`).
    fn field(&self, index: usize, kind: &str, field: &str) -> Option<Location>;
    /// A header path such as `topics[2].id`.
    fn header(&self, path: &str) -> Option<Location>;
}

/// An event that failed to parse into a raw shape: its location and message.
pub struct RawEventError {
    /// Where it is, when known.
    pub location: Option<Location>,
    /// What is wrong.
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

    /// An event's `id`, or the default one when it has none; an empty one is
    /// an error (`what` names the event: "an assertion").
    fn id(
        &mut self,
        index: usize,
        kind: &str,
        id: Option<String>,
        default: impl FnOnce() -> String,
        what: &str,
    ) -> String {
        let id = id.unwrap_or_else(default);
        if id.trim().is_empty() {
            self.field(index, kind, "id", "?", format!("{what} has an empty `id`"));
        }
        id
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

/// Checks `events` against the header and the static rules (design.md §2), collecting every problem
/// with its place: the dataset, or all its errors.
pub fn validate(
    file: &str,
    header: RawHeader,
    events: Vec<Result<RawEvent, RawEventError>>,
    pos: &dyn Positions,
) -> Result<Parsed, DatasetErrors> {
    let mut checker = Incremental::new(file, header, pos);
    let mut parsed: Vec<Option<Event>> = Vec::with_capacity(events.len());
    for (index, raw) in events.into_iter().enumerate() {
        parsed.push(checker.event(index, raw));
    }
    let (header, agents) = checker.finish()?;
    for (seq, agent) in agents {
        if let Some(Some(Event {
            body: EventBody::Retract(r),
            ..
        })) = parsed.get_mut(seq as usize - 1)
        {
            r.agent = agent;
        }
    }
    let locations = (0..parsed.len()).map(|i| pos.event(i)).collect();
    let events = parsed.into_iter().flatten().collect();
    Ok(Parsed {
        file: file.to_owned(),
        dataset: Dataset { header, events },
        locations,
    })
}

/// One event checked on its own rules and typed, as event `index` (0-based)
/// of `file` with sequence number `seq`: for a log whose references a
/// writer made hold by construction (an importer's, taken up a batch at a
/// time), not for a file a person wrote ([`Incremental`] checks those).
/// `origin` places an error.
pub fn event_alone(
    file: &str,
    (index, seq): (usize, u64),
    raw: RawEvent,
    origin: Option<Location>,
) -> Result<Event, DatasetErrors> {
    struct At(Option<Location>);
    impl Positions for At {
        fn event(&self, _: usize) -> Option<Location> {
            self.0
        }
        fn field(&self, _: usize, _: &str, _: &str) -> Option<Location> {
            self.0
        }
        fn header(&self, _: &str) -> Option<Location> {
            None
        }
    }
    let at = At(origin);
    let mut c = Collector {
        file,
        pos: &at,
        errors: Vec::new(),
    };
    let body = match raw {
        RawEvent::Evidence(raw) => evidence(&mut c, index, raw).map(EventBody::Evidence),
        RawEvent::Believe(raw) => believe(&mut c, index, seq, raw).map(EventBody::Believe),
        RawEvent::Retract(raw) => retract(&mut c, index, seq, raw).map(EventBody::Retract),
        RawEvent::Verify(raw) => verify(&mut c, index, seq, raw).map(EventBody::Verify),
    };
    match body {
        Some(body) if c.errors.is_empty() => Ok(Event { seq, body }),
        _ => Err(DatasetErrors(c.errors)),
    }
}

/// Validates a dataset one event at a time, in file order, so a load can
/// stream: each event's own rules at once, its references against the events
/// before it, and references to events later in the file when the file ends.
/// Memory grows by one small entry per event id (for the references).
pub struct Incremental<'a> {
    c: Collector<'a>,
    header: Header,
    agents: IdMap<String, u32>,
    topics: IdSet<String>,
    known: IdMap<Box<str>, Known>,
    /// References to ids not seen yet when their event was read.
    deferred: Vec<Reference>,
    /// Ids used twice, in file order.
    duplicates: Vec<DatasetError>,
    /// Reference errors, ordered at the end by (event, rule, citation).
    references: Vec<((usize, u8, usize), DatasetError)>,
    /// Agents of retractions that name only an assertion later in the file.
    filled: Vec<(u64, String)>,
}

struct Known {
    index: u32,
    kind: EventKind,
    recorded_at: Micros,
    /// The agent of an assertion (its index in the header), if declared.
    agent: Option<u32>,
}

/// A reference from an event to another: checked at once if that one came
/// earlier in the file, else when the file ends.
struct Reference {
    index: usize,
    kind: EventKind,
    id: String,
    recorded_at: Micros,
    target: Target,
}

/// The event a citation is checked for: its place in the file, kind, id and
/// recorded time.
#[derive(Clone, Copy)]
struct Citing<'a> {
    index: usize,
    kind: EventKind,
    id: &'a str,
    recorded_at: Micros,
}

enum Target {
    /// The `pos`-th citation.
    Cites { pos: usize, evidence: String },
    /// The assertion a retraction names, and the agent it gives (empty: none).
    Assertion { assertion: String, agent: String },
}

/// Ranks of the reference rules within one event, in the order they are reported.
const CITES: u8 = 0;
const AGENT: u8 = 1;
const TARGET: u8 = 2;

impl<'a> Incremental<'a> {
    /// A validator of events read one at a time against `header` (the JSON Lines reader's), placing
    /// errors by `pos`.
    pub fn new(file: &'a str, header: RawHeader, pos: &'a dyn Positions) -> Self {
        let mut c = Collector {
            file,
            pos,
            errors: Vec::new(),
        };
        let header = check_header(&mut c, header);
        let agents = header
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.clone(), i as u32))
            .collect();
        let topics = header.topics.iter().map(|t| t.id.clone()).collect();
        Incremental {
            c,
            header,
            agents,
            topics,
            known: IdMap::default(),
            deferred: Vec::new(),
            duplicates: Vec::new(),
            references: Vec::new(),
            filled: Vec::new(),
        }
    }

    /// The validated header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Whether any rule has been broken so far.
    pub fn failed(&self) -> bool {
        !(self.c.errors.is_empty() && self.duplicates.is_empty() && self.references.is_empty())
    }

    /// Checks the event at `index` (0-based, in file order); returns it if its own
    /// rules hold. A retraction's missing agent is filled in when its assertion
    /// came earlier; otherwise [`finish`](Self::finish) returns it.
    pub fn event(&mut self, index: usize, raw: Result<RawEvent, RawEventError>) -> Option<Event> {
        let seq = index as u64 + 1;
        let c = &mut self.c;
        let body = match raw {
            Err(e) => {
                c.push(e.location, None, e.message);
                None
            }
            Ok(RawEvent::Evidence(raw)) => evidence(c, index, raw).map(EventBody::Evidence),
            Ok(RawEvent::Believe(raw)) => believe(c, index, seq, raw).map(EventBody::Believe),
            Ok(RawEvent::Retract(raw)) => retract(c, index, seq, raw).map(EventBody::Retract),
            Ok(RawEvent::Verify(raw)) => verify(c, index, seq, raw).map(EventBody::Verify),
        };
        let mut event = Event { seq, body: body? };
        self.remember(index, &event);
        self.check(index, &mut event);
        Some(event)
    }

    fn remember(&mut self, index: usize, event: &Event) {
        let id = event.id();
        if let Some(first) = self.known.get(id) {
            let first_line = self
                .c
                .pos
                .event(first.index as usize)
                .map(|l| format!(" (first at line {})", l.line))
                .unwrap_or_default();
            let location = self.c.pos.field(index, event.kind().as_str(), "id");
            self.duplicates.push(DatasetError {
                file: self.c.file.to_owned(),
                location: location.or_else(|| self.c.pos.event(index)),
                event: Some(id.to_owned()),
                message: format!("id `{id}` is used twice{first_line}"),
            });
            return;
        }
        let agent = match &event.body {
            EventBody::Believe(a) => self.agents.get(&a.agent).copied(),
            _ => None,
        };
        self.known.insert(
            id.into(),
            Known {
                index: index as u32,
                kind: event.kind(),
                recorded_at: event.recorded_at(),
                agent,
            },
        );
    }

    fn reference(
        &mut self,
        key: (usize, u8, usize),
        kind: &str,
        field: &str,
        id: &str,
        message: String,
    ) {
        let index = key.0;
        let location = self
            .c
            .pos
            .field(index, kind, field)
            .or_else(|| self.c.pos.event(index));
        self.references.push((
            key,
            DatasetError {
                file: self.c.file.to_owned(),
                location,
                event: Some(id.to_owned()),
                message,
            },
        ));
    }

    fn check(&mut self, index: usize, event: &mut Event) {
        let kind = event.kind();
        let recorded_at = event.recorded_at();
        let id = event.id();
        let by = Citing {
            index,
            kind,
            id,
            recorded_at,
        };
        for (pos, cited) in event.cites().iter().enumerate() {
            self.cite(by, pos, cited);
        }
        if let EventBody::Verify(v) = &event.body {
            self.cite(by, 0, &v.evidence);
        }
        let k = kind.as_str();
        let owner = match &event.body {
            EventBody::Evidence(_) | EventBody::Verify(_) => None,
            EventBody::Believe(a) => {
                if !self.agents.contains_key(&a.agent) {
                    let message = format!("agent `{}` is not declared under `agents`", a.agent);
                    self.reference((index, AGENT, 0), k, "agent", id, message);
                }
                if !self.topics.contains(&a.topic) {
                    let message = format!("topic `{}` is not declared under `topics`", a.topic);
                    self.reference((index, TARGET, 0), k, "topic", id, message);
                }
                None
            }
            EventBody::Retract(r) => {
                if !r.agent.is_empty() && !self.agents.contains_key(&r.agent) {
                    let message = format!("agent `{}` is not declared under `agents`", r.agent);
                    self.reference((index, AGENT, 0), k, "agent", id, message);
                }
                match &r.target {
                    RetractTarget::Topic { topic, .. } => {
                        if !self.topics.contains(topic) {
                            let message = format!("topic `{topic}` is not declared under `topics`");
                            self.reference((index, TARGET, 0), k, "topic", id, message);
                        }
                        None
                    }
                    RetractTarget::Assertion(target) => self.refer(Reference {
                        index,
                        kind,
                        id: id.to_owned(),
                        recorded_at,
                        target: Target::Assertion {
                            assertion: target.clone(),
                            agent: r.agent.clone(),
                        },
                    }),
                }
            }
        };
        if let (Some(owner), EventBody::Retract(r)) = (owner, &mut event.body) {
            r.agent = owner;
        }
    }

    /// Checks the `pos`-th evidence an event cites now if it came earlier in
    /// the file, or keeps the citation for [`finish`](Self::finish).
    fn cite(&mut self, by: Citing, pos: usize, cited: &str) {
        if self.known.contains_key(cited) {
            self.check_cite(by, pos, cited);
        } else {
            self.deferred.push(Reference {
                index: by.index,
                kind: by.kind,
                id: by.id.to_owned(),
                recorded_at: by.recorded_at,
                target: Target::Cites {
                    pos,
                    evidence: cited.to_owned(),
                },
            });
        }
    }

    /// Checks `reference` now if its target came earlier in the file, or keeps
    /// it for [`finish`](Self::finish). Returns the agent to fill into a
    /// retraction that gives none.
    fn refer(&mut self, reference: Reference) -> Option<String> {
        let target = match &reference.target {
            Target::Cites { evidence, .. } => evidence,
            Target::Assertion { assertion, .. } => assertion,
        };
        if self.known.contains_key(target.as_str()) {
            self.check_reference(reference)
        } else {
            self.deferred.push(reference);
            None
        }
    }

    fn check_reference(&mut self, r: Reference) -> Option<String> {
        match r.target {
            Target::Cites { pos, evidence } => {
                let by = Citing {
                    index: r.index,
                    kind: r.kind,
                    id: &r.id,
                    recorded_at: r.recorded_at,
                };
                self.check_cite(by, pos, &evidence);
                None
            }
            Target::Assertion { assertion, agent } => {
                self.check_target(r.index, &r.id, &assertion, &agent)
            }
        }
    }

    fn check_cite(&mut self, by: Citing, pos: usize, cited: &str) {
        let Citing {
            index,
            kind,
            id,
            recorded_at,
        } = by;
        let (field, verb) = match kind {
            EventKind::Believe => ("supported_by", "cites"),
            EventKind::Verify => ("evidence", "verifies"),
            _ => ("because", "cites"),
        };
        let message = match self.known.get(cited) {
            None => format!("{verb} evidence `{cited}`, which does not exist"),
            Some(k) if k.kind != EventKind::Evidence => format!(
                "{verb} `{cited}`, which is a {} event, not evidence",
                k.kind.as_str()
            ),
            Some(k) if k.recorded_at > recorded_at => format!(
                "{verb} evidence `{cited}` recorded at {}, after this event ({})",
                time::format(k.recorded_at),
                time::format(recorded_at)
            ),
            Some(_) => return,
        };
        self.reference((index, CITES, pos), kind.as_str(), field, id, message);
    }

    /// Checks a retraction's assertion; returns the agent to fill in when the
    /// retraction gives none.
    fn check_target(
        &mut self,
        index: usize,
        id: &str,
        target: &str,
        agent: &str,
    ) -> Option<String> {
        let k = EventKind::Retract.as_str();
        let (field, message) = match self.known.get(target) {
            None => ("assertion", format!("assertion `{target}` does not exist")),
            Some(known) if known.kind != EventKind::Believe => (
                "assertion",
                format!(
                    "`{target}` is a {} event, not an assertion",
                    known.kind.as_str()
                ),
            ),
            Some(known) => {
                let owner = known
                    .agent
                    .and_then(|i| self.header.agents.get(i as usize))
                    .map(|a| a.id.clone())
                    .unwrap_or_default();
                if agent.is_empty() {
                    return Some(owner);
                }
                if agent == owner {
                    return None;
                }
                (
                    "agent",
                    format!("assertion `{target}` belongs to agent `{owner}`, not `{agent}`"),
                )
            }
        };
        self.reference((index, TARGET, 0), k, field, id, message);
        None
    }

    /// Checks now the references to events not yet read, as if the file ended
    /// here (a file still being written: design.md §6). Returns the agents to fill
    /// into retractions (by seq), or every error found so far.
    pub fn settle(&mut self) -> Result<Vec<(u64, String)>, DatasetErrors> {
        for reference in std::mem::take(&mut self.deferred) {
            let seq = reference.index as u64 + 1;
            if let Some(owner) = self.check_reference(reference) {
                self.filled.push((seq, owner));
            }
        }
        if !self.failed() {
            return Ok(std::mem::take(&mut self.filled));
        }
        self.references.sort_by_key(|(key, _)| *key);
        let mut errors = std::mem::take(&mut self.c.errors);
        errors.append(&mut self.duplicates);
        errors.extend(
            std::mem::take(&mut self.references)
                .into_iter()
                .map(|(_, e)| e),
        );
        Err(DatasetErrors(errors))
    }

    /// Checks the references to events later in the file. Returns the header and
    /// the agents to fill into retractions (by seq), or every error found.
    pub fn finish(mut self) -> Result<(Header, Vec<(u64, String)>), DatasetErrors> {
        for reference in std::mem::take(&mut self.deferred) {
            let seq = reference.index as u64 + 1;
            if let Some(owner) = self.check_reference(reference) {
                self.filled.push((seq, owner));
            }
        }
        if !self.failed() {
            return Ok((self.header, self.filled));
        }
        self.references.sort_by_key(|(key, _)| *key);
        let mut errors = self.c.errors;
        errors.extend(self.duplicates);
        errors.extend(self.references.into_iter().map(|(_, e)| e));
        Err(DatasetErrors(errors))
    }
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
        let mut duration = |field: &str, text: Option<&String>| {
            let text = text?;
            match time::parse_duration(text) {
                Ok(micros) => Some(micros),
                Err(e) => {
                    let path = format!("topics[{i}].{field}");
                    let location = c
                        .pos
                        .header(&path)
                        .or_else(|| c.pos.header(&format!("topics[{i}]")));
                    c.push(location, None, format!("topic `{}`: `{field}`: {e}", t.id));
                    None
                }
            }
        };
        let half_life = duration("half_life", t.half_life.as_ref());
        let stale_after = duration("stale_after", t.stale_after.as_ref());
        topics.push(Topic {
            id: t.id,
            question: t.question,
            cardinality: t.cardinality.unwrap_or_default(),
            resolution: t.resolution,
            half_life,
            stale_after,
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
    if let Some(content) = &raw.content
        && content.len() > MAX_CONTENT
    {
        c.field(
            index,
            K,
            "content",
            &id,
            format!(
                "`content` is {} bytes long, over the {MAX_CONTENT}-byte limit",
                content.len()
            ),
        );
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
        // Kept only when it says more than the summary.
        content: raw.content.filter(|c| *c != raw.summary),
        summary: raw.summary,
    })
}

fn believe(c: &mut Collector, index: usize, seq: u64, raw: RawBelieve) -> Option<Assertion> {
    const K: &str = "believe";
    let id = c.id(index, K, raw.id, || format!("A{seq}"), "an assertion");
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
    let mut assumed = Vec::with_capacity(raw.assumed.len());
    for name in &raw.assumed {
        match crate::model::Assumed::parse(name) {
            Some(a) if !assumed.contains(&a) => assumed.push(a),
            Some(_) => {}
            None => c.field(
                index,
                K,
                "assumed",
                &id,
                format!(
                    "`assumed` names `{name}`, which is not a field an importer fills in (agent, confidence, valid_from, supported_by)"
                ),
            ),
        }
    }
    assumed.sort_unstable();
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
        assumed,
    })
}

fn retract(c: &mut Collector, index: usize, seq: u64, raw: RawRetract) -> Option<Retraction> {
    const K: &str = "retract";
    let id = c.id(index, K, raw.id, || format!("R{seq}"), "a retraction");
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

/// One verify event read on its own (a review file's line): its own rules,
/// errors located at `line` of `file`. References are the caller's to check.
pub fn verification(
    file: &str,
    line: usize,
    seq: u64,
    raw: RawVerify,
) -> Result<Verification, Vec<DatasetError>> {
    struct Line(usize);
    impl Positions for Line {
        fn event(&self, _index: usize) -> Option<Location> {
            Some(Location::line(self.0))
        }
        fn field(&self, index: usize, _kind: &str, _field: &str) -> Option<Location> {
            self.event(index)
        }
        fn header(&self, _path: &str) -> Option<Location> {
            None
        }
    }
    let pos = Line(line);
    let mut c = Collector {
        file,
        pos: &pos,
        errors: Vec::new(),
    };
    let checked = verify(&mut c, 0, seq, raw);
    match checked {
        Some(v) if c.errors.is_empty() => Ok(v),
        _ => Err(c.errors),
    }
}

fn verify(c: &mut Collector, index: usize, seq: u64, raw: RawVerify) -> Option<Verification> {
    const K: &str = "verify";
    let id = c.id(index, K, raw.id, || format!("V{seq}"), "a verification");
    if raw.evidence.trim().is_empty() {
        c.field(index, K, "evidence", &id, "`evidence` is empty".to_owned());
    }
    let by = raw.by.unwrap_or_default();
    c.text(index, K, "by", &id, &by);
    if let Some(note) = &raw.note {
        c.text(index, K, "note", &id, note);
    }
    let state = VerifyState::parse(&raw.state);
    if state.is_none() {
        let states: Vec<&str> = VerifyState::ALL.iter().map(|s| s.as_str()).collect();
        c.field(
            index,
            K,
            "state",
            &id,
            format!(
                "`state` is `{}`; expected one of {}",
                raw.state,
                states.join(", ")
            ),
        );
    }
    let recorded_at = c.time(index, K, "recorded_at", &id, &raw.recorded_at);
    Some(Verification {
        id,
        evidence: raw.evidence,
        state: state?,
        by,
        recorded_at: recorded_at?,
        note: raw.note,
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

/// Why a dataset's retraction that matched no held version is refused.
pub const UNMATCHED_RETRACTION: &str = "the retraction matches no belief held at its recorded time";

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
                message: UNMATCHED_RETRACTION.to_owned(),
            }
        })
        .collect()
}
