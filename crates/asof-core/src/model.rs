//! The domain: incident header, the event log, and derived belief versions.

use crate::time::{Interval, Micros};
use serde::{Deserialize, Serialize};

/// Confidence and reliability are compared at per-mille precision (design.md §3).
pub fn permille(value: f64) -> i64 {
    (value * 1000.0).round() as i64
}

/// The incident a dataset is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    /// Its id, as the dataset gives it (names the store and its exports).
    pub id: String,
    /// Its title, shown in the TUI's header and the reports.
    pub title: String,
}

/// An agent whose beliefs the log records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    /// Its id, as events name it.
    pub id: String,
    /// Its display name.
    pub name: String,
}

/// How many claims a topic holds at one valid instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Cardinality {
    /// One claim per valid instant.
    #[default]
    One,
    /// A set of claims; each claim is its own scope.
    Many,
}

impl Cardinality {
    /// The cardinality as the dataset format writes it (`one`, `many`).
    pub fn as_str(self) -> &'static str {
        match self {
            Cardinality::One => "one",
            Cardinality::Many => "many",
        }
    }
}

/// A question the agents hold beliefs about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topic {
    /// Its id, as events name it.
    pub id: String,
    /// The question, in words.
    pub question: String,
    /// One claim per valid instant, or a set of them.
    pub cardinality: Cardinality,
    /// The right answer, when the incident's review knows it (ground truth).
    pub resolution: Option<String>,
    /// Confidence halves every `half_life` µs without a reconfirmation (design.md §4).
    #[serde(default)]
    pub half_life: Option<i64>,
    /// Held longer than this (µs) without support = stale (design.md §4).
    #[serde(default)]
    pub stale_after: Option<i64>,
}

/// Everything in a dataset but its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// What the dataset is about.
    pub incident: Incident,
    /// The agents, in dataset order.
    pub agents: Vec<Agent>,
    /// The topics, in dataset order.
    pub topics: Vec<Topic>,
}

impl Header {
    /// One topic by id (a walk of the list: for a loop over topics or pairs,
    /// use [`Header::resolutions`] or [`Header::topic_ranks`]).
    pub fn topic(&self, id: &str) -> Option<&Topic> {
        self.topics.iter().find(|t| t.id == id)
    }

    /// A topic's position in the header (a walk, as [`Header::topic`]).
    pub fn topic_position(&self, id: &str) -> Option<usize> {
        self.topics.iter().position(|t| t.id == id)
    }

    /// An agent's position in the header (a walk of the list).
    pub fn agent_position(&self, id: &str) -> Option<usize> {
        self.agents.iter().position(|a| a.id == id)
    }

    /// The resolution of each topic that has one, by topic id.
    pub fn resolutions(&self) -> std::collections::HashMap<&str, &str> {
        self.topics
            .iter()
            .filter_map(|t| Some((t.id.as_str(), t.resolution.as_deref()?)))
            .collect()
    }

    /// Each topic's position in the header, by id.
    pub fn topic_ranks(&self) -> std::collections::HashMap<&str, usize> {
        self.topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect()
    }

    /// Each agent's position in the header, by id.
    pub fn agent_ranks(&self) -> std::collections::HashMap<&str, usize> {
        self.agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.as_str(), i))
            .collect()
    }
}

/// The evidence kinds the dataset format names; any other is refused.
pub const EVIDENCE_KINDS: [&str; 9] = [
    "alert", "log", "metric", "trace", "ticket", "chat", "runbook", "human", "other",
];

/// Something the agent read (an evidence event, design.md §1).
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// Its id, as beliefs cite it.
    pub id: String,
    /// One of [`EVIDENCE_KINDS`].
    pub kind: String,
    /// Where it came from (a tool, a system, a person).
    pub source: String,
    /// Where in the source (a URL, a file and line, a query).
    pub locator: String,
    /// When what it says happened (valid time).
    pub observed_at: Micros,
    /// When what it says stopped, for evidence about an interval.
    pub observed_until: Option<Micros>,
    /// When the agent had it (recorded time).
    pub recorded_at: Micros,
    /// How far it can be trusted, 0 to 1 (a fork scales confidences by it).
    pub reliability: f64,
    /// What it says, in a line.
    pub summary: String,
    /// The whole text the agent read, when the summary is not all of it (an
    /// importer keeps a tool result or message whole; design.md §7).
    pub content: Option<String>,
}

impl Evidence {
    /// The summary as a table shows it: ending in `…` when the item holds
    /// more than it says (the whole text is one step away: details,
    /// `asof evidence --id`), so a cut summary is never taken for the whole.
    pub fn summary_shown(&self) -> std::borrow::Cow<'_, str> {
        match &self.content {
            Some(_) if !self.summary.ends_with('…') => format!("{}…", self.summary).into(),
            _ => self.summary.as_str().into(),
        }
    }

    /// How late the evidence reached the agent (design.md §8): from the end of
    /// its observed interval when it has one (a log of [09:05, 10:00)
    /// recorded at 10:10 is 10 minutes late, not a day), else from the instant
    /// observed; never negative.
    pub fn lag(&self) -> i64 {
        self.recorded_at
            .saturating_sub(self.observed_until.unwrap_or(self.observed_at))
            .max(0)
    }

    /// `recorded_at - observed_at`: the lag from the start of the observed
    /// interval (details show both when the evidence has an interval).
    pub fn lag_from_start(&self) -> i64 {
        self.recorded_at.saturating_sub(self.observed_at)
    }
}

/// A belief stated by an agent (a `believe` event): the assertion replay turns into versions.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    /// Its id, as versions and retractions name it.
    pub id: String,
    /// The agent who holds it.
    pub agent: String,
    /// The topic it answers.
    pub topic: String,
    /// What the agent believes.
    pub claim: String,
    /// How sure the agent was, 0 to 1.
    pub confidence: f64,
    /// `to == OPEN` when the dataset left `valid_to` open.
    pub valid: Interval,
    /// `false`: never clip the open end (design.md §3 step 1).
    pub clip: bool,
    /// When the agent stated it (recorded time).
    pub recorded_at: Micros,
    /// The evidence ids it cites.
    pub supported_by: Vec<String>,
    /// Why, in the agent's words, when the log says.
    pub rationale: Option<String>,
    /// The fields an importer filled in by default, not read from its input
    /// (design.md §7): shown wherever the assertion's versions are.
    pub assumed: Vec<Assumed>,
}

/// A field of an assertion that an importer filled in by default rather than
/// read from its input. Each is named in the version's JSON (`"assumed"`),
/// marked in tables, reports and the TUI, and counted in provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assumed {
    /// Who holds the belief (e.g. the trace's `service.name`).
    Agent,
    /// How sure (no confidence given: 1).
    Confidence,
    /// From when it holds (e.g. the trace's start).
    ValidFrom,
    /// On what evidence (e.g. what was in front of the model).
    SupportedBy,
}

impl Assumed {
    /// Every field an importer can assume, in the dataset format's order.
    pub const ALL: [Assumed; 4] = [
        Assumed::Agent,
        Assumed::Confidence,
        Assumed::ValidFrom,
        Assumed::SupportedBy,
    ];

    /// The field's name in the dataset format and the JSON outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Assumed::Agent => "agent",
            Assumed::Confidence => "confidence",
            Assumed::ValidFrom => "valid_from",
            Assumed::SupportedBy => "supported_by",
        }
    }

    /// The field named `text` in the dataset format, if it is one.
    pub fn parse(text: &str) -> Option<Assumed> {
        Assumed::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// The mark every table, report and the TUI put after a value an importer
/// assumed (explained in each legend).
pub const ASSUMED_MARK: char = '*';

/// What [`ASSUMED_MARK`] means, in every legend that shows it.
pub const ASSUMED_LEGEND: &str =
    "* assumed: filled in by the importer by default, not read from its input";

impl Assumed {
    /// `text`, marked when `field` is among `assumed`.
    pub fn mark(self, assumed: &[Assumed], mut text: String) -> String {
        if assumed.contains(&self) {
            text.push(ASSUMED_MARK);
        }
        text
    }
}

/// How far an evidence item has been checked (design.md §4), in the order of the
/// dataset format's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyState {
    /// Not yet checked.
    Candidate,
    /// Read directly at its source.
    DirectRead,
    /// Supported by another claim.
    ClaimSupported,
    /// Contradicted by other evidence.
    Conflicted,
    /// Out of date.
    Stale,
    /// Found wrong.
    Rejected,
}

impl VerifyState {
    /// The six states, in the dataset format's order.
    pub const ALL: [VerifyState; 6] = [
        VerifyState::Candidate,
        VerifyState::DirectRead,
        VerifyState::ClaimSupported,
        VerifyState::Conflicted,
        VerifyState::Stale,
        VerifyState::Rejected,
    ];

    /// The state as the dataset format writes it (`direct-read`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyState::Candidate => "candidate",
            VerifyState::DirectRead => "direct-read",
            VerifyState::ClaimSupported => "claim-supported",
            VerifyState::Conflicted => "conflicted",
            VerifyState::Stale => "stale",
            VerifyState::Rejected => "rejected",
        }
    }

    /// The state the dataset format writes as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether a belief citing only such evidence has lost its support.
    pub fn withdraws_support(self) -> bool {
        matches!(self, VerifyState::Rejected | VerifyState::Stale)
    }
}

/// A reviewer's (or agent's) judgement of one evidence item at a recorded time.
/// It changes no version (design.md §4): replay records it and moves on.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// Its id.
    pub id: String,
    /// The evidence item it judges.
    pub evidence: String,
    /// The state it gives the item.
    pub state: VerifyState,
    /// An agent id or a free name; empty when the dataset gives none.
    pub by: String,
    /// When it was recorded.
    pub recorded_at: Micros,
    /// Why, when the log says.
    pub note: Option<String>,
}

/// What a retraction names.
#[derive(Debug, Clone, PartialEq)]
pub enum RetractTarget {
    /// Every held version descended from this assertion.
    Assertion(String),
    /// The held versions of (agent, topic), optionally only those with this claim.
    Topic {
        /// The topic whose held versions go.
        topic: String,
        /// Only the versions with this claim, when given.
        claim: Option<String>,
    },
}

/// A retraction of held versions (a `retract` event).
#[derive(Debug, Clone, PartialEq)]
pub struct Retraction {
    /// Its id.
    pub id: String,
    /// The agent retracting.
    pub agent: String,
    /// What it retracts.
    pub target: RetractTarget,
    /// Only this part of valid time; `None` = all of it.
    pub valid: Option<Interval>,
    /// When it was recorded.
    pub recorded_at: Micros,
    /// The evidence that made the agent retract.
    pub because: Vec<String>,
    /// Why, in the agent's words, when the log says.
    pub reason: Option<String>,
}

/// What an event is, with its fields.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    /// Something the agent read.
    Evidence(Evidence),
    /// A belief stated.
    Believe(Assertion),
    /// A belief withdrawn.
    Retract(Retraction),
    /// A judgement of an evidence item.
    Verify(Verification),
}

/// One entry of the canonical log. `seq` is its position in the loaded file (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its position in the loaded file, from 1.
    pub seq: u64,
    /// What it is.
    pub body: EventBody,
}

impl Event {
    /// The event's id.
    pub fn id(&self) -> &str {
        match &self.body {
            EventBody::Evidence(e) => &e.id,
            EventBody::Believe(a) => &a.id,
            EventBody::Retract(r) => &r.id,
            EventBody::Verify(v) => &v.id,
        }
    }

    /// When the event was recorded.
    pub fn recorded_at(&self) -> Micros {
        match &self.body {
            EventBody::Evidence(e) => e.recorded_at,
            EventBody::Believe(a) => a.recorded_at,
            EventBody::Retract(r) => r.recorded_at,
            EventBody::Verify(v) => v.recorded_at,
        }
    }

    /// Which of the four kinds it is.
    pub fn kind(&self) -> EventKind {
        match &self.body {
            EventBody::Evidence(_) => EventKind::Evidence,
            EventBody::Believe(_) => EventKind::Believe,
            EventBody::Retract(_) => EventKind::Retract,
            EventBody::Verify(_) => EventKind::Verify,
        }
    }

    /// Evidence ids this event cites (`supported_by` or `because`). A
    /// verification names its evidence but cites nothing: it is not grounds.
    pub fn cites(&self) -> &[String] {
        match &self.body {
            EventBody::Evidence(_) | EventBody::Verify(_) => &[],
            EventBody::Believe(a) => &a.supported_by,
            EventBody::Retract(r) => &r.because,
        }
    }

    /// The cited evidence ids, to fill or change (`None` for evidence and verifications).
    pub fn cites_mut(&mut self) -> Option<&mut Vec<String>> {
        match &mut self.body {
            EventBody::Evidence(_) | EventBody::Verify(_) => None,
            EventBody::Believe(a) => Some(&mut a.supported_by),
            EventBody::Retract(r) => Some(&mut r.because),
        }
    }
}

/// The four kinds of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// An `evidence` event.
    Evidence,
    /// A `believe` event.
    Believe,
    /// A `retract` event.
    Retract,
    /// A `verify` event.
    Verify,
}

impl EventKind {
    /// The kind as the dataset format and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Evidence => "evidence",
            EventKind::Believe => "believe",
            EventKind::Retract => "retract",
            EventKind::Verify => "verify",
        }
    }

    /// The kind written `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "evidence" => Some(EventKind::Evidence),
            "believe" => Some(EventKind::Believe),
            "retract" => Some(EventKind::Retract),
            "verify" => Some(EventKind::Verify),
            _ => None,
        }
    }
}

/// A validated dataset: the header and the log in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The incident, its agents and its topics.
    pub header: Header,
    /// The log, in file order.
    pub events: Vec<Event>,
}

impl Dataset {
    /// The first and last recorded instants of the log, if it has events.
    pub fn span(&self) -> Option<(Micros, Micros)> {
        let mut times = self.events.iter().map(Event::recorded_at);
        let first = times.next()?;
        Some(times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
    }

    /// The log's evidence items by id.
    pub fn evidence_by_id(&self) -> std::collections::HashMap<&str, &Evidence> {
        self.events
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::Evidence(ev) => Some((ev.id.as_str(), ev)),
                _ => None,
            })
            .collect()
    }
}

/// How a version came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Inserted by its assertion.
    Asserted,
    /// A piece of a version cut by a later assertion or retraction (design.md §3).
    Split,
}

impl Origin {
    /// The origin as the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Asserted => "asserted",
            Origin::Split => "split",
        }
    }
}

/// How a version stopped being held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CloseKind {
    /// A later assertion replaced it.
    Superseded,
    /// A retraction withdrew it.
    Retracted,
}

impl CloseKind {
    /// The kind as the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseKind::Superseded => "superseded",
            CloseKind::Retracted => "retracted",
        }
    }
}

/// A shared, immutable name: an agent, topic, claim or event id held by many
/// versions. A million versions name a few thousand distinct strings, so they
/// share them instead of each owning a copy. Names of up to 23 bytes (ids,
/// most agents and topics) are held inline: making or copying one allocates
/// nothing and counts no references, which is most of what building a long
/// answer's versions costs; a longer one (a claim in words) is one shared copy.
pub type Name = smol_str::SmolStr;

/// Evidence ids an event cites, shared by every version descending from it.
pub type Cited = std::sync::Arc<[Name]>;

/// The hasher of maps and sets keyed by what a dataset names (ids, agents,
/// topics, claims) while it is checked and replayed: foldhash, seeded per
/// process. Several times faster than the standard SipHash on short ids (a
/// visible part of a load's CPU; docs/performance-log.md), and with a
/// random seed an input file still cannot choose its collisions.
pub type IdHasher = foldhash::fast::RandomState;

/// A hash map keyed by what a dataset names ([`IdHasher`]).
pub type IdMap<K, V> = std::collections::HashMap<K, V, IdHasher>;

/// A hash set of what a dataset names ([`IdHasher`]).
pub type IdSet<K> = std::collections::HashSet<K, IdHasher>;

/// Hands out one shared copy of each distinct name.
#[derive(Debug, Default, Clone)]
pub struct Names(std::collections::HashSet<Name, ShortKeys>);

/// The hasher for short, trusted keys (ids and names read from our own
/// store): foldhash's fast hasher with a fixed seed — several times faster
/// than the default SipHash on ten-byte strings, and deterministic. Not for
/// keys an adversary can choose in bulk (those use [`IdHasher`]).
pub type ShortKeys = foldhash::fast::FixedState;

impl Names {
    /// The shared copy of `text`, made on first use.
    pub fn get(&mut self, text: &str) -> Name {
        if let Some(name) = self.0.get(text) {
            return name.clone();
        }
        let name: Name = text.into();
        self.0.insert(name.clone());
        name
    }
}

/// One derived belief version (design.md §1): held over `[recorded_at, superseded_at)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    /// Creation order within one replay (stable across rebuilds).
    pub id: u64,
    /// The agent who holds it.
    pub agent: Name,
    /// The topic it answers.
    pub topic: Name,
    /// What the agent believes.
    pub claim: Name,
    /// How sure the agent was, 0 to 1.
    pub confidence: f64,
    /// The valid time it is about: `[from, to)`.
    pub valid: Interval,
    /// When it started being held (its assertion's or split's recorded time).
    pub recorded_at: Micros,
    /// `OPEN` while still held.
    pub superseded_at: Micros,
    /// The assertion this version descends from.
    pub assertion: Name,
    /// Asserted, or a split piece of an asserted version.
    pub origin: Origin,
    /// Seq of the event that inserted this version.
    pub created_by: u64,
    /// Seq and id of the event that closed it, and how.
    pub closed: Option<Closure>,
    /// The assertion whose version clipped this version's open end.
    pub clipped_by: Option<Name>,
    /// The valid end the assertion asked for (`OPEN` when open-ended).
    pub requested_valid_to: Micros,
    /// The support this version started with (design.md §4): its assertion's
    /// recorded time, or a later reconfirmation of a version it was split
    /// from (one that was held for a while: a zero-width one counts for nothing).
    pub supported_at: Micros,
    /// When later assertions covered this version itself (design.md §4 last
    /// support: a pure reconfirmation, or an assertion that also changed other
    /// versions), in recorded order.
    pub reconfirmed: Vec<Micros>,
}

impl Version {
    /// The latest support recorded at or before `at`: [`Version::supported_at`]
    /// or a reconfirmation of this version.
    pub fn last_support(&self, at: Micros) -> Micros {
        let n = self.reconfirmed.partition_point(|&t| t <= at);
        match n.checked_sub(1) {
            Some(i) => self.reconfirmed[i].max(self.supported_at),
            None => self.supported_at,
        }
    }
}

/// The event that closed a version.
#[derive(Debug, Clone, PartialEq)]
pub struct Closure {
    /// That event's seq.
    pub seq: u64,
    /// That event's id.
    pub event: Name,
    /// Whether it superseded or retracted.
    pub kind: CloseKind,
}

/// "superseded by B7", "retracted by R2".
impl std::fmt::Display for Closure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} by {}", self.kind.as_str(), self.event)
    }
}

impl Version {
    /// Whether the version was held at recorded time `t`.
    pub fn held_at(&self, t: Micros) -> bool {
        self.recorded_at <= t && t < self.superseded_at
    }
}

/// Known ids for an error about `wanted`: all of them when there are a dozen
/// or fewer; otherwise the eight sharing the longest prefix with `wanted` (in
/// file order among equals) and how many there are — a store of a thousand
/// topics should not print a thousand names in one sentence.
pub fn known_ids<'a>(ids: impl IntoIterator<Item = &'a str>, wanted: &str) -> String {
    const ALL_UP_TO: usize = 12;
    const NEAREST: usize = 8;
    let ids: Vec<&str> = ids.into_iter().collect();
    if ids.len() <= ALL_UP_TO {
        return ids.join(", ");
    }
    let shared = |id: &str| {
        id.chars()
            .zip(wanted.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut nearest: Vec<(usize, &str)> = ids.iter().copied().enumerate().collect();
    // Stable: among equal prefixes, file order.
    nearest.sort_by_key(|&(i, id)| (std::cmp::Reverse(shared(id)), i));
    let mut picked: Vec<(usize, &str)> = nearest.into_iter().take(NEAREST).collect();
    picked.sort_by_key(|&(i, _)| i);
    let names: Vec<&str> = picked.into_iter().map(|(_, id)| id).collect();
    format!("{}, … ({} in all)", names.join(", "), ids.len())
}

#[cfg(test)]
mod known_ids_tests {
    use super::known_ids;

    #[test]
    fn a_few_are_listed_whole_many_are_cut_to_the_nearest() {
        assert_eq!(known_ids(["a", "b"], "c"), "a, b");
        let many: Vec<String> = (0..1000).map(|i| format!("topic-{i}")).collect();
        let text = known_ids(many.iter().map(String::as_str), "topic-0007");
        assert_eq!(
            text,
            "topic-0, topic-1, topic-2, topic-3, topic-4, topic-5, topic-6, topic-7, … (1000 in all)"
        );
        let text = known_ids(many.iter().map(String::as_str), "topic-99x");
        assert!(text.starts_with("topic-99, topic-990, "), "{text}");
        assert!(text.ends_with("… (1000 in all)"), "{text}");
    }
}

/// One model call of a trace (design.md §5, `asof calls`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCall {
    /// Its place among the run's calls, by start, from 1.
    pub n: usize,
    /// The agent whose call it was.
    pub agent: String,
    /// The trace's id (hex).
    pub trace: String,
    /// The call's span id (hex).
    pub span: String,
    /// µs since the epoch.
    pub started: i64,
    /// µs since the epoch.
    pub ended: i64,
    /// The model named by the span, when it names one.
    pub model: Option<String>,
    /// The evidence first in front of the model at this call, by id.
    pub read_new: Vec<String>,
    /// The assertions and retractions its output made.
    pub said: Vec<String>,
    /// The tool calls its output made, each with the evidence its result became.
    pub tool_calls: Vec<ToolCallMade>,
}

/// A tool call a model call made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallMade {
    /// The tool call's id, when the span gives one.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The evidence item its result became, if any.
    pub evidence: Option<String>,
}
