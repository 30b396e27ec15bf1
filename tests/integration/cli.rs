//! The real binary on real SQLite files: every command, format and exit code.

use crate::common;

use asof::store::FORMAT_VERSION;
use common::{SMALL, asof, bytes, check_finds_then_rebuild_repairs, stdout_json as json, write};
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn load_demo(dir: &Path) -> PathBuf {
    let db = dir.join("demo.db");
    asof()
        .args(["load", "datasets/payment-outage.yaml", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "85 events (33 evidence, 41 assertions, 7 retractions, 4 verifications)",
        ));
    db
}

#[test]
fn without_a_terminal_the_tui_prints_a_hint() {
    asof()
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "asof: not a terminal, so no TUI",
        ))
        .stdout(predicate::str::contains("asof history --topic <id>"));
    asof()
        .args(["tui", "datasets/portion-retraction.yaml"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "asof evidence datasets/portion-retraction.yaml",
        ));
    asof().args(["tui", "missing.yaml"]).assert().code(2);
}

#[test]
fn believed_about_the_past_answers_from_the_demo() {
    let v = json(asof().args([
        "believed",
        "--at",
        "2026-03-03T12:00:00Z",
        "--about",
        "2026-03-02T09:30:00Z",
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    assert_eq!(v["as_of"], "2026-03-03T12:00:00Z");
    assert_eq!(v["about"], "2026-03-02T09:30:00Z");
    let beliefs = v["beliefs"].as_array().unwrap();
    let claims: Vec<(&str, &str)> = beliefs
        .iter()
        .map(|b| (b["agent"].as_str().unwrap(), b["claim"].as_str().unwrap()))
        .collect();
    assert_eq!(
        claims,
        vec![
            (
                "triage",
                "Expired TLS certificate on the card-network gateway"
            ),
            ("infra", "Card-network provider outage"),
        ]
    );
    let triage = &beliefs[0];
    assert_eq!(triage["confidence"], 0.5);
    assert_eq!(triage["valid_from"], "2026-03-02T09:05:00Z");
    assert_eq!(triage["valid_to"], Value::Null);
    assert_eq!(triage["recorded_at"], "2026-03-03T10:30:00Z");
    // Held at 12:00; B19 superseded it at 12:10, which was not known at
    // 12:00: only `later` says so.
    assert_eq!(triage["superseded_at"], Value::Null);
    assert_eq!(triage["closed"], Value::Null);
    assert_eq!(
        triage["later"],
        serde_json::json!({
            "superseded_at": "2026-03-03T12:10:00Z",
            "closed": {"by": "B19", "kind": "superseded"}
        })
    );
    assert_eq!(triage["supported_by"], serde_json::json!(["E14"]));
    assert_eq!(triage["origin"], "asserted");
    assert_eq!(triage["clipped_by"], Value::Null);
    for key in [
        "agent",
        "topic",
        "claim",
        "confidence",
        "valid_from",
        "valid_to",
        "recorded_at",
        "superseded_at",
        "supported_by",
        "assertion",
        "origin",
        "closed",
        "clipped_by",
    ] {
        assert!(triage.get(key).is_some(), "VERSION has `{key}`");
    }
}

#[test]
fn a_store_a_dataset_and_the_demo_answer_alike() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let args = ["--at", "2026-03-06T12:00:00Z", "--format", "json"];
    let from_store = json(asof().arg("believed").arg(&db).args(args));
    let from_yaml = json(
        asof()
            .args(["believed", "datasets/payment-outage.yaml"])
            .args(args),
    );
    let from_demo = json(asof().arg("believed").args(args));
    assert_eq!(from_store, from_yaml);
    assert_eq!(from_store, from_demo);
    assert!(from_store["beliefs"].as_array().unwrap().len() > 5);
}

/// Late evidence at a higher confidence (E28, 03-06: the certificate expired
/// at 08:58) is not clipped by the less confident belief from 09:05: B33
/// replaces it (design.md §3 step 1), and the later restatements reconfirm.
#[test]
fn late_evidence_held_surer_replaces_the_later_starting_belief() {
    let v = json(asof().args([
        "history",
        "--topic",
        "root-cause",
        "--agent",
        "triage",
        "--format",
        "json",
    ]));
    assert_eq!(v["agent"], "triage");
    assert_eq!(v["topic"], "root-cause");
    let versions = v["versions"].as_array().unwrap();
    assert!(
        versions.iter().all(|v| v["clipped_by"] == Value::Null),
        "nothing as sure starts later: {v}"
    );
    let b33 = versions.iter().find(|v| v["assertion"] == "B33").unwrap();
    assert_eq!(b33["valid_from"], "2026-03-02T08:58:00Z");
    assert_eq!(b33["valid_to"], Value::Null);
    assert_eq!(b33["superseded_at"], Value::Null, "held to the end");
    assert_eq!(b33["supported_by"], serde_json::json!(["E24", "E28"]));
    let b27 = versions.iter().find(|v| v["assertion"] == "B27").unwrap();
    assert_eq!(
        b27["closed"],
        serde_json::json!({"by": "B33", "kind": "superseded"})
    );
    let retracted = versions
        .iter()
        .filter(|v| v["closed"]["kind"] == "retracted")
        .count();
    assert_eq!(
        retracted, 2,
        "the DB claim and the deploy claim were retracted"
    );
    let events: Vec<(&str, &str)> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["event"].as_str().unwrap(), e["effect"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("B8", "reconfirmed"),
            ("B39", "reconfirmed"),
            ("B40", "reconfirmed")
        ]
    );
}

#[test]
fn table_and_markdown_formats_print() {
    asof()
        .args(["history", "--topic", "affected-regions"])
        .assert()
        .success()
        .stdout(predicate::str::contains("retracted by R1"))
        .stdout(predicate::str::contains("ap-south"));
    asof()
        .args(["believed", "--at", "2026-03-02T12:30:00Z", "--format", "md"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "## Beliefs as of 2026-03-02T12:30:00Z",
        ))
        .stdout(predicate::str::contains("| TOPIC | AGENT | CLAIM |"));
    asof()
        .args(["evidence"])
        .assert()
        .success()
        .stdout(predicate::str::contains("E28"))
        // From the end of what it observed (09:05), not its start (08:58).
        .stdout(predicate::str::contains("4d 0h"));
    let v = json(asof().args(["evidence", "--format", "json"]));
    let e15 = v["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "E15")
        .unwrap()
        .clone();
    assert_eq!(e15["cited_by"], serde_json::json!(["B19", "B20"]));
}

#[test]
fn changes_lists_what_a_window_created_and_closed() {
    let v = json(asof().args([
        "changes",
        "--after",
        "2026-03-03T12:00:00Z",
        "--until",
        "2026-03-03T12:10:00Z",
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let claims = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|b| b["claim"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        claims("created"),
        vec!["Bad deploy of checkout-service v4.12"]
    );
    assert_eq!(
        claims("closed"),
        vec!["Expired TLS certificate on the card-network gateway"]
    );
}

#[test]
fn unknown_topics_and_agents_are_usage_errors() {
    asof()
        .args(["history", "--topic", "weather"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown topic `weather`; topics are: root-cause, customer-impact, severity, affected-regions"));
    asof()
        .args(["believed", "--at", "2026-03-03T09:00:00", "--agent", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no UTC offset"));
    asof().args(["believed"]).assert().code(2);
}

#[test]
fn query_commands_never_write_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    let before = bytes(&db);
    asof()
        .arg("believed")
        .arg(&db)
        .args(["--at", "now"])
        .assert()
        .success();
    asof()
        .arg("history")
        .arg(&db)
        .args(["--topic", "severity"])
        .assert()
        .success();
    asof().arg("evidence").arg(&db).assert().success();
    asof()
        .arg("check")
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains("ok"));
    assert_eq!(bytes(&db), before);
    let mut perms = std::fs::metadata(&db).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&db, perms).unwrap();
    asof()
        .arg("believed")
        .arg(&db)
        .args(["--at", "now"])
        .assert()
        .success();
}

#[test]
fn check_detects_tampering_and_rebuild_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "small.yaml", SMALL);
    let db = dir.path().join("small.db");
    asof()
        .arg("load")
        .arg(&path)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    asof().arg("check").arg(&db).assert().success();
    let versions = |db: &Path| -> Vec<(String, i64, i64)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT c.text, v.valid_from, v.superseded_at
                 FROM versions v JOIN claims c ON c.code = v.claim ORDER BY v.id",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let original = versions(&db);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "INSERT INTO claims (code, text) VALUES (999, 'tampered');
             UPDATE versions SET claim = 999 WHERE id = 1;",
        )
        .unwrap();
    }
    check_finds_then_rebuild_repairs(
        &db,
        &[
            "the version of triage/root-cause claiming \"db\" from 2026-03-02T09:05:00Z created by event #2 differs from its replay: claim: stored \"tampered\", replayed \"db\"",
            // The scrub index and the pages were derived from the rows before
            // they were tampered with.
            "the scrub index (table scrub) differs from a fresh computation",
            "the version pages (table pages) differ from a fresh computation",
        ],
        3,
    );
    assert_eq!(
        versions(&db),
        original,
        "rebuild restores exactly the derived rows"
    );
}

/// The packed header (design.md §9: what opening a store reads instead of a row
/// per topic) is derived from the header rows: a row changed under it is
/// found by `check`, and a packed row damaged or missing is refused by every
/// reading command with the way out; `rebuild` packs it again from the rows
/// in both cases.
#[test]
fn check_and_open_detect_a_tampered_packed_header() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let question = |db: &Path| -> String {
        // The table's title line names the topic's question.
        let out = asof()
            .arg("history")
            .arg(db)
            .args(["--topic", "root-cause"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let out = String::from_utf8(out.stdout).unwrap();
        out.lines().next().unwrap_or_default().to_owned()
    };
    let before = question(&db);
    assert!(
        before.contains("What is causing checkout payment failures?"),
        "{before}"
    );
    common::tamper(
        &db,
        "UPDATE topics SET question = 'A question changed under the packed header?' WHERE id = 'root-cause'",
    );
    // Reading commands read the packed header: still the question loaded.
    assert_eq!(question(&db), before);
    check_finds_then_rebuild_repairs(
        &db,
        &[
            "the packed header (table header_packed) differs from the incident, agents and topics rows",
        ],
        1,
    );
    let after = question(&db);
    assert!(
        after.contains("A question changed under the packed header?"),
        "rebuild packs the rows: {after}"
    );

    for damage in [
        "UPDATE header_packed SET data = CAST(substr(data, 1, length(data) - 1) AS BLOB)",
        "UPDATE header_packed SET data = CAST(data || x'00' AS BLOB)",
        "DELETE FROM header_packed",
    ] {
        common::tamper(&db, damage);
        for command in ["believed", "check"] {
            let mut cmd = asof();
            cmd.arg(command).arg(&db);
            if command == "believed" {
                cmd.args(["--at", "now"]);
            }
            cmd.assert().code(2).stdout("").stderr(predicates::str::contains(
                "not a readable asof store: the packed header (table header_packed) is missing or damaged; `asof rebuild` packs it again from its rows",
            ));
        }
        asof().arg("rebuild").arg(&db).assert().success();
        asof().arg("check").arg(&db).assert().success();
        assert_eq!(question(&db), after, "rebuild mends {damage}");
    }
}

/// The scrub index (design.md §9) is derived data too: a byte changed in one of
/// its parts, or a part cut short, is found by `check` and mended by `rebuild`.
#[test]
fn check_detects_a_tampered_scrub_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let scrub = |db: &Path| -> Vec<(String, Vec<u8>)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare("SELECT part, data FROM scrub ORDER BY part")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let original = scrub(&db);
    assert_eq!(original.len(), 8, "every part is stored");
    for (sql, found) in [
        // The topic of the first mark (evidence, of no topic) becomes the first topic.
        (
            "UPDATE scrub SET data = CAST(substr(data, 1, 18) || x'00000000' || substr(data, 23) AS BLOB) WHERE part = 'marks'",
            "the scrub index (table scrub) differs from a fresh computation",
        ),
        (
            "UPDATE scrub SET data = CAST(substr(data, 1, length(data) - 1) AS BLOB) WHERE part = 'checkpoints'",
            "the scrub index's part",
        ),
        (
            "DELETE FROM scrub WHERE part = 'by_recorded'",
            "the scrub index's part",
        ),
        // The first version's closing instant (its own part since format 8).
        (
            "UPDATE scrub SET data = CAST(x'0100000000000000' || substr(data, 9) AS BLOB) WHERE part = 'superseded'",
            "the scrub index (table scrub) differs from a fresh computation",
        ),
    ] {
        common::tamper(&db, sql);
        assert_ne!(scrub(&db), original, "{sql} changed the index");
        check_finds_then_rebuild_repairs(&db, &[found], 1);
        assert_eq!(
            scrub(&db),
            original,
            "rebuild restores the index after {sql}"
        );
    }
}

#[test]
fn foreign_damaged_and_newer_stores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let noise = dir.path().join("noise.db");
    std::fs::write(
        &noise,
        (0..4096u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    asof()
        .arg("evidence")
        .arg(&noise)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a readable asof store"));

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    asof()
        .arg("evidence")
        .arg(&foreign)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an asof store"));

    let newer = load_demo(dir.path());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    asof()
        .arg("evidence")
        .arg(&newer)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "store format version 99 is newer than this asof reads ({FORMAT_VERSION})"
        )));

    // A store of the format before the 2026-12-05 replay amendments holds
    // versions this asof would derive differently: refused, with the remedy.
    let older = load_demo(&tempfile::tempdir().unwrap().keep());
    rusqlite::Connection::open(&older)
        .unwrap()
        .execute_batch(&format!("PRAGMA user_version = {};", FORMAT_VERSION - 1))
        .unwrap();
    asof()
        .arg("evidence")
        .arg(&older)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "store format version {} is older than this asof's ({FORMAT_VERSION}): load it again from its dataset (`asof load DATASET --db STORE`)",
            FORMAT_VERSION - 1
        )));

    let truncated = dir.path().join("truncated.db");
    let full = bytes(&load_demo(&tempfile::tempdir().unwrap().keep()));
    std::fs::write(&truncated, &full[..full.len() / 3]).unwrap();
    asof()
        .arg("history")
        .arg(&truncated)
        .args(["--topic", "root-cause"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "truncated.db: not a readable asof store: the file is truncated: its header says {} bytes",
            full.len()
        )));

    asof()
        .arg("evidence")
        .arg(dir.path().join("missing.db"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such store"));
}

#[test]
fn help_lists_the_commands() {
    asof()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("believed"))
        .stdout(predicate::str::contains("Examples:"));
}

#[test]
fn history_without_a_topic_picks_the_only_one_or_lists_them() {
    asof()
        .args([
            "history",
            "datasets/retroactive-correction.yaml",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains("\"topic\": \"api-latency\""));
    asof()
        .arg("history")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "name a topic with --topic; the store has 4: root-cause, customer-impact, severity, affected-regions",
        ));
}

#[test]
fn query_times_read_like_the_tui_jump_prompt() {
    let at = |t: &str| {
        let out = asof()
            .args([
                "believed",
                "--at",
                t,
                "--topic",
                "root-cause",
                "--format",
                "json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()["as_of"].clone()
    };
    assert_eq!(at("2026-03-03 12:10"), "2026-03-03T12:10:00Z");
    assert_eq!(at("2026-03-03T12:10:00Z"), "2026-03-03T12:10:00Z");
    asof()
        .args(["believed", "--at", "soon"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("or now"));
}

/// Every RFC 3339 instant in a JSON value outside its `later` objects.
fn instants_outside_later(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if asof::time::parse(s).is_ok() && s.contains('T') => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| instants_outside_later(i, out)),
        Value::Object(map) => {
            for (key, value) in map {
                if key != "later" {
                    instants_outside_later(value, out);
                }
            }
        }
        _ => {}
    }
}

/// As of 12:30 on 03-03, nothing the JSON says at its top level happened
/// after 12:30: B19's retraction the next day is only in `later`.
#[test]
fn believed_as_of_an_instant_shows_nothing_later_outside_later() {
    let v = json(asof().args([
        "believed",
        "--at",
        "2026-03-03T12:30:00Z",
        "--format",
        "json",
    ]));
    let mut seen = Vec::new();
    instants_outside_later(&v, &mut seen);
    let at = asof::time::parse("2026-03-03T12:30:00Z").unwrap();
    for s in &seen {
        assert!(
            asof::time::parse(s).unwrap() <= at,
            "{s} is after the as-of instant, outside `later`"
        );
    }
    let b19 = v["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["assertion"] == "B19")
        .unwrap();
    assert_eq!(b19["closed"], Value::Null);
    assert_eq!(b19["later"]["closed"]["by"], "R4");
    assert_eq!(b19["later"]["superseded_at"], "2026-03-04T09:30:00Z");
}

/// `evidence --at` lists the items recorded by then and the citations
/// recorded by then; `--all` lists the rest, marked.
#[test]
fn evidence_as_of_an_instant_lists_and_cites_only_what_was_recorded() {
    let at = "2026-03-03T12:10:00Z";
    let v = json(asof().args(["evidence", "--at", at, "--format", "json"]));
    let items = v["evidence"].as_array().unwrap();
    assert_eq!(items.len(), 15, "15 items recorded by 12:10");
    let cut = asof::time::parse(at).unwrap();
    for i in items {
        assert!(asof::time::parse(i["recorded_at"].as_str().unwrap()).unwrap() <= cut);
    }
    let e14 = items.iter().find(|i| i["id"] == "E14").unwrap();
    assert_eq!(
        e14["cited_by"],
        serde_json::json!(["B18"]),
        "B21, B24 came later"
    );
    let e15 = items.iter().find(|i| i["id"] == "E15").unwrap();
    assert_eq!(e15["cited_by"], serde_json::json!(["B19"]));
    let all = json(asof().args(["evidence", "--at", at, "--all", "--format", "json"]));
    let all = all["evidence"].as_array().unwrap();
    assert_eq!(all.len(), 33);
    let later: Vec<&Value> = all
        .iter()
        .filter(|i| i["not_yet_recorded"] == "not yet recorded")
        .collect();
    assert_eq!(later.len(), 18);
    assert!(
        later
            .iter()
            .all(|i| i["not_yet_recorded"] == "not yet recorded")
    );
    assert!(
        later
            .iter()
            .all(|i| i["cited_by"].as_array().unwrap().is_empty())
    );
    let table = asof()
        .args(["evidence", "--at", at, "--all"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("15 evidence item(s) recorded by 2026-03-03T12:10:00Z (of 33; 18 not yet recorded, listed)"), "{table}");
    assert!(table.contains("not yet recorded"), "{table}");
    let e14_row = table.lines().find(|l| l.starts_with("E14 ")).unwrap();
    assert!(
        e14_row.contains(" B18 ") && !e14_row.contains("B21"),
        "{e14_row}"
    );
}
