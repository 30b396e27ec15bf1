//! `asof fork` and `asof diff` on real files: the demo's misleading evidence,
//! lineage, parents left untouched, and refusals.

use crate::common;

use common::{asof, bytes, load_demo, page_size, stdout_json as json};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn truth<'a>(v: &'a Value, agent: &str, topic: &str) -> &'a Value {
    v["truth"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["agent"] == agent && t["topic"] == topic)
        .unwrap()
}

#[test]
fn without_the_misleading_evidence_the_agent_is_right_sooner() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    let before = bytes(&parent);
    let fork = dir.path().join("f.db");
    let v = json(
        asof()
            .arg("fork")
            .arg(&parent)
            .args(["--without", "E15", "--out"])
            .arg(&fork)
            .args(["--format", "json"]),
    );
    assert_eq!(v["removed"], serde_json::json!(["E15"]));
    assert_eq!(v["dropped"], serde_json::json!(["B19", "B20"]));
    assert_eq!(v["scaled"], serde_json::json!([]));
    assert_eq!(v["noop_retractions"], serde_json::json!(["R4"]));
    assert_eq!(v["lineage_verified"], true);
    let t = truth(&v, "triage", "root-cause");
    assert_eq!(t["parent"]["converged_at"], "2026-03-05T09:15:00Z");
    assert_eq!(t["fork"]["converged_at"], "2026-03-03T10:30:00Z");
    assert!(t["fork"]["time_wrong_ms"].as_i64() < t["parent"]["time_wrong_ms"].as_i64());
    let windows = &v["divergence"].as_array().unwrap()[0];
    assert_eq!(
        (windows["agent"].as_str(), windows["topic"].as_str()),
        (Some("triage"), Some("root-cause"))
    );
    assert_eq!(
        windows["windows"][0],
        serde_json::json!({"from": "2026-03-03T12:10:00Z", "to": "2026-03-04T09:30:00Z",
            "parent": "Bad deploy of checkout-service v4.12", "fork": "Expired TLS certificate on the card-network gateway"})
    );
    assert_eq!(
        windows["windows"][1]["parent"],
        Value::Null,
        "an absent answer counts as a value"
    );

    // diff says the same thing, and nobody wrote the parent.
    let d = json(
        asof()
            .arg("diff")
            .arg(&parent)
            .arg(&fork)
            .args(["--format", "json"]),
    );
    assert_eq!(d, v);
    assert_eq!(bytes(&parent), before, "the parent is byte-identical");
    // The fork is a store like any other, and says what it is.
    asof()
        .arg("believed")
        .arg(&fork)
        .args(["--at", "2026-03-03T13:00:00Z", "--topic", "root-cause"])
        .assert()
        .success()
        .stdout(predicate::str::contains("WHAT-IF — replay of"))
        .stdout(predicate::str::contains("not the record"))
        .stdout(predicate::str::contains("Expired TLS certificate"));
    asof().arg("check").arg(&fork).assert().success();
}

#[test]
fn forks_of_forks_keep_the_chain_and_read_only_parents_work() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    let mut perms = std::fs::metadata(&parent).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&parent, perms).unwrap();
    asof()
        .arg("fork")
        .arg(&parent)
        .args(["--without", "E15"])
        .assert()
        .success();
    let first = dir.path().join("demo-without-E15.db");
    assert!(first.exists(), "default name beside the parent");
    asof()
        .arg("fork")
        .arg(&first)
        .args(["--without", "E14,E24"])
        .assert()
        .success();
    let second = dir.path().join("demo-without-E15-without-E14-E24.db");
    let conn = rusqlite::Connection::open(&second).unwrap();
    let chain: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'fork_chain'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let chain: Value = serde_json::from_str(&chain).unwrap();
    assert_eq!(chain.as_array().unwrap().len(), 2);
    assert_eq!(chain[0]["removed"], serde_json::json!(["E15"]));
    assert_eq!(chain[1]["removed"], serde_json::json!(["E14", "E24"]));
}

#[test]
fn refusals_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f.db");
    asof()
        .args(["fork", "--without", "E99,B1", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no evidence with id E99, B1"));
    assert!(!out.exists());
    asof()
        .args(["fork", "--without", "E15", "--out"])
        .arg(&out)
        .assert()
        .success();
    asof()
        .args(["fork", "--without", "E14", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    asof()
        .args(["fork", "--without", "E14", "--force", "--out"])
        .arg(&out)
        .assert()
        .success();
    let parent = load_demo(dir.path());
    asof()
        .arg("diff")
        .arg(&out)
        .arg(&parent)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a fork"));
    let v = json(
        asof()
            .args(["diff", "demo"])
            .arg(&out)
            .args(["--format", "json"]),
    );
    assert_eq!(v["removed"], serde_json::json!(["E14"]));
    assert_eq!(v["lineage_verified"], true);
    let v = json(
        asof()
            .arg("diff")
            .arg(&parent)
            .arg(&out)
            .args(["--format", "json"]),
    );
    assert_eq!(
        v["lineage_verified"], false,
        "the fork came from the demo, not from this store file"
    );
}

#[test]
fn influence_ranks_the_misleading_evidence_first() {
    let v = json(asof().args(["influence", "--top", "3", "--format", "json"]));
    let ranking = v["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 3);
    assert_eq!(ranking[0]["evidence"], "E15");
    // 03-03 10:30 instead of 03-05 09:15: 1 day 22 h 45 min sooner.
    assert_eq!(ranking[0]["truth_shift_ms"], -(46 * 3600 + 45 * 60) * 1000);
    assert_eq!(
        ranking[0]["topics"],
        serde_json::json!(["customer-impact", "root-cause"])
    );
    asof()
        .args(["influence", "--format", "md"])
        .assert()
        .success()
        .stdout(predicate::str::contains("| 1 | E15 |"));
}

/// `influence` replays only the pairs that cite an item; its numbers must equal
/// what separate full forks give, item by item.
#[test]
fn influence_equals_separate_full_forks() {
    let mut logs = vec![
        asof::dataset::read_str(
            "demo",
            asof::dataset::Format::Yaml,
            asof::cli::source::DEMO_YAML,
        )
        .unwrap()
        .dataset,
    ];
    // A tie at the cut: B2 and B3 share an instant, B3 (later in the file) cites
    // E1 and makes B2's version zero-width in the parent. Without E1, B2 stands —
    // so the pair must resume at the instant, not at B3.
    logs.push(
        asof::dataset::read_str(
            "tie",
            asof::dataset::Format::Yaml,
            r#"asof: 1
incident: {id: tie, title: Tie}
agents: [{id: a, name: A}]
topics: [{id: x, question: "X?", resolution: two}]
events:
  - evidence: {id: E1, kind: log, source: s, locator: l, observed_at: 2026-01-01, recorded_at: 2026-01-01, summary: s}
  - believe: {id: B1, agent: a, topic: x, claim: one, valid_from: 2026-01-01, recorded_at: 2026-01-02}
  - believe: {id: B2, agent: a, topic: x, claim: two, valid_from: 2026-01-01, recorded_at: 2026-01-03}
  - believe: {id: B3, agent: a, topic: x, claim: three, valid_from: 2026-01-01, recorded_at: 2026-01-03, supported_by: [E1]}
  - believe: {id: B4, agent: a, topic: x, claim: two, valid_from: 2026-01-01, recorded_at: 2026-01-05}
"#,
        )
        .unwrap()
        .dataset,
    );
    for seed in [3, 4] {
        logs.push(common::generated_log(700, 5, 2, seed));
    }
    // A fleet's incidents: topic retractions and verifications, where the
    // replay of a pair without an item joins the parent's and stops early.
    for index in [0, 1] {
        let mut jsonl = Vec::new();
        asof::synth::fleet_incident(5, index, 600, &mut jsonl).unwrap();
        let text = String::from_utf8(jsonl).unwrap();
        logs.push(
            asof::dataset::read_str("fleet", asof::dataset::Format::Jsonl, &text)
                .unwrap()
                .dataset,
        );
    }
    for log in &logs {
        influence_agrees_with_full_forks(log);
    }
}

/// Per (agent, topic) pair: (truth shift when both converge, divergence in
/// ms, whether anything changed), as a full fork without `item` diffed
/// against the parent gives them.
fn full_fork_figures(
    log: &asof::model::Dataset,
    parent: &asof::engine::Replay,
    item: &str,
) -> std::collections::BTreeMap<(String, String), (Option<i64>, i64, bool)> {
    use asof::engine::answers::{answers_of, truth};
    use asof::engine::compare::divergence;
    use asof::time::OPEN;
    let span = log.span().unwrap();
    let before = answers_of(parent.versions.iter());
    let fork = asof::fork::fork(log, &[item.to_owned()]).unwrap();
    let after = answers_of(fork.replay.versions.iter());
    let empty = Vec::new();
    let pairs: std::collections::BTreeSet<_> = before.keys().chain(after.keys()).collect();
    let mut figures = std::collections::BTreeMap::new();
    for pair in pairs {
        let (p, f) = (
            before.get(pair).unwrap_or(&empty),
            after.get(pair).unwrap_or(&empty),
        );
        let windows = divergence(p, f);
        let mut diverged = 0;
        for w in &windows {
            let to = if w.to == OPEN {
                span.1
            } else {
                w.to.min(span.1)
            };
            diverged += (to - w.from.max(span.0)).max(0) / 1000;
        }
        let mut differs = !windows.is_empty();
        let mut shift = None;
        if let Some(r) = log.header.topic(&pair.1).and_then(|t| t.resolution.clone()) {
            let (a, b) = (truth(p, &r, span), truth(f, &r, span));
            // A changed time wrong alone makes the topic one the item changes.
            differs |= a != b;
            if let (Some(a), Some(b)) = (a.converged_at, b.converged_at) {
                shift = Some((b - a) / 1000);
            }
        }
        figures.insert(pair.clone(), (shift, diverged, differs));
    }
    figures
}

/// Every item's ranking figures — whole, per pair, and restricted to each
/// agent and each topic — equal what a full fork without it gives.
fn influence_agrees_with_full_forks(log: &asof::model::Dataset) {
    let parent = asof::engine::replay(&log.header, &log.events);
    let ranking = asof::fork::influence::influence(log, &parent);
    let evidence_count = log
        .events
        .iter()
        .filter(|e| e.kind() == asof::model::EventKind::Evidence)
        .count();
    assert_eq!(ranking.len(), evidence_count);
    for item in &ranking {
        let figures = full_fork_figures(log, &parent, &item.evidence);
        // Each listed pair's figures are a full fork's; a pair the item's
        // ranking does not list changes nothing.
        for ((agent, topic), &(shift, diverged, differs)) in &figures {
            match item
                .pairs
                .iter()
                .find(|p| (&p.agent, &p.topic) == (agent, topic))
            {
                Some(p) => assert_eq!(
                    (p.truth_shift_ms, p.divergence_ms, p.changed),
                    (shift, diverged, differs),
                    "{} for {agent} on {topic}",
                    item.evidence
                ),
                None => assert!(
                    shift.is_none_or(|s| s == 0) && diverged == 0 && !differs,
                    "{} changes {agent} on {topic}, which cites nothing of it",
                    item.evidence
                ),
            }
        }
        // The sums, whole and restricted to one agent or one topic.
        let sums = |keep: &dyn Fn(&(String, String)) -> bool| {
            let (mut shift, mut diverged) = (0i64, 0i64);
            let mut topics = std::collections::BTreeSet::new();
            for (pair, &(s, d, differs)) in figures.iter().filter(|(p, _)| keep(p)) {
                shift += s.unwrap_or(0);
                diverged += d;
                if differs {
                    topics.insert(pair.1.clone());
                }
            }
            (shift, diverged, topics.into_iter().collect::<Vec<_>>())
        };
        assert_eq!(
            (item.truth_shift_ms, item.divergence_ms, item.topics.clone()),
            sums(&|_| true),
            "{}",
            item.evidence
        );
        for agent in &log.header.agents {
            let got = item
                .restricted(|p| p.agent == agent.id)
                .map_or((0, 0, Vec::new()), |i| {
                    (i.truth_shift_ms, i.divergence_ms, i.topics)
                });
            assert_eq!(
                got,
                sums(&|p| p.0 == agent.id),
                "{} restricted to {}",
                item.evidence,
                agent.id
            );
        }
        for topic in &log.header.topics {
            let got = item
                .restricted(|p| p.topic == topic.id)
                .map_or((0, 0, Vec::new()), |i| {
                    (i.truth_shift_ms, i.divergence_ms, i.topics)
                });
            assert_eq!(
                got,
                sums(&|p| p.1 == topic.id),
                "{} restricted to {}",
                item.evidence,
                topic.id
            );
        }
    }
}

/// `influence --agent`/`--topic` held to full forks on random logs.
mod influence_property {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

        #[test]
        fn restricted_influence_is_the_full_forks_restricted(seed in 0u64..10_000) {
            let log = crate::common::generated_log(160, 3, 3, seed);
            super::influence_agrees_with_full_forks(&log);
        }
    }
}

mod policy_property {
    use asof::model::{Dataset, EventBody, EventKind};
    use proptest::prelude::*;

    /// design.md §5's policy, written again from its words.
    fn by_hand(log: &Dataset, removed: &[String]) -> Dataset {
        let rel = |id: &str| {
            log.events
                .iter()
                .find_map(|e| match &e.body {
                    EventBody::Evidence(ev) if ev.id == id => Some(ev.reliability),
                    _ => None,
                })
                .unwrap()
        };
        let mut out = log.clone();
        out.events.retain_mut(|e| match &mut e.body {
            EventBody::Evidence(ev) => !removed.contains(&ev.id),
            EventBody::Believe(a) => {
                let remaining: Vec<String> = a
                    .supported_by
                    .iter()
                    .filter(|id| !removed.contains(id))
                    .cloned()
                    .collect();
                if !a.supported_by.is_empty() && remaining.is_empty() {
                    return false;
                }
                if remaining.len() < a.supported_by.len() {
                    let before: f64 = a.supported_by.iter().map(|id| rel(id)).sum();
                    let after: f64 = remaining.iter().map(|id| rel(id)).sum();
                    // "scaled by remaining / original": the ratio first, as design.md §5 words it.
                    a.confidence = (a.confidence * (after / before) * 1000.0).round() / 1000.0;
                }
                a.supported_by = remaining;
                true
            }
            EventBody::Retract(r) => {
                let remaining: Vec<String> = r
                    .because
                    .iter()
                    .filter(|id| !removed.contains(id))
                    .cloned()
                    .collect();
                let keep = r.because.is_empty() || !remaining.is_empty();
                r.because = remaining;
                keep
            }
            EventBody::Verify(v) => !removed.contains(&v.evidence),
        });
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn a_fork_is_the_hand_filtered_log_replayed(seed in 0u64..1000, picks in proptest::collection::vec(any::<usize>(), 1..4)) {
            let log = crate::common::generated_log(300, 4, 2, seed);
            let evidence: Vec<String> = log.events.iter().filter(|e| e.kind() == EventKind::Evidence).map(|e| e.id().to_owned()).collect();
            let mut removed: Vec<String> = picks.iter().map(|&i| evidence[i % evidence.len()].clone()).collect();
            removed.sort();
            removed.dedup();
            let fork = asof::fork::fork(&log, &removed).unwrap();
            let expected = by_hand(&log, &removed);
            prop_assert_eq!(&fork.dataset, &expected);
            prop_assert_eq!(fork.replay, asof::engine::replay(&expected.header, &expected.events));
        }
    }
}

/// Every row of a store that a fork's content is made of, with version ids
/// replaced by what the versions are (ids differ between a copied fork and a
/// fork written from scratch), and without the creation times.
fn content(db: &Path) -> Vec<Vec<Vec<rusqlite::types::Value>>> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows = |sql: &str| -> Vec<Vec<rusqlite::types::Value>> {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    vec![
        rows("SELECT * FROM events ORDER BY seq"),
        rows("SELECT * FROM citations ORDER BY seq, pos"),
        // Claims by text: a copied fork keeps its parent's claim codes.
        rows(
            "SELECT v.agent, v.topic, c.text, v.valid_from, v.valid_to, v.recorded_at,
                v.superseded_at, v.rest
             FROM versions v JOIN claims c ON c.code = v.claim ORDER BY 1, 2, 4, 6, 3, 8",
        ),
        rows(
            "SELECT r.seq, v.agent, v.topic, v.valid_from, v.recorded_at, c.text
             FROM reconfirmations r JOIN versions v ON v.id = r.version
               JOIN claims c ON c.code = v.claim ORDER BY 1, 2, 3, 4, 5, 6",
        ),
        rows("SELECT * FROM outcomes ORDER BY seq"),
        rows("SELECT * FROM truths ORDER BY topic, agent"),
        rows(
            "SELECT * FROM meta WHERE key NOT IN ('loaded_at', 'fork_created_at', 'fork_pairs') ORDER BY key",
        ),
    ]
}

/// A fork of a store file copies the parent and replays only the pairs citing the
/// removed evidence; it must hold what a fork replayed and written whole holds,
/// and report the same diff — on the demo, on generated logs, for a fork of a
/// fork, and when the removed evidence was the log's first event.
#[test]
fn a_copied_fork_equals_a_fork_written_whole() {
    use asof::fork::{self, copy, diff};
    use asof::store::{Contents, Store};
    let dir = tempfile::tempdir().unwrap();
    let mut parents = vec![load_demo(dir.path())];
    for seed in [5, 6] {
        let jsonl = dir.path().join(format!("gen{seed}.jsonl"));
        let db = dir.path().join(format!("gen{seed}.db"));
        asof()
            .args(["gen", "--events", "900", "--topics", "6", "--agents", "2"])
            .args(["--seed", &seed.to_string(), "-o"])
            .arg(&jsonl)
            .assert()
            .success();
        asof()
            .arg("load")
            .arg(&jsonl)
            .arg("--db")
            .arg(&db)
            .assert()
            .success();
        parents.push(db);
    }
    // The last event is uncited evidence: removing it moves the log's end, and
    // with it every pair's time spent wrong.
    let tail = common::write(
        dir.path(),
        "tail.yaml",
        r#"asof: 1
incident: {id: t, title: T}
agents: [{id: a, name: A}]
topics:
  - {id: x, question: "X?", resolution: right}
  - {id: y, question: "Y?", resolution: right}
events:
  - evidence: {id: E1, kind: log, source: s, locator: l, observed_at: 2026-01-01, recorded_at: 2026-01-01, summary: s}
  - believe: {id: B1, agent: a, topic: x, claim: wrong, valid_from: 2026-01-01, recorded_at: 2026-01-02, supported_by: [E1]}
  - believe: {id: B2, agent: a, topic: y, claim: wrong, valid_from: 2026-01-01, recorded_at: 2026-01-02}
  - evidence: {id: E2, kind: log, source: s, locator: l, observed_at: 2026-01-05, recorded_at: 2026-01-05, summary: s}
"#,
    );
    let tail_db = dir.path().join("tail.db");
    asof()
        .arg("load")
        .arg(&tail)
        .arg("--db")
        .arg(&tail_db)
        .assert()
        .success();
    parents.push(tail_db);
    // A fork of a fork: its log has retractions that find nothing.
    let grand = dir.path().join("demo-without-E12.db");
    common::fork(&parents[0], "E12", &grand);
    parents.push(grand);

    let mut compared = 0;
    for (p, parent_path) in parents.iter().enumerate() {
        let parent = Store::open(parent_path).unwrap();
        let log = parent.log().unwrap();
        let evidence: Vec<String> = log
            .events
            .iter()
            .filter(|e| e.kind() == asof::model::EventKind::Evidence)
            .map(|e| e.id().to_owned())
            .collect();
        let first = log
            .events
            .iter()
            .min_by_key(|e| (e.recorded_at(), e.seq))
            .unwrap();
        let step = if p == 0 { 1 } else { 9 };
        let mut removals: Vec<Vec<String>> = evidence
            .iter()
            .step_by(step)
            .map(|id| vec![id.clone()])
            .collect();
        removals.push(evidence.iter().take(3).cloned().collect());
        let last = log
            .events
            .iter()
            .max_by_key(|e| (e.recorded_at(), e.seq))
            .unwrap();
        for end in [first, last] {
            if end.kind() == asof::model::EventKind::Evidence {
                removals.push(vec![end.id().to_owned()]);
            }
        }
        for (n, removed) in removals.into_iter().enumerate() {
            let tag = format!("{p}-{n}-{}", removed.join("-"));
            let copied = dir.path().join(format!("copied-{tag}.db"));
            let whole = dir.path().join(format!("whole-{tag}.db"));
            let made = copy::fork_file(&parent, parent_path, &removed, &copied, false, |sha, r| {
                fork::lineage(&parent, sha, r)
            })
            .unwrap();
            let full = fork::fork(&log, &removed).unwrap();
            let sha = fork::sha256_hex(&bytes(parent_path));
            assert_eq!(made.parent_sha256, sha);
            Store::create_with(
                &whole,
                &Contents {
                    dataset: &full.dataset,
                    replay: &full.replay,
                    source: parent.label(),
                    meta: fork::lineage(&parent, &sha, &full.report).unwrap(),
                },
                false,
            )
            .unwrap();
            assert_eq!(made.report, full.report, "{tag}");
            assert_eq!(
                made.diff,
                diff::compare(&parent, &full.replay.versions).unwrap(),
                "{tag}"
            );
            assert_eq!(content(&copied), content(&whole), "{tag}");
            let check = Store::open(&copied).unwrap().check().unwrap();
            assert!(
                check.differences.is_empty(),
                "{tag}: {:?}",
                check.differences
            );
            // `asof diff` compares only the replayed pairs of a copied fork whose
            // parent is unchanged; it must say what the whole comparison says.
            if compared % 5 == 0 {
                let diff_of = |fork: &Path| -> Value {
                    let mut v = json(
                        asof()
                            .arg("diff")
                            .arg(parent_path)
                            .arg(fork)
                            .args(["--format", "json"]),
                    );
                    v.as_object_mut().unwrap().remove("fork");
                    v
                };
                assert_eq!(diff_of(&copied), diff_of(&whole), "{tag}");
            }
            compared += 1;
        }
    }
    assert!(compared > 60, "only {compared} forks compared");
}

/// Deleted rows are overwritten in a copied fork: the removed evidence's text is
/// not left behind in the file's free pages.
#[test]
fn a_copied_fork_does_not_keep_the_removed_evidence_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    let fork = dir.path().join("f.db");
    common::fork(&parent, "E15", &fork);
    let summary = b"Checkout error rate fell from 31% to 18%";
    let has = |bytes: &[u8]| bytes.windows(summary.len()).any(|w| w == summary);
    assert!(has(&bytes(&parent)));
    assert!(!has(&bytes(&fork)));
}

/// Stores written before new stores took 16 KiB pages keep their 4 KiB
/// pages: they check, fork (the fork, a patched copy, keeps them: its scrub
/// index and version pages are patched over overflow chains of that size)
/// and rebuild as before.
#[test]
fn a_store_in_4_kib_pages_checks_forks_and_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = common::write(dir.path(), "gen.jsonl", &common::generated(3000, 12, 3, 5));
    let new = dir.path().join("new.db");
    asof()
        .arg("load")
        .arg(&jsonl)
        .arg("--db")
        .arg(&new)
        .assert()
        .success();
    let old = dir.path().join("old.db");
    let conn = rusqlite::Connection::open(&new).unwrap();
    conn.execute_batch("PRAGMA page_size = 4096").unwrap();
    conn.execute("VACUUM INTO ?1", [old.to_str().unwrap()])
        .unwrap();
    // An evidence item whose removal changes some pairs.
    let evidence: String = conn
        .query_row(
            "SELECT evidence FROM citations ORDER BY seq LIMIT 1 OFFSET 200",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    assert_eq!(page_size(&new), 16384);
    assert_eq!(page_size(&old), 4096);
    let fork = dir.path().join("fork.db");
    asof()
        .arg("fork")
        .arg(&old)
        .args(["--without", &evidence, "--out"])
        .arg(&fork)
        .assert()
        .success();
    assert_eq!(page_size(&fork), 4096);
    for store in [&old, &fork] {
        asof().arg("check").arg(store).assert().success();
    }
    asof().arg("rebuild").arg(&old).assert().success();
    assert_eq!(page_size(&old), 4096);
    asof().arg("check").arg(&old).assert().success();
}

/// Every output of a fork store says it is a what-if (design.md §8): the banner
/// or the `what_if` object, the removed evidence and the parent's SHA-256,
/// in every format of `believed`, `history`, `answer`, `evidence`, `changes`
/// and `export`; a fork report's first heading begins `What-if`, and it
/// carries its divergence from the record — for a fork of the bundled demo
/// too. A record's outputs say none of it.
#[test]
fn every_output_of_a_fork_says_it_is_a_what_if() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    let fork_of_store = dir.path().join("f.db");
    common::fork(&parent, "E15", &fork_of_store);
    let fork_of_demo = dir.path().join("d.db");
    asof()
        .args(["fork", "--without", "E15", "--out"])
        .arg(&fork_of_demo)
        .assert()
        .success();
    let sha_of = |p: &Path| asof::fork::sha256_hex(&bytes(p));
    let demo_sha = asof::fork::sha256_hex(asof::cli::source::DEMO_YAML.as_bytes());
    let run = |args: &[&str], source: &Path| -> String {
        let out = asof()
            .arg(args[0])
            .arg(source)
            .args(&args[1..])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let queries: [&[&str]; 5] = [
        &["believed", "--at", "2026-03-04T00:00:00Z"],
        &["history", "--topic", "root-cause"],
        &[
            "answer",
            "--topic",
            "root-cause",
            "--at",
            "2026-03-04T00:00:00Z",
        ],
        &["evidence"],
        &[
            "changes",
            "--after",
            "2026-03-03T00:00:00Z",
            "--until",
            "2026-03-04T00:00:00Z",
        ],
    ];
    for (fork, parent_sha) in [(&fork_of_store, sha_of(&parent)), (&fork_of_demo, demo_sha)] {
        for query in queries {
            for format in ["table", "md", "json"] {
                let mut args = query.to_vec();
                args.extend(["--format", format]);
                let out = run(&args, fork);
                if format == "json" {
                    let v: Value = serde_json::from_str(&out).unwrap();
                    let w = &v["what_if"];
                    assert_eq!(w["removed"], serde_json::json!(["E15"]), "{args:?}: {v}");
                    assert_eq!(w["parent_sha256"], parent_sha.as_str(), "{args:?}");
                    assert!(
                        w["banner"]
                            .as_str()
                            .unwrap()
                            .starts_with("WHAT-IF — replay of")
                    );
                } else {
                    let first = out.lines().next().unwrap_or_default();
                    assert!(first.contains("WHAT-IF — replay of"), "{args:?}: {out}");
                    assert!(first.contains("without E15"), "{args:?}: {first}");
                    assert!(first.contains("not the record"), "{args:?}: {first}");
                    assert!(out.contains(&parent_sha), "{args:?}: no parent SHA-256");
                }
            }
        }
        let md = run(&["export", "--format", "md"], fork);
        assert!(md.starts_with("# What-if: Audit report"), "{md}");
        assert!(md.contains("WHAT-IF — replay of") && md.contains(&parent_sha));
        assert!(md.contains("### Where the answers diverge"), "{md}");
        assert!(!md.contains("could not be opened"), "{md}");
        let html = run(&["export", "--format", "html"], fork);
        assert!(html.contains("<title>What-if: "), "html title");
        assert!(html.contains("WHAT-IF — replay of") && html.contains(&parent_sha));
        assert!(
            html.contains("Where the answers diverge"),
            "html divergence"
        );
        let svg = run(
            &["export", "--format", "svg", "--topic", "root-cause"],
            fork,
        );
        assert!(svg.contains("What-if: root-cause"), "svg title");
        assert!(svg.contains("WHAT-IF — replay of") && svg.contains(&parent_sha));
    }
    // The record says none of it.
    for query in queries {
        let out = run(query, &parent);
        assert!(!out.contains("WHAT-IF"), "{query:?}: {out}");
    }
    let v: Value = serde_json::from_str(&run(
        &[
            "believed",
            "--at",
            "2026-03-04T00:00:00Z",
            "--format",
            "json",
        ],
        &parent,
    ))
    .unwrap();
    assert!(v.get("what_if").is_none());
    assert!(run(&["export", "--format", "md"], &parent).starts_with("# Audit report"));
}

/// Every md, html and svg report names its source, that source's SHA-256,
/// the asof version and the time of export; the SVG without `--topic` is
/// refused with the topics listed.
#[test]
fn every_report_says_where_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let sha = asof::fork::sha256_hex(&bytes(&db));
    let demo_sha = asof::fork::sha256_hex(asof::cli::source::DEMO_YAML.as_bytes());
    let version = env!("CARGO_PKG_VERSION");
    for (source, sha) in [
        (Some(db.as_path()), sha.as_str()),
        (None, demo_sha.as_str()),
    ] {
        for args in [
            vec!["--format", "md"],
            vec!["--format", "html"],
            vec!["--format", "svg", "--topic", "root-cause"],
        ] {
            let mut cmd = asof();
            cmd.arg("export");
            if let Some(s) = source {
                cmd.arg(s);
            }
            let out = cmd
                .args(&args)
                .env("SOURCE_DATE_EPOCH", "1773835200")
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(text.contains(sha), "{args:?}: no source SHA-256");
            assert!(text.contains(version), "{args:?}: no asof version");
            assert!(
                text.contains("2026-03-18T12:00:00Z"),
                "{args:?}: no export time"
            );
            let name = source.map_or("payment-outage.yaml (bundled demo)".to_owned(), |p| {
                p.display().to_string()
            });
            assert!(text.contains(&name), "{args:?}: no source name {name}");
        }
    }
    asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "svg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "name it with --topic; the topics are: root-cause, customer-impact, severity, affected-regions",
        ));
}

/// The lineage rows of a fork store that say where it came from.
fn lineage_rows(store: &Path) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(store).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT key, value FROM meta WHERE key IN \
             ('fork_parent', 'fork_parent_sha256', 'fork_removed', 'fork_policy') ORDER BY key",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A fork saved from the TUI (`s`) has exactly the lineage `asof fork`
/// writes — for the bundled demo, the SHA-256 of its embedded dataset — so
/// `asof diff` finds its parent unchanged; one changed byte of the parent
/// and it says so.
#[test]
fn a_fork_saved_from_the_tui_has_the_lineage_asof_fork_writes() {
    let dir = tempfile::tempdir().unwrap();
    // The demo, forked in memory as the TUI does.
    let origin = asof::cli::source::origin(None).unwrap();
    let log = asof::cli::source::demo().unwrap().log().unwrap();
    let replay = asof::engine::replay(&log.header, &log.events);
    let made = asof::tui::fork_worker::run_fork(&log, &replay, &origin.name, &origin.sha256, "E15")
        .unwrap();
    let saved = dir.path().join("saved-demo.db");
    asof::tui::fork_worker::save_fork(&made.path, &saved).unwrap();
    let by_cli = dir.path().join("cli-demo.db");
    asof()
        .args(["fork", "--without", "E15", "--out"])
        .arg(&by_cli)
        .assert()
        .success();
    assert_eq!(lineage_rows(&saved), lineage_rows(&by_cli));
    let d = json(
        asof()
            .arg("diff")
            .arg("demo")
            .arg(&saved)
            .args(["--format", "json"]),
    );
    assert_eq!(d["lineage_verified"], true, "{d}");
    asof()
        .arg("diff")
        .arg("demo")
        .arg(&saved)
        .assert()
        .success()
        .stdout(predicate::str::contains("SHA-256 differs").not());

    // A store, forked as the TUI does (a copy).
    let parent = load_demo(dir.path());
    let label = parent.display().to_string();
    let made = asof::tui::fork_worker::run_fork_of_store(&parent, &label, "E15").unwrap();
    let saved = dir.path().join("saved-store.db");
    asof::tui::fork_worker::save_fork(&made.path, &saved).unwrap();
    let by_cli = dir.path().join("cli-store.db");
    common::fork(&parent, "E15", &by_cli);
    assert_eq!(lineage_rows(&saved), lineage_rows(&by_cli));
    asof()
        .arg("diff")
        .arg(&parent)
        .arg(&saved)
        .assert()
        .success()
        .stdout(predicate::str::contains("SHA-256 differs").not());
    // One byte of the parent changed: now it says so.
    common::tamper(
        &parent,
        "UPDATE meta SET value = value || ' ' WHERE key = 'source';",
    );
    asof()
        .arg("diff")
        .arg(&parent)
        .arg(&saved)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(parent SHA-256 differs from the fork's lineage)",
        ));
}

/// Without a resolution a truth shift cannot be measured, and `0s` would read
/// as "nothing misled it": the column says `no resolution`, and says that
/// both columns are sums over agent-topic pairs (design.md §8).
#[test]
fn influence_without_a_resolution_says_so() {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sre-agent.otlp.jsonl");
    let out = asof().args(["influence", trace]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("this store has none: every item says `no resolution`"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().skip(3).collect();
    assert!(!rows.is_empty());
    for row in &rows {
        // RANK, EVIDENCE, then the TRUTH SHIFT cell itself (not a `0s`).
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells.get(2), Some(&"no resolution"), "{row}");
    }
    assert!(text.contains("DIVERGENCE (Σ pairs)"));
    let v = json(asof().args(["influence", trace, "--format", "json"]));
    assert!(
        v["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["truth_known"] == false)
    );
    // The demo resolves its root cause: E15's shift is measured there.
    let v = json(asof().args(["influence", "--format", "json"]));
    let e15 = v["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["evidence"] == "E15")
        .unwrap();
    assert_eq!(e15["truth_known"], true);
}

/// Tool output keeps its newlines in the store (a trace's JSON-escaped
/// `\n`), and `asof evidence` still prints one line per item (`⏎` in the cell).
#[test]
fn evidence_prints_one_line_per_item_of_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/otlp/genai.jsonl"
    ))
    .unwrap();
    let multi = fixture.replace(
        "payments-db cpu 98% since 09:04; connections 480/500",
        "Nodes:\\n- payments-db cpu 98% since 09:04\\n- connections 480/500",
    );
    assert_ne!(
        multi, fixture,
        "the fixture's tool output is where the test expects it"
    );
    let trace = dir.path().join("multi.jsonl");
    std::fs::write(&trace, multi).unwrap();
    let v = json(
        asof()
            .arg("evidence")
            .arg(&trace)
            .args(["--format", "json"]),
    );
    let items = v["evidence"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|e| e["summary"].as_str().unwrap_or_default().contains('\n')),
        "{v}"
    );
    let out = asof().arg("evidence").arg(&trace).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // A title line, the header, then one line per item.
    assert_eq!(text.lines().count(), items.len() + 2, "{text}");
    assert!(text.contains("Nodes:⏎- payments-db cpu 98%"), "{text}");
}

/// `asof influence --agent triage` on the demo, item by item, is the sum over
/// triage's pairs of what `asof diff` says of a full fork without the item:
/// no other agent's figures in it (E14 shifts infra's truth, not triage's).
#[test]
fn influence_for_one_agent_is_that_agents_diff_against_full_forks() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    let ranking = json(
        asof()
            .arg("influence")
            .arg(&parent)
            .args(["--agent", "triage", "--format", "json"]),
    );
    let log = asof::dataset::read_str(
        "demo",
        asof::dataset::Format::Yaml,
        asof::cli::source::DEMO_YAML,
    )
    .unwrap()
    .dataset;
    let (first, last) = log.span().unwrap();
    let instant = |v: &Value| -> Option<i64> { v.as_str().map(|t| asof::time::parse(t).unwrap()) };
    let items = ranking["ranking"].as_array().unwrap();
    assert!(items.len() > 10, "triage cites most of the demo's evidence");
    for item in items {
        let id = item["evidence"].as_str().unwrap();
        let out = dir.path().join(format!("without-{id}.db"));
        common::fork(&parent, id, &out);
        let diff = json(
            asof()
                .arg("diff")
                .arg(&parent)
                .arg(&out)
                .args(["--format", "json"]),
        );
        let mut diverged = 0i64;
        for pair in diff["divergence"].as_array().unwrap() {
            if pair["agent"] != "triage" {
                continue;
            }
            for w in pair["windows"].as_array().unwrap() {
                let from = instant(&w["from"]).unwrap().max(first);
                let to = instant(&w["to"]).map_or(last, |t| t.min(last));
                diverged += (to - from).max(0) / 1000;
            }
        }
        let mut shift = 0i64;
        for pair in diff["truth"].as_array().unwrap() {
            if pair["agent"] != "triage" {
                continue;
            }
            if let (Some(p), Some(f)) = (
                instant(&pair["parent"]["converged_at"]),
                instant(&pair["fork"]["converged_at"]),
            ) {
                shift += (f - p) / 1000;
            }
        }
        assert_eq!(
            (
                item["truth_shift_ms"].as_i64().unwrap(),
                item["divergence_ms"].as_i64().unwrap()
            ),
            (shift, diverged),
            "{id} for triage"
        );
        for pair in item["pairs"].as_array().unwrap() {
            assert_eq!(pair["agent"], "triage", "{id}: only triage's pairs");
        }
    }
    let e14 = items.iter().find(|i| i["evidence"] == "E14").unwrap();
    assert_eq!(
        e14["truth_shift_ms"], 0,
        "triage converges alike with or without E14"
    );
    let e26 = items.iter().find(|i| i["evidence"] == "E26").unwrap();
    let everyone = json(
        asof()
            .arg("influence")
            .arg(&parent)
            .args(["--format", "json"]),
    );
    let e26_all = everyone["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["evidence"] == "E26")
        .unwrap();
    assert!(
        e26["divergence_ms"].as_i64() < e26_all["divergence_ms"].as_i64(),
        "triage's share of E26 is less than every agent's: {e26} vs {e26_all}"
    );
    // `ask` answers "what misled triage" with the same ranking.
    let asked =
        json(
            asof()
                .arg("ask")
                .arg(&parent)
                .args(["what misled triage?", "--format", "json"]),
        );
    assert_eq!(asked["result"]["ranking"], ranking["ranking"]);
}
