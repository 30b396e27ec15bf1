//! A whole store read once into memory, indexed for scrubbing: the TUI's data.
//!
//! `believed` here answers exactly what the SQL `query::believed` answers (both
//! use [`Version::held_at`] and the half-open valid interval); a test holds them
//! to it on the demo and on generated data. Scrubbing a million-event store then
//! costs a binary search and a scan of the held rows, with no SQL per step.

use super::{Belief, EvidenceItem, Filter, evidence};
use crate::model::Header;
use crate::store::Store;
use crate::store::read::{VERSION_COLUMNS, version};
use crate::time::Micros;

/// What kind of mark an event leaves on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    Evidence,
    Assertion,
    Reconfirmation,
    Retraction,
}

impl MarkKind {
    pub const ALL: [MarkKind; 4] = [
        MarkKind::Evidence,
        MarkKind::Assertion,
        MarkKind::Reconfirmation,
        MarkKind::Retraction,
    ];

    pub fn index(self) -> usize {
        match self {
            MarkKind::Evidence => 0,
            MarkKind::Assertion => 1,
            MarkKind::Reconfirmation => 2,
            MarkKind::Retraction => 3,
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
    pub agent: Option<String>,
    pub topic: Option<String>,
    pub claim: Option<String>,
    pub cites: Vec<String>,
    /// The replay outcome (`applied`, `reconfirmed`, `zero_width`, ...).
    pub effect: String,
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
    /// Per mark kind: sorted recorded instants, for counting marks in a range.
    times: [Vec<Micros>; 4],
    /// Every mark's instant, sorted, for stepping between events.
    all_times: Vec<Micros>,
}

impl Timeline {
    /// Reads the whole store.
    pub fn load(store: &Store) -> rusqlite::Result<Timeline> {
        let conn = store.connection();
        let mut stmt = conn.prepare(&format!(
            "SELECT {VERSION_COLUMNS},
                (SELECT group_concat(c.evidence, char(31)) FROM citations c WHERE c.seq = v.assertion_seq)
             FROM versions v ORDER BY v.id"
        ))?;
        let beliefs: Vec<Belief> = stmt
            .query_map([], |r| {
                Ok(Belief {
                    version: version(r)?,
                    supported_by: super::split(r.get(17)?),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;

        let mut stmt = conn.prepare(
            "SELECT e.seq, e.id, e.kind, e.recorded_at, e.agent,
                COALESCE(e.topic, (SELECT a.topic FROM events a WHERE a.id = e.assertion)), e.claim,
                (SELECT group_concat(c.evidence, char(31)) FROM citations c WHERE c.seq = e.seq),
                COALESCE(o.effect, ''),
                (SELECT group_concat(r.version, ',') FROM reconfirmations r WHERE r.seq = e.seq)
             FROM events e LEFT JOIN outcomes o ON o.seq = e.seq
             ORDER BY e.recorded_at, e.seq",
        )?;
        let marks: Vec<Mark> = stmt
            .query_map([], |r| {
                let kind: String = r.get(2)?;
                let effect: String = r.get(8)?;
                let kind = match (kind.as_str(), effect.as_str()) {
                    ("evidence", _) => MarkKind::Evidence,
                    ("retract", _) => MarkKind::Retraction,
                    (_, "reconfirmed") => MarkKind::Reconfirmation,
                    _ => MarkKind::Assertion,
                };
                let covering: Option<String> = r.get(9)?;
                Ok(Mark {
                    seq: r.get::<_, i64>(0)? as u64,
                    id: r.get(1)?,
                    kind,
                    recorded_at: r.get(3)?,
                    agent: r.get(4)?,
                    topic: r.get(5)?,
                    claim: r.get(6)?,
                    cites: super::split(r.get(7)?),
                    effect,
                    covering: covering
                        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
                        .unwrap_or_default(),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let evidence = evidence(store)?;
        Ok(Timeline::new(
            store.label().to_owned(),
            store.header().clone(),
            marks,
            beliefs,
            evidence,
        ))
    }

    pub fn new(
        label: String,
        header: Header,
        marks: Vec<Mark>,
        beliefs: Vec<Belief>,
        evidence: Vec<EvidenceItem>,
    ) -> Self {
        let mut by_topic = vec![Vec::new(); header.topics.len()];
        for (i, b) in beliefs.iter().enumerate() {
            if let Some(t) = header.topics.iter().position(|t| t.id == b.version.topic) {
                by_topic[t].push(i);
            }
        }
        for list in &mut by_topic {
            list.sort_by_key(|&i| (beliefs[i].version.recorded_at, beliefs[i].version.id));
        }
        let mut times: [Vec<Micros>; 4] = Default::default();
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
            times,
            all_times,
        }
    }

    /// First and last recorded instants, if the log has events.
    pub fn span(&self) -> Option<(Micros, Micros)> {
        Some((*self.all_times.first()?, *self.all_times.last()?))
    }

    /// The same answer as `query::believed` (SQL), from memory, in reading order.
    pub fn believed(&self, at: Micros, about: Option<Micros>, filter: &Filter) -> Vec<&Belief> {
        let mut out = Vec::new();
        for (t, topic) in self.header.topics.iter().enumerate() {
            if filter.topic.as_ref().is_some_and(|f| f != &topic.id) {
                continue;
            }
            let list = &self.by_topic[t];
            let upto = list.partition_point(|&i| self.beliefs[i].version.recorded_at <= at);
            for &i in &list[..upto] {
                let b = &self.beliefs[i];
                let v = &b.version;
                if v.held_at(at)
                    && about.is_none_or(|t| v.valid.contains(t))
                    && filter.agent.as_ref().is_none_or(|a| a == &v.agent)
                {
                    out.push(b);
                }
            }
        }
        let agent_rank = |id: &str| {
            self.header
                .agents
                .iter()
                .position(|a| a.id == id)
                .unwrap_or(usize::MAX)
        };
        let topic_rank = |id: &str| {
            self.header
                .topics
                .iter()
                .position(|t| t.id == id)
                .unwrap_or(usize::MAX)
        };
        out.sort_by_key(|b| {
            let v = &b.version;
            (
                topic_rank(&v.topic),
                agent_rank(&v.agent),
                v.valid.from,
                v.recorded_at,
                v.id,
            )
        });
        out
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
            .map(|b| b.version.claim.as_str())
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
