//! `asof import graphiti EDGES.json`: a Graphiti/Zep temporal graph's entity edges.
//!
//! Each edge becomes an assertion by the agent of its `group_id`, about the topic
//! "source entity + relation", claiming the target entity's name (or the edge's
//! fact), recorded at `created_at`, valid over `[valid_at, invalid_at)`; an edge
//! Graphiti expired becomes a retraction at `expired_at`; episodes become evidence.
//! Graphiti rewrites edges in place and keeps only their last state: see
//! `docs/import.md` for what can and cannot be recovered.

use super::{Draft, ImportReport, Skipped, error, instant};
use crate::dataset::raw::{
    RawAgent, RawBelieve, RawEvent, RawEvidence, RawHeader, RawIncident, RawRetract, RawTopic,
};
use crate::dataset::{DatasetError, DatasetErrors, Location};
use crate::model::Cardinality;
use crate::time::{self, Micros};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Inputs above this size are refused (a Graphiti export is read whole).
pub const MAX_BYTES: u64 = 512 << 20;

/// What an edge claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ClaimFrom {
    /// The target entity's name ("Acme Corp").
    #[default]
    Target,
    /// The edge's fact sentence ("Alice works at Acme Corp").
    Fact,
}

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub claim: ClaimFrom,
    /// `many` (default): a source may hold several targets for one relation at
    /// once, and only Graphiti's own expiry closes a fact.
    pub cardinality: Cardinality,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            claim: ClaimFrom::Target,
            cardinality: Cardinality::Many,
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
    created_at: Option<String>,
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
    let whole = |message: String| DatasetErrors(vec![error(file, None, message)]);
    let top: Value = serde_json::from_str(text).map_err(|e| {
        DatasetErrors(vec![error(
            file,
            Some(Location::at(e.line(), e.column())),
            format!("not valid JSON: {e}"),
        )])
    })?;
    let (edges, nodes, episodes) = match top {
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
    };

    let mut errors: Vec<DatasetError> = Vec::new();
    let mut report = ImportReport {
        format: "graphiti".into(),
        input: file.to_owned(),
        records: edges.len(),
        ..ImportReport::default()
    };
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

    // Edges, with their times and names.
    let mut unnamed = 0usize;
    let mut no_valid_at = 0usize;
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
        let (valid, invalid, expired) = (
            optional(&edge.valid_at),
            optional(&edge.invalid_at),
            optional(&edge.expired_at),
        );
        let (Ok(created), Ok(valid), Ok(invalid), Ok(expired)) = (
            created.clone(),
            valid.clone(),
            invalid.clone(),
            expired.clone(),
        ) else {
            for (field, r) in [
                ("created_at", created.map(Some)),
                ("valid_at", valid),
                ("invalid_at", invalid),
                ("expired_at", expired),
            ] {
                if let Err(e) = r {
                    bad(field, e);
                }
            }
            continue;
        };
        let valid_from = valid.unwrap_or_else(|| {
            no_valid_at += 1;
            created
        });
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
                unnamed += 1;
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
            agent: edge
                .group_id
                .clone()
                .filter(|g| !g.is_empty())
                .unwrap_or_else(|| "graphiti".into()),
            topic: format!("{source} {}", edge.name),
            claim,
            created,
            valid_from,
            invalid,
            expired,
            edge,
        });
    }

    // Episodes as evidence: recorded when Graphiti stored them, else when the
    // first edge citing them was created.
    let mut sources: BTreeMap<String, Source> = BTreeMap::new();
    for f in &facts {
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
    if !errors.is_empty() {
        return Err(DatasetErrors(errors));
    }
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
            observed_at: instant(s.observed).into(),
            observed_until: None,
            recorded_at: instant(s.recorded).into(),
            reliability: None,
            summary: summary.chars().take(500).collect(),
        }));
        origins.push(Location::record("edge", 0));
    }
    // Evidence origins: the first edge citing each episode.
    let mut first_citing: HashMap<&str, usize> = HashMap::new();
    for f in &facts {
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

    let mut retractions = Vec::new();
    let mut late_episodes = 0usize;
    for f in &facts {
        let at = Location::record("edge", f.n);
        let valid_to = match (f.invalid, f.expired) {
            // Known to end when it was stored.
            (Some(end), None) => Some(instant(end)),
            _ => None,
        };
        let believe = |id: String, recorded: Micros, cites: Vec<String>, rationale: String| {
            RawEvent::Believe(RawBelieve {
                id: Some(id),
                agent: f.agent.clone(),
                topic: f.topic.clone(),
                claim: f.claim.clone(),
                confidence: None,
                valid_from: instant(f.valid_from).into(),
                valid_to: valid_to.clone().map(Into::into),
                clip: None,
                recorded_at: instant(recorded).into(),
                supported_by: cites,
                rationale: Some(rationale),
            })
        };
        let mut initial = Vec::new();
        let mut later: Vec<(Micros, &str)> = Vec::new();
        for uuid in &f.edge.episodes {
            let recorded = sources[uuid].recorded;
            if recorded <= f.created {
                initial.push(evidence_id[uuid.as_str()].clone());
            } else if f.expired.is_none_or(|end| recorded < end) {
                later.push((recorded, uuid));
            } else {
                late_episodes += 1;
            }
        }
        events.push(believe(
            format!("G{}", f.n),
            f.created,
            initial,
            format!("{} (graphiti edge {})", f.edge.fact, f.edge.uuid),
        ));
        origins.push(at);
        later.sort();
        for (k, (recorded, uuid)) in later.into_iter().enumerate() {
            events.push(believe(
                format!("G{}.{}", f.n, k + 2),
                recorded,
                vec![evidence_id[uuid].clone()],
                format!(
                    "episode {uuid} was merged into graphiti edge {} (its time of merging is not kept; the episode's is used)",
                    f.edge.uuid
                ),
            ));
            origins.push(at);
        }
        if let Some(expired) = f.expired {
            let from = f.invalid.filter(|&end| end > f.valid_from);
            retractions.push((
                RawEvent::Retract(RawRetract {
                    id: Some(format!("X{}", f.n)),
                    agent: Some(f.agent.clone()),
                    topic: Some(f.topic.clone()),
                    assertion: None,
                    claim: Some(f.claim.clone()),
                    valid_from: from.map(|t| instant(t).into()),
                    valid_to: None,
                    recorded_at: instant(expired).into(),
                    because: Vec::new(),
                    reason: Some(match f.invalid {
                        Some(end) => format!(
                            "Graphiti expired edge {}: not valid from {}",
                            f.edge.uuid,
                            instant(end)
                        ),
                        None => format!("Graphiti expired edge {}", f.edge.uuid),
                    }),
                }),
                at,
            ));
        }
    }
    for (event, at) in retractions {
        events.push(event);
        origins.push(at);
    }

    if unnamed > 0 {
        report.notes.push(format!(
            "{unnamed} entity names were not in the export (no name on the edge, no `nodes` entry): their uuids stand in"
        ));
    }
    if no_valid_at > 0 {
        report.notes.push(format!(
            "{no_valid_at} edges have no valid_at: valid from their created_at"
        ));
    }
    if late_episodes > 0 {
        report.skipped.push(Skipped {
            location: "episodes".into(),
            reason: format!(
                "{late_episodes} episode citations were recorded after their edge expired; no event cites them"
            ),
        });
    }

    // The header: one agent per group, one topic per (source entity, relation).
    let mut agents: Vec<String> = facts.iter().map(|f| f.agent.clone()).collect();
    agents.sort();
    agents.dedup();
    let mut topics: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in &facts {
        if seen.insert(f.topic.clone()) {
            topics.push(f.topic.clone());
        }
    }
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "graphiti".into());
    let header = RawHeader {
        asof: 1,
        incident: RawIncident {
            id: stem,
            title: format!("Graphiti edges imported from {file}"),
        },
        agents: agents
            .into_iter()
            .map(|id| RawAgent {
                name: Some(format!("Graphiti group {id}")),
                id,
            })
            .collect(),
        topics: topics
            .into_iter()
            .map(|id| RawTopic {
                question: format!("{id} → ?"),
                id,
                cardinality: Some(options.cardinality),
                resolution: None,
            })
            .collect(),
    };
    Ok(Draft {
        header,
        events,
        origins,
        report,
    })
}
