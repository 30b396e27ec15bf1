//! `influence`: every evidence item ranked by what removing it would change.
//!
//! Removing one item only changes the (agent, topic) pairs whose events cite it,
//! and scopes never interact (design.md §3), so each item replays just those pairs'
//! events — never the whole log once per item.

use super::diff::{Steps, Truth, answers_of, divergence, steps_of, truth};
use super::{PolicyReport, reliabilities, transform};
use crate::engine::{self, Replay};
use crate::model::{Dataset, Event, EventBody, Header, RetractTarget, Version};
use crate::time::OPEN;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Influence {
    pub evidence: String,
    /// Σ over pairs converging in both: fork `converged_at` − parent `converged_at`.
    /// Negative: the agent would have found the truth sooner without this item.
    pub truth_shift_ms: i64,
    /// Total recorded time (within the parent's log) during which answers differ.
    pub divergence_ms: i64,
    /// Topics whose answers or convergence change.
    pub topics: Vec<String>,
}

type Pair = (String, String);

/// Ranks every evidence item of `log` (whose replay is `parent`): most misleading first.
pub fn influence(log: &Dataset, parent: &Replay) -> Vec<Influence> {
    influence_of(log, &parent.versions)
}

/// Whether an item's truth shift means anything: some topic its removal
/// changes has a resolution (or, when it changes none, some topic of the log
/// has one). Without one, a shift of 0 would read as "nothing misled it".
pub fn truth_known(header: &Header, item: &Influence) -> bool {
    let resolved = |topic: &str| header.topic(topic).is_some_and(|t| t.resolution.is_some());
    match item.topics.is_empty() {
        true => header.topics.iter().any(|t| t.resolution.is_some()),
        false => item.topics.iter().any(|t| resolved(t)),
    }
}

/// [`influence`] given the parent's versions (a store's, as stored).
pub fn influence_of(log: &Dataset, parent_versions: &[Version]) -> Vec<Influence> {
    let Some(span) = log.span() else {
        return Vec::new();
    };
    // Which pair each assertion belongs to, and each pair's events.
    let mut owner: HashMap<&str, Pair> = HashMap::new();
    for e in &log.events {
        if let EventBody::Believe(a) = &e.body {
            owner.insert(&a.id, (a.agent.clone(), a.topic.clone()));
        }
    }
    let pair_of = |e: &Event| -> Option<Pair> {
        match &e.body {
            EventBody::Evidence(_) | EventBody::Verify(_) => None,
            EventBody::Believe(a) => Some((a.agent.clone(), a.topic.clone())),
            EventBody::Retract(r) => match &r.target {
                RetractTarget::Topic { topic, .. } => Some((r.agent.clone(), topic.clone())),
                RetractTarget::Assertion(id) => owner.get(id.as_str()).cloned(),
            },
        }
    };
    let mut pair_events: BTreeMap<Pair, Vec<Event>> = BTreeMap::new();
    let mut citing: HashMap<&str, BTreeSet<Pair>> = HashMap::new();
    for e in &log.events {
        if let Some(pair) = pair_of(e) {
            for cited in e.cites() {
                citing
                    .entry(cited.as_str())
                    .or_default()
                    .insert(pair.clone());
            }
            pair_events.entry(pair).or_default().push(e.clone());
        }
    }
    let parent_steps = answers_of(parent_versions.iter());
    let empty = Steps::new();
    let resolutions = log.header.resolutions();
    let resolution = |topic: &str| resolutions.get(topic).copied();
    let parent_truth: HashMap<&Pair, Truth> = parent_steps
        .iter()
        .filter_map(|(pair, steps)| resolution(&pair.1).map(|r| (pair, truth(steps, r, span))))
        .collect();
    let reliability = reliabilities(log);
    // Each pair's events in replay order, and its parent versions with the
    // positions of the events that created and closed them.
    let mut sorted: BTreeMap<Pair, PairLog> = BTreeMap::new();
    for (pair, mut events) in pair_events {
        events.sort_by_key(|e| (e.recorded_at(), e.seq));
        let position: HashMap<u64, usize> =
            events.iter().enumerate().map(|(i, e)| (e.seq, i)).collect();
        sorted.insert(
            pair,
            PairLog {
                events,
                position,
                versions: Vec::new(),
            },
        );
    }
    for v in parent_versions {
        if let Some(p) = sorted.get_mut(&(v.agent.to_string(), v.topic.to_string())) {
            let created = p.position.get(&v.created_by).copied().unwrap_or(0);
            let closed = v
                .closed
                .as_ref()
                .and_then(|c| p.position.get(&c.seq).copied());
            p.versions.push((v.clone(), created, closed));
        }
    }
    let next_id = parent_versions.iter().map(|v| v.id).max().unwrap_or(0) + 1;

    let mut ranking = Vec::new();
    for e in &log.events {
        let EventBody::Evidence(ev) = &e.body else {
            continue;
        };
        let gone: HashSet<&str> = [ev.id.as_str()].into_iter().collect();
        let mut item = Influence {
            evidence: ev.id.clone(),
            truth_shift_ms: 0,
            divergence_ms: 0,
            topics: Vec::new(),
        };
        let mut topics = BTreeSet::new();
        for pair in citing.get(ev.id.as_str()).into_iter().flatten() {
            let fork_steps =
                sorted[pair].replay_without(&log.header, &ev.id, &reliability, &gone, next_id);
            let before = parent_steps.get(pair).unwrap_or(&empty);
            let mut differs = false;
            for w in divergence(before, &fork_steps) {
                let to = if w.to == OPEN {
                    span.1
                } else {
                    w.to.min(span.1)
                };
                let from = w.from.max(span.0);
                if to > from {
                    item.divergence_ms += (to - from) / 1000;
                }
                differs = true;
            }
            if let (Some(p), Some(r)) = (parent_truth.get(pair), resolution(&pair.1)) {
                let f = truth(&fork_steps, r, span);
                if let (Some(a), Some(b)) = (p.converged_at, f.converged_at) {
                    item.truth_shift_ms += (b - a) / 1000;
                }
                differs |= f != *p;
            }
            if differs {
                topics.insert(pair.1.clone());
            }
        }
        item.topics = topics.into_iter().collect();
        ranking.push(item);
    }
    ranking.sort_by(|a, b| {
        a.truth_shift_ms
            .cmp(&b.truth_shift_ms)
            .then(b.divergence_ms.cmp(&a.divergence_ms))
    });
    ranking
}

/// One (agent, topic)'s events in replay order and its parent versions, each with
/// the positions of the events that created and closed it.
struct PairLog {
    events: Vec<Event>,
    position: HashMap<u64, usize>,
    versions: Vec<(Version, usize, Option<usize>)>,
}

impl PairLog {
    /// The pair's answers without one evidence item. Everything before the first
    /// instant at which an event cites the item is the parent's; the replay
    /// resumes there from the versions the parent held.
    fn replay_without(
        &self,
        header: &Header,
        evidence: &str,
        reliability: &HashMap<&str, f64>,
        gone: &HashSet<&str>,
        next_id: u64,
    ) -> Steps {
        let cites_it = |e: &Event| e.cites().iter().any(|c| c == evidence);
        let Some(first) = self.events.iter().position(cites_it) else {
            let all: Vec<&Version> = self.versions.iter().map(|(v, _, _)| v).collect();
            return steps_of(&all);
        };
        // Cut between recorded instants, so the zero-width rule is undisturbed.
        let at = self.events[first].recorded_at();
        let cut = self.events.partition_point(|e| e.recorded_at() < at);
        let mut frozen: Vec<&Version> = Vec::new();
        let mut held: Vec<Version> = Vec::new();
        for (v, created, closed) in &self.versions {
            if *created >= cut {
                continue;
            }
            match closed {
                Some(c) if *c < cut => frozen.push(v),
                _ => held.push(Version {
                    superseded_at: OPEN,
                    closed: None,
                    ..v.clone()
                }),
            }
        }
        let suffix = &self.events[cut..];
        let citing: Vec<Event> = suffix.iter().filter(|e| cites_it(e)).cloned().collect();
        let changed = transform(&citing, reliability, gone, &mut PolicyReport::default());
        let events: Vec<&Event> = suffix
            .iter()
            .filter(|e| !cites_it(e))
            .chain(changed.iter())
            .collect();
        let replay = engine::resume(header, held, next_id, events);
        let all: Vec<&Version> = frozen.into_iter().chain(replay.versions.iter()).collect();
        steps_of(&all)
    }
}
