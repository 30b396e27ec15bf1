//! `asof fork` and `asof diff` on real files: the demo's misleading evidence,
//! lineage, parents left untouched, and refusals.

mod common;

use common::{asof, bytes};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn json(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("JSON")
}

fn load_demo(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("demo.db");
    asof()
        .args(["load", "datasets/payment-outage.yaml", "--db"])
        .arg(&db)
        .assert()
        .success();
    db
}

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
        .stdout(predicate::str::contains("what-if fork of"))
        .stdout(predicate::str::contains("a replay, not a causal model"))
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
