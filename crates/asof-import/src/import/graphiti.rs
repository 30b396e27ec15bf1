//! `asof import graphiti EDGES.json`: a Graphiti/Zep temporal graph's entity edges.
//!
//! Each edge becomes an assertion by the agent of its `group_id`, about the topic
//! "source entity + relation", claiming the target entity's name (or the edge's
//! fact), recorded at `created_at`; episodes become evidence.
//!
//! Graphiti rewrites an edge in place and exports only its last state. The
//! import undoes its three write paths (design.md §7) by reading each expired edge
//! against the edges created around it:
//!
//! ```text
//! path                         export shows                    what the graph held, replayed
//! 1 contradicted               expired_at long after           [valid_at, ∞) from created_at;
//!                              created_at; an edge created     [valid_at, invalid_at) from expired_at
//!                              then starts at invalid_at
//! 2 born expired               expired_at within the episode   [valid_at, invalid_at) from created_at
//!                              (--episode-window)              only: never held open
//! 3 invalid_at rewritten       the edge created at expired_at  [valid_at, ∞); at expired_at cut at that
//!                              starts later than invalid_at    edge's valid_at v; when the edge starting
//!                                                              at invalid_at was created, cut there
//! ```
//!
//! See `docs/import.md` for what cannot be recovered from a final export.

use super::{Draft, ImportReport, Skipped, error, instant};
use asof_core::dataset::raw::{RawBelieve, RawEvent, RawEvidence, RawRetract, RawTime};
use asof_core::dataset::{DatasetError, DatasetErrors, Location};
use asof_core::model::{Assumed, Cardinality};
use asof_core::time::{self, Micros};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Inputs above this size are refused (a Graphiti export is read whole).
pub const MAX_BYTES: u64 = 512 << 20;

/// What an edge claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ClaimFrom {
    /// The target entity's name ("Acme Corp").
    #[default]
    Target,
    /// The edge's fact sentence ("Alice works at Acme Corp").
    Fact,
}

/// How `asof import graphiti` reads an export.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// What an edge's claim is: its target entity, or its fact sentence.
    pub claim: ClaimFrom,
    /// `many` (default): a source may hold several targets for one relation at
    /// once, and only Graphiti's own expiry closes a fact.
    pub cardinality: Cardinality,
    /// How far apart two writes may be and still belong to one episode's
    /// processing (an edge expired this soon after it was created was born
    /// expired; an edge created this close to another's expiry contradicted it).
    pub episode_window: Micros,
}

/// `--episode-window`'s default: 60 s.
pub const EPISODE_WINDOW: Micros = 60_000_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            claim: ClaimFrom::Target,
            cardinality: Cardinality::Many,
            episode_window: EPISODE_WINDOW,
        }
    }
}

#[derive(Debug, Deserialize)]
struct Edge {
    uuid: String,
    #[serde(default)]
    group_id: Option<String>,
    source_node_uuid: String,
    target_node_uuid: String,
    #[serde(default, alias = "source_node_name")]
    source_name: Option<String>,
    #[serde(default, alias = "target_node_name")]
    target_name: Option<String>,
    name: String,
    #[serde(default)]
    fact: String,
    #[serde(default)]
    episodes: Vec<String>,
    created_at: String,
    #[serde(default)]
    expired_at: Option<String>,
    #[serde(default)]
    valid_at: Option<String>,
    #[serde(default)]
    invalid_at: Option<String>,
    /// The episode's reference time, when an export copies it onto the edge.
    #[serde(default)]
    reference_time: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Node {
    uuid: String,
    name: String,
}

#[derive(Debug, Deserialize)]
struct Episode {
    uuid: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    source_description: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    valid_at: Option<String>,
    #[serde(default)]
    reference_time: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

impl Episode {
    /// The episode's reference time: `valid_at`, else `reference_time`.
    fn reference(&self) -> Option<&str> {
        self.valid_at.as_deref().or(self.reference_time.as_deref())
    }
}

/// An edge with its times parsed.
struct Fact {
    n: usize,
    edge: Edge,
    agent: String,
    topic: String,
    claim: String,
    created: Micros,
    valid_from: Micros,
    invalid: Option<Micros>,
    expired: Option<Micros>,
    /// The fields asof filled in by default: the agent without a `group_id`,
    /// `valid_from` without a `valid_at`, and always the confidence (edges
    /// carry none).
    assumed: Vec<String>,
}

/// An episode as evidence.
struct Source {
    recorded: Micros,
    observed: Micros,
    episode: Option<Episode>,
}

/// Reads a Graphiti export: a JSON array of entity edges, or an object with
/// `edges` and optionally `nodes` (uuid → name) and `episodes`.
pub fn read(file: &str, text: &str, options: Options) -> Result<Draft, DatasetErrors> {
    let (edges, nodes, episodes) = parse_export(file, text)?;
    let mut errors: Vec<DatasetError> = Vec::new();
    let mut report = ImportReport {
        format: "graphiti".into(),
        input: file.to_owned(),
        records: edges.len(),
        ..ImportReport::default()
    };
    report.read.add("edges", edges.len());
    report.read.add("nodes", nodes.len());
    report.read.add("episodes", episodes.len());
    let (node_names, mut known_episodes) =
        read_nodes_and_episodes(file, nodes, episodes, &mut errors);
    let facts = read_edges(
        file,
        edges,
        (&node_names, &known_episodes),
        &options,
        &mut report,
        &mut errors,
    );
    let sources = episode_sources(file, &facts, &mut known_episodes, &mut errors);
    if !errors.is_empty() {
        return Err(DatasetErrors(errors));
    }
    let (evidence_id, mut events, mut origins) = episode_events(&facts, &sources);
    let histories = histories(&facts, options.episode_window, &mut report);
    edge_events(
        &facts,
        &histories,
        (&sources, &evidence_id),
        &mut report,
        (&mut events, &mut origins),
    );
    let header = graphiti_header(file, &facts, &options);
    Ok(Draft {
        header,
        events,
        origins,
        report,
    })
}

/// An export's edges, nodes and episodes, unread.
type Lists = (Vec<Value>, Vec<Value>, Vec<Value>);

/// Pass 1: the export's edges, nodes and episodes (an array of edges, or an
/// object with `edges` and optionally `nodes` and `episodes`).
fn parse_export(file: &str, text: &str) -> Result<Lists, DatasetErrors> {
    let whole = |message: String| DatasetErrors(vec![error(file, None, message)]);
    let top: Value = serde_json::from_str(text).map_err(|e| {
        DatasetErrors(vec![error(
            file,
            Some(Location::at(e.line(), e.column())),
            format!("not valid JSON: {e}"),
        )])
    })?;
    Ok(match top {
        Value::Array(edges) => (edges, Vec::new(), Vec::new()),
        Value::Object(mut map) => {
            let Some(Value::Array(edges)) = map.remove("edges") else {
                return Err(whole(
                    "expected a JSON array of edges, or an object with an `edges` array".into(),
                ));
            };
            let list = |v: Option<Value>| match v {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            (
                edges,
                list(map.remove("nodes")),
                list(map.remove("episodes")),
            )
        }
        _ => {
            return Err(whole(
                "expected a JSON array of edges, or an object with an `edges` array".into(),
            ));
        }
    })
}

/// Pass 2: entity names by node uuid, and the episodes by uuid with their
/// place in the export.
#[allow(clippy::type_complexity)]
fn read_nodes_and_episodes(
    file: &str,
    nodes: Vec<Value>,
    episodes: Vec<Value>,
    errors: &mut Vec<DatasetError>,
) -> (HashMap<String, String>, HashMap<String, (usize, Episode)>) {
    let node_names: HashMap<String, String> = nodes
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| match serde_json::from_value::<Node>(v) {
            Ok(node) => Some((node.uuid, node.name)),
            Err(e) => {
                errors.push(error(
                    file,
                    Some(Location::record("node", i + 1)),
                    e.to_string(),
                ));
                None
            }
        })
        .collect();
    let mut known_episodes: HashMap<String, (usize, Episode)> = HashMap::new();
    for (i, v) in episodes.into_iter().enumerate() {
        match serde_json::from_value::<Episode>(v) {
            Ok(ep) => {
                known_episodes.insert(ep.uuid.clone(), (i + 1, ep));
            }
            Err(e) => errors.push(error(
                file,
                Some(Location::record("episode", i + 1)),
                e.to_string(),
            )),
        }
    }

    (node_names, known_episodes)
}

/// Pass 3: the edges, with their times and names read and checked (an edge
/// that cannot be read is an error with its place).
#[allow(clippy::type_complexity)]
fn read_edges(
    file: &str,
    edges: Vec<Value>,
    (node_names, known_episodes): (&HashMap<String, String>, &HashMap<String, (usize, Episode)>),
    options: &Options,
    report: &mut ImportReport,
    errors: &mut Vec<DatasetError>,
) -> Vec<Fact> {
    // Edges, with their times and names.
    let mut facts: Vec<Fact> = Vec::new();
    for (i, v) in edges.into_iter().enumerate() {
        let n = i + 1;
        let at = Some(Location::record("edge", n));
        let edge = match serde_json::from_value::<Edge>(v) {
            Ok(edge) => edge,
            Err(e) => {
                errors.push(error(file, at, e.to_string()));
                continue;
            }
        };
        let mut bad = |field: &str, message: String| {
            errors.push(error(
                file,
                at,
                format!("(uuid {}) {field}: {message}", edge.uuid),
            ))
        };
        let parse = |text: &str| time::parse(text).map_err(|e| e.to_string());
        let optional = |text: &Option<String>| text.as_deref().map(parse).transpose();
        let created = parse(&edge.created_at);
        let (valid, invalid, expired, reference) = (
            optional(&edge.valid_at),
            optional(&edge.invalid_at),
            optional(&edge.expired_at),
            optional(&edge.reference_time),
        );
        let (Ok(created), Ok(valid), Ok(invalid), Ok(expired), Ok(reference)) = (
            created.clone(),
            valid.clone(),
            invalid.clone(),
            expired.clone(),
            reference.clone(),
        ) else {
            for (field, r) in [
                ("created_at", created.map(Some)),
                ("valid_at", valid),
                ("invalid_at", invalid),
                ("expired_at", expired),
                ("reference_time", reference),
            ] {
                if let Err(e) = r {
                    bad(field, e);
                }
            }
            continue;
        };
        // A missing valid_at: the reference time, then the first cited
        // episode's, and only then created_at (design.md §7).
        let episode_reference = || {
            edge.episodes.iter().find_map(|uuid| {
                let (_, ep) = known_episodes.get(uuid)?;
                time::parse(ep.reference()?).ok()
            })
        };
        let mut assumed = vec![Assumed::Confidence.as_str().to_owned()];
        if valid.is_none() {
            assumed.push(Assumed::ValidFrom.as_str().to_owned());
        }
        let valid_from = match (valid, reference) {
            (Some(v), _) => v,
            (None, Some(r)) => {
                report
                    .defaults
                    .bump("edges without valid_at: the edge's reference_time used");
                r
            }
            (None, None) => match episode_reference() {
                Some(r) => {
                    report
                        .defaults
                        .bump("edges without valid_at: the first cited episode's valid_at used");
                    r
                }
                None => {
                    report
                        .defaults
                        .bump("edges without valid_at or a reference time: created_at used");
                    created
                }
            },
        };
        if let Some(end) = invalid
            && end <= valid_from
        {
            bad(
                "invalid_at",
                format!(
                    "{} is not after valid_at {}: the edge was never valid",
                    instant(end),
                    instant(valid_from)
                ),
            );
            continue;
        }
        if let Some(end) = expired
            && end < created
        {
            bad(
                "expired_at",
                format!("{} is before created_at {}", instant(end), instant(created)),
            );
            continue;
        }
        let mut name = |given: &Option<String>, uuid: &str| match given
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| node_names.get(uuid).cloned())
        {
            Some(name) => name,
            None => {
                report
                    .defaults
                    .bump("entity names not in the export: their uuids stand in");
                uuid.to_owned()
            }
        };
        let source = name(&edge.source_name, &edge.source_node_uuid);
        let target = name(&edge.target_name, &edge.target_node_uuid);
        let claim = match options.claim {
            ClaimFrom::Target => target,
            ClaimFrom::Fact if edge.fact.trim().is_empty() => {
                bad("fact", "is empty, but claims are taken from facts".into());
                continue;
            }
            ClaimFrom::Fact => edge.fact.clone(),
        };
        facts.push(Fact {
            n,
            agent: match edge.group_id.clone().filter(|g| !g.is_empty()) {
                Some(group) => group,
                None => {
                    report
                        .defaults
                        .bump("edges without group_id: agent `graphiti`");
                    assumed.push(Assumed::Agent.as_str().to_owned());
                    "graphiti".into()
                }
            },
            assumed,
            topic: format!("{source} {}", edge.name),
            claim,
            created,
            valid_from,
            invalid,
            expired,
            edge,
        });
    }

    facts
}

/// Pass 4: the episodes the edges cite, as evidence: recorded when Graphiti
/// stored them, else when the first edge citing them was created.
fn episode_sources(
    file: &str,
    facts: &[Fact],
    known_episodes: &mut HashMap<String, (usize, Episode)>,
    errors: &mut Vec<DatasetError>,
) -> BTreeMap<String, Source> {
    // Episodes as evidence: recorded when Graphiti stored them, else when the
    // first edge citing them was created.
    let mut sources: BTreeMap<String, Source> = BTreeMap::new();
    for f in facts {
        for uuid in &f.edge.episodes {
            let entry = sources.entry(uuid.clone()).or_insert(Source {
                recorded: f.created,
                observed: f.created,
                episode: None,
            });
            entry.recorded = entry.recorded.min(f.created);
            entry.observed = entry.recorded;
        }
    }
    for (uuid, source) in &mut sources {
        let Some((k, episode)) = known_episodes.remove(uuid) else {
            continue;
        };
        let at = Some(Location::record("episode", k));
        let mut time_of = |field: &str, text: &Option<String>| {
            text.as_deref()
                .map(|t| {
                    time::parse(t).map_err(|e| {
                        errors.push(error(file, at, format!("(uuid {uuid}) {field}: {e}")))
                    })
                })
                .transpose()
                .ok()
                .flatten()
        };
        if let Some(created) = time_of("created_at", &episode.created_at) {
            source.recorded = created;
        }
        source.observed = time_of("valid_at", &episode.valid_at)
            .unwrap_or(source.recorded)
            .min(source.recorded);
        source.episode = Some(episode);
    }
    sources
}

/// Pass 5: an evidence event per episode, in recorded order (`EP1`, `EP2` …),
/// each placed at the first edge citing it.
#[allow(clippy::type_complexity)]
fn episode_events(
    facts: &[Fact],
    sources: &BTreeMap<String, Source>,
) -> (HashMap<String, String>, Vec<RawEvent>, Vec<Location>) {
    let mut order: Vec<(&String, &Source)> = sources.iter().collect();
    order.sort_by_key(|(uuid, s)| (s.recorded, (*uuid).clone()));
    let evidence_id: HashMap<&str, String> = order
        .iter()
        .enumerate()
        .map(|(i, (uuid, _))| (uuid.as_str(), format!("EP{}", i + 1)))
        .collect();

    let mut events = Vec::new();
    let mut origins = Vec::new();
    for (uuid, s) in &order {
        let ep = s.episode.as_ref();
        let kind = match ep.and_then(|e| e.source.as_deref()) {
            Some("message") => "chat",
            _ => "other",
        };
        let summary = ep
            .and_then(|e| e.name.clone().or_else(|| e.content.clone()))
            .unwrap_or_else(|| format!("Graphiti episode {uuid}"));
        events.push(RawEvent::Evidence(RawEvidence {
            id: evidence_id[uuid.as_str()].clone(),
            kind: kind.into(),
            source: ep
                .and_then(|e| e.source_description.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "graphiti".into()),
            locator: format!("graphiti episode {uuid}"),
            observed_at: RawTime::at(s.observed),
            observed_until: None,
            recorded_at: RawTime::at(s.recorded),
            reliability: None,
            content: ep.and_then(|e| e.content.clone()).filter(|c| !c.is_empty()),
            summary: asof_core::text::first_chars(&summary, 500).to_owned(),
        }));
        origins.push(Location::record("edge", 0));
    }
    // Evidence origins: the first edge citing each episode.
    let mut first_citing: HashMap<&str, usize> = HashMap::new();
    for f in facts {
        for uuid in &f.edge.episodes {
            first_citing.entry(uuid.as_str()).or_insert(f.n);
        }
    }
    for (origin, (uuid, _)) in origins.iter_mut().zip(&order) {
        *origin = Location::record(
            "edge",
            first_citing.get(uuid.as_str()).copied().unwrap_or(0),
        );
    }

    let evidence_id = evidence_id
        .into_iter()
        .map(|(uuid, id)| (uuid.to_owned(), id))
        .collect();
    (evidence_id, events, origins)
}

/// Pass 6: each edge's assertion, the later episodes merged into it, and the
/// retractions its later states make.
fn edge_events(
    facts: &[Fact],
    histories: &[History],
    (sources, evidence_id): (&BTreeMap<String, Source>, &HashMap<String, String>),
    report: &mut ImportReport,
    (events, origins): (&mut Vec<RawEvent>, &mut Vec<Location>),
) {
    let mut retractions = Vec::new();
    for (f, history) in facts.iter().zip(histories) {
        let at = Location::record("edge", f.n);
        let believe =
            |id: String, recorded: Micros, end: Option<Micros>, cites: Vec<String>, why: String| {
                RawEvent::Believe(RawBelieve {
                    id: Some(id),
                    agent: f.agent.clone(),
                    topic: f.topic.clone(),
                    claim: f.claim.clone(),
                    confidence: None,
                    valid_from: RawTime::at(f.valid_from),
                    valid_to: end.map(RawTime::at),
                    clip: None,
                    recorded_at: RawTime::at(recorded),
                    supported_by: cites,
                    rationale: Some(why),
                    assumed: f.assumed.clone(),
                })
            };
        let mut initial = Vec::new();
        let mut later: Vec<(Micros, &str)> = Vec::new();
        for uuid in &f.edge.episodes {
            let recorded = sources[uuid].recorded;
            if recorded <= f.created {
                initial.push(evidence_id[uuid.as_str()].clone());
            } else {
                later.push((recorded, uuid));
            }
        }
        let first = match history.states[0].1 {
            Held::Until(end) => end,
            Held::Gone => None,
        };
        events.push(believe(
            format!("G{}", f.n),
            f.created,
            first,
            initial,
            format!("{} (graphiti edge {})", f.edge.fact, f.edge.uuid),
        ));
        report.assertions_by_source.bump("edges");
        origins.push(at);
        // An episode merged into the edge later restates what the edge held then.
        later.sort();
        let mut k = 1;
        for (recorded, uuid) in later {
            let Held::Until(end) = history.at(recorded) else {
                report.skipped.push(Skipped {
                    location: format!("edge {}", f.n),
                    reason: format!(
                        "episode {uuid} was merged after the edge expired without an end; nothing it could reconfirm was held"
                    ),
                });
                continue;
            };
            k += 1;
            events.push(believe(
                format!("G{}.{k}", f.n),
                recorded,
                end,
                vec![evidence_id[uuid].clone()],
                format!(
                    "episode {uuid} was merged into graphiti edge {} (its time of merging is not kept; the episode's is used)",
                    f.edge.uuid
                ),
            ));
            report
                .assertions_by_source
                .bump("episodes merged into an edge later");
            origins.push(at);
        }
        // Each later state cuts what the one before it held.
        for (i, pair) in history.states.windows(2).enumerate() {
            let ((_, before), (when, after)) = (pair[0], pair[1]);
            let (from, to) = match (before, after) {
                (Held::Until(_), Held::Gone) => (None, None),
                (Held::Until(old), Held::Until(Some(end))) => (Some(end), old),
                _ => continue,
            };
            let id = if i == 0 {
                format!("X{}", f.n)
            } else {
                format!("X{}.{}", f.n, i + 1)
            };
            let portion = match (from, to) {
                (None, _) => "all of it".to_owned(),
                (Some(a), None) => format!("from {} on", instant(a)),
                (Some(a), Some(b)) => format!("[{}, {})", instant(a), instant(b)),
            };
            retractions.push((
                RawEvent::Retract(RawRetract {
                    id: Some(id),
                    agent: Some(f.agent.clone()),
                    topic: None,
                    assertion: Some(format!("G{}", f.n)),
                    claim: None,
                    valid_from: from.map(RawTime::at),
                    valid_to: to.map(RawTime::at),
                    recorded_at: RawTime::at(when),
                    because: Vec::new(),
                    reason: Some(format!(
                        "Graphiti edge {} {}: no longer held {portion}",
                        f.edge.uuid, history.why
                    )),
                }),
                at,
            ));
        }
    }
    for (event, at) in retractions {
        events.push(event);
        origins.push(at);
    }
}

/// Pass 7: the header: one agent per group, one topic per (source entity,
/// relation).
fn graphiti_header(
    file: &str,
    facts: &[Fact],
    options: &Options,
) -> asof_core::dataset::raw::RawHeader {
    let mut agents: Vec<String> = facts.iter().map(|f| f.agent.clone()).collect();
    agents.sort();
    agents.dedup();
    let mut topics: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in facts {
        if seen.insert(f.topic.clone()) {
            topics.push(f.topic.clone());
        }
    }
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "graphiti".into());
    super::header(
        stem,
        format!("Graphiti edges imported from {file}"),
        agents
            .into_iter()
            .map(|id| (format!("Graphiti group {id}"), id)),
        topics
            .into_iter()
            .map(|id| (format!("{id} → ?"), options.cardinality, id)),
    )
}

/// What an edge held from a recorded instant on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// `[valid_from, end)` (`None`: open-ended).
    Until(Option<Micros>),
    /// Nothing: expired without an end.
    Gone,
}

/// The states an edge went through over recorded time, as far as its final
/// export tells: `(from, held)` in recorded order, the first at `created_at`.
#[derive(Debug)]
struct History {
    states: Vec<(Micros, Held)>,
    /// Which write path explains the states (for the retractions' reasons).
    why: &'static str,
}

impl History {
    fn at(&self, recorded: Micros) -> Held {
        self.states
            .iter()
            .take_while(|(from, _)| *from <= recorded)
            .last()
            .map_or(self.states[0].1, |&(_, held)| held)
    }
}

/// Reads each edge's write path (design.md §7) against the edges of the same agent
/// and topic created around its expiry, counting each case and each assumption.
fn histories(facts: &[Fact], window: Micros, report: &mut ImportReport) -> Vec<History> {
    let mut by_topic: HashMap<(&str, &str), Vec<&Fact>> = HashMap::new();
    for f in facts {
        by_topic
            .entry((f.agent.as_str(), f.topic.as_str()))
            .or_default()
            .push(f);
    }
    let near = |a: Micros, b: Micros| a.abs_diff(b) <= window.unsigned_abs();
    facts
        .iter()
        .map(|f| {
            let others = || {
                by_topic[&(f.agent.as_str(), f.topic.as_str())]
                    .iter()
                    .filter(move |o| o.n != f.n)
            };
            let mut one = |held: Held, case: &'static str, why: &'static str| {
                report.cases.bump(case);
                History {
                    states: vec![(f.created, held)],
                    why,
                }
            };
            let Some(expired) = f.expired else {
                return match f.invalid {
                    None => one(
                        Held::Until(None),
                        "edges still valid (held open from created_at)",
                        "",
                    ),
                    Some(end) => one(
                        Held::Until(Some(end)),
                        "edges stored already ended (invalid_at set, never expired)",
                        "",
                    ),
                };
            };
            let Some(invalid) = f.invalid else {
                report
                    .cases
                    .bump("edges expired without invalid_at (held open until expired_at, then dropped)");
                return History {
                    states: vec![(f.created, Held::Until(None)), (expired, Held::Gone)],
                    why: "expired without an end",
                };
            };
            if near(expired, f.created) {
                return one(
                    Held::Until(Some(invalid)),
                    "born-expired edges (expired within the episode that made them: held over [valid_at, invalid_at) only)",
                    "",
                );
            }
            // The edge that contradicted it was created in the episode at expired_at.
            let contradicting: Vec<&Fact> =
                others().filter(|o| near(o.created, expired)).copied().collect();
            let cut = contradicting
                .iter()
                .map(|o| o.valid_from)
                .filter(|&v| v >= invalid)
                .min();
            let contradicted = |report: &mut ImportReport| {
                report
                    .cases
                    .bump("contradicted edges (held open until expired_at, then [valid_at, invalid_at))");
                History {
                    states: vec![
                        (f.created, Held::Until(None)),
                        (expired, Held::Until(Some(invalid))),
                    ],
                    why: "was contradicted by a newer edge",
                }
            };
            match cut {
                Some(v) if v == invalid => contradicted(report),
                None => {
                    report.defaults.bump(
                        "expired edges whose contradicting edge is not in the export: invalid_at taken as learned at expired_at",
                    );
                    contradicted(report)
                }
                Some(v) => {
                    // invalid_at was moved earlier by a later, older-dated edge:
                    // the one whose valid_at is the final invalid_at.
                    let rewrite = others()
                        .filter(|o| o.valid_from == invalid && o.created > expired)
                        .map(|o| o.created)
                        .min();
                    match rewrite {
                        Some(when) => {
                            report.cases.bump(
                                "edges whose invalid_at was rewritten later (open, cut at the contradicting edge's valid_at at expired_at, then at invalid_at when the edge starting there was created)",
                            );
                            History {
                                states: vec![
                                    (f.created, Held::Until(None)),
                                    (expired, Held::Until(Some(v))),
                                    (when, Held::Until(Some(invalid))),
                                ],
                                why: "had its end rewritten by a later, older-dated edge",
                            }
                        }
                        None => {
                            report.defaults.bump(
                                "rewritten invalid_at with no edge starting there in the export: taken as learned at expired_at",
                            );
                            contradicted(report)
                        }
                    }
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod passes {
    //! The passes of [`read`] apart.
    use super::*;

    #[test]
    fn an_export_is_an_array_of_edges_or_an_object_with_edges() {
        let (edges, nodes, episodes) = parse_export("g.json", "[{}, {}]").expect("an array");
        assert_eq!((edges.len(), nodes.len(), episodes.len()), (2, 0, 0));
        let object = r#"{"edges": [{}], "nodes": [{}, {}], "episodes": []}"#;
        let (edges, nodes, _) = parse_export("g.json", object).expect("an object");
        assert_eq!((edges.len(), nodes.len()), (1, 2));
        for bad in ["{}", "3", "{\"edges\": 1}"] {
            let e = parse_export("g.json", bad).expect_err(bad).to_string();
            assert!(e.contains("expected a JSON array of edges"), "{e}");
        }
        let e = parse_export("g.json", "[")
            .expect_err("not JSON")
            .to_string();
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn nodes_name_entities_and_an_unreadable_one_is_an_error_with_its_place() {
        let nodes = vec![
            serde_json::json!({"uuid": "n1", "name": "checkout-api"}),
            serde_json::json!({"name": "no uuid"}),
        ];
        let mut errors = Vec::new();
        let (names, episodes) = read_nodes_and_episodes("g.json", nodes, Vec::new(), &mut errors);
        assert_eq!(names.get("n1").map(String::as_str), Some("checkout-api"));
        assert!(episodes.is_empty());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("node 2"), "{}", errors[0]);
    }
}
