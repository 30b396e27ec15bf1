//! Hand-computed replays of each rule of design.md §3.

use super::*;
use crate::model::{Agent, Assertion, Event, Incident, Topic};

fn header() -> Header {
    let topic = |id: &str, cardinality| Topic {
        id: id.into(),
        question: String::new(),
        cardinality,
        resolution: None,
        half_life: None,
        stale_after: None,
    };
    Header {
        incident: Incident {
            id: "i".into(),
            title: String::new(),
        },
        agents: vec![
            Agent {
                id: "a".into(),
                name: "a".into(),
            },
            Agent {
                id: "b".into(),
                name: "b".into(),
            },
        ],
        topics: vec![topic("t", Cardinality::One), topic("m", Cardinality::Many)],
    }
}

struct Log(Vec<Event>);

impl Log {
    fn new() -> Self {
        Log(Vec::new())
    }

    fn push(&mut self, body: EventBody) -> &mut Self {
        let seq = self.0.len() as u64 + 1;
        self.0.push(Event { seq, body });
        self
    }

    #[allow(clippy::too_many_arguments)]
    fn believe_full(
        &mut self,
        id: &str,
        agent: &str,
        topic: &str,
        claim: &str,
        conf: f64,
        valid: (i64, i64),
        r: i64,
        clip: bool,
    ) -> &mut Self {
        self.push(EventBody::Believe(Assertion {
            id: id.into(),
            agent: agent.into(),
            topic: topic.into(),
            claim: claim.into(),
            confidence: conf,
            valid: Interval::new(valid.0, valid.1),
            clip,
            recorded_at: r,
            supported_by: vec![],
            rationale: None,
            assumed: vec![],
        }))
    }

    fn believe(&mut self, id: &str, claim: &str, valid: (i64, i64), r: i64) -> &mut Self {
        self.believe_full(id, "a", "t", claim, 1.0, valid, r, true)
    }

    fn retract(
        &mut self,
        id: &str,
        target: RetractTarget,
        valid: Option<(i64, i64)>,
        r: i64,
    ) -> &mut Self {
        self.push(EventBody::Retract(Retraction {
            id: id.into(),
            agent: "a".into(),
            target,
            valid: valid.map(|(f, t)| Interval::new(f, t)),
            recorded_at: r,
            because: vec![],
            reason: None,
        }))
    }

    fn run(&self) -> Replay {
        replay(&header(), &self.0)
    }
}

/// (claim, valid_from, valid_to, recorded_at, superseded_at, origin)
fn rows(r: &Replay) -> Vec<(String, i64, i64, i64, i64, Origin)> {
    r.versions
        .iter()
        .map(|v| {
            (
                v.claim.to_string(),
                v.valid.from,
                v.valid.to,
                v.recorded_at,
                v.superseded_at,
                v.origin,
            )
        })
        .collect()
}

fn row(c: &str, f: i64, t: i64, r: i64, s: i64, o: Origin) -> (String, i64, i64, i64, i64, Origin) {
    (c.to_owned(), f, t, r, s, o)
}

use Origin::{Asserted, Split};

#[test]
fn a_contradiction_closes_and_splits() {
    let r = Log::new()
        .believe("A1", "x", (0, OPEN), 10)
        .believe("A2", "y", (5, 8), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 0, OPEN, 10, 20, Asserted),
            row("x", 0, 5, 20, OPEN, Split),
            row("x", 8, OPEN, 20, OPEN, Split),
            row("y", 5, 8, 20, OPEN, Asserted),
        ]
    );
    let closed = r.versions[0].closed.as_ref().unwrap();
    assert_eq!((&*closed.event, closed.kind), ("A2", CloseKind::Superseded));
    assert_eq!(&*r.versions[1].assertion, "A1");
    assert_eq!(
        r.outcomes[1].effect,
        Effect::Applied {
            inserted: 3,
            closed: 1
        }
    );
}

#[test]
fn a_late_open_end_is_clipped_by_a_later_starting_belief() {
    let r = Log::new()
        .believe("A1", "x", (10, OPEN), 10)
        .believe("A2", "y", (0, OPEN), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 10, OPEN, 10, OPEN, Asserted),
            row("y", 0, 10, 20, OPEN, Asserted)
        ]
    );
    assert_eq!(r.versions[1].clipped_by.as_deref(), Some("A1"));
    assert_eq!(r.versions[1].requested_valid_to, OPEN);
}

/// Amended 2026-12-05: a later-starting version of the same claim and
/// confidence is what the late assertion restates; it does not clip it. The
/// assertion covers that version (supporting it anew) and inserts its claim
/// over the part before it; a later version that says something else still
/// clips, past the restated one.
#[test]
fn a_later_version_of_the_same_claim_does_not_clip_and_is_supported_anew() {
    let r = Log::new()
        .believe("A1", "x", (10, OPEN), 10)
        .believe("A2", "x", (0, OPEN), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 10, OPEN, 10, OPEN, Asserted),
            row("x", 0, 10, 20, OPEN, Asserted)
        ]
    );
    assert_eq!(r.versions[1].clipped_by, None);
    assert_eq!(r.versions[0].reconfirmed, vec![20]);
    assert_eq!(r.versions[0].last_support(19), 10);
    assert_eq!(r.versions[0].last_support(20), 20);
    assert_eq!(
        r.outcomes[1].effect,
        Effect::Applied {
            inserted: 1,
            closed: 0
        }
    );

    let r = Log::new()
        .believe("A1", "x", (10, 30), 10)
        .believe("A2", "y", (30, OPEN), 10)
        .believe("A3", "x", (0, OPEN), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 10, 30, 10, OPEN, Asserted),
            row("y", 30, OPEN, 10, OPEN, Asserted),
            row("x", 0, 10, 20, OPEN, Asserted)
        ]
    );
    // Clipped at A2's `y` (still held above), past the restated `x`; the
    // inserted piece ends where `x` begins, so it is not the clipped end.
    assert_eq!(r.versions[2].clipped_by, None);
    assert_eq!(r.versions[0].reconfirmed, vec![20]);

    // A different confidence is a different belief: one held at least as
    // surely clips as before (a less sure one is replaced: below).
    let mut log = Log::new();
    log.believe_full("A1", "a", "t", "x", 0.9, (10, OPEN), 10, true);
    log.believe_full("A2", "a", "t", "x", 0.5, (0, OPEN), 20, true);
    let r = log.run();
    assert_eq!(r.versions[1].clipped_by.as_deref(), Some("A1"));
    assert!(r.versions[0].reconfirmed.is_empty());
}

#[test]
fn clip_false_and_explicit_ends_are_never_clipped() {
    let mut log = Log::new();
    log.believe("A1", "x", (10, OPEN), 10);
    log.believe_full("A2", "a", "t", "y", 1.0, (0, OPEN), 20, false);
    let r = log.run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 10, OPEN, 10, 20, Asserted),
            row("y", 0, OPEN, 20, OPEN, Asserted)
        ]
    );

    let r = Log::new()
        .believe("A1", "x", (10, OPEN), 10)
        .believe("A2", "y", (0, 50), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 10, OPEN, 10, 20, Asserted),
            row("x", 50, OPEN, 20, OPEN, Split),
            row("y", 0, 50, 20, OPEN, Asserted),
        ]
    );
}

#[test]
fn the_same_claim_and_confidence_is_a_reconfirmation() {
    let mut log = Log::new();
    log.believe_full("A1", "a", "t", "x", 0.6, (0, OPEN), 10, true);
    log.believe_full("A2", "a", "t", "x", 0.6004, (0, OPEN), 20, true);
    let r = log.run();
    assert_eq!(r.versions.len(), 1);
    assert_eq!(
        r.outcomes[1].effect,
        Effect::Reconfirmed { versions: vec![1] }
    );

    let mut log = Log::new();
    log.believe_full("A1", "a", "t", "x", 0.6, (0, OPEN), 10, true);
    log.believe_full("A2", "a", "t", "x", 0.7, (0, OPEN), 20, true);
    let r = log.run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 0, OPEN, 10, 20, Asserted),
            row("x", 0, OPEN, 20, OPEN, Asserted)
        ]
    );
}

#[test]
fn only_the_uncovered_part_is_inserted() {
    let r = Log::new()
        .believe("A1", "x", (0, 10), 10)
        .believe("A2", "x", (5, 15), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 0, 10, 10, OPEN, Asserted),
            row("x", 10, 15, 20, OPEN, Asserted)
        ]
    );
    assert_eq!(
        r.outcomes[1].effect,
        Effect::Applied {
            inserted: 1,
            closed: 0
        }
    );
}

#[test]
fn a_version_closed_at_its_own_instant_is_not_stored() {
    let r = Log::new()
        .believe("A1", "x", (0, OPEN), 10)
        .believe("A2", "y", (0, OPEN), 10)
        .run();
    assert_eq!(rows(&r), vec![row("y", 0, OPEN, 10, OPEN, Asserted)]);
    assert_eq!(r.outcomes[0].effect, Effect::ZeroWidth { closed: 0 });
}

#[test]
fn replay_orders_by_recorded_time_then_file_order() {
    // File order puts the later-recorded assertion first.
    let r = Log::new()
        .believe("A1", "y", (0, OPEN), 20)
        .believe("A2", "x", (0, OPEN), 10)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 0, OPEN, 10, 20, Asserted),
            row("y", 0, OPEN, 20, OPEN, Asserted)
        ]
    );
    assert_eq!(
        r.outcomes.iter().map(|o| o.seq).collect::<Vec<_>>(),
        vec![2, 1]
    );
}

#[test]
fn a_portion_retraction_reinserts_the_rest() {
    let topic = RetractTarget::Topic {
        topic: "t".into(),
        claim: None,
    };
    let r = Log::new()
        .believe("A1", "x", (0, OPEN), 10)
        .retract("R1", topic, Some((5, 8)), 20)
        .run();
    assert_eq!(
        rows(&r),
        vec![
            row("x", 0, OPEN, 10, 20, Asserted),
            row("x", 0, 5, 20, OPEN, Split),
            row("x", 8, OPEN, 20, OPEN, Split)
        ]
    );
    assert_eq!(
        r.versions[0].closed.as_ref().unwrap().kind,
        CloseKind::Retracted
    );
}

#[test]
fn retracting_an_assertion_closes_all_its_pieces_and_resurrects_nothing() {
    let r = Log::new()
        .believe("A1", "x", (10, OPEN), 10)
        .believe("A2", "y", (0, OPEN), 20) // clipped to [0, 10) by A1
        .believe("A3", "z", (15, 20), 30) // splits A1
        .retract("R1", RetractTarget::Assertion("A1".into()), None, 40)
        .run();
    let held: Vec<_> = r
        .versions
        .iter()
        .filter(|v| v.superseded_at == OPEN)
        .map(|v| (&*v.claim, v.valid))
        .collect();
    assert_eq!(
        held,
        vec![("y", Interval::new(0, 10)), ("z", Interval::new(15, 20))]
    );
}

#[test]
fn a_retraction_that_matches_nothing_is_reported() {
    let topic = RetractTarget::Topic {
        topic: "t".into(),
        claim: Some("nope".into()),
    };
    let r = Log::new()
        .believe("A1", "x", (0, OPEN), 10)
        .retract("R1", topic, None, 20)
        .run();
    assert_eq!(r.unmatched_retractions().collect::<Vec<_>>(), vec![2]);
    let outside = RetractTarget::Topic {
        topic: "t".into(),
        claim: None,
    };
    let r = Log::new()
        .believe("A1", "x", (0, 10), 10)
        .retract("R1", outside, Some((10, 20)), 20)
        .run();
    assert_eq!(
        r.unmatched_retractions().count(),
        1,
        "touching intervals do not interact"
    );
}

#[test]
fn many_valued_topics_scope_by_claim() {
    let mut log = Log::new();
    log.believe_full("M1", "a", "m", "p", 1.0, (0, OPEN), 10, true);
    log.believe_full("M2", "a", "m", "q", 1.0, (5, OPEN), 20, true);
    log.believe_full("M3", "a", "m", "p", 0.5, (8, OPEN), 30, true);
    log.retract(
        "R1",
        RetractTarget::Topic {
            topic: "m".into(),
            claim: Some("q".into()),
        },
        None,
        40,
    );
    let r = log.run();
    let held: Vec<_> = r
        .versions
        .iter()
        .filter(|v| v.superseded_at == OPEN)
        .map(|v| (&*v.claim, v.valid, permille(v.confidence)))
        .collect();
    assert_eq!(
        held,
        vec![
            ("p", Interval::new(0, 8), 1000),
            ("p", Interval::new(8, OPEN), 500)
        ]
    );
}

#[test]
fn agents_and_topics_never_touch_each_other() {
    let mut log = Log::new();
    log.believe("A1", "x", (0, OPEN), 10);
    log.believe_full("B1", "b", "t", "y", 1.0, (0, OPEN), 20, true);
    log.believe_full("A2", "a", "m", "z", 1.0, (0, OPEN), 30, true);
    let r = log.run();
    assert!(r.versions.iter().all(|v| v.superseded_at == OPEN));
}

/// Amended 2026-12-06: a later-starting version held less confidently does
/// not clip a surer late assertion — it is replaced — while one held at
/// least as confidently still clips (the seed memory's `old_conf >= confidence`).
#[test]
fn only_a_later_starting_version_at_least_as_sure_clips() {
    // The present at 1.0; a late log from earlier at 0.6: clipped.
    let mut log = Log::new();
    log.believe_full("B1", "a", "t", "healthy", 1.0, (10, OPEN), 5, true)
        .believe_full("B2", "a", "t", "backed up", 0.6, (8, OPEN), 12, true);
    let r = log.run();
    assert_eq!(
        rows(&r),
        vec![
            row("healthy", 10, OPEN, 5, OPEN, Origin::Asserted),
            row("backed up", 8, 10, 12, OPEN, Origin::Asserted),
        ]
    );
    assert_eq!(r.versions[1].clipped_by.as_deref(), Some("B1"));
    // The present at 0.8; the late log at 0.9: it replaces the present.
    let mut log = Log::new();
    log.believe_full("B1", "a", "t", "in sync", 0.8, (10, OPEN), 5, true)
        .believe_full("B2", "a", "t", "lagging", 0.9, (8, OPEN), 12, true);
    let r = log.run();
    assert_eq!(
        rows(&r),
        vec![
            row("in sync", 10, OPEN, 5, 12, Origin::Asserted),
            row("lagging", 8, OPEN, 12, OPEN, Origin::Asserted),
        ]
    );
    assert_eq!(r.versions[1].clipped_by, None);
    // The demo's B28/B35: the same claim restated surer from earlier replaces
    // it whole; a restatement at that confidence later covers it whole.
    let mut log = Log::new();
    log.believe_full("B28", "a", "t", "tls", 0.9, (10, OPEN), 5, true)
        .believe_full("B35", "a", "t", "tls", 0.95, (8, OPEN), 6, true)
        .believe_full("B38", "a", "t", "tls", 0.95, (8, OPEN), 12, true);
    let r = log.run();
    assert_eq!(
        rows(&r),
        vec![
            row("tls", 10, OPEN, 5, 6, Origin::Asserted),
            row("tls", 8, OPEN, 6, OPEN, Origin::Asserted),
        ]
    );
    assert_eq!(&*r.versions[1].assertion, "B35");
    assert_eq!(r.versions[1].last_support(20), 12, "B38 supports it anew");
    assert!(matches!(r.outcomes[2].effect, Effect::Reconfirmed { .. }));
}

/// A copy of a replay taken between slices shares its held versions with
/// the original; what the original does after (a reconfirmation, a close,
/// a split) changes its own versions only, and the copy replays the same
/// slice to the same result.
#[test]
fn a_copy_of_a_slice_replay_keeps_what_it_held_as_the_original_goes_on() {
    let mut first = Log::new();
    first
        .believe_full("A1", "a", "t", "x", 0.6, (0, OPEN), 10, true)
        .believe_full("A2", "a", "m", "y", 0.7, (5, OPEN), 11, true);
    let mut then = Log::new();
    then.0.extend(first.0.iter().cloned());
    then.believe_full("A3", "a", "t", "x", 0.6, (0, OPEN), 20, true)
        .believe_full("A4", "a", "t", "z", 0.9, (3, OPEN), 21, true)
        .retract(
            "R1",
            RetractTarget::Assertion("A2".into()),
            Some((7, 9)),
            22,
        );
    let later: Vec<&Event> = then.0[2..].iter().collect();

    let mut original = Slices::new(&header());
    original.replay(first.0.iter().collect());
    let held: Vec<Version> = original.held().cloned().collect();
    let mut copy = original.clone();

    let went_on = original.replay(later.clone());
    assert_eq!(
        went_on.versions.len(),
        2,
        "A4 closed A1's version and R1 A2's"
    );
    assert_ne!(original.held().cloned().collect::<Vec<_>>(), held);
    assert_eq!(
        copy.held().cloned().collect::<Vec<_>>(),
        held,
        "the copy holds what it held, reconfirmations and ends included"
    );
    assert_eq!(copy.replay(later), went_on);
    assert_eq!(
        copy.held().cloned().collect::<Vec<_>>(),
        original.held().cloned().collect::<Vec<_>>()
    );
}
