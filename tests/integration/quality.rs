//! Belief quality on the command line (design.md §4): the auditor's questions on the
//! demo, `--without-rejected`, and the dataset rules of `verify`
//! and of topics' durations — through the real binary and real stores.

use crate::common;

use common::{asof, check_finds_then_rebuild_repairs, load, load_demo, stdout_json as json, write};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn belief<'a>(beliefs: &'a Value, agent: &str) -> &'a Value {
    beliefs["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["agent"] == agent)
        .unwrap_or_else(|| panic!("no belief of {agent} in {beliefs}"))
}

/// "At 03-04 09:00, was triage's root-cause belief fresh, and did its evidence
/// hold up?" — stale and decayed then; its evidence still a candidate then,
/// rejected by the end of the log; the store and the demo answer alike.
#[test]
fn the_auditors_freshness_question_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let ask = |source: Option<&Path>, at: &str| {
        let mut cmd = asof();
        cmd.arg("believed");
        if let Some(s) = source {
            cmd.arg(s);
        }
        json(cmd.args([
            "--topic",
            "root-cause",
            "--agent",
            "triage",
            "--format",
            "json",
            "--at",
            at,
        ]))
    };
    for source in [None, Some(db.as_path())] {
        let then = ask(source, "2026-03-04T09:00:00Z");
        let b = belief(&then, "triage");
        assert_eq!(b["claim"], "Bad deploy of checkout-service v4.12");
        assert_eq!(b["last_support"], "2026-03-03T12:10:00Z");
        assert_eq!(b["freshness"], "stale", "held 20h50m, stale after 12h");
        // 0.7 × 0.5^(20h50m / 12h) = 0.2097…
        assert_eq!(b["effective_confidence"], 0.21);
        assert_eq!(b["support"], "ok", "E15 is rejected only at 09:40");
        // Its evidence at that instant, and at the end of the log.
        let evidence = |at: Option<&str>| {
            let mut cmd = asof();
            cmd.arg("evidence");
            if let Some(s) = source {
                cmd.arg(s);
            }
            if let Some(at) = at {
                cmd.args(["--at", at]);
            }
            let all = json(cmd.args(["--format", "json"]));
            all["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["id"] == "E15")
                .unwrap()
                .clone()
        };
        assert_eq!(
            evidence(Some("2026-03-04T09:00:00Z"))["verification"]["state"],
            "candidate"
        );
        let end = evidence(None);
        assert_eq!(end["verification"]["state"], "rejected");
        assert_eq!(end["verification"]["by"], "reviewer");
        assert_eq!(end["verification"]["since"], "2026-03-04T09:40:00Z");
        assert_eq!(
            end["verification"]["note"],
            "The 18% dip was a traffic lull, not the rollback"
        );
        // A version citing only E15 loses its support once E15 is rejected.
        let impact = json(
            asof()
                .args(["believed", "--topic", "customer-impact", "--format", "json"])
                .args([
                    "--at",
                    "2026-03-04T09:45:00Z",
                    "--about",
                    "2026-03-03T12:00:00Z",
                ]),
        );
        let b = belief(&impact, "triage");
        assert_eq!(
            (b["assertion"].as_str(), b["support"].as_str()),
            (Some("B20"), Some("unsupported"))
        );
    }
}

/// "What did the system answer when the agents disagreed?" — conflicted, with
/// both claims, never one picked; answered once they agree.
#[test]
fn the_answer_across_agents_on_the_demo() {
    let answer = |at: &str, extra: &[&str]| {
        json(
            asof()
                .args([
                    "answer",
                    "--topic",
                    "root-cause",
                    "--format",
                    "json",
                    "--at",
                    at,
                ])
                .args(extra),
        )
    };
    let split = answer("2026-03-03T16:00:00Z", &[]);
    assert_eq!(split["status"], "conflicted");
    assert_eq!(split["claim"], Value::Null);
    let claims: Vec<(&str, &str)> = split["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent"].as_str().unwrap(), a["claim"].as_str().unwrap()))
        .collect();
    assert_eq!(
        claims,
        vec![
            ("triage", "Bad deploy of checkout-service v4.12"),
            (
                "infra",
                "Expired TLS certificate on the card-network gateway"
            )
        ]
    );
    for a in split["agents"].as_array().unwrap() {
        assert!(
            a["effective_confidence"].is_number() && a["support"].is_string(),
            "{a}"
        );
    }
    let agreed = answer("2026-03-05T10:00:00Z", &[]);
    assert_eq!(agreed["status"], "answered");
    assert_eq!(
        agreed["claim"],
        "Expired TLS certificate on the card-network gateway"
    );
    assert_eq!(agreed["agents"].as_array().unwrap().len(), 2);
    // One agent's working answer; before anyone believed anything: none.
    let triage = answer("2026-03-03T16:00:00Z", &["--agent", "triage"]);
    assert_eq!(triage["status"], "answered");
    assert_eq!(triage["claim"], "Bad deploy of checkout-service v4.12");
    let early = answer("2026-03-02T09:00:00Z", &[]);
    assert_eq!(
        (early["status"].as_str(), &early["agents"]),
        (Some("none"), &Value::Array(vec![]))
    );
    // The table says the same in words.
    asof()
        .args([
            "answer",
            "--topic",
            "root-cause",
            "--at",
            "2026-03-03T16:00:00Z",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "⚠ conflicted: triage says Bad deploy",
        ));
    asof()
        .args(["answer", "--topic", "nope", "--at", "now"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown topic `nope`"));
}

/// `--without-rejected` is `--without` the evidence rejected by T′, and says why.
#[test]
fn without_rejected_equals_without_the_rejected_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let fork = |args: &[&str], out: &str| {
        let out = dir.path().join(out);
        let v = json(
            asof()
                .arg("fork")
                .arg(&db)
                .args(args)
                .arg("--out")
                .arg(&out)
                .args(["--format", "json"]),
        );
        (v, out)
    };
    let (rejected, a) = fork(&["--without-rejected"], "a.db");
    let (named, b) = fork(&["--without", "E15"], "b.db");
    assert_eq!(rejected["removed"], serde_json::json!(["E15"]));
    assert_eq!(rejected["rejected"][0]["evidence"], "E15");
    assert_eq!(rejected["rejected"][0]["verification"], "V2");
    assert_eq!(rejected["rejected"][0]["by"], "reviewer");
    assert_eq!(rejected["dropped_verifications"], serde_json::json!(["V2"]));
    for key in [
        "removed",
        "dropped",
        "scaled",
        "dropped_retractions",
        "noop_retractions",
        "divergence",
        "truth",
    ] {
        assert_eq!(rejected[key], named[key], "{key}");
    }
    // The two forks answer alike.
    for at in [
        "2026-03-03T13:00:00Z",
        "2026-03-04T12:00:00Z",
        "2026-03-16T10:10:00Z",
    ] {
        let believed = |store: &Path| {
            let mut v = json(
                asof()
                    .arg("believed")
                    .arg(store)
                    .args(["--format", "json", "--at", at]),
            );
            v.as_object_mut().unwrap().remove("as_of");
            // Each fork's lineage names its own removal and time of making.
            assert!(v.as_object_mut().unwrap().remove("what_if").is_some());
            v
        };
        assert_eq!(believed(&a), believed(&b), "at {at}");
    }
    // Rejected by an earlier T′: nothing yet, refused.
    asof()
        .arg("fork")
        .arg(&db)
        .args([
            "--without-rejected",
            "--at",
            "2026-03-04T09:39:59Z",
            "--out",
        ])
        .arg(dir.path().join("c.db"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no evidence is rejected by 2026-03-04T09:39:59Z",
        ));
    assert!(!dir.path().join("c.db").exists());
}

const RULES: &str = r#"asof: 1
incident: {id: v}
agents: [{id: a}]
topics:
  - {id: t, half_life: 6x, stale_after: PT6H}
events:
  - evidence: {id: E1, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-02T00:00:00Z}
  - verify: {id: V1, evidence: E1, state: rejected, recorded_at: 2026-01-01T00:00:00Z}
  - verify: {id: V2, evidence: E9, state: stale, recorded_at: 2026-01-03T00:00:00Z}
  - verify: {id: V3, evidence: E1, state: approved, recorded_at: 2026-01-03T00:00:00Z}
"#;

/// Every rule of design.md §4's dataset additions, each with its location.
#[test]
fn verify_events_and_durations_are_validated_with_locations() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "rules.yaml", RULES);
    let assert = asof().arg("validate").arg(&path).assert().code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for needle in [
        "rules.yaml:5:13: topic `t`: `half_life`: `6x` is not a duration",
        "rules.yaml:8:22: event V1: verifies evidence `E1` recorded at 2026-01-02T00:00:00Z, after this event (2026-01-01T00:00:00Z)",
        "event V2: verifies evidence `E9`, which does not exist",
        "event V3: `state` is `approved`; expected one of candidate, direct-read, claim-supported, conflicted, stale, rejected",
    ] {
        assert!(err.contains(needle), "missing `{needle}` in:\n{err}");
    }
    assert!(
        !err.contains("stale_after"),
        "PT6H is a valid duration:\n{err}"
    );
    let typo = write(
        dir.path(),
        "typo.yaml",
        &RULES.replace("state: approved,", "state: rejected, mood: sad,"),
    );
    asof()
        .arg("validate")
        .arg(&typo)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `mood`"));

    // The same dataset as JSON Lines, valid: both formats load identical stores.
    let yaml = write(
        dir.path(),
        "ok.yaml",
        "asof: 1\nincident: {id: v}\nagents: [{id: a}]\ntopics:\n  - {id: t, half_life: 6h, stale_after: 1d}\nevents:\n  - evidence: {id: E1, kind: log, observed_at: 2026-01-01T00:00:00Z, recorded_at: 2026-01-01T00:00:00Z}\n  - verify: {evidence: E1, state: conflicted, by: r, recorded_at: 2026-01-01T00:00:00Z, note: n}\n",
    );
    let jsonl = write(
        dir.path(),
        "ok.jsonl",
        concat!(
            r#"{"asof": 1, "incident": {"id": "v"}, "agents": [{"id": "a"}], "topics": [{"id": "t", "half_life": "6h", "stale_after": "1d"}]}"#,
            "\n",
            r#"{"evidence": {"id": "E1", "kind": "log", "observed_at": "2026-01-01T00:00:00Z", "recorded_at": "2026-01-01T00:00:00Z"}}"#,
            "\n",
            r#"{"verify": {"evidence": "E1", "state": "conflicted", "by": "r", "recorded_at": "2026-01-01T00:00:00Z", "note": "n"}}"#,
            "\n"
        ),
    );
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    load(&yaml, &a);
    load(&jsonl, &b);
    let rows = |db: &Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut out = Vec::new();
        for sql in [
            "SELECT seq || id || kind || recorded_at || coalesce(verifies, '') || coalesce(state, '') || coalesce(source, '') || coalesce(text, '') FROM events ORDER BY seq",
            "SELECT id || half_life || stale_after FROM topics",
        ] {
            let mut stmt = conn.prepare(sql).unwrap();
            out.extend(
                stmt.query_map([], |r| r.get::<_, String>(0))
                    .unwrap()
                    .map(Result::unwrap),
            );
        }
        out
    };
    assert_eq!(rows(&a), rows(&b));
    assert!(
        rows(&a).contains(&"2V2verify1767225600000000E1conflictedrn".to_owned()),
        "{:?}",
        rows(&a)
    );
    assert!(
        rows(&a).contains(&"t2160000000086400000000".to_owned()),
        "{:?}",
        rows(&a)
    );
}

/// The report's quality section names the stale, unsupported and contested
/// beliefs and the conflicted topics at the end of the log.
#[test]
fn the_report_has_a_quality_section() {
    let out = asof().args(["export", "--format", "md"]).assert().success();
    let md = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let section = md
        .split("## Quality at the end of the log")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap()
        .to_owned();
    assert!(
        section.contains("| customer-impact | triage | ~18% of checkouts failing | 0.70 → 0.00 |"),
        "{section}"
    );
    assert!(
        section.contains("| stale | unsupported | E15 |"),
        "{section}"
    );
    assert!(
        section.contains("| unknown | contested | E7 |"),
        "{section}"
    );
    assert!(section.contains("### Conflicted topics"), "{section}");
    assert!(
        section.contains("| affected-regions | infra | us-east |"),
        "{section}"
    );
    assert!(
        section.contains("| 2026-03-04T09:40:00Z | V2 | E15 | rejected | reviewer |"),
        "{section}"
    );
}

/// A version's support times are derived rows like any other: `check` names a
/// tampered one, `rebuild` restores it.
#[test]
fn check_detects_tampered_support_times() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let supports = |db: &Path| -> Vec<(u64, i64, Vec<i64>)> {
        let store = asof::store::Store::open(db).unwrap();
        let mut versions = store.versions().unwrap();
        versions.sort_by_key(|v| v.id);
        versions
            .into_iter()
            .map(|v| (v.id, v.supported_at, v.reconfirmed))
            .collect()
    };
    let original = supports(&db);
    let reconfirmed = original
        .iter()
        .find(|(_, _, r)| !r.is_empty())
        .map(|(id, _, _)| *id)
        .expect("the demo reconfirms some versions");
    // A row's packed fields (crates/asof-store/src/store/codec.rs): flags, confidence (8
    // bytes), then LEB128 numbers: created_by, assertion_seq, the valid end
    // asked for (unless flag 16), recorded_at - supported_at, the closing seq
    // (if flag 2), the citation and reconfirmation counts, recorded_at minus
    // each reconfirmation. Each tampered instant is set to the epoch.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let read = |id: i64| -> (Vec<u8>, i64) {
        conn.query_row(
            "SELECT rest, recorded_at FROM versions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let write = |id: i64, rest: &[u8]| {
        conn.execute(
            "UPDATE versions SET rest = ?1 WHERE id = ?2",
            rusqlite::params![rest, id],
        )
        .unwrap();
    };
    // The position after the LEB128 number at `at`, and the number.
    let next = |rest: &[u8], at: usize| -> (usize, u64) {
        let (mut n, mut shift, mut i) = (0u64, 0, at);
        loop {
            n |= u64::from(rest[i] & 0x7f) << shift;
            i += 1;
            shift += 7;
            if rest[i - 1] & 0x80 == 0 {
                return (i, n);
            }
        }
    };
    // The position of the support instant's distance.
    let support = |rest: &[u8]| -> usize {
        let (mut at, _) = next(rest, 9);
        at = next(rest, at).0;
        if rest[0] & 16 == 0 {
            at = next(rest, at).0;
        }
        at
    };
    let epoch_from = |recorded_at: i64| -> Vec<u8> {
        let mut n = ((recorded_at << 1) ^ (recorded_at >> 63)) as u64;
        let mut out = Vec::new();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out
    };
    let replace = |rest: &[u8], from: usize, recorded_at: i64| -> Vec<u8> {
        let to = next(rest, from).0;
        [&rest[..from], &epoch_from(recorded_at)[..], &rest[to..]].concat()
    };
    let first: i64 = conn
        .query_row("SELECT min(id) FROM versions", [], |r| r.get(0))
        .unwrap();
    let (rest, recorded_at) = read(first);
    write(first, &replace(&rest, support(&rest), recorded_at));
    let (rest, recorded_at) = read(reconfirmed as i64);
    let mut at = next(&rest, support(&rest)).0;
    if rest[0] & 2 != 0 {
        at = next(&rest, at).0;
    }
    at = next(&rest, at).0;
    let (mut at, times) = next(&rest, at);
    for _ in 1..times {
        at = next(&rest, at).0;
    }
    write(reconfirmed as i64, &replace(&rest, at, recorded_at));
    drop(conn);
    check_finds_then_rebuild_repairs(
        &db,
        &[
            "supported_at: stored 1970-01-01T00:00:00Z",
            "1970-01-01T00:00:00Z], replayed [",
            // The pages were derived from the rows before they were tampered with.
            "the version pages (table pages) differ from a fresh computation",
        ],
        2,
    );
    assert_eq!(
        supports(&db),
        original,
        "rebuild restores the support times"
    );
}

/// The B40 case (design.md §3 step 1 and §9, amended 2026-12-05): five minutes
/// after the signed-off postmortem B40 restated the root cause over
/// [08:58, ∞), both of triage's TLS versions are current, supported at B40's
/// instant — B40 is not clipped by the same claim's own later-starting
/// version, and covering it supports it anew. The store and the demo agree,
/// and the Markdown report's quality section says the same.
#[test]
fn the_signed_off_postmortem_refreshes_the_whole_triage_belief() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    for source in [None, Some(db.as_path())] {
        let mut cmd = asof();
        cmd.arg("believed");
        if let Some(s) = source {
            cmd.arg(s);
        }
        let out = json(cmd.args([
            "--topic",
            "root-cause",
            "--agent",
            "triage",
            "--format",
            "json",
            "--at",
            "2026-03-16T10:10:00Z",
        ]));
        let beliefs = out["beliefs"].as_array().unwrap();
        let tls: Vec<&Value> = beliefs
            .iter()
            .filter(|b| b["claim"] == "Expired TLS certificate on the card-network gateway")
            .collect();
        assert_eq!(tls.len(), 1, "one version, from 08:58 (B33): {out}");
        for b in tls {
            assert_eq!(b["freshness"], "current", "{b}");
            assert_eq!(b["last_support"], "2026-03-16T10:05:00Z", "{b}");
        }
    }
    // The report's quality section is read at the last event, 10:10.
    let report = asof().args(["export", "--format", "md"]).output().unwrap();
    let report = String::from_utf8_lossy(&report.stdout);
    let quality = report
        .split_once("### Stale, unsupported and contested beliefs")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no quality section:\n{report}"));
    let quality = quality.split("\n#").next().unwrap_or_default();
    assert!(quality.contains("| root-cause | infra |"), "{quality}");
    assert!(!quality.contains("| root-cause | triage |"), "{quality}");
}

/// `answer` says when the agents giving it are stale or unsupported
/// (design.md §8): an answer from one stale belief is not a plain "answered".
#[test]
fn an_answer_says_when_its_agents_are_stale() {
    let out = asof()
        .args([
            "answer",
            "--topic",
            "root-cause",
            "--at",
            "2026-03-05T00:00:00Z",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "answered: Expired TLS certificate on the card-network gateway (infra ⌛ stale)"
        ),
        "{text}"
    );
    assert!(text.contains("FRESHNESS"), "{text}");
    let v = json(asof().args([
        "answer",
        "--topic",
        "root-cause",
        "--at",
        "2026-03-05T00:00:00Z",
        "--format",
        "json",
    ]));
    assert_eq!(v["agents"][0]["freshness"], "stale");
    assert_eq!(v["agents"][0]["support"], "ok");
}
