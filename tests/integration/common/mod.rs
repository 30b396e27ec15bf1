//! Helpers shared by the integration tests: temporary files and the real binary.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub mod serve;

pub fn asof() -> Command {
    let mut cmd = Command::cargo_bin("asof").expect("the asof binary is built");
    cmd.env("NO_COLOR", "1").env_remove("RUST_BACKTRACE");
    cmd
}

/// The Python of the virtual environment `.ci/run` installs test packages
/// into (target/otel-venv), if it can `import` what `imports` names.
pub fn venv_python(imports: &str) -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/otel-venv/bin/python");
    let ok = python.exists()
        && std::process::Command::new(&python)
            .args(["-c", &format!("import {imports}")])
            .status()
            .is_ok_and(|s| s.success());
    ok.then_some(python)
}

/// Writes `text` to `name` inside `dir` and returns its path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path
}

/// A small valid dataset: two evidence items, three assertions, one retraction.
pub const SMALL: &str = r#"asof: 1
incident:
  id: small
  title: "Small incident"
agents:
  - id: triage
    name: "Triage agent"
topics:
  - id: root-cause
    question: "Why?"
    resolution: "cert"
events:
  - evidence:
      id: E1
      kind: alert
      source: pagerduty
      locator: "PD-1"
      observed_at: 2026-03-02T09:10:00Z
      recorded_at: 2026-03-02T09:14:00Z
      summary: "errors"
  - believe:
      id: B1
      agent: triage
      topic: root-cause
      claim: "db"
      confidence: 0.6
      valid_from: 2026-03-02T09:05:00Z
      recorded_at: 2026-03-02T09:20:00Z
      supported_by: [E1]
  - evidence:
      id: E2
      kind: log
      source: loki
      locator: "gw.log:12"
      observed_at: 2026-03-02T09:00:00Z
      recorded_at: 2026-03-03T10:00:00Z
      reliability: 0.5
      summary: "cert errors"
  - believe:
      id: B2
      agent: triage
      topic: root-cause
      claim: "cert"
      confidence: 0.9
      valid_from: 2026-03-02T09:05:00Z
      recorded_at: 2026-03-03T10:30:00Z
      supported_by: [E2]
  - believe:
      id: B3
      agent: triage
      topic: root-cause
      claim: "cert"
      confidence: 0.9
      valid_from: 2026-03-02T09:00:00Z
      recorded_at: 2026-03-03T11:00:00Z
      supported_by: [E2]
  - retract:
      id: R1
      agent: triage
      topic: root-cause
      valid_from: 2026-03-02T09:00:00Z
      valid_to: 2026-03-02T09:02:00Z
      recorded_at: 2026-03-04T00:00:00Z
      because: []
"#;

/// A YAML dataset rewritten as JSON Lines: header line, then one event per line.
pub fn yaml_to_jsonl(yaml: &str) -> String {
    let doc: serde_json::Value = serde_yaml::from_str(yaml).expect("YAML");
    let mut header = doc.clone();
    header.as_object_mut().expect("a mapping").remove("events");
    let mut out = serde_json::to_string(&header).expect("JSON") + "\n";
    for event in doc["events"].as_array().expect("events") {
        out += &(serde_json::to_string(event).expect("JSON") + "\n");
    }
    out
}

/// SHA-256-free fingerprint for "unchanged" checks: the bytes themselves.
pub fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read file")
}

/// The page size a store file was written with.
pub fn page_size(store: &Path) -> i64 {
    rusqlite::Connection::open(store)
        .expect("open the store")
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("its page size")
}

/// A generated incident as JSON Lines text (what `asof gen` writes).
pub fn generated(events: u64, topics: u32, agents: u32, seed: u64) -> String {
    let mut jsonl = Vec::new();
    asof::synth::generate(
        asof::synth::GenConfig {
            events,
            topics,
            agents,
            seed,
        },
        &mut jsonl,
    )
    .expect("generate");
    String::from_utf8(jsonl).expect("generated text is UTF-8")
}

/// A generated incident, parsed.
pub fn generated_log(events: u64, topics: u32, agents: u32, seed: u64) -> asof::model::Dataset {
    let text = generated(events, topics, agents, seed);
    asof::dataset::read_str("gen.jsonl", asof::dataset::Format::Jsonl, &text)
        .expect("generated data is valid")
        .dataset
}

/// A generated incident loaded into a store held in memory.
pub fn generated_store(events: u64, topics: u32, agents: u32, seed: u64) -> asof::store::Store {
    let log = generated_log(events, topics, agents, seed);
    let replay = asof::engine::replay(&log.header, &log.events);
    asof::store::Store::in_memory("gen", &log, &replay).expect("in-memory store")
}

/// `text` (JSON Lines in recorded order) with its first evidence line moved to
/// the end, so the file leaves recorded order on its last line.
pub fn out_of_order(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let first_evidence = lines
        .iter()
        .position(|l| l.starts_with(r#"{"evidence""#))
        .expect("an evidence line");
    let moved = lines.remove(first_evidence);
    lines.push(moved);
    lines.join("\n") + "\n"
}

/// A command's standard output as JSON, the command having succeeded.
pub fn stdout_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("JSON on standard output")
}

/// `asof import KIND INPUT --db DB [extra…] --format json`: the import summary.
pub fn import_json(kind: &str, input: &Path, db: &Path, extra: &[&str]) -> serde_json::Value {
    stdout_json(
        asof()
            .args(["import", kind])
            .arg(input)
            .arg("--db")
            .arg(db)
            .args(extra)
            .args(["--format", "json"]),
    )
}

/// The count of the first entry of an import summary's tally (`read`, `cases`,
/// `defaults`, …) whose text starts with `what`; 0 when there is none.
pub fn count(tally: &serde_json::Value, what: &str) -> u64 {
    tally
        .as_array()
        .expect("a tally")
        .iter()
        .find(|c| c["what"].as_str().is_some_and(|w| w.starts_with(what)))
        .map_or(0, |c| c["count"].as_u64().unwrap_or(0))
}

/// `asof load DATASET --db DB`, which must succeed.
pub fn load(dataset: &Path, db: &Path) {
    asof()
        .arg("load")
        .arg(dataset)
        .arg("--db")
        .arg(db)
        .assert()
        .success();
}

/// The bundled demo dataset loaded into `dir/demo.db`.
pub fn load_demo(dir: &Path) -> PathBuf {
    let db = dir.join("demo.db");
    load(Path::new("datasets/payment-outage.yaml"), &db);
    db
}

/// Runs `sql` on the store at `db`, as someone changing it behind asof's back.
pub fn tamper(db: &Path, sql: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// `asof check DB` fails (exit 2) naming each of `found` on standard output
/// and counting `disagreements`; then `asof rebuild DB` makes it pass again.
pub fn check_finds_then_rebuild_repairs(db: &Path, found: &[&str], disagreements: usize) {
    let mut check = asof().arg("check").arg(db).assert().code(2);
    for text in found {
        check = check.stdout(predicates::str::contains(*text));
    }
    check.stderr(predicates::str::contains(format!(
        "{disagreements} disagreement(s)"
    )));
    asof().arg("rebuild").arg(db).assert().success();
    asof().arg("check").arg(db).assert().success();
}

/// `asof fork PARENT --without EVIDENCE --out OUT`, which must succeed.
pub fn fork(parent: &Path, without: &str, out: &Path) {
    asof()
        .arg("fork")
        .arg(parent)
        .args(["--without", without, "--out"])
        .arg(out)
        .assert()
        .success();
}

/// The demo loaded, then forked without E2: `assert` runs on each store with
/// what made it.
pub fn demo_and_its_fork(assert: impl Fn(&Path, &str)) {
    let dir = tempfile::tempdir().unwrap();
    let db = load_demo(dir.path());
    assert(&db, "the demo");
    let forked = dir.path().join("fork.db");
    fork(&db, "E2", &forked);
    assert(&forked, "a fork of the demo");
}

/// A generated log (`events`, `topics`, `agents`, `seed`) loaded, rebuilt,
/// then forked without its `pick`th evidence item (modulo how many there
/// are): `assert` runs on the store after each, with what made it. False when
/// the log holds no evidence to fork without.
pub fn load_rebuild_and_fork(
    (events, topics, agents, seed): (u64, u32, u32, u64),
    pick: usize,
    assert: impl Fn(&Path, &str),
) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = write(
        dir.path(),
        "gen.jsonl",
        &generated(events, topics, agents, seed),
    );
    let db = dir.path().join("gen.db");
    load(&jsonl, &db);
    assert(&db, "a load");

    asof().arg("rebuild").arg(&db).assert().success();
    assert(&db, "a rebuild");

    let log = asof::store::Store::open(&db).unwrap().log().unwrap();
    let evidence: Vec<&str> = log
        .events
        .iter()
        .filter_map(|e| match &e.body {
            asof::model::EventBody::Evidence(x) => Some(x.id.as_str()),
            _ => None,
        })
        .collect();
    if evidence.is_empty() {
        return false;
    }
    let forked = dir.path().join("fork.db");
    fork(&db, evidence[pick % evidence.len()], &forked);
    assert(&forked, "a fork");
    true
}
