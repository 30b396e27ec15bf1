//! Hostile datasets: each is refused with one clear sentence naming where it went
//! wrong and exit code 2 — no panic, no hang, no store left behind. Together with
//! `tests/integration/validation.rs` (alias bomb, offset-less timestamps, ids colliding across
//! kinds, evidence recorded after the event citing it, a retraction matching
//! nothing) this is the hostile-input suite of `docs/reliability.md`.

use crate::common;

use common::{SMALL, asof, write};
use std::time::Duration;

/// A hang guard, not a timing assertion: a hostile input must end.
const LIMIT: Duration = Duration::from_secs(120);

/// `asof load` refuses the file with exit code 2, a message containing `expect`,
/// and leaves no store.
fn refused(name: &str, content: &[u8], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let db = dir.path().join("out.db");
    let out = asof()
        .arg("load")
        .arg(&path)
        .arg("--db")
        .arg(&db)
        .timeout(LIMIT)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    assert!(
        stderr.contains(expect),
        "{name}: expected {expect:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    assert!(!db.exists(), "{name}: no store after a refused load");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{name}: only the input is left: {left:?}");
}

/// SMALL with its first `from` replaced by `to`.
fn small(from: &str, to: &str) -> Vec<u8> {
    assert!(SMALL.contains(from));
    SMALL.replacen(from, to, 1).into_bytes()
}

/// SMALL as JSON Lines.
fn small_jsonl() -> String {
    common::yaml_to_jsonl(SMALL)
}

#[test]
fn deep_nesting_fails_fast() {
    let depth = 200_000;
    let text = format!(
        "asof: 1\nincident: {{id: x, title: x}}\nevents: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    refused("deep.yaml", text.as_bytes(), "deep.yaml:3:");
    let line = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let text = format!("{}\n{line}\n", small_jsonl().lines().next().unwrap());
    refused("deep.jsonl", text.as_bytes(), "deep.jsonl:2:");
}

#[test]
fn huge_scalars_and_files_are_refused() {
    let big = "x".repeat(100_000);
    refused(
        "huge.yaml",
        &small("summary: \"errors\"", &format!("summary: \"{big}\"")),
        "`summary` is 100000 bytes long, over the 65536-byte limit",
    );
    let mut text = small_jsonl();
    text.push_str(&format!(
        "{{\"evidence\": {{\"id\": \"E9\", \"summary\": \"{}\"}}}}\n",
        "y".repeat(2 << 20)
    ));
    refused(
        "huge.jsonl",
        text.as_bytes(),
        "huge.jsonl:8: line is longer than 1048576 bytes",
    );
    let mut text = SMALL.as_bytes().to_vec();
    text.extend(std::iter::repeat_n(b'#', 65 << 20));
    refused("too-big.yaml", &text, "over the 67108864-byte limit");
}

#[test]
fn invalid_utf8_and_nul_bytes_are_refused() {
    let mut text = SMALL.as_bytes().to_vec();
    let at = SMALL.find("errors").unwrap();
    text[at] = 0xff;
    refused(
        "utf8.yaml",
        &text,
        &format!("utf8.yaml: the file is not valid UTF-8 (byte {at})"),
    );
    let mut text = small_jsonl().into_bytes();
    let at = text.iter().position(|&b| b == b'\n').unwrap() + 5;
    text[at] = 0xfe;
    refused(
        "utf8.jsonl",
        &text,
        "utf8.jsonl:2: the line is not valid UTF-8",
    );
    refused(
        "nul.yaml",
        &small("summary: \"errors\"", "summary: \"err\0ors\""),
        "nul.yaml:20:20: control characters are not allowed",
    );
    let text = small_jsonl().replacen("errors", "err\0ors", 1);
    refused("nul.jsonl", text.as_bytes(), "control character");
}

#[test]
fn duplicate_keys_are_refused() {
    refused(
        "dup.yaml",
        &small("claim: \"db\"", "claim: \"db\"\n      claim: \"cert\""),
        "duplicate",
    );
    let text = small_jsonl().replacen("\"claim\":\"db\"", "\"claim\":\"db\",\"claim\":\"cert\"", 1);
    refused("dup.jsonl", text.as_bytes(), "duplicate field `claim`");
}

#[test]
fn out_of_range_times_and_bad_numbers_are_refused() {
    refused(
        "year0.yaml",
        &small(
            "recorded_at: 2026-03-02T09:20:00Z",
            "recorded_at: 0000-01-01T00:00:00Z",
        ),
        "0000-01-01T00:00:00Z",
    );
    refused(
        "nan.yaml",
        &small("confidence: 0.6", "confidence: .nan"),
        "`confidence` is NaN; it must be between 0 and 1",
    );
    refused(
        "inf.yaml",
        &small("confidence: 0.6", "confidence: .inf"),
        "`confidence` is inf; it must be between 0 and 1",
    );
    refused(
        "negative.yaml",
        &small("reliability: 0.5", "reliability: -0.5"),
        "`reliability` is -0.5; it must be between 0 and 1",
    );
    let text = small_jsonl().replacen("\"confidence\":0.6", "\"confidence\":1e999", 1);
    refused("overflow.jsonl", text.as_bytes(), "number out of range");
}

#[test]
fn broken_json_lines_files_are_refused() {
    let text = small_jsonl();
    let cut = &text[..text.trim_end().len() - 10];
    refused("truncated.jsonl", cut.as_bytes(), "EOF while parsing");
    let without_header: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    refused(
        "headless.jsonl",
        without_header.as_bytes(),
        "the first line must be the header object",
    );
    refused("empty.jsonl", b"", "the file is empty");
}

/// 100k topics, one assertion each: the header line is large (not a refusal),
/// and nothing in load or queries is quadratic in topics.
#[test]
fn a_hundred_thousand_topics_with_one_event_each_load() {
    let n = 100_000;
    let mut text = String::from("{\"asof\":1,\"incident\":{\"id\":\"wide\",\"title\":\"Wide\"},");
    text.push_str("\"agents\":[{\"id\":\"a\",\"name\":\"A\"}],\"topics\":[");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("{{\"id\":\"t{i}\",\"question\":\"Q{i}?\"}}"));
    }
    text.push_str("]}\n");
    for i in 0..n {
        text.push_str(&format!(
            "{{\"believe\":{{\"agent\":\"a\",\"topic\":\"t{i}\",\"claim\":\"c\",\"valid_from\":\"2026-01-01\",\"recorded_at\":\"2026-01-02T00:00:{:02}Z\"}}}}\n",
            i % 60
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "wide.jsonl", &text);
    let db = dir.path().join("wide.db");
    asof()
        .arg("load")
        .arg(&path)
        .arg("--db")
        .arg(&db)
        .timeout(LIMIT)
        .assert()
        .success();
    let out = asof()
        .arg("believed")
        .arg(&db)
        .args([
            "--at",
            "2026-01-03",
            "--topic",
            "t99999",
            "--format",
            "json",
        ])
        .timeout(LIMIT)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["beliefs"].as_array().unwrap().len(), 1);
    asof()
        .arg("check")
        .arg(&db)
        .timeout(LIMIT)
        .assert()
        .success();
}
