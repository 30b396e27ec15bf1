//! Every dataset rule of design.md §2 is checked with its message and its location,
//! through the real binary (`asof validate`), for YAML and JSON Lines.

use crate::common;

use common::{SMALL, asof, write};
use predicates::prelude::*;

/// Runs `asof validate` on `text` and returns stderr, asserting exit code 2.
fn refuse(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, text);
    let out = asof()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout for a refused dataset"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Paths vary per run; tests match on the part after the file name.
    stderr.replace(&path.display().to_string(), name)
}

fn small_with(from: &str, to: &str) -> String {
    assert!(SMALL.contains(from), "fixture contains {from:?}");
    SMALL.replacen(from, to, 1)
}

#[test]
fn the_small_fixture_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "small.yaml", SMALL);
    asof()
        .arg("validate")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "valid: 6 events (2 evidence, 3 assertions, 1 retractions)",
        ));
}

#[test]
fn a_timestamp_without_offset_is_ambiguous() {
    let err = refuse(
        "d.yaml",
        &small_with(
            "recorded_at: 2026-03-02T09:20:00Z",
            "recorded_at: 2026-03-02T09:20:00",
        ),
    );
    assert_eq!(
        err.trim(),
        "asof: d.yaml:28:7: event B1: `recorded_at`: `2026-03-02T09:20:00` has no UTC offset; write it with `Z` or `+hh:mm` (a bare date `YYYY-MM-DD` means 00:00 UTC)"
    );
}

#[test]
fn a_bare_date_means_midnight_utc_and_garbage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ok = write(
        dir.path(),
        "ok.yaml",
        &small_with(
            "recorded_at: 2026-03-04T00:00:00Z",
            "recorded_at: 2026-03-04",
        ),
    );
    asof().arg("validate").arg(&ok).assert().success();
    let err = refuse(
        "d.yaml",
        &small_with(
            "observed_at: 2026-03-02T09:10:00Z",
            "observed_at: last tuesday",
        ),
    );
    assert!(
        err.contains(
            "d.yaml:18:7: event E1: `observed_at`: `last tuesday` is not an RFC 3339 timestamp"
        ),
        "{err}"
    );
}

#[test]
fn ids_are_unique_across_kinds() {
    let err = refuse("d.yaml", &small_with("id: B2", "id: E1"));
    assert!(
        err.contains("d.yaml:40:7: event E1: id `E1` is used twice (first at line 13)"),
        "{err}"
    );
}

#[test]
fn agent_and_topic_ids_are_unique() {
    let text = small_with(
        "topics:\n",
        "topics:\n  - id: root-cause\n    question: again\n",
    );
    let err = refuse("d.yaml", &text);
    assert!(
        err.contains("d.yaml:11:5: topic id `root-cause` is used twice"),
        "{err}"
    );
}

#[test]
fn references_must_exist() {
    let err = refuse(
        "d.yaml",
        &small_with(
            "agent: triage\n      topic: root-cause\n      claim: \"db\"",
            "agent: nobody\n      topic: root-cause\n      claim: \"db\"",
        ),
    );
    assert!(
        err.contains("d.yaml:23:7: event B1: agent `nobody` is not declared under `agents`"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with(
            "topic: root-cause\n      claim: \"db\"",
            "topic: weather\n      claim: \"db\"",
        ),
    );
    assert!(
        err.contains("d.yaml:24:7: event B1: topic `weather` is not declared under `topics`"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with("supported_by: [E1]", "supported_by: [E9]"),
    );
    assert!(
        err.contains("d.yaml:29:7: event B1: cites evidence `E9`, which does not exist"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with("supported_by: [E1]", "supported_by: [B2]"),
    );
    assert!(
        err.contains("event B1: cites `B2`, which is a believe event, not evidence"),
        "{err}"
    );
}

#[test]
fn cited_evidence_must_be_recorded_no_later() {
    let err = refuse(
        "d.yaml",
        &small_with("supported_by: [E1]", "supported_by: [E2]"),
    );
    assert!(
        err.contains("d.yaml:29:7: event B1: cites evidence `E2` recorded at 2026-03-03T10:00:00Z, after this event (2026-03-02T09:20:00Z)"),
        "{err}"
    );
}

#[test]
fn intervals_and_unit_values_are_checked() {
    let err = refuse(
        "d.yaml",
        &small_with(
            "valid_to: 2026-03-02T09:02:00Z",
            "valid_to: 2026-03-02T09:00:00Z",
        ),
    );
    assert!(
        err.contains("d.yaml:62:7: event R1: `valid_to` must be after `valid_from`"),
        "{err}"
    );
    let err = refuse("d.yaml", &small_with("confidence: 0.6", "confidence: 1.5"));
    assert!(
        err.contains("d.yaml:26:7: event B1: `confidence` is 1.5; it must be between 0 and 1"),
        "{err}"
    );
    let err = refuse("d.yaml", &small_with("confidence: 0.6", "confidence: .nan"));
    assert!(
        err.contains("event B1: `confidence` is NaN; it must be between 0 and 1"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with("reliability: 0.5", "reliability: -0.1"),
    );
    assert!(
        err.contains("d.yaml:37:7: event E2: `reliability` is -0.1"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with(
            "observed_at: 2026-03-02T09:10:00Z",
            "observed_at: 2026-03-02T09:10:00Z\n      observed_until: 2026-03-02T09:00:00Z",
        ),
    );
    assert!(
        err.contains("d.yaml:19:7: event E1: `observed_until` is before `observed_at`"),
        "{err}"
    );
}

#[test]
fn missing_and_unknown_fields_are_named() {
    let err = refuse(
        "d.yaml",
        &small_with(
            "      valid_from: 2026-03-02T09:05:00Z\n      recorded_at: 2026-03-02T09:20:00Z",
            "      recorded_at: 2026-03-02T09:20:00Z",
        ),
    );
    assert!(
        err.contains("d.yaml:21:5: event 2 `believe`: missing field `valid_from`"),
        "{err}"
    );
    let err = refuse(
        "d.yaml",
        &small_with("supported_by: [E1]", "suported_by: [E1]"),
    );
    assert!(
        err.contains("d.yaml:29:7: event 2 `believe.suported_by`: unknown field `suported_by`"),
        "{err}"
    );
    let err = refuse("d.yaml", &small_with("  - retract:", "  - revoke:"));
    assert!(
        err.contains("unknown variant `revoke`, expected one of `evidence`, `believe`, `retract`"),
        "{err}"
    );
}

#[test]
fn a_retraction_that_matches_nothing_is_an_error_in_a_dataset() {
    let err = refuse(
        "d.yaml",
        &small_with(
            "valid_from: 2026-03-02T09:00:00Z\n      valid_to: 2026-03-02T09:02:00Z",
            "valid_from: 2026-03-01T00:00:00Z\n      valid_to: 2026-03-01T09:02:00Z",
        ),
    );
    assert!(
        err.contains(
            "d.yaml:57:5: event R1: the retraction matches no belief held at its recorded time"
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_format_version_is_refused() {
    let err = refuse("d.yaml", &small_with("asof: 1", "asof: 2"));
    assert!(
        err.contains("d.yaml:1:1: format version 2 is not supported; this asof reads version 1"),
        "{err}"
    );
}

#[test]
fn validate_reports_every_error_not_just_the_first() {
    let text = small_with("confidence: 0.6", "confidence: 7").replacen(
        "supported_by: [E2]",
        "supported_by: [E404]",
        1,
    );
    let err = refuse("d.yaml", &text);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.contains("event B1: `confidence` is 7")
            && err.contains("event B2: cites evidence `E404`"),
        "{err}"
    );
}

#[test]
fn yaml_syntax_errors_have_line_and_column() {
    let err = refuse("d.yaml", "asof: 1\nincident: {id: x\nagents: [\n");
    assert!(err.starts_with("asof: d.yaml:"), "{err}");
    assert!(err.lines().count() == 1, "one sentence: {err}");
}

#[test]
fn an_alias_bomb_fails_fast() {
    // Inside `events`, where the typed parse must expand every alias: 10^12 nodes.
    let mut text = String::from(
        "asof: 1\nincident: {id: x, title: x}\nevents:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "  - &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    // Refused by serde_yaml's alias-expansion limit before anything is expanded.
    let err = refuse("bomb.yaml", &text);
    assert!(err.contains("bomb.yaml"), "{err}");
    assert!(err.contains("repetition limit exceeded"), "{err}");
}

#[test]
fn jsonl_errors_carry_the_line_number() {
    let header = r#"{"asof":1,"incident":{"id":"j"},"agents":[{"id":"a"}],"topics":[{"id":"t"}]}"#;
    let e1 = r#"{"evidence":{"id":"E1","kind":"log","observed_at":"2026-01-01T00:00:00Z","recorded_at":"2026-01-01T00:00:00Z"}}"#;
    let bad = r#"{"believe":{"id":"B1","agent":"a","topic":"t","claim":"c","valid_from":"2026-01-01","recorded_at":"2026-01-01T10:00:00","supported_by":["E1"]}}"#;
    let text = format!("{header}\n{e1}\n\n{bad}\n");
    let err = refuse("d.jsonl", &text);
    assert!(
        err.contains("d.jsonl:4: event B1: `recorded_at`: `2026-01-01T10:00:00` has no UTC offset"),
        "{err}"
    );

    let truncated = format!("{header}\n{e1}\n{}\n", &bad[..40]);
    let err = refuse("d.jsonl", &truncated);
    assert!(err.contains("d.jsonl:3:"), "{err}");

    let err = refuse("d.jsonl", &format!("{e1}\n"));
    assert!(
        err.contains("d.jsonl:1:") && err.contains("the first line must be the header object"),
        "{err}"
    );
}

#[test]
fn a_failed_load_leaves_no_store_and_an_existing_store_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.yaml",
        &small_with("confidence: 0.6", "confidence: 2"),
    );
    let db = dir.path().join("x.db");
    asof()
        .arg("load")
        .arg(&bad)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2);
    assert!(!db.exists(), "no store after a failed load");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary files left behind"
    );

    let good = write(dir.path(), "good.yaml", SMALL);
    asof()
        .arg("load")
        .arg(&good)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let before = common::bytes(&db);
    asof()
        .arg("load")
        .arg(&bad)
        .arg("--db")
        .arg(&db)
        .arg("--force")
        .assert()
        .code(2);
    asof()
        .arg("load")
        .arg(&good)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(
        common::bytes(&db),
        before,
        "the existing store is unchanged"
    );
}

/// JSON Lines are parsed in batches on several threads: events keep file order
/// (seq) across batches, and errors far into the file keep their line numbers.
#[test]
fn jsonl_batches_keep_order_and_line_numbers() {
    let text = common::generated(9000, 7, 2, 11);
    let parsed = asof::dataset::read_str("g.jsonl", asof::dataset::Format::Jsonl, &text).unwrap();
    let ids: Vec<&str> = parsed.dataset.events.iter().map(|e| e.id()).collect();
    let in_file: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let (_, body) = v.as_object().unwrap().iter().next().unwrap();
            body["id"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(ids, in_file);
    assert!(
        parsed
            .dataset
            .events
            .iter()
            .enumerate()
            .all(|(i, e)| e.seq == i as u64 + 1)
    );

    // Break lines 4501 and 8999 (events 4500 and 8998).
    let broken: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == 4501 || i + 1 == 8999 {
                l.replacen("recorded_at", "recorded", 1)
            } else {
                l.to_owned()
            }
        })
        .collect();
    let err = asof::dataset::read_str("g.jsonl", asof::dataset::Format::Jsonl, &broken.join("\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("g.jsonl:4501"), "{err}");
    assert!(err.contains("g.jsonl:8999"), "{err}");
}

/// A YAML error points inside the file and says what is wrong in plain words
/// (design.md §8): a dataset cut short ends inside a quoted string, said with
/// where the quote opened; a tab and a bad indentation are named as such.
#[test]
fn yaml_errors_point_inside_the_file_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/payment-outage.yaml"
    ))
    .unwrap();
    let cut: String = demo.chars().take(2000).collect();
    let lines = cut.split('\n').count();
    let file = common::write(dir.path(), "cut.yaml", &cut);
    let out = common::asof().arg("validate").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the file ends inside a quoted string (the quote opened at line"),
        "{err}"
    );
    assert!(
        err.contains("its closing quote is missing, or the file is cut short"),
        "{err}"
    );
    let line: usize = err
        .split(':')
        .nth(2)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line <= lines,
        "line {line} is inside the file's {lines} lines: {err}"
    );
    for (text, words) in [
        (
            "asof: 1\n\tincident: x\n",
            "a tab indents this line; YAML indents with spaces",
        ),
        (
            "asof: 1\nincident:\n  id: x\n   title: y\n",
            "this line is indented wrongly",
        ),
        (
            "asof: 1\nincident: {id: x\nagents: [",
            "a `{…}` mapping (it opened at line 2, column 11) is not closed",
        ),
    ] {
        let file = common::write(dir.path(), "bad.yaml", text);
        let out = common::asof().arg("validate").arg(&file).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(words), "{text:?}: {err}");
        assert!(err.contains("(the YAML parser: "), "{err}");
    }
}

/// SOURCE that is none of the things asof reads says what it does read.
#[test]
fn a_source_asof_cannot_read_says_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let text = common::write(dir.path(), "notes.txt", "hello\n");
    for (source, first) in [
        (dir.path().to_path_buf(), "is a directory"),
        (text, "is not something asof reads"),
        (dir.path().join("missing.db"), "no such store or file"),
    ] {
        let out = common::asof()
            .arg("believed")
            .arg(&source)
            .args(["--at", "now"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(first), "{err}");
        assert!(
            err.contains("asof reads a store (a .db written by `asof load` or `asof import`), a dataset (.yaml or .jsonl) or an OTLP trace or logs file"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one sentence: {err}");
    }
}
