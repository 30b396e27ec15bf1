//! The replay engine (design.md §3): the event log in, belief versions out.
//!
//! Pure and deterministic: the same log always yields the same versions, in the
//! same creation order, which is what makes `rebuild`, `check` and forks exact.
//!
//! Held versions live in one ordered map per *scope* — (agent, topic) for a
//! `cardinality: one` topic, (agent, topic, claim) for a `many` topic — keyed by
//! `valid_from`. Within a scope held versions never overlap in valid time, so the
//! clip point and the overlapping versions are found by ordered range look-ups
//! and nothing in replay is quadratic in the number of events.

pub mod answers;
pub mod compare;
pub mod quality;
use crate::model::{
    Assertion, Cardinality, CloseKind, Closure, Event, EventBody, Header, IdMap, Name, Names,
    Origin, RetractTarget, Retraction, Version, permille,
};
use crate::time::{Interval, Micros, OPEN};
use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::sync::Arc;

/// What replaying one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Evidence: recorded, nothing derived.
    Recorded,
    /// The event closed and/or inserted versions.
    Applied {
        /// How many versions it inserted.
        inserted: u32,
        /// How many held versions it closed.
        closed: u32,
    },
    /// An assertion that changed nothing: logged against the versions covering it.
    Reconfirmed {
        /// The ids of the versions covering it.
        versions: Vec<u64>,
    },
    /// Every version the event inserted was closed at the same recorded instant,
    /// so none is stored (the zero-width rule); the event stays in the log.
    ZeroWidth {
        /// How many held versions it closed.
        closed: u32,
    },
    /// A retraction that matched no held version.
    NoMatch,
}

/// An [`Effect`] without its data: what a store keeps of each event's replay
/// (the `outcomes` table) and reads back, for the CLI, the TUI and the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectKind {
    /// [`Effect::Recorded`].
    Recorded,
    /// [`Effect::Applied`].
    Applied,
    /// [`Effect::Reconfirmed`].
    Reconfirmed,
    /// [`Effect::ZeroWidth`].
    ZeroWidth,
    /// [`Effect::NoMatch`].
    NoMatch,
}

impl EffectKind {
    /// The kind as the store and the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Recorded => "recorded",
            EffectKind::Applied => "applied",
            EffectKind::Reconfirmed => "reconfirmed",
            EffectKind::ZeroWidth => "zero_width",
            EffectKind::NoMatch => "no_match",
        }
    }

    /// A stored outcome's name read back (anything unknown counts as applied).
    pub fn parse(text: &str) -> EffectKind {
        match text {
            "recorded" => EffectKind::Recorded,
            "reconfirmed" => EffectKind::Reconfirmed,
            "zero_width" => EffectKind::ZeroWidth,
            "no_match" => EffectKind::NoMatch,
            _ => EffectKind::Applied,
        }
    }

    /// Whether the event changed no version (shown beside a history).
    pub fn changed_nothing(self) -> bool {
        matches!(
            self,
            EffectKind::Reconfirmed | EffectKind::ZeroWidth | EffectKind::NoMatch
        )
    }
}

impl Effect {
    /// The effect without its data.
    pub fn kind(&self) -> EffectKind {
        match self {
            Effect::Recorded => EffectKind::Recorded,
            Effect::Applied { .. } => EffectKind::Applied,
            Effect::Reconfirmed { .. } => EffectKind::Reconfirmed,
            Effect::ZeroWidth { .. } => EffectKind::ZeroWidth,
            Effect::NoMatch => EffectKind::NoMatch,
        }
    }

    /// The effect's kind as the store writes it.
    pub fn as_str(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// What replaying one event did, by its seq.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The event's seq.
    pub seq: u64,
    /// What it did.
    pub effect: Effect,
}

/// The result of a replay: the stored versions (ordered by id) and one outcome per event,
/// in replay order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// The versions, ordered by id.
    pub versions: Vec<Version>,
    /// One outcome per event, in replay order.
    pub outcomes: Vec<Outcome>,
}

impl Replay {
    /// Retractions that found nothing to retract, by seq.
    pub fn unmatched_retractions(&self) -> impl Iterator<Item = u64> + '_ {
        self.outcomes
            .iter()
            .filter(|o| o.effect == Effect::NoMatch)
            .map(|o| o.seq)
    }
}

/// Replays `events` (any order; applied by `(recorded_at, seq)`) under `header`.
///
/// The events must already be valid (every referenced agent and topic exists);
/// an event naming an unknown topic is treated as `cardinality: one`.
pub fn replay(header: &Header, events: &[Event]) -> Replay {
    replay_refs(header, events.iter().collect())
}

/// [`replay`] over borrowed events (forks borrow what the policy leaves unchanged).
pub fn replay_refs(header: &Header, order: Vec<&Event>) -> Replay {
    resume(header, Vec::new(), 1, order)
}

/// Continues a replay from a known state: `held` are the versions held just before
/// the first of `order` (keeping their ids), and new versions are numbered from
/// `next_id`. Valid when no version in `held` was recorded at the instant of an
/// event in `order` (cut the log between recorded instants), so the zero-width
/// rule sees the same thing it would in a replay from the start.
pub fn resume(header: &Header, held: Vec<Version>, next_id: u64, order: Vec<&Event>) -> Replay {
    let mut engine = Engine::resumed(header, held, next_id);
    let outcomes = engine.run(order);
    engine.finish(outcomes)
}

/// A replay that goes on a slice at a time (a load replays a long log so),
/// keeping its held versions, and what finds them, from one slice to the next
/// instead of restoring them into a new replay for each.
#[derive(Clone)]
pub struct Slices {
    engine: Engine,
}

impl Slices {
    /// A replay of `header`'s log, one slice of events at a time, with nothing replayed yet.
    pub fn new(header: &Header) -> Slices {
        Slices {
            engine: Engine::new(header),
        }
    }

    /// Replays `order` (events recorded after every event replayed so far;
    /// applied by `(recorded_at, seq)`), and returns the versions closed
    /// since the last call, as [`crate::engine::replay`] of the whole log lists them (with
    /// the same ids), and one outcome per event.
    pub fn replay(&mut self, order: Vec<&Event>) -> Replay {
        let outcomes = self.engine.run(order);
        self.engine.take_closed(outcomes)
    }

    /// How much a copy of the replay holds: its versions held and the
    /// claims it knows (both grow with the log: a scope keeps a version for
    /// each stretch of valid time it was told of).
    pub fn size(&self) -> usize {
        self.engine.versions.len() + self.engine.claims.len()
    }

    /// A replay going on from `held` (what was held before the first event
    /// it is given), its next new version `next_id`, for the header `self`
    /// was made for, without building its agent and topic maps again (many
    /// short what-if replays of one log: [`resume`] a slice at a time).
    pub fn resume_like(&self, held: Vec<Version>, next_id: u64) -> Slices {
        Slices {
            engine: self.engine.holding(held, next_id),
        }
    }

    /// Replays `order` (as [`Slices::replay`]) keeping every version it makes
    /// until [`Slices::into_versions`]: for a short replay asked after each
    /// instant what it holds ([`Slices::holding`]), without handing over what
    /// it closed each time.
    pub fn apply(&mut self, order: Vec<&Event>) {
        self.engine.run(order);
    }

    /// The versions held now, in the order of their ids (after [`Slices::apply`]).
    pub fn holding(&self) -> Vec<&Version> {
        let mut held: Vec<usize> = self
            .engine
            .held
            .values()
            .flat_map(|scope| scope.values().copied())
            .collect();
        held.sort_unstable();
        held.iter().map(|&i| &*self.engine.versions[i]).collect()
    }

    /// Every version held or made since the start (after [`Slices::apply`]),
    /// without those closed at the instant they were recorded.
    pub fn into_versions(self) -> Vec<Version> {
        self.engine.finish(Vec::new()).versions
    }

    /// The versions held now, in the order of their ids (between slices:
    /// [`Slices::replay`] hands over the rest).
    pub fn held(&self) -> impl ExactSizeIterator<Item = &Version> {
        self.engine.versions.iter().map(|v| &**v)
    }

    /// Hands over the versions held now; the replay holds none after (its
    /// end: the log has no event left).
    pub fn take_held(&mut self) -> Vec<Version> {
        let engine = &mut self.engine;
        engine.held.clear();
        engine.descendants.clear();
        engine.inserted_by.clear();
        engine.discarded.clear();
        let held = std::mem::take(&mut engine.versions);
        held.into_iter().map(owned).collect()
    }
}

type ScopeKey = (u32, u32, Option<u32>);

/// The version `v` points to, taken out when nothing else shares it
/// (copied when a kept copy of the replay still does).
fn owned(v: Arc<Version>) -> Version {
    Arc::unwrap_or_clone(v)
}

#[derive(Clone)]
struct Engine {
    /// The header's agents and topics by id, shared by the engines a
    /// what-if ranking resumes from one prototype ([`Slices::resume_like`]).
    agents: Arc<IdMap<Box<str>, u32>>,
    topics: Arc<IdMap<Box<str>, (u32, Cardinality)>>,
    claims: IdMap<String, u32>,
    /// Each version behind its own pointer: a copy of the replay (a follow
    /// keeps several, to replay again from) shares the versions it holds,
    /// and a version changed after it is copied is copied then, alone.
    versions: Vec<Arc<Version>>,
    /// `true` for versions closed at the instant they were recorded: never stored.
    discarded: Vec<bool>,
    /// Held versions per scope, keyed by `valid_from`.
    held: BTreeMap<ScopeKey, BTreeMap<Micros, usize>>,
    /// Every version descended from an assertion, by assertion id.
    /// (Most assertions have one or two: held inline, not allocated each.)
    descendants: IdMap<Name, smallvec::SmallVec<[usize; 2]>>,
    /// Agent, topic and claim names, shared by every version that carries them.
    names: Names,
    /// Versions inserted by each event seq, for the zero-width rule.
    inserted_by: IdMap<u64, smallvec::SmallVec<[usize; 2]>>,
    /// The id the next new version gets.
    next_id: u64,
}

impl Engine {
    fn new(header: &Header) -> Self {
        let agents = header
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.as_str().into(), i as u32))
            .collect();
        let topics = header
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str().into(), (i as u32, t.cardinality)))
            .collect();
        Engine::with_maps(Arc::new(agents), Arc::new(topics))
    }

    /// An empty engine over the header's agent and topic maps.
    fn with_maps(
        agents: Arc<IdMap<Box<str>, u32>>,
        topics: Arc<IdMap<Box<str>, (u32, Cardinality)>>,
    ) -> Self {
        Engine {
            agents,
            topics,
            claims: IdMap::default(),
            versions: Vec::new(),
            discarded: Vec::new(),
            held: BTreeMap::new(),
            descendants: IdMap::default(),
            names: Names::default(),
            inserted_by: IdMap::default(),
            next_id: 1,
        }
    }

    /// An engine holding `held`, its next new version `next_id`.
    fn resumed(header: &Header, held: Vec<Version>, next_id: u64) -> Self {
        Engine::new(header).holding(held, next_id)
    }

    /// A fresh engine for the same header as this one (its agent and topic
    /// maps shared, not built again), holding `held`.
    fn holding(&self, held: Vec<Version>, next_id: u64) -> Self {
        let mut engine = Engine::with_maps(self.agents.clone(), self.topics.clone());
        engine.next_id = next_id;
        engine.versions.reserve(held.len());
        engine.discarded.reserve(held.len());
        for v in held {
            let key = engine.scope_key(&v.agent, &v.topic, &v.claim);
            engine.restore(key, v);
        }
        engine
    }

    /// Applies `order` by `(recorded_at, seq)`: one outcome per event.
    fn run(&mut self, mut order: Vec<&Event>) -> Vec<Outcome> {
        order.sort_by_key(|e| (e.recorded_at(), e.seq));
        // Room for what the events add (1.75 versions an event in the
        // reference workload): a slice's tens of megabytes of versions grown
        // by doubling were copied again and again, into fresh memory each time.
        let room = 2 * order.len();
        self.versions.reserve(room);
        self.discarded.reserve(room);
        order
            .into_iter()
            .map(|event| Outcome {
                seq: event.seq,
                effect: self.apply(event),
            })
            .collect()
    }

    fn apply(&mut self, event: &Event) -> Effect {
        match &event.body {
            // A verification changes no version (design.md §4).
            EventBody::Evidence(_) | EventBody::Verify(_) => Effect::Recorded,
            EventBody::Believe(a) => self.assert(event.seq, a),
            EventBody::Retract(r) => self.retract(event.seq, r),
        }
    }

    fn agent_index(&self, agent: &str) -> u32 {
        self.agents.get(agent).copied().unwrap_or(u32::MAX)
    }

    fn topic_index(&self, topic: &str) -> (u32, Cardinality) {
        self.topics
            .get(topic)
            .copied()
            .unwrap_or((u32::MAX, Cardinality::One))
    }

    fn claim_index(&mut self, claim: &str) -> u32 {
        if let Some(&i) = self.claims.get(claim) {
            return i;
        }
        let i = self.claims.len() as u32;
        self.claims.insert(claim.to_owned(), i);
        i
    }

    fn scope_key(&mut self, agent: &str, topic: &str, claim: &str) -> ScopeKey {
        let (t, cardinality) = self.topic_index(topic);
        let claim = match cardinality {
            Cardinality::One => None,
            Cardinality::Many => Some(self.claim_index(claim)),
        };
        (self.agent_index(agent), t, claim)
    }

    /// Held versions of `key` that overlap `v`, in valid-time order.
    fn overlapping(&self, key: &ScopeKey, v: Interval) -> Vec<usize> {
        let Some(scope) = self.held.get(key) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        if let Some((_, &idx)) = scope.range((Unbounded, Included(v.from))).next_back()
            && self.versions[idx].valid.overlaps(&v)
        {
            found.push(idx);
        }
        if v.from < v.to {
            found.extend(
                scope
                    .range((Excluded(v.from), Excluded(v.to)))
                    .map(|(_, &idx)| idx),
            );
        }
        found
    }

    fn assert(&mut self, seq: u64, a: &Assertion) -> Effect {
        let key = self.scope_key(&a.agent, &a.topic, &a.claim);
        let r = a.recorded_at;
        let id: Name = a.id.as_str().into();

        // 1. Clip a late open end at the first later-starting version that
        // says something else at a confidence at least the assertion's (a
        // later version of the same claim and confidence is what the
        // assertion restates, and a less confident one is what a more
        // confident assertion replaces: neither clips it).
        let want = permille(a.confidence);
        let mut v = a.valid;
        let mut clipped_by = None;
        if a.valid.to == OPEN
            && a.clip
            && let Some(scope) = self.held.get(&key)
            && let Some((&m, &idx)) =
                scope
                    .range((Excluded(v.from), Unbounded))
                    .find(|&(_, &idx)| {
                        let x = &self.versions[idx];
                        let held = permille(x.confidence);
                        held >= want && (*x.claim != *a.claim || held != want)
                    })
        {
            v.to = m;
            clipped_by = Some(self.versions[idx].assertion.clone());
        }

        // 2. Close what it contradicts; keep what covers it.
        let mut covered = Vec::new();
        let mut covering = Vec::new();
        let mut closed = 0u32;
        let mut inserted = 0u32;
        for idx in self.overlapping(&key, v) {
            let x = &self.versions[idx];
            if *x.claim == *a.claim && permille(x.confidence) == want {
                covered.extend(x.valid.intersect(&v));
                covering.push(idx);
            } else {
                let pieces = x.valid.minus(&v);
                self.close(idx, &key, seq, &id, r, CloseKind::Superseded);
                closed += 1;
                for piece in pieces {
                    self.insert_split(idx, &key, piece, seq, r);
                    inserted += 1;
                }
            }
        }

        // 3. Insert the claim over V' minus the covered parts.
        let mut rest = vec![v];
        for cut in &covered {
            rest = rest.iter().flat_map(|piece| piece.minus(cut)).collect();
        }
        for piece in rest {
            let clipped = if piece.to == v.to {
                clipped_by.clone()
            } else {
                None
            };
            let version = Version {
                id: 0,
                agent: self.names.get(&a.agent),
                topic: self.names.get(&a.topic),
                claim: self.names.get(&a.claim),
                confidence: a.confidence,
                valid: piece,
                recorded_at: r,
                superseded_at: OPEN,
                assertion: id.clone(),
                origin: Origin::Asserted,
                created_by: seq,
                closed: None,
                clipped_by: clipped,
                requested_valid_to: a.valid.to,
                supported_at: r,
                reconfirmed: Vec::new(),
            };
            self.push(key, version);
            inserted += 1;
        }

        // Every version the assertion covers is supported anew (design.md §4 last
        // support), whether or not the assertion also changed other versions.
        for &i in &covering {
            Arc::make_mut(&mut self.versions[i]).reconfirmed.push(r);
        }

        // 4. Reconfirm.
        if closed == 0 && inserted == 0 {
            let versions = covering.iter().map(|&i| self.versions[i].id).collect();
            return Effect::Reconfirmed { versions };
        }
        Effect::Applied { inserted, closed }
    }

    fn retract(&mut self, seq: u64, r: &Retraction) -> Effect {
        let agent = self.agent_index(&r.agent);
        let id: Name = r.id.as_str().into();
        let matching: Vec<(ScopeKey, usize)> = match &r.target {
            RetractTarget::Assertion(id) => {
                let held: Vec<usize> = self
                    .descendants
                    .get(id.as_str())
                    .map(|all| {
                        all.iter()
                            .copied()
                            .filter(|&i| self.versions[i].superseded_at == OPEN)
                            .collect()
                    })
                    .unwrap_or_default();
                let mut found = Vec::with_capacity(held.len());
                for i in held {
                    let v = &self.versions[i];
                    let (agent, topic, claim) = (v.agent.clone(), v.topic.clone(), v.claim.clone());
                    found.push((self.scope_key(&agent, &topic, &claim), i));
                }
                found
            }
            RetractTarget::Topic { topic, claim } => {
                let (t, _) = self.topic_index(topic);
                let lo = (agent, t, None);
                let hi = (agent, t, Some(u32::MAX));
                self.held
                    .range(lo..=hi)
                    .flat_map(|(key, scope)| scope.values().map(move |&i| (*key, i)))
                    .filter(|&(_, i)| {
                        claim
                            .as_ref()
                            .is_none_or(|c| *self.versions[i].claim == **c)
                    })
                    .collect()
            }
        };
        let matching: Vec<(ScopeKey, usize)> = matching
            .into_iter()
            .filter(|&(_, i)| {
                r.valid
                    .is_none_or(|cut| self.versions[i].valid.overlaps(&cut))
            })
            .collect();
        if matching.is_empty() {
            return Effect::NoMatch;
        }
        let mut inserted = 0u32;
        for &(key, idx) in &matching {
            let pieces = match r.valid {
                Some(cut) => self.versions[idx].valid.minus(&cut),
                None => Vec::new(),
            };
            self.close(idx, &key, seq, &id, r.recorded_at, CloseKind::Retracted);
            for piece in pieces {
                self.insert_split(idx, &key, piece, seq, r.recorded_at);
                inserted += 1;
            }
        }
        Effect::Applied {
            inserted,
            closed: matching.len() as u32,
        }
    }

    fn close(
        &mut self,
        idx: usize,
        key: &ScopeKey,
        seq: u64,
        event: &Name,
        r: Micros,
        kind: CloseKind,
    ) {
        let x = Arc::make_mut(&mut self.versions[idx]);
        x.superseded_at = r;
        x.closed = Some(Closure {
            seq,
            event: event.clone(),
            kind,
        });
        if x.recorded_at == r {
            self.discarded[idx] = true;
        }
        let from = x.valid.from;
        if let Some(scope) = self.held.get_mut(key) {
            scope.remove(&from);
        }
    }

    /// Re-inserts `piece` of the closed version `idx` (kind `split`), recorded at `r`.
    fn insert_split(&mut self, idx: usize, key: &ScopeKey, piece: Interval, seq: u64, r: Micros) {
        let x = &self.versions[idx];
        let keeps_end = piece.to == x.valid.to;
        let version = Version {
            id: 0,
            agent: x.agent.clone(),
            topic: x.topic.clone(),
            claim: x.claim.clone(),
            confidence: x.confidence,
            valid: piece,
            recorded_at: r,
            superseded_at: OPEN,
            assertion: x.assertion.clone(),
            origin: Origin::Split,
            created_by: seq,
            closed: None,
            clipped_by: if keeps_end {
                x.clipped_by.clone()
            } else {
                None
            },
            requested_valid_to: x.requested_valid_to,
            // What the closed version had: its own start, and its own
            // reconfirmations unless it was never held (zero width).
            supported_at: match x.reconfirmed.last() {
                Some(&t) if !self.discarded[idx] => t.max(x.supported_at),
                _ => x.supported_at,
            },
            reconfirmed: Vec::new(),
        };
        self.push(*key, version);
    }

    fn push(&mut self, key: ScopeKey, mut version: Version) {
        version.id = self.next_id;
        self.next_id += 1;
        let idx = self.restore(key, version);
        let created_by = self.versions[idx].created_by;
        self.inserted_by.entry(created_by).or_default().push(idx);
    }

    /// Adds a version as held, keeping its id; returns its index.
    fn restore(&mut self, key: ScopeKey, version: Version) -> usize {
        let idx = self.versions.len();
        self.held
            .entry(key)
            .or_default()
            .insert(version.valid.from, idx);
        self.descendants
            .entry(version.assertion.clone())
            .or_default()
            .push(idx);
        self.versions.push(Arc::new(version));
        self.discarded.push(false);
        idx
    }

    fn finish(self, mut outcomes: Vec<Outcome>) -> Replay {
        self.settle(&mut outcomes);
        let discarded = self.discarded;
        // Each version visited once, in order, taken out of its pointer.
        let mut gone = discarded.iter();
        let versions = (self.versions.into_iter())
            .filter(|_| !gone.next().copied().unwrap_or(false))
            .map(owned)
            .collect();
        Replay { versions, outcomes }
    }

    /// What the replay since the last call closed (in order, without the
    /// versions closed at the instant they were recorded), and `outcomes`
    /// settled; the held versions stay, renumbered in place, to go on from.
    /// Valid between recorded instants (a later event cannot discard a
    /// version recorded before it).
    fn take_closed(&mut self, mut outcomes: Vec<Outcome>) -> Replay {
        self.settle(&mut outcomes);
        let versions = std::mem::take(&mut self.versions);
        let discarded = std::mem::take(&mut self.discarded);
        // Each version's new index among the held, or MAX once it is taken.
        let mut moved = vec![usize::MAX; versions.len()];
        let mut held = Vec::with_capacity(self.held.values().map(BTreeMap::len).sum());
        let mut closed = Vec::with_capacity(versions.len().saturating_sub(held.capacity()));
        for (i, (v, gone)) in versions.into_iter().zip(discarded).enumerate() {
            if gone {
                continue;
            }
            if v.superseded_at == OPEN {
                moved[i] = held.len();
                held.push(v);
            } else {
                closed.push(owned(v));
            }
        }
        self.held.retain(|_, scope| {
            scope.values_mut().for_each(|idx| *idx = moved[*idx]);
            !scope.is_empty()
        });
        self.descendants.retain(|_, all| {
            all.retain_mut(|idx| {
                *idx = moved[*idx];
                *idx != usize::MAX
            });
            !all.is_empty()
        });
        self.inserted_by.clear();
        self.discarded = vec![false; held.len()];
        self.versions = held;
        Replay {
            versions: closed,
            outcomes,
        }
    }

    /// Settles `outcomes` once their events are replayed: an assertion whose
    /// versions were all discarded inserted nothing (zero width), and a
    /// reconfirmation names no discarded version.
    fn settle(&self, outcomes: &mut [Outcome]) {
        let discarded = &self.discarded;
        let gone_ids: std::collections::HashSet<u64> = self
            .versions
            .iter()
            .zip(discarded)
            .filter(|(_, gone)| **gone)
            .map(|(v, _)| v.id)
            .collect();
        for outcome in outcomes.iter_mut() {
            match &mut outcome.effect {
                Effect::Applied { inserted, closed } => {
                    let made = self
                        .inserted_by
                        .get(&outcome.seq)
                        .map_or(&[][..], |made| made.as_slice());
                    let kept = made.iter().filter(|&&i| !discarded[i]).count() as u32;
                    if *inserted > 0 && kept == 0 {
                        outcome.effect = Effect::ZeroWidth { closed: *closed };
                    } else {
                        *inserted = kept;
                    }
                }
                Effect::Reconfirmed { versions } => {
                    versions.retain(|id| !gone_ids.contains(id));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests;
