//! `asof gen` is deterministic and its output always loads.

use crate::common;

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

/// `gen --follow-rate N` writes an incident that loads, recorded from about
/// now at N events a second, and refuses a rate of 0 or no file.
#[test]
fn follow_rate_writes_a_loadable_incident_recorded_at_its_pace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.jsonl");
    let before = asof::time::now();
    asof()
        .args([
            "gen",
            "--events",
            "60",
            "--topics",
            "3",
            "--follow-rate",
            "200",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let after = asof::time::now();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 61, "a header and 60 events");
    let recorded: Vec<i64> = text
        .lines()
        .skip(1)
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let body = v.as_object().unwrap().values().next().unwrap();
            asof::time::parse(body["recorded_at"].as_str().unwrap()).unwrap()
        })
        .collect();
    assert!(
        recorded.windows(2).all(|w| w[0] <= w[1]),
        "in recorded order"
    );
    let (first, last) = (recorded[0], recorded[59]);
    assert!(
        first >= before - 10_000 && first <= after,
        "the first event is now"
    );
    // 59 steps of 1/200 s × 10/9, less the one in ten that share an instant.
    let span = last - first;
    assert!((200_000..=340_000).contains(&span), "span {span} µs");
    let db = dir.path().join("run.db");
    asof()
        .arg("load")
        .arg(&out)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    asof()
        .args(["gen", "--events", "5", "--follow-rate", "0", "-o"])
        .arg(dir.path().join("zero.jsonl"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "invalid value '0' for '--follow-rate <N>': 0 is not in 1..",
        ));
    asof()
        .args(["gen", "--events", "5", "--follow-rate", "10"])
        .assert()
        .code(2);
}
