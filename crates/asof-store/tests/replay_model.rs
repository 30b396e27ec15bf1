//! Property tests: the replay engine against a small reference model written
//! straight from the words of design.md §3, plus the invariants of §3 on random logs.
//!
//! The reference model is deliberately naive: one flat list of versions, scopes
//! found by scanning it, and "V′ minus the covered parts" computed from
//! elementary segments instead of interval subtraction.

use asof_core::engine::{self, Effect};
use asof_core::model::{
    Agent, Assertion, Cardinality, Dataset, Event, EventBody, Evidence, Header, Incident,
    RetractTarget, Retraction, Topic, Verification, VerifyState, permille,
};
use asof_core::time::{Interval, OPEN};
use asof_store::query::{self, Filter, quality};
use asof_store::store::Store;
use proptest::prelude::*;

const TOPICS: [(&str, Cardinality); 3] = [
    ("t1", Cardinality::One),
    ("t2", Cardinality::One),
    ("m", Cardinality::Many),
];
const AGENTS: [&str; 2] = ["a", "b"];
const CLAIMS: [&str; 3] = ["x", "y", "z"];
const CONFIDENCES: [f64; 3] = [0.5, 0.8, 1.0];

fn header() -> Header {
    Header {
        incident: Incident {
            id: "prop".into(),
            title: String::new(),
        },
        agents: AGENTS
            .iter()
            .map(|a| Agent {
                id: (*a).into(),
                name: (*a).into(),
            })
            .collect(),
        topics: TOPICS
            .iter()
            .map(|(id, cardinality)| Topic {
                id: (*id).into(),
                question: String::new(),
                cardinality: *cardinality,
                resolution: None,
                half_life: None,
                stale_after: None,
            })
            .collect(),
    }
}

fn cardinality(topic: &str) -> Cardinality {
    TOPICS
        .iter()
        .find(|(id, _)| *id == topic)
        .map_or(Cardinality::One, |(_, c)| *c)
}

// ---------------------------------------------------------------------------
// The reference model.

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    agent: String,
    topic: String,
    claim: String,
    confidence: i64,
    from: i64,
    to: i64,
    recorded_at: i64,
    superseded_at: i64,
    assertion: String,
    split: bool,
    closed: Option<(String, bool)>, // (event, retracted?)
    clipped_by: Option<String>,
}

fn same_scope(v: &Row, agent: &str, topic: &str, claim: &str) -> bool {
    v.agent == agent
        && v.topic == topic
        && (cardinality(topic) == Cardinality::One || v.claim == claim)
}

fn overlaps(a: (i64, i64), b: (i64, i64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Parts of `x` outside `cut`.
fn outside(x: (i64, i64), cut: (i64, i64)) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    if x.0 < cut.0 {
        out.push((x.0, x.1.min(cut.0)));
    }
    if cut.1 < x.1 {
        out.push((x.0.max(cut.1), x.1));
    }
    out
}

struct Model {
    rows: Vec<Row>,
    no_match: Vec<u64>,
    reconfirmed: Vec<u64>,
    /// Every stored row with its support times (design.md §4): its assertion's
    /// recorded time and each reconfirmation logged against it or against a
    /// stored row it was split from.
    supports: Vec<(Row, Vec<i64>)>,
}

fn split_piece(x: &Row, piece: (i64, i64), r: i64) -> Row {
    Row {
        from: piece.0,
        to: piece.1,
        recorded_at: r,
        superseded_at: OPEN,
        split: true,
        closed: None,
        clipped_by: if piece.1 == x.to {
            x.clipped_by.clone()
        } else {
            None
        },
        ..x.clone()
    }
}

fn reference(events: &[Event]) -> Model {
    let mut order: Vec<&Event> = events.iter().collect();
    order.sort_by_key(|e| e.recorded_at()); // stable: equal times keep file order
    let mut m = Model {
        rows: Vec::new(),
        no_match: Vec::new(),
        reconfirmed: Vec::new(),
        supports: Vec::new(),
    };
    // Parallel to m.rows: the row each was split from.
    let mut parent: Vec<Option<usize>> = Vec::new();
    // (recorded time, row) of each reconfirmation.
    let mut reconfs: Vec<(i64, usize)> = Vec::new();
    let mut asserted_at: std::collections::HashMap<String, i64> = Default::default();
    for event in order {
        debug_assert_eq!(parent.len(), m.rows.len());
        match &event.body {
            EventBody::Evidence(_) | EventBody::Verify(_) => {}
            EventBody::Believe(a) => {
                let r = a.recorded_at;
                asserted_at.insert(a.id.clone(), r);
                let held: Vec<usize> = (0..m.rows.len())
                    .filter(|&i| {
                        m.rows[i].superseded_at == OPEN
                            && same_scope(&m.rows[i], &a.agent, &a.topic, &a.claim)
                    })
                    .collect();
                // 1. clip
                let (vf, mut vt) = (a.valid.from, a.valid.to);
                let mut clipped_by = None;
                if vt == OPEN && a.clip {
                    // Amended 2026-12-05: a later-starting row of the same
                    // claim and confidence does not clip. Amended 2026-12-06:
                    // nor does one held at a lower confidence than the
                    // assertion's (the seed memory's `old_conf >= confidence`).
                    let later = held
                        .iter()
                        .filter(|&&i| {
                            m.rows[i].from > vf
                                && m.rows[i].confidence >= permille(a.confidence)
                                && (m.rows[i].claim != a.claim
                                    || m.rows[i].confidence != permille(a.confidence))
                        })
                        .min_by_key(|&&i| m.rows[i].from);
                    if let Some(&i) = later {
                        vt = m.rows[i].from;
                        clipped_by = Some(m.rows[i].assertion.clone());
                    }
                }
                // 2. close or cover
                let mut covered = Vec::new();
                let mut covering = Vec::new();
                let mut changed = false;
                for &i in &held {
                    let x = m.rows[i].clone();
                    if !overlaps((x.from, x.to), (vf, vt)) {
                        continue;
                    }
                    if x.claim == a.claim && x.confidence == permille(a.confidence) {
                        covered.push((x.from.max(vf), x.to.min(vt)));
                        covering.push(i);
                    } else {
                        m.rows[i].superseded_at = r;
                        m.rows[i].closed = Some((a.id.clone(), false));
                        changed = true;
                        for piece in outside((x.from, x.to), (vf, vt)) {
                            m.rows.push(split_piece(&x, piece, r));
                            parent.push(Some(i));
                        }
                    }
                }
                // 3. insert V' minus covered, from elementary segments
                let mut cuts = vec![vf, vt];
                for c in &covered {
                    cuts.extend([c.0, c.1]);
                }
                cuts.sort();
                cuts.dedup();
                let mut runs: Vec<(i64, i64)> = Vec::new();
                for w in cuts.windows(2) {
                    let seg = (w[0], w[1]);
                    if seg.0 < vf
                        || seg.1 > vt
                        || covered.iter().any(|c| c.0 <= seg.0 && seg.1 <= c.1)
                    {
                        continue;
                    }
                    match runs.last_mut() {
                        Some(last) if last.1 == seg.0 => last.1 = seg.1,
                        _ => runs.push(seg),
                    }
                }
                for run in runs {
                    changed = true;
                    m.rows.push(Row {
                        agent: a.agent.clone(),
                        topic: a.topic.clone(),
                        claim: a.claim.clone(),
                        confidence: permille(a.confidence),
                        from: run.0,
                        to: run.1,
                        recorded_at: r,
                        superseded_at: OPEN,
                        assertion: a.id.clone(),
                        split: false,
                        closed: None,
                        clipped_by: if run.1 == vt {
                            clipped_by.clone()
                        } else {
                            None
                        },
                    });
                    parent.push(None);
                }
                // Any covering assertion supports the rows it covers anew
                // (amended 2026-12-05), a pure reconfirmation or not.
                reconfs.extend(covering.iter().map(|&i| (r, i)));
                if !changed {
                    m.reconfirmed.push(event.seq);
                }
            }
            EventBody::Retract(rt) => {
                let r = rt.recorded_at;
                let matching: Vec<usize> = (0..m.rows.len())
                    .filter(|&i| {
                        let v = &m.rows[i];
                        let target = match &rt.target {
                            RetractTarget::Assertion(id) => &v.assertion == id,
                            RetractTarget::Topic { topic, claim } => {
                                v.agent == rt.agent
                                    && &v.topic == topic
                                    && claim.as_ref().is_none_or(|c| &v.claim == c)
                            }
                        };
                        v.superseded_at == OPEN
                            && target
                            && rt
                                .valid
                                .is_none_or(|cut| overlaps((v.from, v.to), (cut.from, cut.to)))
                    })
                    .collect();
                if matching.is_empty() {
                    m.no_match.push(event.seq);
                }
                for i in matching {
                    let x = m.rows[i].clone();
                    m.rows[i].superseded_at = r;
                    m.rows[i].closed = Some((rt.id.clone(), true));
                    if let Some(cut) = rt.valid {
                        for piece in outside((x.from, x.to), (cut.from, cut.to)) {
                            m.rows.push(split_piece(&x, piece, r));
                            parent.push(Some(i));
                        }
                    }
                }
            }
        }
    }
    // The zero-width rule: a version closed at the instant it was recorded is not stored.
    let stored = |i: usize| m.rows[i].recorded_at < m.rows[i].superseded_at;
    for i in (0..m.rows.len()).filter(|&i| stored(i)) {
        let mut line = vec![i];
        while let Some(p) = parent[*line.last().unwrap()] {
            line.push(p);
        }
        let mut times = vec![asserted_at[&m.rows[i].assertion]];
        times.extend(
            reconfs
                .iter()
                .filter(|(_, j)| line.contains(j) && stored(*j))
                .map(|(t, _)| *t),
        );
        m.supports.push((m.rows[i].clone(), times));
    }
    m.rows.retain(|v| v.recorded_at < v.superseded_at);
    m.rows.sort();
    m
}

fn engine_rows(replay: &engine::Replay) -> Vec<Row> {
    let mut rows: Vec<Row> = replay.versions.iter().map(row_of).collect();
    rows.sort();
    rows
}

fn row_of(v: &asof_core::model::Version) -> Row {
    Row {
        agent: v.agent.to_string(),
        topic: v.topic.to_string(),
        claim: v.claim.to_string(),
        confidence: permille(v.confidence),
        from: v.valid.from,
        to: v.valid.to,
        recorded_at: v.recorded_at,
        superseded_at: v.superseded_at,
        assertion: v.assertion.to_string(),
        split: v.origin == asof_core::model::Origin::Split,
        closed: v.closed.as_ref().map(|c| {
            (
                c.event.to_string(),
                c.kind == asof_core::model::CloseKind::Retracted,
            )
        }),
        clipped_by: v.clipped_by.as_deref().map(str::to_owned),
    }
}

// ---------------------------------------------------------------------------
// Random logs.

#[derive(Debug, Clone)]
enum Spec {
    Believe {
        agent: usize,
        topic: usize,
        claim: usize,
        conf: usize,
        from: i64,
        len: Option<i64>,
        clip: bool,
        r: i64,
    },
    RetractTopic {
        agent: usize,
        topic: usize,
        claim: Option<usize>,
        cut: Option<(i64, Option<i64>)>,
        r: i64,
    },
    RetractAssertion {
        pick: usize,
        cut: Option<(i64, Option<i64>)>,
        r: i64,
    },
}

fn spec() -> impl Strategy<Value = Spec> {
    let r = 0i64..12;
    let cut = proptest::option::of((0i64..15, proptest::option::of(1i64..8)));
    prop_oneof![
        6 => (0..2usize, 0..3usize, 0..3usize, 0..3usize, 0i64..15, proptest::option::of(1i64..10), proptest::bool::weighted(0.8), r.clone())
            .prop_map(|(agent, topic, claim, conf, from, len, clip, r)| Spec::Believe { agent, topic, claim, conf, from, len, clip, r }),
        1 => (0..2usize, 0..3usize, proptest::option::of(0..3usize), cut.clone(), r.clone())
            .prop_map(|(agent, topic, claim, cut, r)| Spec::RetractTopic { agent, topic, claim, cut, r }),
        1 => (any::<usize>(), cut, r).prop_map(|(pick, cut, r)| Spec::RetractAssertion { pick, cut, r }),
    ]
}

/// Logs that restate: every belief is one of two claims at one confidence,
/// so later-starting versions of the same claim and confidence (which do not
/// clip, and which an assertion covers and so supports anew) are common.
fn restating_spec() -> impl Strategy<Value = Spec> {
    spec().prop_map(|s| {
        with_belief(s, |claim, conf, _, _| {
            *claim %= 2;
            *conf = 0;
        })
    })
}

/// Logs where later-heard beliefs start earlier: restatements of one of two
/// claims at every confidence, each starting before the ones recorded before
/// it, so earlier-starting assertions more (or less) confident than a
/// later-starting held version (the 2026-12-06 amendment) are common.
fn earlier_starting_spec() -> impl Strategy<Value = Spec> {
    spec().prop_map(|s| {
        with_belief(s, |claim, _, from, r| {
            *claim %= 2;
            *from = (12 - r).max(0) + *from % 3;
        })
    })
}

/// `s` with its claim, confidence and start changed by `change` (given the
/// recorded instant) when it is a belief; anything else as it is.
fn with_belief(mut s: Spec, change: impl Fn(&mut usize, &mut usize, &mut i64, i64)) -> Spec {
    if let Spec::Believe {
        claim,
        conf,
        from,
        r,
        ..
    } = &mut s
    {
        change(claim, conf, from, *r);
    }
    s
}

fn interval(cut: Option<(i64, Option<i64>)>) -> Option<Interval> {
    cut.map(|(from, len)| Interval::new(from, len.map_or(OPEN, |l| from + l)))
}

fn build(specs: &[Spec]) -> Vec<Event> {
    let mut events = Vec::new();
    let mut assertions: Vec<(String, String)> = Vec::new(); // (id, agent)
    for (i, s) in specs.iter().enumerate() {
        let seq = i as u64 + 1;
        let body = match s {
            Spec::Believe {
                agent,
                topic,
                claim,
                conf,
                from,
                len,
                clip,
                r,
            } => {
                let id = format!("A{seq}");
                assertions.push((id.clone(), AGENTS[*agent].into()));
                EventBody::Believe(Assertion {
                    id,
                    agent: AGENTS[*agent].into(),
                    topic: TOPICS[*topic].0.into(),
                    claim: CLAIMS[*claim].into(),
                    confidence: CONFIDENCES[*conf],
                    valid: Interval::new(*from, len.map_or(OPEN, |l| from + l)),
                    clip: *clip,
                    recorded_at: *r,
                    supported_by: vec![],
                    rationale: None,
                    assumed: vec![],
                })
            }
            Spec::RetractTopic {
                agent,
                topic,
                claim,
                cut,
                r,
            } => EventBody::Retract(Retraction {
                id: format!("R{seq}"),
                agent: AGENTS[*agent].into(),
                target: RetractTarget::Topic {
                    topic: TOPICS[*topic].0.into(),
                    claim: claim.map(|c| CLAIMS[c].into()),
                },
                valid: interval(*cut),
                recorded_at: *r,
                because: vec![],
                reason: None,
            }),
            Spec::RetractAssertion { pick, cut, r } => {
                let Some((target, agent)) =
                    (!assertions.is_empty()).then(|| assertions[pick % assertions.len()].clone())
                else {
                    continue;
                };
                EventBody::Retract(Retraction {
                    id: format!("R{seq}"),
                    agent,
                    target: RetractTarget::Assertion(target),
                    valid: interval(*cut),
                    recorded_at: *r,
                    because: vec![],
                    reason: None,
                })
            }
        };
        events.push(Event { seq, body });
    }
    events
}

fn dataset(events: Vec<Event>) -> Dataset {
    Dataset {
        header: header(),
        events,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_the_reference_model(specs in proptest::collection::vec(spec(), 3..40)) {
        let events = build(&specs);
        let replay = engine::replay(&header(), &events);
        let model = reference(&events);
        prop_assert_eq!(engine_rows(&replay), model.rows);
        let mut unmatched: Vec<u64> = replay.unmatched_retractions().collect();
        unmatched.sort();
        let mut expected = model.no_match.clone();
        expected.sort();
        prop_assert_eq!(unmatched, expected);
        let mut reconfirmed: Vec<u64> = replay.outcomes.iter().filter(|o| matches!(o.effect, Effect::Reconfirmed { .. })).map(|o| o.seq).collect();
        reconfirmed.sort();
        let mut expected = model.reconfirmed.clone();
        expected.sort();
        prop_assert_eq!(reconfirmed, expected);
    }

    /// The 2026-12-06 amendment: an earlier-starting assertion is clipped
    /// only by a later-starting version at least as confident.
    #[test]
    fn earlier_starting_beliefs_clip_as_the_model_says(
        specs in proptest::collection::vec(earlier_starting_spec(), 3..40)
    ) {
        let events = build(&specs);
        let replay = engine::replay(&header(), &events);
        let model = reference(&events);
        prop_assert_eq!(engine_rows(&replay), model.rows);
    }

    /// The 2026-12-05 amendments on logs that restate: rows, clips and every
    /// held row's last support at each instant agree with the model.
    #[test]
    fn restated_beliefs_clip_and_are_supported_as_the_model_says(
        specs in proptest::collection::vec(restating_spec(), 3..40)
    ) {
        let events = build(&specs);
        let replay = engine::replay(&header(), &events);
        let model = reference(&events);
        prop_assert_eq!(engine_rows(&replay), model.rows);
        for at in 0..14 {
            let held = |from: i64, to: i64| from <= at && at < to;
            let mut got: Vec<(Row, i64)> = replay
                .versions
                .iter()
                .filter(|v| held(v.recorded_at, v.superseded_at))
                .map(|v| (row_of(v), v.last_support(at)))
                .collect();
            got.sort();
            let mut want: Vec<(Row, i64)> = model
                .supports
                .iter()
                .filter(|(v, _)| held(v.recorded_at, v.superseded_at))
                .map(|(v, times)| {
                    (v.clone(), times.iter().copied().filter(|&t| t <= at).max().unwrap_or(i64::MIN))
                })
                .collect();
            want.sort();
            prop_assert_eq!(got, want, "last support at {}", at);
        }
    }

    /// A replay in slices cut between recorded instants (`engine::Slices`,
    /// which keeps its held versions from one slice to the next) ends with
    /// the versions, ids and outcomes of a replay of the whole log.
    #[test]
    fn a_replay_in_slices_is_the_whole_replay(
        specs in proptest::collection::vec(spec(), 3..40),
        cuts in proptest::collection::vec(any::<bool>(), 40),
    ) {
        let mut events = build(&specs);
        events.sort_by_key(|e| (e.recorded_at(), e.seq));
        let whole = engine::replay(&header(), &events);
        let mut slices = engine::Slices::new(&header());
        let mut versions = Vec::new();
        let mut outcomes = Vec::new();
        let mut start = 0;
        for end in 1..=events.len() {
            let between_instants = end == events.len()
                || events[end].recorded_at() != events[end - 1].recorded_at();
            if between_instants && (end == events.len() || cuts[end % cuts.len()]) {
                let closed = slices.replay(events[start..end].iter().collect());
                versions.extend(closed.versions);
                outcomes.extend(closed.outcomes);
                start = end;
            }
        }
        versions.extend(slices.held().cloned());
        versions.sort_by_key(|v| v.id);
        prop_assert_eq!(versions, whole.versions);
        prop_assert_eq!(outcomes, whole.outcomes);
    }

    #[test]
    fn believed_answers_from_the_store_match_the_model(
        specs in proptest::collection::vec(spec(), 3..40),
        probes in proptest::collection::vec((0i64..14, 0i64..26), 1..12),
    ) {
        let data = dataset(build(&specs));
        let replay = engine::replay(&data.header, &data.events);
        let store = Store::in_memory("prop", &data, &replay).expect("in-memory store");
        let model = reference(&data.events);
        for (at, about) in probes {
            let mut got: Vec<(String, String, String, i64, i64)> = query::believed(&store, at, Some(about), &Filter::default())
                .expect("query")
                .into_iter()
                .map(|b| (b.version.agent.to_string(), b.version.topic.to_string(), b.version.claim.to_string(), b.version.valid.from, b.version.valid.to))
                .collect();
            got.sort();
            let mut want: Vec<(String, String, String, i64, i64)> = model
                .rows
                .iter()
                .filter(|v| v.recorded_at <= at && at < v.superseded_at && v.from <= about && about < v.to)
                .map(|v| (v.agent.clone(), v.topic.clone(), v.claim.clone(), v.from, v.to))
                .collect();
            want.sort();
            prop_assert_eq!(got, want, "believed(at {}, about {})", at, about);
        }
    }

    #[test]
    fn invariants_hold(specs in proptest::collection::vec(spec(), 3..40)) {
        let data = dataset(build(&specs));
        let replay = engine::replay(&data.header, &data.events);
        for v in &replay.versions {
            prop_assert!(v.recorded_at < v.superseded_at, "zero-width version stored: {:?}", v);
            prop_assert!(v.valid.from < v.valid.to);
        }
        // cardinality one: held versions never overlap in valid time at any recorded instant
        let instants: Vec<i64> = replay.versions.iter().flat_map(|v| [v.recorded_at, v.superseded_at]).filter(|&t| t != OPEN).collect();
        for &t in &instants {
            let held: Vec<_> = replay.versions.iter().filter(|v| v.held_at(t) && cardinality(&v.topic) == Cardinality::One).collect();
            for (i, a) in held.iter().enumerate() {
                for b in &held[i + 1..] {
                    if a.agent == b.agent && a.topic == b.topic {
                        prop_assert!(!a.valid.overlaps(&b.valid), "overlap at {}: {:?} {:?}", t, a, b);
                    }
                }
            }
        }
        // the store keeps the log as given, and rebuilding yields the same rows
        let store = Store::in_memory("prop", &data, &replay).expect("in-memory store");
        prop_assert_eq!(store.log().expect("log").events, data.events.clone());
        let check = store.check().expect("check");
        prop_assert!(check.differences.is_empty(), "{:?}", check.differences);
        prop_assert_eq!(engine::replay(&data.header, &data.events), replay);
    }
}

// ---------------------------------------------------------------------------
// Belief quality (design.md §4) against the model: support times from the model's
// own rows, verification states and decay straight from the words of design.md §4.

const STATES: [VerifyState; 6] = VerifyState::ALL;
const EVIDENCE: [&str; 3] = ["E1", "E2", "E3"];

/// Evidence recorded at 0, citations on the assertions, verify events
/// appended (recorded at random instants, several at one instant).
fn with_quality(
    specs: &[Spec],
    cites: &[Vec<usize>],
    verifies: &[(usize, usize, i64)],
) -> Vec<Event> {
    let mut events: Vec<Event> = EVIDENCE
        .iter()
        .enumerate()
        .map(|(i, id)| Event {
            seq: i as u64 + 1,
            body: EventBody::Evidence(Evidence {
                id: (*id).into(),
                kind: "log".into(),
                source: String::new(),
                locator: String::new(),
                observed_at: 0,
                observed_until: None,
                recorded_at: 0,
                reliability: 1.0,
                summary: String::new(),
                content: None,
            }),
        })
        .collect();
    for (n, mut e) in build(specs).into_iter().enumerate() {
        e.seq += EVIDENCE.len() as u64;
        if let EventBody::Believe(a) = &mut e.body {
            let mut ids: Vec<String> = cites[n % cites.len()]
                .iter()
                .map(|&i| EVIDENCE[i].to_owned())
                .collect();
            ids.dedup();
            a.supported_by = ids;
        }
        events.push(e);
    }
    let last = events.iter().map(|e| e.seq).max().unwrap_or(0);
    for (i, &(evidence, state, r)) in verifies.iter().enumerate() {
        let seq = last + 1 + i as u64;
        events.push(Event {
            seq,
            body: EventBody::Verify(Verification {
                id: format!("V{i}"),
                evidence: EVIDENCE[evidence].into(),
                state: STATES[state],
                by: "r".into(),
                recorded_at: r,
                note: None,
            }),
        });
    }
    events
}

/// design.md §4: `candidate` until the first verify recorded ≤ T′, then the latest (ties: file order).
fn model_state(events: &[Event], evidence: &str, at: i64) -> VerifyState {
    let mut found: Option<(i64, u64, VerifyState)> = None;
    for e in events {
        if let EventBody::Verify(v) = &e.body
            && v.evidence == evidence
            && v.recorded_at <= at
            && found.is_none_or(|(t, s, _)| (v.recorded_at, e.seq) > (t, s))
        {
            found = Some((v.recorded_at, e.seq, v.state));
        }
    }
    found.map_or(VerifyState::Candidate, |(_, _, s)| s)
}

fn model_support(events: &[Event], cited: &[String], at: i64) -> &'static str {
    let states: Vec<VerifyState> = cited.iter().map(|e| model_state(events, e, at)).collect();
    if !states.is_empty()
        && states
            .iter()
            .all(|s| matches!(s, VerifyState::Rejected | VerifyState::Stale))
    {
        "unsupported"
    } else if states.contains(&VerifyState::Conflicted) {
        "contested"
    } else {
        "ok"
    }
}

type QualityRow = (
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    &'static str,
    &'static str,
);

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn quality_and_answers_from_the_store_match_the_model(
        specs in proptest::collection::vec(spec(), 3..40),
        cites in proptest::collection::vec(proptest::sample::subsequence(vec![0usize, 1, 2], 0..=2), 1..8),
        verifies in proptest::collection::vec((0..3usize, 0..6usize, 0i64..12), 0..8),
        aging in proptest::collection::vec((proptest::option::of(1i64..6), proptest::option::of(1i64..6)), 3),
        probes in proptest::collection::vec((0i64..14, 0i64..26), 1..10),
    ) {
        let mut header = header();
        for (t, (half_life, stale_after)) in header.topics.iter_mut().zip(&aging) {
            t.half_life = *half_life;
            t.stale_after = *stale_after;
        }
        let events = with_quality(&specs, &cites, &verifies);
        let data = Dataset { header: header.clone(), events };
        let replay = engine::replay(&data.header, &data.events);
        let store = Store::in_memory("prop", &data, &replay).expect("in-memory store");
        let model = reference(&data.events);
        let cited_by: std::collections::HashMap<String, Vec<String>> = data
            .events
            .iter()
            .filter_map(|e| match &e.body {
                EventBody::Believe(a) => Some((a.id.clone(), a.supported_by.clone())),
                _ => None,
            })
            .collect();
        let aging_of = |topic: &str| {
            let t = header.topic(topic).expect("topic");
            (t.half_life, t.stale_after)
        };
        for (at, about) in probes {
            // Every held version's quality.
            let beliefs = query::believed(&store, at, None, &Filter::default()).expect("query");
            let rows = |ledger: &asof_core::engine::quality::Ledger| {
                let mut rows: Vec<QualityRow> = beliefs
                    .iter()
                    .map(|b| {
                        let v = &b.version;
                        let q = ledger.quality(v, &b.supported_by, at);
                        (v.agent.to_string(), v.topic.to_string(), v.claim.to_string(), v.valid.from, v.valid.to,
                         q.last_support, permille(q.effective_confidence), q.freshness.as_str(), q.support.as_str())
                    })
                    .collect();
                rows.sort();
                rows
            };
            let ledger = quality::ledger(&store).expect("ledger");
            let got = rows(&ledger);
            let mut want: Vec<QualityRow> = model
                .supports
                .iter()
                .filter(|(v, _)| v.recorded_at <= at && at < v.superseded_at)
                .map(|(v, times)| {
                    let last = times.iter().copied().filter(|&t| t <= at).max().expect("its assertion");
                    let age = at - last;
                    let (half_life, stale_after) = aging_of(&v.topic);
                    let confidence = v.confidence as f64 / 1000.0;
                    let effective = match half_life {
                        None => v.confidence,
                        Some(h) => permille(confidence * 0.5f64.powf(age as f64 / h as f64)),
                    };
                    let freshness = match stale_after {
                        None => "unknown",
                        Some(s) if age >= s => "stale",
                        Some(_) => "current",
                    };
                    (v.agent.clone(), v.topic.clone(), v.claim.clone(), v.from, v.to, last, effective, freshness,
                     model_support(&data.events, &cited_by[&v.assertion], at))
                })
                .collect();
            want.sort();
            prop_assert_eq!(got, want, "quality at {}", at);

            // Verification states at T′.
            for e in EVIDENCE {
                prop_assert_eq!(ledger.state(e, at), model_state(&data.events, e, at), "{} at {}", e, at);
            }

            // The answer across agents, with and without a valid instant.
            for (topic, cardinality) in TOPICS {
                for about in [None, Some(about)] {
                    let held: Vec<&asof_store::query::Belief> = beliefs.iter().filter(|b| *b.version.topic == *topic).collect();
                    let got = quality::answer_of(&ledger, &held, cardinality, at, about);
                    let mut sets: std::collections::BTreeMap<&str, std::collections::BTreeSet<String>> = Default::default();
                    let rows: Vec<&Row> = model.rows.iter().filter(|v| {
                        v.topic == topic && v.recorded_at <= at && at < v.superseded_at
                            && about.is_none_or(|t| v.from <= t && t < v.to)
                    }).collect();
                    for agent in AGENTS {
                        let mine: Vec<&&Row> = rows.iter().filter(|v| v.agent == agent).collect();
                        let claims: std::collections::BTreeSet<String> = if about.is_none() && cardinality == Cardinality::One {
                            // design.md §3 answer: the greatest valid_from, ties the later recorded_at.
                            mine.iter().max_by_key(|v| (v.from, v.recorded_at)).map(|v| v.claim.clone()).into_iter().collect()
                        } else {
                            mine.iter().map(|v| v.claim.clone()).collect()
                        };
                        if !claims.is_empty() {
                            sets.insert(agent, claims);
                        }
                    }
                    let distinct: std::collections::BTreeSet<_> = sets.values().collect();
                    let status = match distinct.len() {
                        0 => "none",
                        1 => "answered",
                        _ => "conflicted",
                    };
                    prop_assert_eq!(got.status.as_str(), status, "{} at {} about {:?}", topic, at, about);
                    let listed: std::collections::BTreeSet<&str> = got.agents.iter().map(|a| &*a.agent).collect();
                    let holding: std::collections::BTreeSet<&str> = sets.keys().copied().collect();
                    prop_assert_eq!(listed, holding, "every agent holding a belief is listed");
                    if status == "answered" {
                        let claims: std::collections::BTreeSet<String> = got.claims.iter().map(|c| c.to_string()).collect();
                        prop_assert_eq!(&claims, *distinct.iter().next().expect("one set"));
                    } else {
                        prop_assert!(got.claims.is_empty(), "a conflicted answer picks no claim");
                    }
                }
            }
        }
    }
}
