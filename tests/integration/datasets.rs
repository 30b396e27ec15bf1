//! The bundled datasets each show their rule, and YAML and JSON Lines load into
//! identical stores.

use crate::common;

use common::{asof, load};
use serde_json::Value;
use std::path::Path;

fn json(args: &[&str]) -> Value {
    let out = asof()
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("JSON")
}

fn claims_and_valid(v: &Value, key: &str) -> Vec<(String, Value, Value)> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["claim"].as_str().unwrap().to_owned(),
                b["valid_from"].clone(),
                b["valid_to"].clone(),
            )
        })
        .collect()
}

#[test]
fn every_bundled_dataset_validates() {
    let mut checked = 0;
    for entry in std::fs::read_dir("datasets").unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Rules files and the fixture writer are not datasets.
        if name.ends_with(".rules.yaml") || name.ends_with(".py") {
            continue;
        }
        let expected = if name.ends_with(".otlp.jsonl") {
            "valid OTLP trace"
        } else {
            "valid"
        };
        asof()
            .arg("validate")
            .arg(&path)
            .assert()
            .success()
            .stdout(predicates::str::contains(expected));
        checked += 1;
    }
    assert_eq!(
        checked, 7,
        "the demo, four one-rule examples, the SRE trace and its rerun"
    );
}

#[test]
fn a_late_arriving_log_is_clipped_by_a_surer_present() {
    let v = json(&[
        "history",
        "datasets/late-arriving-log.yaml",
        "--topic",
        "queue-state",
    ]);
    let late = &v["versions"][1];
    assert_eq!(late["claim"], "backed up");
    assert_eq!(late["confidence"], 0.6);
    assert_eq!(late["valid_to"], "2026-05-04T10:00:00Z");
    assert_eq!(late["clipped_by"], "B1");
    assert_eq!(
        v["versions"][0]["superseded_at"],
        Value::Null,
        "the present (1.0) is not overwritten by a late log at 0.6"
    );
}

#[test]
fn a_surer_late_arriving_log_replaces_the_present() {
    let v = json(&[
        "history",
        "datasets/late-arriving-log.yaml",
        "--topic",
        "replica-state",
    ]);
    let present = &v["versions"][0];
    assert_eq!(present["claim"], "in sync");
    assert_eq!(present["superseded_at"], "2026-05-04T12:01:00Z");
    assert_eq!(present["closed"]["by"], "B4");
    let late = &v["versions"][1];
    assert_eq!(late["claim"], "lagging");
    assert_eq!(late["valid_from"], "2026-05-04T08:00:00Z");
    assert_eq!(late["valid_to"], Value::Null, "not clipped: open");
    assert_eq!(late["clipped_by"], Value::Null);
    assert_eq!(v["versions"].as_array().unwrap().len(), 2);
}

#[test]
fn retroactive_correction_splits_the_old_belief() {
    let v = json(&[
        "believed",
        "datasets/retroactive-correction.yaml",
        "--at",
        "2026-05-05T12:00:00Z",
    ]);
    assert_eq!(
        claims_and_valid(&v, "beliefs"),
        vec![
            (
                "p99 about 900 ms".into(),
                "2026-05-04T09:00:00Z".into(),
                "2026-05-04T09:30:00Z".into()
            ),
            (
                "p99 about 200 ms".into(),
                "2026-05-04T09:30:00Z".into(),
                Value::Null
            ),
        ]
    );
    // Before the correction was recorded, the agent believed 200 ms about 09:10.
    let v = json(&[
        "believed",
        "datasets/retroactive-correction.yaml",
        "--at",
        "2026-05-05T10:04:59Z",
        "--about",
        "2026-05-04T09:10:00Z",
    ]);
    assert_eq!(v["beliefs"][0]["claim"], "p99 about 200 ms");
}

#[test]
fn portion_retraction_keeps_the_rest() {
    let v = json(&[
        "believed",
        "datasets/portion-retraction.yaml",
        "--at",
        "2026-05-04T12:00:00Z",
    ]);
    assert_eq!(
        claims_and_valid(&v, "beliefs"),
        vec![(
            "down".into(),
            "2026-05-04T09:00:00Z".into(),
            "2026-05-04T11:00:00Z".into()
        )]
    );
}

#[test]
fn many_valued_topic_holds_a_set() {
    let v = json(&[
        "believed",
        "datasets/many-valued-topic.yaml",
        "--at",
        "2026-05-04T10:15:00Z",
        "--about",
        "2026-05-04T10:15:00Z",
    ]);
    let claims: Vec<&str> = v["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["claim"].as_str().unwrap())
        .collect();
    assert_eq!(
        claims,
        vec!["upstream timeouts", "elevated 5xx", "DNS timeouts"]
    );
    let v = json(&[
        "believed",
        "datasets/many-valued-topic.yaml",
        "--at",
        "2026-05-04T12:00:00Z",
        "--about",
        "2026-05-04T10:15:00Z",
    ]);
    assert_eq!(v["beliefs"].as_array().unwrap().len(), 2);
}

fn to_jsonl(yaml: &Path) -> String {
    common::yaml_to_jsonl(&std::fs::read_to_string(yaml).unwrap())
}

fn table(db: &Path, sql: &str) -> Vec<Vec<String>> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        (0..n)
            .map(|i| {
                r.get::<_, rusqlite::types::Value>(i)
                    .map(|v| format!("{v:?}"))
            })
            .collect::<rusqlite::Result<Vec<_>>>()
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn yaml_and_jsonl_load_into_identical_stores() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = Path::new("datasets/payment-outage.yaml");
    let jsonl = common::write(dir.path(), "demo.jsonl", &to_jsonl(yaml));
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    load(yaml, &a);
    load(&jsonl, &b);
    for sql in [
        "SELECT * FROM events ORDER BY seq",
        "SELECT * FROM citations ORDER BY seq, pos",
        "SELECT * FROM versions ORDER BY id",
        "SELECT * FROM outcomes ORDER BY seq",
        "SELECT * FROM reconfirmations ORDER BY seq, version",
        "SELECT * FROM agents ORDER BY idx",
        "SELECT * FROM topics ORDER BY idx",
        "SELECT * FROM meta WHERE key NOT IN ('source', 'loaded_at') ORDER BY key",
    ] {
        assert_eq!(table(&a, sql), table(&b, sql), "{sql}");
    }
}

/// At the end of the demo infra holds B35's TLS at 0.95 from 08:58 (it
/// replaced B28's 0.90 from 09:05, design.md §3 step 1 as amended
/// 2026-12-06), supported anew by the postmortem's B38 on E32.
#[test]
fn the_demo_ends_with_infra_on_b35_supported_by_b38() {
    let end = "2026-03-16T10:10:00Z";
    let v = json(&[
        "answer",
        "--topic",
        "root-cause",
        "--agent",
        "infra",
        "--at",
        end,
    ]);
    assert_eq!(v["agents"][0]["assertion"], "B35", "{v}");
    let v = json(&[
        "believed",
        "--topic",
        "root-cause",
        "--agent",
        "infra",
        "--at",
        end,
    ]);
    let held = v["beliefs"].as_array().unwrap();
    assert_eq!(held.len(), 1, "{v}");
    assert_eq!(held[0]["assertion"], "B35");
    assert_eq!(held[0]["valid_from"], "2026-03-02T08:58:00Z");
    assert_eq!(held[0]["valid_to"], Value::Null);
    assert_eq!(held[0]["confidence"], 0.95);
    assert_eq!(
        held[0]["last_support"], "2026-03-12T16:10:00Z",
        "B38's instant"
    );
    let asked = json(&["ask", "what was the root cause at 2026-03-16 10:10?"]);
    let restating: Vec<&Value> = asked["result"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["restates"] == "B35")
        .collect();
    assert_eq!(restating.len(), 1, "{asked}");
    assert_eq!(restating[0]["assertion"], "B38");
    assert_eq!(restating[0]["cites"][0]["id"], "E32");
}
