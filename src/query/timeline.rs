//! A whole store read once into memory, indexed for scrubbing: the TUI's data.
//!
//! `believed` here answers exactly what the SQL `query::believed` answers (both
//! use [`Version::held_at`] and the half-open valid interval); a test holds them
//! to it on the demo and on generated data. Scrubbing a million-event store then
//! costs a binary search and a scan of the held rows, with no SQL per step.

use super::{Belief, Cited, EvidenceItem, Filter, evidence};
use crate::engine::EffectKind;
use crate::engine::quality::Ledger;
use crate::model::Header;
use crate::model::{Name, Names};
use crate::store::Store;
use crate::store::read::{VERSION_COLUMN_COUNT, VERSION_COLUMNS, version_named};
use crate::time::{Micros, OPEN};
use std::collections::HashMap;

/// What kind of mark an event leaves on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    Evidence,
    Assertion,
    Reconfirmation,
    Retraction,
    /// A verify event (SPEC §9): its agent is who judged, its claim the state,
    /// and it cites the evidence judged.
    Verification,
}

impl MarkKind {
    pub const ALL: [MarkKind; 5] = [
        MarkKind::Evidence,
        MarkKind::Assertion,
        MarkKind::Reconfirmation,
        MarkKind::Retraction,
        MarkKind::Verification,
    ];

    pub fn index(self) -> usize {
        match self {
            MarkKind::Evidence => 0,
            MarkKind::Assertion => 1,
            MarkKind::Reconfirmation => 2,
            MarkKind::Retraction => 3,
            MarkKind::Verification => 4,
        }
    }
}

/// One event of the log, as the timeline shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub seq: u64,
    pub id: String,
    pub kind: MarkKind,
    pub recorded_at: Micros,
    pub agent: Option<Name>,
    pub topic: Option<Name>,
    pub claim: Option<Name>,
    pub cites: Cited,
    /// The replay outcome (`applied`, `reconfirmed`, `zero_width`, ...).
    pub effect: EffectKind,
    /// For reconfirmations: the versions that covered the assertion.
    pub covering: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct Timeline {
    pub label: String,
    pub header: Header,
    /// Every event, ordered by `(recorded_at, seq)`.
    pub marks: Vec<Mark>,
    /// Every version, ordered by id.
    pub beliefs: Vec<Belief>,
    /// Every evidence item, ordered by `(recorded_at, seq)`.
    pub evidence: Vec<EvidenceItem>,
    /// Per topic (header order): indexes into `beliefs`, ordered by `recorded_at`.
    by_topic: Vec<Vec<usize>>,
    /// Per belief: its topic's and agent's position in the header.
    topic_of: Vec<u32>,
    agent_of: Vec<u32>,
    /// Every belief, ordered by `(recorded_at, id)`.
    by_recorded: Vec<usize>,
    /// Every closed belief, ordered by `superseded_at`.
    by_superseded: Vec<usize>,
    /// See [`build_checkpoints`].
    checkpoints: Vec<Vec<u32>>,
    /// Per mark kind: sorted recorded instants, for counting marks in a range.
    times: [Vec<Micros>; 5],
    /// What belief quality needs (SPEC §9), read once.
    pub ledger: Ledger,
    /// Every mark's instant, sorted, for stepping between events.
    all_times: Vec<Micros>,
}

impl Timeline {
    /// Adds the `verify` events of a review file (SPEC §9; what the TUI's `m`
    /// writes) to the view's ledger, after every event of the log; the store is
    /// not touched. Returns how many were read; every broken rule is reported
    /// with its line and nothing is added.
    pub fn add_review(
        &mut self,
        path: &std::path::Path,
    ) -> Result<usize, crate::dataset::DatasetErrors> {
        let (evidence, ids) = crate::dataset::review::known(self.marks.iter().map(|m| {
            let at = (m.kind == MarkKind::Evidence).then_some(m.recorded_at);
            (m.id.as_str(), at)
        }));
        let first = self.marks.len() as u64 + 1;
        let marks = crate::dataset::review::read(path, &evidence, &ids, first)?;
        let read = marks.len();
        for (n, v) in marks.into_iter().enumerate() {
            self.ledger.add_verification(v, first + n as u64);
        }
        self.ledger.seal();
        Ok(read)
    }

    /// Reads the whole store.
    pub fn load(store: &Store) -> rusqlite::Result<Timeline> {
        let conn = store.connection();
        // Small side tables once, into maps (no correlated subquery per row).
        // Names and citation lists are shared: a million versions carry a few
        // thousand distinct agents, topics and claims.
        let mut cites: HashMap<i64, Cited> = HashMap::new();
        {
            let mut stmt = conn.prepare("SELECT seq, evidence FROM citations ORDER BY seq, pos")?;
            let mut rows = stmt.query([])?;
            let mut current: Option<(i64, Vec<String>)> = None;
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                match &mut current {
                    Some((s, ids)) if *s == seq => ids.push(r.get(1)?),
                    _ => {
                        if let Some((s, ids)) = current.take() {
                            cites.insert(s, ids.into());
                        }
                        current = Some((seq, vec![r.get(1)?]));
                    }
                }
            }
            if let Some((s, ids)) = current {
                cites.insert(s, ids.into());
            }
        }
        let no_cites: Cited = Vec::new().into();
        let cited = |seq: i64| cites.get(&seq).cloned().unwrap_or_else(|| no_cites.clone());
        let mut effects: HashMap<i64, EffectKind> = HashMap::new();
        let mut stmt = conn.prepare("SELECT seq, effect FROM outcomes")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            effects.insert(r.get(0)?, EffectKind::parse(r.get_ref(1)?.as_str()?));
        }
        let mut covering: HashMap<i64, Vec<u64>> = HashMap::new();
        let mut stmt =
            conn.prepare("SELECT seq, version FROM reconfirmations ORDER BY seq, version")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            covering
                .entry(r.get(0)?)
                .or_default()
                .push(r.get::<_, i64>(1)? as u64);
        }

        let mut names = Names::default();
        let mut stmt = conn.prepare(&format!(
            "SELECT {VERSION_COLUMNS}, v.assertion_seq FROM versions v"
        ))?;
        // Sized up front: doubling a million-row Vec copies it and leaves the old
        // block behind in the peak.
        let capacity = |sql: &str| -> rusqlite::Result<usize> {
            Ok(conn
                .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))?
                .unwrap_or(0) as usize)
        };
        let mut beliefs: Vec<Belief> =
            Vec::with_capacity(capacity("SELECT max(id) FROM versions")?);
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            beliefs.push(Belief {
                version: version_named(r, &mut names)?,
                supported_by: cited(r.get(VERSION_COLUMN_COUNT)?),
            });
        }

        let mut stmt = conn.prepare(
            "SELECT seq, id, kind, recorded_at, agent, topic, claim, assertion, source, verifies, state
             FROM events ORDER BY recorded_at, seq",
        )?;
        let mut optional_name = |r: &rusqlite::Row, i: usize| -> rusqlite::Result<Option<Name>> {
            Ok(r.get_ref(i)?.as_str_or_null()?.map(|s| names.get(s)))
        };
        let mut marks: Vec<Mark> = Vec::with_capacity(capacity("SELECT max(seq) FROM events")?);
        // Retractions of an assertion take that assertion's topic; the assertion
        // comes earlier in (recorded_at, seq) order, as validation requires.
        let mut assertion_topic: HashMap<String, Name> = HashMap::new();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let seq: i64 = r.get(0)?;
            let id: String = r.get(1)?;
            let kind = r.get_ref(2)?.as_str()?;
            let effect = effects.get(&seq).copied().unwrap_or(if kind == "evidence" {
                EffectKind::Recorded
            } else {
                EffectKind::Applied
            });
            let mark_kind = match (kind, effect) {
                ("evidence", _) => MarkKind::Evidence,
                ("retract", _) => MarkKind::Retraction,
                ("verify", _) => MarkKind::Verification,
                (_, EffectKind::Reconfirmed) => MarkKind::Reconfirmation,
                _ => MarkKind::Assertion,
            };
            let mut topic = optional_name(r, 5)?;
            if mark_kind == MarkKind::Assertion || mark_kind == MarkKind::Reconfirmation {
                if let Some(t) = &topic {
                    assertion_topic.insert(id.clone(), t.clone());
                }
            } else if topic.is_none()
                && let Some(assertion) = r.get_ref(7)?.as_str_or_null()?
            {
                topic = assertion_topic.get(assertion).cloned();
            }
            let (agent, claim, cites) = match mark_kind {
                MarkKind::Verification => {
                    let judged: Option<String> = r.get(9)?;
                    let cites: Cited = judged.into_iter().collect::<Vec<_>>().into();
                    (optional_name(r, 8)?, optional_name(r, 10)?, cites)
                }
                _ => (optional_name(r, 4)?, optional_name(r, 6)?, cited(seq)),
            };
            marks.push(Mark {
                seq: seq as u64,
                id,
                kind: mark_kind,
                recorded_at: r.get(3)?,
                agent,
                topic,
                claim,
                cites,
                effect,
                covering: covering.remove(&seq).unwrap_or_default(),
            });
        }

        let evidence = evidence(store)?;
        Ok(Timeline::new(
            store.label().to_owned(),
            store.header().clone(),
            marks,
            beliefs,
            evidence,
            super::quality::ledger(store)?,
        ))
    }

    pub fn new(
        label: String,
        header: Header,
        marks: Vec<Mark>,
        beliefs: Vec<Belief>,
        evidence: Vec<EvidenceItem>,
        ledger: Ledger,
    ) -> Self {
        let topic_pos: HashMap<&str, u32> = header
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i as u32))
            .collect();
        let agent_pos: HashMap<&str, u32> = header
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.as_str(), i as u32))
            .collect();
        let position =
            |map: &HashMap<&str, u32>, id: &str| map.get(id).copied().unwrap_or(u32::MAX);
        let topic_of: Vec<u32> = beliefs
            .iter()
            .map(|b| position(&topic_pos, &b.version.topic))
            .collect();
        let agent_of: Vec<u32> = beliefs
            .iter()
            .map(|b| position(&agent_pos, &b.version.agent))
            .collect();
        let mut by_topic = vec![Vec::new(); header.topics.len()];
        for (i, &t) in topic_of.iter().enumerate() {
            if let Some(list) = by_topic.get_mut(t as usize) {
                list.push(i);
            }
        }
        let recorded_key = |&i: &usize| (beliefs[i].version.recorded_at, beliefs[i].version.id);
        for list in &mut by_topic {
            list.sort_by_key(recorded_key);
        }
        let mut by_recorded: Vec<usize> = (0..beliefs.len()).collect();
        by_recorded.sort_by_key(recorded_key);
        let mut by_superseded: Vec<usize> = (0..beliefs.len())
            .filter(|&i| beliefs[i].version.superseded_at != OPEN)
            .collect();
        by_superseded.sort_by_key(|&i| (beliefs[i].version.superseded_at, beliefs[i].version.id));
        let checkpoints = build_checkpoints(&beliefs, &by_recorded);
        let mut times: [Vec<Micros>; 5] = Default::default();
        for m in &marks {
            times[m.kind.index()].push(m.recorded_at);
        }
        let all_times = marks.iter().map(|m| m.recorded_at).collect();
        Timeline {
            label,
            header,
            marks,
            beliefs,
            evidence,
            by_topic,
            topic_of,
            agent_of,
            by_recorded,
            by_superseded,
            checkpoints,
            times,
            all_times,
            ledger,
        }
    }

    /// First and last recorded instants, if the log has events.
    pub fn span(&self) -> Option<(Micros, Micros)> {
        Some((*self.all_times.first()?, *self.all_times.last()?))
    }

    /// Indexes of the beliefs held at `at`, in reading order: topic and agent in
    /// header order, then `valid_from`, `recorded_at`, id.
    pub fn held(&self, at: Micros) -> Vec<usize> {
        let upto = self
            .by_recorded
            .partition_point(|&i| self.beliefs[i].version.recorded_at <= at);
        let c = (upto / CHECKPOINT).min(self.checkpoints.len() - 1);
        let from_checkpoint = self.checkpoints[c].iter().map(|&i| i as usize);
        let since = self.by_recorded[c * CHECKPOINT..upto].iter().copied();
        let mut out: Vec<usize> = from_checkpoint
            .chain(since)
            .filter(|&i| self.beliefs[i].version.held_at(at))
            .collect();
        out.sort_unstable_by_key(|&i| self.reading_key(i));
        out
    }

    fn reading_key(&self, i: usize) -> (u32, u32, Micros, Micros, u64) {
        let v = &self.beliefs[i].version;
        (
            self.topic_of[i],
            self.agent_of[i],
            v.valid.from,
            v.recorded_at,
            v.id,
        )
    }

    /// The header positions of a belief's topic and agent.
    pub fn topic_agent(&self, i: usize) -> (usize, usize) {
        (self.topic_of[i] as usize, self.agent_of[i] as usize)
    }

    /// Indexes of the beliefs closed at exactly `at`, in reading order.
    pub fn closed_at(&self, at: Micros) -> Vec<usize> {
        let key = |&i: &usize| self.beliefs[i].version.superseded_at;
        let from = self.by_superseded.partition_point(|i| key(i) < at);
        let to = self.by_superseded.partition_point(|i| key(i) <= at);
        let mut out = self.by_superseded[from..to].to_vec();
        out.sort_unstable_by_key(|&i| self.reading_key(i));
        out
    }

    /// The same answer as `query::believed` (SQL), from memory, in reading order.
    pub fn believed(&self, at: Micros, about: Option<Micros>, filter: &Filter) -> Vec<&Belief> {
        let keep = |b: &&Belief| {
            let v = &b.version;
            about.is_none_or(|t| v.valid.contains(t))
                && filter.agent.as_ref().is_none_or(|a| **a == *v.agent)
                && filter.topic.as_ref().is_none_or(|t| **t == *v.topic)
        };
        // One topic: scan only its versions recorded so far.
        if let Some(topic) = &filter.topic {
            let Some(t) = self.header.topics.iter().position(|x| &x.id == topic) else {
                return Vec::new();
            };
            let list = &self.by_topic[t];
            let upto = list.partition_point(|&i| self.beliefs[i].version.recorded_at <= at);
            let mut found: Vec<usize> = list[..upto]
                .iter()
                .copied()
                .filter(|&i| self.beliefs[i].version.held_at(at))
                .collect();
            found.sort_unstable_by_key(|&i| self.reading_key(i));
            return found
                .into_iter()
                .map(|i| &self.beliefs[i])
                .filter(keep)
                .collect();
        }
        self.held(at)
            .into_iter()
            .map(|i| &self.beliefs[i])
            .filter(keep)
            .collect()
    }

    /// Every version of one topic (all agents), ordered by `recorded_at`.
    pub fn topic_versions(&self, topic: usize) -> impl Iterator<Item = &Belief> {
        self.by_topic
            .get(topic)
            .into_iter()
            .flatten()
            .map(|&i| &self.beliefs[i])
    }

    /// `answer(agent, topic, at)`: the claim of the held version with the greatest
    /// `valid_from` (ties: the later `recorded_at`).
    pub fn answer(&self, agent: &str, topic: &str, at: Micros) -> Option<&str> {
        let filter = Filter {
            agent: Some(agent.to_owned()),
            topic: Some(topic.to_owned()),
        };
        self.believed(at, None, &filter)
            .into_iter()
            .max_by_key(|b| (b.version.valid.from, b.version.recorded_at, b.version.id))
            .map(|b| &*b.version.claim)
    }

    /// The first event instant strictly after `t`.
    pub fn next_event(&self, t: Micros) -> Option<Micros> {
        let i = self.all_times.partition_point(|&x| x <= t);
        self.all_times.get(i).copied()
    }

    /// The last event instant strictly before `t`.
    pub fn prev_event(&self, t: Micros) -> Option<Micros> {
        let i = self.all_times.partition_point(|&x| x < t);
        i.checked_sub(1).map(|i| self.all_times[i])
    }

    /// The marks recorded at exactly `t`.
    pub fn marks_at(&self, t: Micros) -> &[Mark] {
        let from = self.all_times.partition_point(|&x| x < t);
        let to = self.all_times.partition_point(|&x| x <= t);
        &self.marks[from..to]
    }

    /// The marks of the last event instant at or before `t` (what "just happened").
    pub fn latest_marks(&self, t: Micros) -> &[Mark] {
        let to = self.all_times.partition_point(|&x| x <= t);
        match to.checked_sub(1) {
            Some(last) => self.marks_at(self.all_times[last]),
            None => &[],
        }
    }

    /// How many marks of `kind` fall in `[from, to)`.
    pub fn count(&self, kind: MarkKind, from: Micros, to: Micros) -> usize {
        let times = &self.times[kind.index()];
        times.partition_point(|&x| x < to) - times.partition_point(|&x| x < from)
    }
}

/// Beliefs per checkpoint stride: a stabbing query scans one checkpoint's held
/// set plus at most this many beliefs recorded after it.
const CHECKPOINT: usize = 2048;

/// `checkpoints[c]`: the beliefs among the first `c · CHECKPOINT` (in recorded
/// order) still held just after the last of them was recorded. Any instant at or
/// after that one finds every belief it holds from that prefix in this set.
fn build_checkpoints(beliefs: &[Belief], by_recorded: &[usize]) -> Vec<Vec<u32>> {
    let mut checkpoints = vec![Vec::new()];
    let mut alive: Vec<u32> = Vec::new();
    for chunk in by_recorded.chunks_exact(CHECKPOINT) {
        alive.extend(chunk.iter().map(|&i| i as u32));
        let t = beliefs[chunk[CHECKPOINT - 1]].version.recorded_at;
        alive.retain(|&i| beliefs[i as usize].version.superseded_at > t);
        checkpoints.push(alive.clone());
    }
    checkpoints
}
