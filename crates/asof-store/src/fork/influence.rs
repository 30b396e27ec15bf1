//! `influence`: every evidence item ranked by what removing it would change.
//!
//! Removing one item only changes the (agent, topic) pairs whose events cite it,
//! and scopes never interact (design.md §3), so each item replays just those pairs'
//! events — never the whole log once per item.

use super::{PolicyReport, reliabilities, transform};
use asof_core::engine::answers::wrong_between;
use asof_core::engine::answers::{Steps, Truth, answers_of, steps_of, truth};
use asof_core::engine::compare::divergence;
use asof_core::engine::{self, Replay};
use asof_core::model::{Dataset, Event, EventBody, Header, RetractTarget, Version};
use asof_core::time::Micros;
use asof_core::time::OPEN;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What removing one evidence item changes (`asof influence`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Influence {
    /// The item's id.
    pub evidence: String,
    /// Σ over pairs converging in both: fork `converged_at` − parent `converged_at`.
    /// Negative: the agent would have found the truth sooner without this item.
    pub truth_shift_ms: i64,
    /// Total recorded time (within the parent's log) during which answers differ.
    pub divergence_ms: i64,
    /// Topics whose answers or convergence change.
    pub topics: Vec<String>,
    /// The figures of each (agent, topic) pair whose events cite the item,
    /// by agent then topic: the sums above are over these.
    pub pairs: Vec<PairInfluence>,
}

/// What removing one item changes for one (agent, topic) pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairInfluence {
    /// The agent.
    pub agent: String,
    /// The topic.
    pub topic: String,
    /// Fork `converged_at` − parent `converged_at`, when both converge.
    pub truth_shift_ms: Option<i64>,
    /// Recorded time (within the parent's log) during which the answers differ.
    pub divergence_ms: i64,
    /// Whether the pair's answers or its truth change at all.
    pub changed: bool,
}

impl Influence {
    /// The item restricted to the pairs `keep` accepts: its sums and topics
    /// over those pairs only (`influence --agent`, `--topic`). `None` when no
    /// pair of the item is kept (nothing the kept pairs did cites it).
    pub fn restricted(&self, keep: impl Fn(&PairInfluence) -> bool) -> Option<Influence> {
        let pairs: Vec<PairInfluence> = self.pairs.iter().filter(|p| keep(p)).cloned().collect();
        if pairs.is_empty() {
            return None;
        }
        Some(Influence::summed(self.evidence.clone(), pairs))
    }

    /// An item from its pairs' figures.
    fn summed(evidence: String, pairs: Vec<PairInfluence>) -> Influence {
        let topics: BTreeSet<&str> = pairs
            .iter()
            .filter(|p| p.changed)
            .map(|p| p.topic.as_str())
            .collect();
        Influence {
            evidence,
            truth_shift_ms: pairs.iter().filter_map(|p| p.truth_shift_ms).sum(),
            divergence_ms: pairs.iter().map(|p| p.divergence_ms).sum(),
            topics: topics.into_iter().map(str::to_owned).collect(),
            pairs,
        }
    }
}

/// Orders a ranking: most misleading (most negative truth shift) first, then
/// by divergence, largest first; ties keep their order.
pub fn rank(ranking: &mut [Influence]) {
    ranking.sort_by(|a, b| {
        a.truth_shift_ms
            .cmp(&b.truth_shift_ms)
            .then(b.divergence_ms.cmp(&a.divergence_ms))
    });
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
    // Each resolved pair's truth, with its wrong time in µs (a fork's is the
    // parent's, changed over the stretch where they differ).
    let parent_truth: HashMap<&Pair, (Truth, i64)> = parent_steps
        .iter()
        .filter_map(|(pair, steps)| {
            let r = resolution(&pair.1)?;
            Some((
                pair,
                (
                    truth(steps, r, span),
                    wrong_between(steps, r, span.0, span.1),
                ),
            ))
        })
        .collect();
    let reliability = reliabilities(log);
    // Each pair's events in replay order, and its parent versions with the
    // positions of the events that created and closed them.
    let mut sorted: BTreeMap<Pair, PairLog> = BTreeMap::new();
    for (pair, mut events) in pair_events {
        events.sort_by_key(|e| (e.recorded_at(), e.seq));
        sorted.insert(pair, PairLog::new(events));
    }
    for v in parent_versions {
        if let Some(p) = sorted.get_mut(&(v.agent.to_string(), v.topic.to_string())) {
            p.add_version(v);
        }
    }
    sorted.values_mut().for_each(PairLog::seal);
    let prototype = engine::Slices::new(&log.header);
    let next_id = parent_versions.iter().map(|v| v.id).max().unwrap_or(0) + 1;

    let mut ranking = Vec::new();
    for e in &log.events {
        let EventBody::Evidence(ev) = &e.body else {
            continue;
        };
        let without = Without {
            prototype: &prototype,
            evidence: &ev.id,
            reliability: &reliability,
            next_id,
        };
        let mut pairs = Vec::new();
        for pair in citing.get(ev.id.as_str()).into_iter().flatten() {
            let before = parent_steps.get(pair).unwrap_or(&empty);
            let resolved = parent_truth.get(pair).zip(resolution(&pair.1));
            let Some(fork) = sorted[pair].replay_without(&without, before) else {
                continue;
            };
            let mut figures = PairInfluence {
                agent: pair.0.clone(),
                topic: pair.1.clone(),
                truth_shift_ms: None,
                divergence_ms: 0,
                changed: false,
            };
            for w in divergence(&fork.parent_window, &fork.fork_window) {
                let to = if w.to == OPEN {
                    span.1
                } else {
                    w.to.min(span.1)
                };
                let from = w.from.max(span.0);
                if to > from {
                    figures.divergence_ms += (to - from) / 1000;
                }
                figures.changed = true;
            }
            if let Some(((p, parent_wrong), r)) = resolved {
                let f = fork.truth(before, *parent_wrong, r, span);
                if let (Some(a), Some(b)) = (p.converged_at, f.converged_at) {
                    figures.truth_shift_ms = Some((b - a) / 1000);
                }
                figures.changed |= f != *p;
            }
            pairs.push(figures);
        }
        ranking.push(Influence::summed(ev.id.clone(), pairs));
    }
    rank(&mut ranking);
    ranking
}

/// One (agent, topic)'s events in replay order and its parent versions, each with
/// the positions of the events that created and closed it.
struct PairLog {
    events: Vec<Event>,
    position: HashMap<u64, usize>,
    versions: Vec<(Version, usize, Option<usize>)>,
    /// The positions of the events citing each evidence item, in order.
    cited_at: HashMap<Box<str>, Vec<usize>>,
    /// How many versions the parent holds after the events before each
    /// position (`held_count[p]`: after events `0..p`).
    held_count: Vec<isize>,
}

/// What of a held version decides what later events do to it and what the
/// working answer reads (design.md §3): two replays holding the same of
/// these, in the same id order, go on alike. (Its last support does not
/// decide either, nor do ids, which only order.)
fn same_state(a: &Version, b: &Version) -> bool {
    a.claim == b.claim
        && a.confidence.to_bits() == b.confidence.to_bits()
        && a.valid == b.valid
        && a.recorded_at == b.recorded_at
        && a.assertion == b.assertion
}

impl PairLog {
    fn new(events: Vec<Event>) -> PairLog {
        let position = events.iter().enumerate().map(|(i, e)| (e.seq, i)).collect();
        let mut cited_at: HashMap<Box<str>, Vec<usize>> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            for cited in e.cites() {
                let at = cited_at.entry(cited.as_str().into()).or_default();
                // An event citing an item twice is one position.
                if at.last() != Some(&i) {
                    at.push(i);
                }
            }
        }
        PairLog {
            cited_at,
            held_count: vec![0; events.len() + 1],
            events,
            position,
            versions: Vec::new(),
        }
    }

    /// Records one of the parent's versions (in id order); [`PairLog::seal`]
    /// once all are.
    fn add_version(&mut self, v: &Version) {
        let created = self.position.get(&v.created_by).copied().unwrap_or(0);
        let closed = v
            .closed
            .as_ref()
            .and_then(|c| self.position.get(&c.seq).copied());
        // Held after events 0..p for p in created+1..=closed (or to the end):
        // counted as a difference, summed up by `seal`.
        let until = closed.unwrap_or(self.events.len()).min(self.events.len());
        if created < until {
            self.held_count[created + 1] += 1;
            if until + 1 < self.held_count.len() {
                self.held_count[until + 1] -= 1;
            }
        }
        self.versions.push((v.clone(), created, closed));
    }

    /// Turns the differences [`PairLog::add_version`] counted into counts.
    fn seal(&mut self) {
        let mut sum = 0;
        for count in &mut self.held_count {
            sum += *count;
            *count = sum;
        }
    }

    /// Whether the parent holds `held` (in id order) after the events before `p`.
    fn parent_holds(&self, p: usize, held: &[&Version]) -> bool {
        if self.held_count[p] != held.len() as isize {
            return false;
        }
        // Ids follow the replay, so the versions created before `p` come first.
        let made = self
            .versions
            .partition_point(|(_, created, _)| *created < p);
        let mut parent = self.versions[..made]
            .iter()
            .filter(|(_, _, closed)| closed.is_none_or(|c| c >= p))
            .map(|(v, _, _)| v);
        held.iter()
            .all(|f| parent.next().is_some_and(|v| same_state(v, f)))
    }

    /// The pair's answers without one evidence item, given the parent's
    /// (`parent`). Everything before the first instant at which an event cites
    /// the item is the parent's; the replay resumes there from the versions the
    /// parent held, an instant at a time, and stops once, after the last event
    /// citing the item, it holds what the parent holds: from there on the two
    /// are one replay, and the rest of the answers is the parent's.
    fn replay_without(&self, fork: &Without, parent: &Steps) -> Option<Forked> {
        let Without {
            evidence,
            reliability,
            next_id,
            ..
        } = *fork;
        let gone: HashSet<&str> = [evidence].into_iter().collect();
        let citing = self.cited_at.get(evidence)?;
        let (&first, &last) = (citing.first()?, citing.last()?);
        let last_cite = self.events[last].recorded_at();
        // Cut between recorded instants, so the zero-width rule is undisturbed.
        let at = self.events[first].recorded_at();
        let cut = self.events[..first].partition_point(|e| e.recorded_at() < at);
        let held: Vec<Version> = self
            .versions
            .iter()
            .filter(|(_, created, closed)| *created < cut && closed.is_none_or(|c| c >= cut))
            .map(|(v, _, _)| Version {
                superseded_at: OPEN,
                closed: None,
                ..v.clone()
            })
            .collect();
        // The citing events as the fork policy leaves them (keeping their seq;
        // a dropped one is gone).
        let cloned: Vec<Event> = citing.iter().map(|&i| self.events[i].clone()).collect();
        let changed = transform(&cloned, reliability, &gone, &mut PolicyReport::default());

        let mut replay = fork.prototype.resume_like(held, next_id);
        // What the fork policy makes of events `from..to` (in order).
        let fork_events = |from: usize, to: usize| -> Vec<&Event> {
            self.events[from..to]
                .iter()
                .enumerate()
                .filter_map(|(k, e)| match citing.binary_search(&(from + k)) {
                    Err(_) => Some(e),
                    Ok(_) => changed.iter().find(|c| c.seq == e.seq),
                })
                .collect()
        };
        // Through the last citing instant at once, then an instant at a time
        // until the fork holds what the parent holds.
        let mut i = last + self.events[last..].partition_point(|e| e.recorded_at() == last_cite);
        replay.apply(fork_events(cut, i));
        let mut joined = self.parent_holds(i, &replay.holding()).then_some(last_cite);
        while joined.is_none() && i < self.events.len() {
            let t = self.events[i].recorded_at();
            let j = i + self.events[i..].partition_point(|e| e.recorded_at() == t);
            replay.apply(fork_events(i, j));
            i = j;
            if self.parent_holds(j, &replay.holding()) {
                joined = Some(t);
            }
        }
        let seen = replay.into_versions();
        let refs: Vec<&Version> = seen.iter().collect();
        let middle = steps_of(&refs);

        let end = joined.unwrap_or(OPEN);
        // Both answers from `at` through `end`: the only stretch where they can differ.
        let window = |steps: &Steps| -> Steps {
            let value = asof_core::engine::answers::value_at(steps, at).map(Into::into);
            let from = steps.partition_point(|s| s.0 <= at);
            let to = steps.partition_point(|s| s.0 <= end);
            std::iter::once((at, value))
                .chain(steps[from..to.max(from)].iter().cloned())
                .collect()
        };
        let (parent_window, fork_window) = (window(parent), window(&middle));
        Some(Forked {
            at,
            end,
            parent_window,
            fork_window,
        })
    }
}

/// One item's what-if: an engine for the log's header, the item, every item's reliability
/// (the fork policy scales by what remains), and the next version id.
#[derive(Clone, Copy)]
struct Without<'a> {
    /// An engine for the log's header, each replay resumed like it.
    prototype: &'a engine::Slices,
    evidence: &'a str,
    reliability: &'a HashMap<&'a str, f64>,
    next_id: u64,
}

/// A pair's answers without an item, where they can differ from the parent's:
/// from `at` (the first instant citing the item) to `end` (where the replays
/// join, or `OPEN`); before and after, they are the parent's.
struct Forked {
    at: Micros,
    end: Micros,
    /// The parent's and the fork's answers over that stretch, each starting
    /// with its answer at `at`.
    parent_window: Steps,
    fork_window: Steps,
}

impl Forked {
    /// The fork's truth on `resolution` over `span` (as `truth` of its whole
    /// answers), from the parent's answers, the parent's wrong time in µs, and
    /// the stretch where the two differ.
    fn truth(
        &self,
        parent: &Steps,
        parent_wrong: i64,
        resolution: &str,
        span: (Micros, Micros),
    ) -> Truth {
        let (first, last) = span;
        let (lo, hi) = (self.at.max(first), self.end.min(last));
        let wrong = parent_wrong - wrong_between(parent, resolution, lo, hi)
            + wrong_between(&self.fork_window, resolution, lo, hi);
        // The fork's answers in order, the parent's around the stretch.
        let before = &parent[..parent.partition_point(|s| s.0 < self.at)];
        let after = &parent[parent.partition_point(|s| s.0 <= self.end)..];
        let right =
            |s: &(Micros, Option<asof_core::model::Name>)| s.1.as_deref() == Some(resolution);
        let mut back = before
            .iter()
            .chain(&self.fork_window)
            .chain(after)
            .filter(|s| s.0 <= last)
            .rev();
        let converged_at = match back.next() {
            Some(s) if right(s) => {
                let mut start = s.0;
                for s in back {
                    match right(s) {
                        true => start = s.0,
                        false => break,
                    }
                }
                Some(start)
            }
            _ => None,
        };
        Truth {
            converged_at,
            time_wrong_ms: wrong / 1000,
        }
    }
}
