//! The policy of design.md §5, rule by rule, with hand-computed outcomes.

use super::*;
use asof_core::dataset::{Format, read_str};

const LOG: &str = r#"asof: 1
incident: {id: f}
agents: [{id: a}]
topics: [{id: t, resolution: right}]
events:
  - evidence: {id: E1, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T01:00:00Z, reliability: 0.9}
  - evidence: {id: E2, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T01:00:00Z, reliability: 0.3}
  - believe: {id: B1, agent: a, topic: t, claim: right, confidence: 0.6, valid_from: 2026-01-01, recorded_at: 2026-01-01T02:00:00Z, supported_by: [E1]}
  - believe: {id: B2, agent: a, topic: t, claim: wrong, confidence: 0.8, valid_from: 2026-01-01, recorded_at: 2026-01-01T03:00:00Z, supported_by: [E1, E2]}
  - believe: {id: B3, agent: a, topic: t, claim: wrong, confidence: 0.5, valid_from: 2026-01-01, recorded_at: 2026-01-01T04:00:00Z, supported_by: []}
  - retract: {id: R1, agent: a, topic: t, recorded_at: 2026-01-01T05:00:00Z, because: [E2]}
  - retract: {id: R2, agent: a, assertion: B1, recorded_at: 2026-01-01T06:00:00Z, because: [E1, E2]}
"#;

fn parent() -> Dataset {
    read_str("f.yaml", Format::Yaml, LOG)
        .map(|p| p.dataset)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn removing_nothing_is_refused_by_callers_but_changes_nothing_here() {
    let f = fork(&parent(), &[]).unwrap();
    let p = parent();
    assert_eq!(f.dataset, p);
    assert_eq!(f.replay, engine::replay(&p.header, &p.events));
    assert_eq!(
        f.report,
        PolicyReport {
            noop_retractions: vec!["R2".into()],
            ..PolicyReport::default()
        }
    );
}

#[test]
fn drop_scale_and_retraction_rules() {
    let f = fork(&parent(), &["E2".to_owned()]).unwrap();
    // B2 cited E1 (0.9) and E2 (0.3): 0.8 × 0.9 / 1.2 = 0.6.
    assert_eq!(
        f.report.scaled,
        vec![Scaled {
            assertion: "B2".into(),
            from: 0.8,
            to: 0.6
        }]
    );
    assert!(f.report.dropped.is_empty());
    // R1 cited only E2: dropped. R2 keeps E1.
    assert_eq!(f.report.dropped_retractions, vec!["R1".to_owned()]);
    let ids: Vec<&str> = f.dataset.events.iter().map(|e| e.id()).collect();
    assert_eq!(ids, vec!["E1", "B1", "B2", "B3", "R2"]);

    let f = fork(&parent(), &["E1".to_owned()]).unwrap();
    // B1 cited only E1: dropped; B2 keeps E2 at 0.8 × 0.3 / 1.2 = 0.2; B3 cited nothing: kept.
    assert_eq!(f.report.dropped, vec!["B1".to_owned()]);
    assert_eq!(
        f.report.scaled,
        vec![Scaled {
            assertion: "B2".into(),
            from: 0.8,
            to: 0.2
        }]
    );
    // R2 still cites E2, but B1 is gone: nothing to retract, reported.
    assert_eq!(f.report.noop_retractions, vec!["R2".to_owned()]);
    assert!(f.report.dropped_retractions.is_empty());
}

#[test]
fn unknown_ids_are_named() {
    assert_eq!(
        fork(&parent(), &["E9".to_owned(), "B1".to_owned()]).unwrap_err(),
        ForkError::UnknownEvidence(vec!["E9".into(), "B1".into()])
    );
}
