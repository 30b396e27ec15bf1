//! The scrub index (design.md §9, crates/asof-store/src/store/scrub/) against an obviously
//! correct model of it: built from the log and versions read back through the
//! model types and a fresh replay's outcomes, with brute-force held sets, for
//! stores written by a load, a rebuild and a fork.

use crate::common;

use asof::engine::EffectKind;
use asof::model::{EventBody, RetractTarget};
use asof::store::Store;
use asof::store::scrub::{self, EvidenceWidths, MarkKey, MarkKind, NONE, ScrubIndex, VersionKey};
use asof::time::OPEN;
use common::asof;
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// The index a store should hold, worked out the long way.
fn model(store: &Store) -> ScrubIndex {
    let header = store.header();
    let position =
        |ids: Vec<&str>, id: &str| ids.iter().position(|x| *x == id).map_or(NONE, |i| i as u32);
    let topic = |id: &str| position(header.topics.iter().map(|t| t.id.as_str()).collect(), id);
    let agent = |id: &str| position(header.agents.iter().map(|a| a.id.as_str()).collect(), id);
    let mut stored = store.versions().unwrap();
    stored.sort_by_key(|v| v.id);
    let mut claims: Vec<String> = Vec::new();
    let versions: Vec<VersionKey> = stored
        .iter()
        .map(|v| {
            if !claims.iter().any(|c| **c == *v.claim) {
                claims.push(v.claim.to_string());
            }
            VersionKey {
                id: v.id,
                recorded_at: v.recorded_at,
                superseded_at: v.superseded_at,
                valid_from: v.valid.from,
                topic: topic(&v.topic),
                agent: agent(&v.agent),
                claim: claims.iter().position(|c| **c == *v.claim).unwrap() as u32,
            }
        })
        .collect();
    let order = |key: &dyn Fn(&VersionKey) -> (i64, u64)| {
        let mut all: Vec<u32> = (0..versions.len() as u32).collect();
        all.sort_by_key(|&i| key(&versions[i as usize]));
        all
    };
    let by_recorded = order(&|v| (v.recorded_at, v.id));
    let by_superseded: Vec<u32> = order(&|v| (v.superseded_at, v.id))
        .into_iter()
        .filter(|&i| versions[i as usize].superseded_at != OPEN)
        .collect();
    let stride = scrub::CHECKPOINT;
    let checkpoints = (0..=versions.len() / stride)
        .map(|c| {
            let prefix = &by_recorded[..c * stride];
            prefix
                .last()
                .map(|&last| {
                    let t = versions[last as usize].recorded_at;
                    prefix
                        .iter()
                        .copied()
                        .filter(|&i| versions[i as usize].superseded_at > t)
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();

    let log = store.log().unwrap();
    let fresh = store.replay().unwrap();
    let effect: HashMap<u64, EffectKind> = fresh
        .outcomes
        .iter()
        .map(|o| (o.seq, o.effect.kind()))
        .collect();
    let believed_topic: HashMap<&str, &str> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Believe(a) => Some((a.id.as_str(), a.topic.as_str())),
            _ => None,
        })
        .collect();
    let mut marks: Vec<MarkKey> = log
        .events
        .iter()
        .map(|e| {
            let effect = effect.get(&e.seq).copied().unwrap_or(EffectKind::Recorded);
            let (kind, t, a) = match &e.body {
                EventBody::Evidence(_) => (MarkKind::Evidence, NONE, NONE),
                EventBody::Believe(b) if effect == EffectKind::Reconfirmed => {
                    (MarkKind::Reconfirmation, topic(&b.topic), agent(&b.agent))
                }
                EventBody::Believe(b) => (MarkKind::Assertion, topic(&b.topic), agent(&b.agent)),
                EventBody::Retract(r) => {
                    let t = match &r.target {
                        RetractTarget::Topic { topic: t, .. } => topic(t),
                        RetractTarget::Assertion(id) => {
                            believed_topic.get(id.as_str()).map_or(NONE, |t| topic(t))
                        }
                    };
                    (MarkKind::Retraction, t, agent(&r.agent))
                }
                EventBody::Verify(v) => (MarkKind::Verification, NONE, agent(&v.by)),
            };
            MarkKey {
                seq: e.seq,
                recorded_at: e.recorded_at(),
                kind,
                effect,
                topic: t,
                agent: a,
            }
        })
        .collect();
    marks.sort_by_key(|m| (m.recorded_at, m.seq));
    // An evidence item's columns: its id, its source, and what cites it.
    let chars = |s: &str| s.chars().count() as u16;
    let evidence = marks
        .iter()
        .filter(|m| m.kind == MarkKind::Evidence)
        .map(|m| {
            let e = log.events.iter().find(|e| e.seq == m.seq).unwrap();
            let EventBody::Evidence(x) = &e.body else {
                unreachable!()
            };
            let citing: Vec<&str> = log
                .events
                .iter()
                .filter(|c| c.cites().contains(&x.id))
                .map(|c| c.id())
                .collect();
            EvidenceWidths {
                id: chars(&x.id),
                source: chars(&x.source),
                cited: chars(&citing.join(",")),
            }
        })
        .collect();
    ScrubIndex {
        evidence,
        stride,
        versions,
        claims,
        by_recorded,
        by_superseded,
        checkpoints,
        marks,
    }
}

/// The stored index equals the model, and the held set answered through
/// short checkpoints equals a brute-force scan at the edges of every
/// version's recorded interval.
fn assert_index(db: &Path, what: &str) {
    let store = Store::open(db).unwrap();
    let stored = store.scrub_index().unwrap().unwrap();
    assert_eq!(stored, model(&store), "{what}: the stored scrub index");
    for stride in [1, 3, 16] {
        let short = store.scrub_index_with(stride).unwrap();
        let mut edges: Vec<i64> = short
            .versions
            .iter()
            .flat_map(|v| [v.recorded_at, v.superseded_at])
            .filter(|&t| t != OPEN)
            .flat_map(|t| [t - 1, t, t + 1])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        for t in edges {
            let mut held = short.held(t);
            held.sort_unstable();
            let expected: Vec<u32> = (0..short.versions.len() as u32)
                .filter(|&i| short.versions[i as usize].held_at(t))
                .collect();
            assert_eq!(held, expected, "{what}: held at {t}, stride {stride}");
        }
    }
}

#[test]
fn the_demo_and_its_fork_hold_their_index() {
    common::demo_and_its_fork(assert_index);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn load_rebuild_and_fork_write_the_index_the_model_gives(
        seed in 0u64..10_000,
        events in 50u64..700,
        topics in 1u32..6,
        agents in 1u32..4,
        pick in any::<usize>(),
    ) {
        let forked = common::load_rebuild_and_fork((events, topics, agents, seed), pick, assert_index);
        prop_assume!(forked);
    }
}

/// The TUI refuses a store whose index is damaged with a sentence naming the
/// part and the remedy (exit 2 at the command line), and opens it after a rebuild.
#[test]
fn a_damaged_index_refuses_the_timeline_until_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    common::tamper(&db, "UPDATE scrub SET data = x'00' WHERE part = 'versions'");
    let error = asof::query::timeline::Timeline::load(Store::open(&db).unwrap()).unwrap_err();
    assert!(error.is_input_error(), "{error}");
    assert_eq!(
        error.to_string(),
        format!(
            "{}: not a readable asof store: the scrub index's part \"versions\" is missing or malformed; run `asof rebuild`",
            db.display()
        )
    );
    asof().arg("rebuild").arg(&db).assert().success();
    let timeline = asof::query::timeline::Timeline::load(Store::open(&db).unwrap()).unwrap();
    assert_eq!(
        timeline.version_count(),
        Store::open(&db).unwrap().versions().unwrap().len()
    );
}

/// A store that breaks while the TUI has it open: the rows not yet read show
/// as unreadable and the failure is kept for the status line, never a panic.
#[test]
fn rows_that_cannot_be_read_any_more_show_as_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let timeline = asof::query::timeline::Timeline::load(Store::open(&db).unwrap()).unwrap();
    let read_before = timeline.belief(0);
    assert_ne!(&*read_before.version.assertion, "(unreadable)");
    common::tamper(
        &db,
        "DROP TABLE versions; DELETE FROM events WHERE kind = 'evidence';",
    );
    assert_eq!(timeline.belief(0), read_before, "a row read before stays");
    let last = timeline.version_count() - 1;
    let broken = timeline.belief(last);
    assert_eq!(&*broken.version.assertion, "(unreadable)");
    assert_eq!(
        broken.version.id,
        timeline.key(last).id,
        "its key still shows"
    );
    let error = timeline.take_error().expect("the failure is kept");
    assert!(error.starts_with("cannot read versions: "), "{error}");
    assert_eq!(timeline.take_error(), None, "and reported once");
    let item = timeline.evidence_item(timeline.evidence_count() - 1);
    assert_eq!(item.evidence.id, "(unreadable)");
}

/// Seqs are whatever integers the file holds: a huge one (a damaged or
/// hand-edited store) is no reason to allocate by seq. `check` reports, the
/// timeline opens, nothing panics.
#[test]
fn a_huge_seq_is_a_disagreement_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let huge = i64::MAX - 7;
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&format!(
            "UPDATE events SET seq = {huge} WHERE seq = 1;
             UPDATE scrub SET data = CAST(x'{}' || substr(data, 9) AS BLOB) WHERE part = 'marks';",
            huge.to_le_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        ))
        .unwrap();
    let check = asof().arg("check").arg(&db).assert();
    let code = check.get_output().status.code();
    assert!(matches!(code, Some(0) | Some(2)), "check exited {code:?}");
    let timeline = asof::query::timeline::Timeline::load(Store::open(&db).unwrap()).unwrap();
    assert_eq!(timeline.mark_count(), 85);
    let first = timeline.span().unwrap().0;
    assert!(!timeline.latest_marks(first).is_empty());
    // The log itself changed (its seq no longer matches the event's
    // checksum): rebuild refuses, naming the load that recovers the store.
    let refused = asof().arg("rebuild").arg(&db).assert().code(2);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(said.contains("its log is damaged"), "{said}");
    let command = said.split('`').nth(1).expect("a command in backticks");
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    asof().args(&args).assert().success();
    asof().arg("check").arg(&db).assert().success();
}
