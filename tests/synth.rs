//! `asof gen` is deterministic and its output always loads.

mod common;

use common::asof;

#[test]
fn the_same_seed_gives_the_same_bytes_and_a_valid_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    for out in [&a, &b] {
        asof()
            .args([
                "gen", "--events", "20000", "--topics", "30", "--agents", "3", "--seed", "9", "-o",
            ])
            .arg(out)
            .assert()
            .success();
    }
    assert_eq!(common::bytes(&a), common::bytes(&b));
    let small = |seed: &str| {
        asof()
            .args(["gen", "--events", "200", "--seed", seed])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(small("10"), small("10"));
    assert_ne!(
        small("10"),
        small("11"),
        "another seed gives another incident"
    );

    let db = dir.path().join("g.db");
    asof()
        .arg("load")
        .arg(&a)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    asof().arg("check").arg(&db).assert().success();
    let out = asof()
        .args(["evidence", "--format", "json"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let late = v["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["lag_ms"].as_i64().unwrap() > 86_400_000)
        .count();
    assert!(late > 0, "some evidence arrives more than a day late");
}
