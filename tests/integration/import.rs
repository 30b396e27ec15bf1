//! `asof import graphiti|facts` on small fixtures written here: the versions they
//! become, row by row; bad records refused with their location and no store left;
//! what cannot be represented skipped and reported.

use crate::common;

use common::{asof, stdout_json as json, write};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// (agent, claim, valid_from, valid_to, recorded_at, superseded_at, closed) per version.
fn rows(db: &Path, topic: &str) -> Vec<(String, String, Value, Value, Value, Value, Value)> {
    let h = json(
        asof()
            .arg("history")
            .arg(db)
            .args(["--topic", topic, "--format", "json"]),
    );
    h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["agent"].as_str().unwrap().to_owned(),
                v["claim"].as_str().unwrap().to_owned(),
                v["valid_from"].clone(),
                v["valid_to"].clone(),
                v["recorded_at"].clone(),
                v["superseded_at"].clone(),
                v["closed"].clone(),
            )
        })
        .collect()
}

fn t(s: &str) -> Value {
    Value::String(s.to_owned())
}

const EDGES: &str = r#"{
 "nodes": [{"uuid": "n-alice", "name": "Alice"}, {"uuid": "n-acme", "name": "Acme Corp"},
           {"uuid": "n-globex", "name": "Globex"}],
 "episodes": [
  {"uuid": "ep-1", "name": "chat 1", "source": "message", "source_description": "slack #hr",
   "created_at": "2024-01-01T10:00:00Z", "valid_at": "2024-01-01T09:55:00Z"},
  {"uuid": "ep-2", "name": "chat 2", "source": "message", "created_at": "2024-06-01T10:00:00Z"},
  {"uuid": "ep-3", "name": "email", "source": "text", "created_at": "2024-02-01T10:00:00Z"}],
 "edges": [
  {"uuid": "e-1", "group_id": "hr-bot", "source_node_uuid": "n-alice", "target_node_uuid": "n-acme",
   "name": "WORKS_AT", "fact": "Alice works at Acme Corp", "episodes": ["ep-1", "ep-3"],
   "created_at": "2024-01-01T10:01:00Z", "valid_at": "2023-05-01T00:00:00Z",
   "invalid_at": "2024-05-31T00:00:00Z", "expired_at": "2024-06-01T10:01:00Z"},
  {"uuid": "e-2", "group_id": "hr-bot", "source_node_uuid": "n-alice", "target_node_uuid": "n-globex",
   "name": "WORKS_AT", "fact": "Alice works at Globex", "episodes": ["ep-2"],
   "created_at": "2024-06-01T10:01:00Z", "valid_at": "2024-06-01T00:00:00Z",
   "invalid_at": null, "expired_at": null},
  {"uuid": "e-3", "source_node_uuid": "n-alice", "target_node_uuid": "n-unknown",
   "name": "LIVES_IN", "fact": "Alice lives in Lyon", "episodes": [],
   "created_at": "2024-03-01T08:00:00Z", "valid_at": "2020-01-01T00:00:00Z",
   "invalid_at": "2024-01-01T00:00:00Z"}
 ]}"#;

#[test]
fn graphiti_edges_become_versions_on_both_axes() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "edges.json", EDGES);
    let db = dir.path().join("g.db");
    let report = json(
        asof()
            .args(["import", "graphiti"])
            .arg(&input)
            .arg("--db")
            .arg(&db)
            .args(["--format", "json"]),
    );
    assert_eq!(report["records"], 3);
    assert_eq!(report["evidence"], 3);
    // e-1, its later episode (ep-3) as a reconfirmation, e-2, e-3.
    assert_eq!(report["assertions"], 4);
    assert_eq!(report["retractions"], 1);
    // Every default is counted; e-1's contradicting edge e-2 starts a day after
    // e-1's invalid_at and no edge starts there, so that end is taken as learned
    // at expiry (and said so).
    let defaults = &report["defaults"];
    for (what, count) in [
        ("entity names not in the export: their uuids stand in", 1),
        ("edges without group_id: agent `graphiti`", 1),
        (
            "rewritten invalid_at with no edge starting there in the export: taken as learned at expired_at",
            1,
        ),
    ] {
        assert!(
            defaults
                .as_array()
                .unwrap()
                .contains(&serde_json::json!({"what": what, "count": count})),
            "{what}: {report}"
        );
    }
    assert_eq!(report["cases"].as_array().unwrap().len(), 3, "{report}");

    // Alice WORKS_AT: Acme held from creation; Graphiti expired it at 2024-06-01T10:01
    // with invalid_at 2024-05-31, so from then on only [valid_at, invalid_at) is held.
    assert_eq!(
        rows(&db, "Alice WORKS_AT"),
        vec![
            (
                "hr-bot".into(),
                "Acme Corp".into(),
                t("2023-05-01T00:00:00Z"),
                Value::Null,
                t("2024-01-01T10:01:00Z"),
                t("2024-06-01T10:01:00Z"),
                serde_json::json!({"by": "X1", "kind": "retracted"}),
            ),
            (
                "hr-bot".into(),
                "Globex".into(),
                t("2024-06-01T00:00:00Z"),
                Value::Null,
                t("2024-06-01T10:01:00Z"),
                Value::Null,
                Value::Null,
            ),
            (
                "hr-bot".into(),
                "Acme Corp".into(),
                t("2023-05-01T00:00:00Z"),
                t("2024-05-31T00:00:00Z"),
                t("2024-06-01T10:01:00Z"),
                Value::Null,
                Value::Null,
            ),
        ]
    );
    // An edge stored with its end already known, by the default agent, and an
    // unnamed target standing in by its uuid.
    assert_eq!(
        rows(&db, "Alice LIVES_IN"),
        vec![(
            "graphiti".into(),
            "n-unknown".into(),
            t("2020-01-01T00:00:00Z"),
            t("2024-01-01T00:00:00Z"),
            t("2024-03-01T08:00:00Z"),
            Value::Null,
            Value::Null,
        )]
    );
    // Episodes are evidence, recorded when Graphiti stored them; the one merged
    // into e-1 later reconfirms it then.
    let ev = json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
    let items: Vec<(String, String, String)> = ev["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_owned(),
                e["locator"].as_str().unwrap().to_owned(),
                e["recorded_at"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        items,
        vec![
            (
                "EP1".into(),
                "graphiti episode ep-1".into(),
                "2024-01-01T10:00:00Z".into()
            ),
            (
                "EP2".into(),
                "graphiti episode ep-3".into(),
                "2024-02-01T10:00:00Z".into()
            ),
            (
                "EP3".into(),
                "graphiti episode ep-2".into(),
                "2024-06-01T10:00:00Z".into()
            ),
        ]
    );
    let h = json(asof().arg("history").arg(&db).args([
        "--topic",
        "Alice WORKS_AT",
        "--format",
        "json",
    ]));
    assert!(h.to_string().contains("\"G1.2\""), "{h}");
    // The report is kept in the store.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let kept: String = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'import_report'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(kept.contains("\"format\":\"graphiti\""));
}

#[test]
fn graphiti_bad_edges_are_refused_with_their_location() {
    let dir = tempfile::tempdir().unwrap();
    let bad = EDGES
        .replace(
            "\"created_at\": \"2024-06-01T10:01:00Z\"",
            "\"created_at\": \"June\"",
        )
        .replace(
            "\"invalid_at\": \"2024-01-01T00:00:00Z\"",
            "\"invalid_at\": \"2019-01-01T00:00:00Z\"",
        );
    let input = write(dir.path(), "edges.json", &bad);
    let db = dir.path().join("g.db");
    asof()
        .args(["import", "graphiti"])
        .arg(&input)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "edges.json edge 2: (uuid e-2) created_at:",
        ))
        .stderr(predicate::str::contains(
            "edges.json edge 3: (uuid e-3) invalid_at: 2019-01-01T00:00:00Z is not after valid_at",
        ));
    assert!(!db.exists(), "no store after a refused import");

    let input = write(dir.path(), "broken.json", "{\"edges\": [");
    asof()
        .args(["import", "graphiti"])
        .arg(&input)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.json:1:11: not valid JSON"));
    let input = write(dir.path(), "missing.json", "[{\"uuid\": \"x\"}]");
    asof()
        .args(["import", "graphiti"])
        .arg(&input)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "missing.json edge 1: missing field `source_node_uuid`",
        ));
    assert!(!db.exists());
}

fn facts_db(dir: &Path, rows: &[&str]) -> std::path::PathBuf {
    let path = dir.join("memory.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE facts (subject TEXT, predicate TEXT, object TEXT, valid_from TEXT,
            valid_to TEXT, ingested_at TEXT, expired_at TEXT, source TEXT, confidence REAL);",
    )
    .unwrap();
    for row in rows {
        conn.execute(&format!("INSERT INTO facts VALUES ({row})"), [])
            .unwrap();
    }
    path
}

#[test]
fn a_facts_table_becomes_versions_and_reports_what_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let memory = facts_db(
        dir.path(),
        &[
            "'checkout', 'status', 'degraded', '2026-03-02T09:05:00Z', NULL, '2026-03-02T09:20:00Z', '2026-03-02T12:00:00Z', 'pagerduty PD-1', 0.8",
            "'checkout', 'status', 'down', '2026-03-02T09:05:00Z', NULL, '2026-03-02T10:05:00Z', NULL, 'grafana', 0.9",
            "'checkout', 'region', 'eu-west', '2026-03-02', '2026-03-03', '2026-03-02T09:30:00Z', NULL, NULL, NULL",
            "'checkout', 'region', 'us-east', '2026-03-02', NULL, 1772445600, NULL, 'pagerduty PD-1', 1",
        ],
    );
    let db = dir.path().join("f.db");
    let report = json(
        asof()
            .args(["import", "facts"])
            .arg(&memory)
            .arg("--db")
            .arg(&db)
            .args(["--many", "region", "--format", "json"]),
    );
    assert_eq!(report["records"], 4);
    assert_eq!(report["evidence"], 2);
    assert_eq!(report["assertions"], 4);
    // Row 1 was replaced by row 2 before it expired: its retraction finds nothing.
    assert_eq!(report["retractions"], 0);
    assert_eq!(
        report["noops"],
        serde_json::json!([{"location": "row 1", "reason": "retraction X1 finds nothing held to retract (already superseded or retracted): not loaded"}])
    );
    assert_eq!(report["skipped"], serde_json::json!([]));
    assert_eq!(
        rows(&db, "checkout status"),
        vec![
            (
                "memory".into(),
                "degraded".into(),
                t("2026-03-02T09:05:00Z"),
                Value::Null,
                t("2026-03-02T09:20:00Z"),
                t("2026-03-02T10:05:00Z"),
                serde_json::json!({"by": "F2", "kind": "superseded"}),
            ),
            (
                "memory".into(),
                "down".into(),
                t("2026-03-02T09:05:00Z"),
                Value::Null,
                t("2026-03-02T10:05:00Z"),
                Value::Null,
                Value::Null,
            ),
        ]
    );
    // Multi-valued: both regions held at once; epoch seconds in a TEXT column read as such.
    assert_eq!(
        rows(&db, "checkout region"),
        vec![
            (
                "memory".into(),
                "eu-west".into(),
                t("2026-03-02T00:00:00Z"),
                t("2026-03-03T00:00:00Z"),
                t("2026-03-02T09:30:00Z"),
                Value::Null,
                Value::Null,
            ),
            (
                "memory".into(),
                "us-east".into(),
                t("2026-03-02T00:00:00Z"),
                Value::Null,
                t("2026-03-02T10:00:00Z"),
                Value::Null,
                Value::Null,
            ),
        ]
    );
    let h = json(asof().arg("history").arg(&db).args([
        "--topic",
        "checkout status",
        "--format",
        "json",
    ]));
    assert_eq!(h["versions"][0]["confidence"], 0.8);
    assert_eq!(h["versions"][0]["supported_by"], serde_json::json!(["S1"]));
}

#[test]
fn bad_fact_rows_are_refused_with_their_location() {
    let dir = tempfile::tempdir().unwrap();
    let memory = facts_db(
        dir.path(),
        &[
            "'a', 'p', 'x', '2026-03-02T09:05:00Z', NULL, '2026-03-02T09:20:00Z', NULL, NULL, NULL",
            "'a', 'p', NULL, 'garbage', NULL, '2026-03-02', '2026-03-01', NULL, NULL",
            "'a', 'p', 'y', '2026-03-02T09:05:00', NULL, '2026-03-02T09:20:00Z', NULL, NULL, 1.5",
        ],
    );
    let db = dir.path().join("f.db");
    asof()
        .args(["import", "facts"])
        .arg(&memory)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "memory.db row 2: object is NULL; valid_from: `garbage` is not an RFC 3339 timestamp",
        ))
        .stderr(predicate::str::contains(
            "expired_at 2026-03-01T00:00:00Z is before ingested_at 2026-03-02T00:00:00Z",
        ))
        .stderr(predicate::str::contains("memory.db row 3: valid_from:"));
    assert!(!db.exists());

    // Valid cells but a confidence out of range: the dataset rules apply.
    let dir = tempfile::tempdir().unwrap();
    let memory = facts_db(
        dir.path(),
        &["'a', 'p', 'y', '2026-03-02T09:05:00Z', NULL, '2026-03-02T09:20:00Z', NULL, NULL, 1.5"],
    );
    asof()
        .args(["import", "facts"])
        .arg(&memory)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("memory.db row 1: event F1:"))
        .stderr(predicate::str::contains("confidence"));

    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE facts (subject TEXT, object TEXT);")
        .unwrap();
    asof()
        .args(["import", "facts"])
        .arg(&other)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "lacks the column(s) predicate, valid_from, ingested_at",
        ));
    asof()
        .args(["import", "facts"])
        .arg(&other)
        .args(["--table", "memories", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no table named `memories`"));
    assert!(!db.exists());
}
