//! Belief quality (design.md §4): how fresh a held version is, whether the evidence
//! it cites still holds up, and what the agents answered together.
//!
//! Pure: a [`Ledger`] holds what these need from the log (each topic's
//! half-life and stale window, when assertions and reconfirmations were
//! recorded, every verification) and answers for any recorded time T′.
//! Nothing here changes a version; replay (design.md §3) is untouched.
//!
//! ```text
//!  confidence                          half_life 6h, stale_after 12h
//!   0.80 ┤●━━━━╮                 ●━━━  ● = support: the assertion, a reconfirmation
//!   0.40 ┤      ╰━━━━╮           ┃     effective = 0.80 × 0.5^(age / 6h)
//!   0.20 ┤            ╰━━━━ ⌛ ··┃     ⌛ stale from age ≥ 12h until the next support
//!        └──────┬─────┬─────┬────┴──▶ recorded time
//!              +6h  +12h  +18h
//! ```

use crate::model::{
    Cardinality, CloseKind, Dataset, EventBody, Header, Name, VerifyState, Version, permille,
};
use crate::time::Micros;
use std::collections::HashMap;

/// One verification of an evidence item, as the log recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The verification's id.
    pub id: String,
    /// The state it gave.
    pub state: VerifyState,
    /// When it was recorded: in force from then.
    pub since: Micros,
    /// Its seq (orders verdicts recorded at one instant).
    pub seq: u64,
    /// Who judged; empty when the log does not say.
    pub by: String,
    /// Why, when the log says.
    pub note: Option<String>,
}

impl Verdict {
    /// The verdict in a cell: `rejected by reviewer (V2)`.
    pub fn said(&self) -> String {
        match self.by.is_empty() {
            true => format!("{} ({})", self.state.as_str(), self.id),
            false => format!("{} by {} ({})", self.state.as_str(), self.by, self.id),
        }
    }

    /// Its note on one line, after `: ` (empty without one).
    pub fn note_said(&self) -> String {
        self.note
            .as_deref()
            .map(|n| format!(": {}", crate::text::one_line(n)))
            .unwrap_or_default()
    }
}

/// How fresh a version is at T′ (or, in a history, how it ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Freshness {
    /// Age below the topic's `stale_after`.
    Current,
    /// Held `stale_after` or longer without support.
    Stale,
    /// The topic has no `stale_after`.
    Unknown,
    /// No longer held: a later assertion replaced it.
    Superseded,
    /// No longer held: a retraction withdrew it.
    Retracted,
}

impl Freshness {
    /// The freshness as the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Freshness::Current => "current",
            Freshness::Stale => "stale",
            Freshness::Unknown => "unknown",
            Freshness::Superseded => "superseded",
            Freshness::Retracted => "retracted",
        }
    }
}

/// Whether the evidence a version cites still holds up at T′.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Support {
    /// No cited item is rejected, stale or conflicted (or it cites none).
    Ok,
    /// It cites evidence and every cited item is rejected or stale.
    Unsupported,
    /// A cited item is conflicted.
    Contested,
}

impl Support {
    /// The support as the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Ok => "ok",
            Support::Unsupported => "unsupported",
            Support::Contested => "contested",
        }
    }
}

/// A version's quality at one recorded time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quality {
    /// When the version's assertion, or a later assertion covering it, was last recorded.
    pub last_support: Micros,
    /// The stated confidence halved once per `half_life` since `last_support`.
    pub effective_confidence: f64,
    /// Whether it has gone stale.
    pub freshness: Freshness,
    /// Whether its evidence still holds up.
    pub support: Support,
}

/// Decay and staleness settings of one topic (µs; `None` = not set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aging {
    /// Confidence halves every this many µs without support.
    pub half_life: Option<i64>,
    /// Held this many µs without support = stale.
    pub stale_after: Option<i64>,
}

/// What quality needs from a log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    aging: HashMap<String, Aging>,
    /// Per evidence item: its verdicts in replay order.
    verdicts: HashMap<String, Vec<Verdict>>,
    /// Per assertion (of those with any): its seq and the fields an importer
    /// assumed.
    assumed: HashMap<String, (u64, Vec<crate::model::Assumed>)>,
    /// The highest seq added (below the first forgotten, [`Ledger::forget`]
    /// has nothing to do).
    last_seq: Option<u64>,
}

impl Ledger {
    /// A ledger of `header`'s topics' aging, with no verdicts yet.
    pub fn new(header: &Header) -> Ledger {
        // Only topics that age: the rest read the default (a store of a
        // thousand topics would otherwise copy every id for every query).
        let aging = header
            .topics
            .iter()
            .filter(|t| t.half_life.is_some() || t.stale_after.is_some())
            .map(|t| {
                let aging = Aging {
                    half_life: t.half_life,
                    stale_after: t.stale_after,
                };
                (t.id.clone(), aging)
            })
            .collect();
        Ledger {
            aging,
            ..Ledger::default()
        }
    }

    /// Everything from a whole log (its verifications; a version carries its
    /// own support times).
    pub fn of_log(dataset: &Dataset) -> Ledger {
        let mut ledger = Ledger::new(&dataset.header);
        for e in &dataset.events {
            match &e.body {
                EventBody::Verify(v) => ledger.add_verification(v.clone(), e.seq),
                EventBody::Believe(a) if !a.assumed.is_empty() => {
                    ledger.add_assumed(&a.id, a.assumed.clone(), e.seq);
                }
                _ => {}
            }
        }
        ledger.seal();
        ledger
    }

    /// Records that an importer assumed `fields` of assertion `assertion`,
    /// the log's event `seq`.
    pub fn add_assumed(&mut self, assertion: &str, fields: Vec<crate::model::Assumed>, seq: u64) {
        self.saw(seq);
        self.assumed.insert(assertion.to_owned(), (seq, fields));
    }

    /// The fields an importer assumed of `assertion` (and so of every version
    /// descended from it), in their order; empty when none.
    pub fn assumed(&self, assertion: &str) -> &[crate::model::Assumed] {
        self.assumed
            .get(assertion)
            .map_or(&[], |(_, l)| l.as_slice())
    }

    /// How many assertions have each assumed field (for provenance).
    pub fn assumed_counts(&self) -> Vec<(crate::model::Assumed, usize)> {
        crate::model::Assumed::ALL
            .into_iter()
            .map(|f| {
                let n = self.assumed.values().filter(|(_, l)| l.contains(&f));
                (f, n.count())
            })
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Verification `v`, replayed at position `seq` (its place among the
    /// verdicts recorded at the same instant); call [`Ledger::seal`] after.
    pub fn add_verification(&mut self, v: crate::model::Verification, seq: u64) {
        let verdict = Verdict {
            id: v.id,
            state: v.state,
            since: v.recorded_at,
            seq,
            by: v.by,
            note: v.note,
        };
        self.add_verdict(&v.evidence, verdict);
    }

    /// Adds a verdict on `evidence` (call [`Ledger::seal`] after the last).
    pub fn add_verdict(&mut self, evidence: &str, verdict: Verdict) {
        self.saw(verdict.seq);
        self.verdicts
            .entry(evidence.to_owned())
            .or_default()
            .push(verdict);
    }

    fn saw(&mut self, seq: u64) {
        self.last_seq = self.last_seq.max(Some(seq));
    }

    /// Forgets what the log's events from seq `from` on, and those at the
    /// seqs `only` lists (sorted), added: the log was written again there,
    /// and what a following reader adds back is what it holds now. Nothing
    /// to do when every event added came before them.
    pub fn forget(&mut self, from: u64, only: &[u64]) {
        let first = only.first().map_or(from, |&s| s.min(from));
        if self.last_seq.is_none_or(|last| last < first) {
            return;
        }
        let gone = |seq: u64| seq >= from || only.binary_search(&seq).is_ok();
        self.assumed.retain(|_, (seq, _)| !gone(*seq));
        self.verdicts.retain(|_, list| {
            list.retain(|v| !gone(v.seq));
            !list.is_empty()
        });
        let assumed = self.assumed.values().map(|(seq, _)| *seq);
        let judged = self.verdicts.values().flatten().map(|v| v.seq);
        self.last_seq = assumed.chain(judged).max();
    }

    /// Puts verdicts in replay order `(recorded_at, seq)`; call after adding.
    pub fn seal(&mut self) {
        for list in self.verdicts.values_mut() {
            list.sort_by_key(|v| (v.since, v.seq));
        }
    }

    /// The aging settings of `topic` (none set, when it has none).
    pub fn aging(&self, topic: &str) -> Aging {
        self.aging.get(topic).copied().unwrap_or_default()
    }

    /// The verdict in force on `evidence` at `at` (`None`: still a candidate).
    pub fn verdict(&self, evidence: &str, at: Micros) -> Option<&Verdict> {
        let list = self.verdicts.get(evidence)?;
        let n = list.partition_point(|v| v.since <= at);
        n.checked_sub(1).map(|i| &list[i])
    }

    /// Every verdict on `evidence` recorded at or before `at`, oldest first.
    pub fn verdicts(&self, evidence: &str, at: Micros) -> &[Verdict] {
        let list = self.verdicts.get(evidence).map_or(&[][..], Vec::as_slice);
        &list[..list.partition_point(|v| v.since <= at)]
    }

    /// The evidence ids with at least one verdict, sorted.
    pub fn verified_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.verdicts.keys().map(String::as_str).collect();
        ids.sort_unstable();
        ids
    }

    /// Whether some verdict has the id `id`.
    pub fn has_verdict(&self, id: &str) -> bool {
        self.verdicts.values().flatten().any(|v| v.id == id)
    }

    /// The state of `evidence` at `at`: its verdict in force's, else candidate.
    pub fn state(&self, evidence: &str, at: Micros) -> VerifyState {
        self.verdict(evidence, at)
            .map_or(VerifyState::Candidate, |v| v.state)
    }

    /// Evidence items whose state at `at` is `rejected`, with the verdict.
    pub fn rejected(&self, at: Micros) -> Vec<(&str, &Verdict)> {
        let mut out: Vec<(&str, &Verdict)> = self
            .verdicts
            .keys()
            .filter_map(|e| {
                let v = self.verdict(e, at)?;
                (v.state == VerifyState::Rejected).then_some((e.as_str(), v))
            })
            .collect();
        out.sort_by_key(|(_, v)| (v.since, v.seq));
        out
    }

    /// The support of a version citing `cited`, at `at`.
    pub fn support(&self, cited: &[Name], at: Micros) -> Support {
        if cited.is_empty() {
            return Support::Ok;
        }
        let states: Vec<VerifyState> = cited.iter().map(|e| self.state(e, at)).collect();
        if states.iter().all(|s| s.withdraws_support()) {
            Support::Unsupported
        } else if states.contains(&VerifyState::Conflicted) {
            Support::Contested
        } else {
            Support::Ok
        }
    }

    /// The quality at `at` of `v` (held at `at`), citing `cited`.
    pub fn quality(&self, v: &Version, cited: &[Name], at: Micros) -> Quality {
        let aging = self.aging(&v.topic);
        let last_support = v.last_support(at);
        let age = at.saturating_sub(last_support).max(0);
        Quality {
            last_support,
            effective_confidence: decay(v.confidence, age, aging.half_life),
            freshness: match aging.stale_after {
                None => Freshness::Unknown,
                Some(window) if age >= window => Freshness::Stale,
                Some(_) => Freshness::Current,
            },
            support: self.support(cited, at),
        }
    }

    /// The quality shown in a history: a closed version as it was when it was
    /// closed (its freshness says how), a held one at `end` (the log's end).
    pub fn quality_in_history(&self, v: &Version, cited: &[Name], end: Micros) -> Quality {
        match &v.closed {
            None => self.quality(v, cited, end.max(v.recorded_at)),
            Some(c) => Quality {
                freshness: match c.kind {
                    CloseKind::Superseded => Freshness::Superseded,
                    CloseKind::Retracted => Freshness::Retracted,
                },
                ..self.quality(v, cited, v.superseded_at)
            },
        }
    }
}

/// `confidence × 0.5^(age / half_life)`, rounded to per-mille (design.md §4, §4).
pub fn decay(confidence: f64, age: i64, half_life: Option<i64>) -> f64 {
    match half_life {
        None => confidence,
        Some(h) => {
            let factor = 0.5f64.powf(age as f64 / h as f64);
            permille(confidence * factor) as f64 / 1000.0
        }
    }
}

/// What the agents answered on a topic at (T′, T).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerStatus {
    /// Every agent holding a belief holds the same claim(s).
    Answered,
    /// Agents differ: each one's claim is listed, none picked.
    Conflicted,
    /// No agent holds a belief.
    None,
}

impl AnswerStatus {
    /// The status as the JSON outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerStatus::Answered => "answered",
            AnswerStatus::Conflicted => "conflicted",
            AnswerStatus::None => "none",
        }
    }
}

/// One agent's claim in an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentClaim {
    /// The agent.
    pub agent: Name,
    /// What it holds.
    pub claim: Name,
    /// Its confidence decayed to the instant asked about.
    pub effective_confidence: f64,
    /// Whether it has gone stale.
    pub freshness: Freshness,
    /// Whether its evidence still holds up.
    pub support: Support,
    /// The assertion behind it.
    pub assertion: Name,
}

/// What the agents answered on a topic, with each one's claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Answered, conflicted, or none.
    pub status: AnswerStatus,
    /// The claims every agent agrees on (one for a `cardinality: one` topic).
    pub claims: Vec<Name>,
    /// Each agent's claim, in header order.
    pub agents: Vec<AgentClaim>,
}

impl Answer {
    /// The claim when the answer is one claim.
    pub fn claim(&self) -> Option<&str> {
        match self.claims.as_slice() {
            [one] if self.status == AnswerStatus::Answered => Some(one),
            _ => None,
        }
    }
}

/// A version with the evidence it cites.
type Cited<'a> = (&'a Version, &'a [Name]);

/// The answer across agents (design.md §4) from `held`, the versions of one topic
/// held at `at` (each with its citations), in reading order (agents in
/// dataset order). With `about`, each agent's claims about that valid instant;
/// without, each agent's working answer (design.md §3: the held version with the
/// greatest `valid_from`, ties the later `recorded_at`) — for a `many` topic,
/// whose working answer is a set, every claim the agent holds.
pub fn answer<'a>(
    ledger: &Ledger,
    held: impl IntoIterator<Item = (&'a Version, &'a [Name])>,
    cardinality: Cardinality,
    at: Micros,
    about: Option<Micros>,
) -> Answer {
    let mut by_agent: Vec<(Name, Vec<Cited<'a>>)> = Vec::new();
    for (v, cited) in held {
        if about.is_some_and(|t| !v.valid.contains(t)) {
            continue;
        }
        match by_agent.iter_mut().find(|(a, _)| *a == v.agent) {
            Some((_, list)) => list.push((v, cited)),
            None => by_agent.push((v.agent.clone(), vec![(v, cited)])),
        }
    }
    let mut agents = Vec::new();
    let mut sets: Vec<Vec<Name>> = Vec::new();
    for (_, mut list) in by_agent {
        if about.is_none() && cardinality == Cardinality::One {
            // The working answer: one version.
            list.sort_by_key(|(v, _)| (v.valid.from, v.recorded_at, v.id));
            list = list.split_off(list.len() - 1);
        }
        // One entry per claim: its working version (design.md §3: the greatest
        // `valid_from`, ties the later `recorded_at`), listed where the claim
        // first appears.
        let mut picked: Vec<Cited<'a>> = Vec::new();
        for (v, cited) in list {
            let key = |v: &Version| (v.valid.from, v.recorded_at, v.id);
            match picked.iter_mut().find(|(p, _)| p.claim == v.claim) {
                Some(slot) if key(v) > key(slot.0) => *slot = (v, cited),
                Some(_) => {}
                None => picked.push((v, cited)),
            }
        }
        let mut claims: Vec<Name> = Vec::new();
        for (v, cited) in picked {
            claims.push(v.claim.clone());
            let q = ledger.quality(v, cited, at);
            agents.push(AgentClaim {
                agent: v.agent.clone(),
                claim: v.claim.clone(),
                effective_confidence: q.effective_confidence,
                freshness: q.freshness,
                support: q.support,
                assertion: v.assertion.clone(),
            });
        }
        claims.sort();
        sets.push(claims);
    }
    let status = match sets.as_slice() {
        [] => AnswerStatus::None,
        [first, rest @ ..] if rest.iter().all(|s| s == first) => AnswerStatus::Answered,
        _ => AnswerStatus::Conflicted,
    };
    let claims = match status {
        AnswerStatus::Answered => sets.swap_remove(0),
        _ => Vec::new(),
    };
    Answer {
        status,
        claims,
        agents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Format, read_str};
    use crate::time::parse;

    /// Topic `t` decays by half every 6 h and goes stale after 12 h.
    const LOG: &str = r#"
asof: 1
incident: {id: q}
agents: [{id: a}, {id: b}]
topics:
  - {id: t, half_life: 6h, stale_after: 12h}
  - {id: plain}
events:
  - evidence: {id: E1, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T00:00:00Z}
  - evidence: {id: E2, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T00:00:00Z}
  - believe: {id: B1, agent: a, topic: t, claim: x, confidence: 0.8, valid_from: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T00:00:00Z, supported_by: [E1, E2]}
  - believe: {id: B2, agent: a, topic: plain, claim: y, confidence: 0.5, valid_from: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T00:00:00Z, supported_by: [E1]}
  - believe: {id: B3, agent: a, topic: t, claim: x, confidence: 0.8, valid_from: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T20:00:00Z, supported_by: [E2]}
  - verify: {id: V1, evidence: E1, state: conflicted, by: r, recorded_at: 2026-01-01T02:00:00Z}
  - verify: {id: V2, evidence: E1, state: rejected, by: r, recorded_at: 2026-01-01T04:00:00Z}
  - verify: {id: V3, evidence: E1, state: direct-read, by: r, recorded_at: 2026-01-01T04:00:00Z, note: second at the same instant}
  - verify: {id: V4, evidence: E1, state: rejected, by: r, recorded_at: 2026-01-01T05:00:00Z}
  - verify: {id: V5, evidence: E2, state: stale, by: r, recorded_at: 2026-01-01T06:00:00Z}
"#;

    fn at(text: &str) -> Micros {
        parse(text).expect("time")
    }

    fn ledger() -> (Ledger, crate::engine::Replay) {
        let parsed = read_str("q.yaml", Format::Yaml, LOG).expect("valid");
        let replay = crate::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
        (Ledger::of_log(&parsed.dataset), replay)
    }

    fn version<'a>(replay: &'a crate::engine::Replay, topic: &str) -> &'a Version {
        replay
            .versions
            .iter()
            .find(|v| &*v.topic == topic)
            .expect("a version")
    }

    /// A ledger that forgets what the events from a seq on (and at some
    /// seqs before) added is the ledger of the log without them: what a
    /// following reader keeps before it adds back what the log holds now.
    #[test]
    fn a_ledger_forgets_exactly_the_events_it_is_told() {
        let text = LOG.replace(
            "recorded_at: 2026-01-01T20:00:00Z, supported_by: [E2]}",
            "recorded_at: 2026-01-01T20:00:00Z, supported_by: [E2], assumed: [agent]}",
        );
        let parsed = read_str("q.yaml", Format::Yaml, &text).expect("valid");
        let whole = Ledger::of_log(&parsed.dataset);
        assert_eq!(whole.assumed("B3"), [crate::model::Assumed::Agent]);
        let without = |gone: &dyn Fn(u64) -> bool| {
            let mut dataset = parsed.dataset.clone();
            dataset.events.retain(|e| !gone(e.seq));
            Ledger::of_log(&dataset)
        };
        let last = parsed.dataset.events.len() as u64;
        for from in 1..=last + 1 {
            for only in [vec![], vec![1], vec![5], vec![6, 8], vec![3, 5, 9]] {
                let only: Vec<u64> = only.into_iter().filter(|&s| s < from).collect();
                let mut forgot = whole.clone();
                forgot.forget(from, &only);
                let expected = without(&|seq| seq >= from || only.contains(&seq));
                assert_eq!(forgot, expected, "from {from}, only {only:?}");
            }
        }
    }

    #[test]
    fn verification_is_candidate_before_any_verify_then_the_latest_file_order_on_ties() {
        let (l, _) = ledger();
        assert_eq!(
            l.state("E1", at("2026-01-01T01:59:59Z")),
            VerifyState::Candidate
        );
        assert!(l.verdict("E1", at("2026-01-01T01:00:00Z")).is_none());
        assert_eq!(
            l.state("E1", at("2026-01-01T02:00:00Z")),
            VerifyState::Conflicted
        );
        // V2 and V3 share 04:00: the later in the file wins.
        let v = l
            .verdict("E1", at("2026-01-01T04:00:00Z"))
            .expect("verdict");
        assert_eq!((v.id.as_str(), v.state), ("V3", VerifyState::DirectRead));
        assert_eq!(
            l.verdicts("E1", at("2026-01-01T04:00:00Z")).len(),
            3,
            "history kept"
        );
        assert_eq!(
            l.state("E2", at("2026-01-01T05:00:00Z")),
            VerifyState::Candidate
        );
    }

    #[test]
    fn support_needs_every_cited_item_rejected_or_stale() {
        let (l, _) = ledger();
        let both = [Name::from("E1"), Name::from("E2")];
        // 05:00: E1 rejected, E2 still a candidate: one of two is not enough.
        assert_eq!(l.support(&both, at("2026-01-01T05:00:00Z")), Support::Ok);
        // 06:00: E2 stale too: every cited item withdrawn.
        assert_eq!(
            l.support(&both, at("2026-01-01T06:00:00Z")),
            Support::Unsupported
        );
        // 02:00: E1 conflicted.
        assert_eq!(
            l.support(&both, at("2026-01-01T02:00:00Z")),
            Support::Contested
        );
        assert_eq!(
            l.support(&[], at("2026-01-01T06:00:00Z")),
            Support::Ok,
            "cites nothing"
        );
    }

    #[test]
    fn freshness_turns_stale_at_exactly_stale_after_and_a_reconfirmation_resets_it() {
        let (l, replay) = ledger();
        let v = version(&replay, "t");
        let cited = [Name::from("E1")];
        let just_before = l.quality(v, &cited, at("2026-01-01T11:59:59Z"));
        assert_eq!(just_before.freshness, Freshness::Current);
        let exactly = l.quality(v, &cited, at("2026-01-01T12:00:00Z"));
        assert_eq!(
            exactly.freshness,
            Freshness::Stale,
            "age = stale_after is stale"
        );
        assert_eq!(exactly.effective_confidence, 0.2, "0.8 × 0.5^(12h/6h)");
        // B3 reconfirms B1's version at 20:00: the age starts again.
        let after = l.quality(v, &cited, at("2026-01-01T21:00:00Z"));
        assert_eq!(after.last_support, at("2026-01-01T20:00:00Z"));
        assert_eq!(after.freshness, Freshness::Current);
        assert_eq!(
            after.effective_confidence,
            decay(0.8, 3_600_000_000, Some(21_600_000_000))
        );
        // A topic without half_life or stale_after: unchanged and unknown.
        let plain = l.quality(
            version(&replay, "plain"),
            &cited,
            at("2026-02-01T00:00:00Z"),
        );
        assert_eq!(
            (plain.effective_confidence, plain.freshness),
            (0.5, Freshness::Unknown)
        );
    }

    #[test]
    fn decay_rounds_to_per_mille() {
        assert_eq!(decay(0.7, 3_600_000_000, Some(3 * 3_600_000_000)), 0.556);
        assert_eq!(decay(0.7, 0, Some(1)), 0.7);
        assert_eq!(decay(0.7, 123, None), 0.7);
    }

    #[test]
    fn answer_agrees_conflicts_or_is_silent_and_never_picks() {
        let (l, replay) = ledger();
        let held: Vec<(&Version, &[Name])> = replay
            .versions
            .iter()
            .filter(|v| &*v.topic == "t")
            .map(|v| (v, &[][..]))
            .collect();
        let t = at("2026-01-01T21:00:00Z");
        // Only agent a holds a belief; b is silent: answered.
        let one = answer(&l, held.clone(), Cardinality::One, t, None);
        assert_eq!(one.status, AnswerStatus::Answered);
        assert_eq!(one.claim(), Some("x"));
        assert_eq!(one.agents.len(), 1, "the silent agent is not listed");
        // No one: none.
        let none = answer(&l, Vec::new(), Cardinality::One, t, None);
        assert_eq!((none.status, none.claim()), (AnswerStatus::None, None));
        // b holds another claim: conflicted, both listed, no claim picked.
        let mut other = held[0].0.clone();
        other.agent = "b".into();
        other.claim = "z".into();
        let mut both = held.clone();
        both.push((&other, &[][..]));
        let c = answer(&l, both, Cardinality::One, t, None);
        assert_eq!(c.status, AnswerStatus::Conflicted);
        assert_eq!(c.claim(), None);
        let claims: Vec<(&str, &str)> = c.agents.iter().map(|a| (&*a.agent, &*a.claim)).collect();
        assert_eq!(claims, vec![("a", "x"), ("b", "z")]);
        // About a valid instant none of them covers: none.
        let before = answer(
            &l,
            held,
            Cardinality::One,
            t,
            Some(at("2025-12-31T00:00:00Z")),
        );
        assert_eq!(before.status, AnswerStatus::None);
    }

    /// A `many` topic: an agent holding one claim in two versions is listed
    /// once, with its working version's quality (the later `valid_from`),
    /// not whichever version came first.
    #[test]
    fn a_many_topics_entry_is_the_claims_working_version() {
        let (l, replay) = ledger();
        let base = version(&replay, "t");
        let mut early = base.clone();
        early.valid =
            crate::time::Interval::new(at("2026-01-01T00:00:00Z"), at("2026-01-01T10:00:00Z"));
        early.id = 100;
        let mut late = base.clone();
        late.valid = crate::time::Interval::new(at("2026-01-01T10:00:00Z"), crate::time::OPEN);
        late.recorded_at = at("2026-01-01T00:00:00Z");
        late.id = 101;
        let rejected = [Name::from("E1")];
        let fine = [Name::from("E2")];
        let t = at("2026-01-01T05:00:00Z"); // E1 rejected, E2 a candidate
        for held in [
            vec![(&early, &rejected[..]), (&late, &fine[..])],
            vec![(&late, &fine[..]), (&early, &rejected[..])],
        ] {
            let a = answer(&l, held, Cardinality::Many, t, None);
            assert_eq!(a.agents.len(), 1);
            assert_eq!(
                a.agents[0].support,
                Support::Ok,
                "the working version cites E2"
            );
        }
    }
}
