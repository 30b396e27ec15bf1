//! `asof import otlp` (design.md §7) on traces written by the OpenTelemetry Python
//! SDK and its OTLP encoder (`datasets/make-otlp.py`): the same agent step in
//! four conventions, three belief sources and two encodings; the bundled SRE
//! run; hostile input; a generated trace of 100k spans.

use crate::common;

use common::{asof, count, import_json, stdout_json};
use predicates::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/otlp")
        .join(name)
}

fn dataset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join(name)
}

/// Imports `input` into `db` and returns the summary.
fn import(input: &Path, db: &Path, extra: &[&str]) -> Value {
    import_json("otlp", input, db, extra)
}

/// `asof import otlp INPUT` exits 2 saying `message`, and writes no store.
fn refused(input: &Path, db: &Path, message: &str) {
    asof()
        .args(["import", "otlp"])
        .arg(input)
        .arg("--db")
        .arg(db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message));
    assert!(!db.exists(), "{}", input.display());
}

/// What a store says: its evidence, every topic's history, and what was held
/// at a few instants.
fn answers(db: &Path, topics: &[&str], at: &[&str]) -> Value {
    let mut out = json!({
        "evidence": stdout_json(asof().arg("evidence").arg(db).args(["--format", "json"])),
    });
    for topic in topics {
        out[format!("history {topic}")] = stdout_json(
            asof()
                .arg("history")
                .arg(db)
                .args(["--topic", topic, "--format", "json"]),
        );
    }
    for t in at {
        out[format!("believed {t}")] = stdout_json(
            asof()
                .arg("believed")
                .arg(db)
                .args(["--at", t, "--format", "json"]),
        );
    }
    out
}

const STEP_TIMES: [&str; 3] = [
    "2026-03-02T09:10:10Z",
    "2026-03-02T09:10:11Z",
    "2026-03-02T09:11:00Z",
];

#[test]
fn one_agent_step_in_four_conventions_imports_to_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    for name in [
        "genai",
        "genai-events",
        "genai-logs",
        "openinference",
        "openllmetry",
    ] {
        let db = dir.path().join(format!("{name}.db"));
        // openai-v2 2.3b0 writes the content to log records, in a file of its own.
        let report = if name == "genai-logs" {
            let logs = fixture("genai-logs.logs.jsonl");
            let report = import(
                &fixture("genai-logs.traces.jsonl"),
                &db,
                &[logs.to_str().unwrap()],
            );
            assert_eq!(count(&report["read"], "log records joined to a span"), 8);
            report
        } else {
            import(&fixture(&format!("{name}.jsonl")), &db, &[])
        };
        assert_eq!(report["skipped"], json!([]), "{name}: {report}");
        assert_eq!(count(&report["read"], "model calls"), 2, "{name}");
        all.push((name, answers(&db, &["root-cause"], &STEP_TIMES)));
    }
    let (_, genai) = &all[0];
    for (name, other) in &all[1..] {
        assert_eq!(other, genai, "{name} differs from the GenAI conventions");
    }
    // And what they all say is right: the system prompt, the page and the tool
    // result, recorded when the agent first saw each; the belief-tool call is a
    // belief, its result no evidence.
    let items = genai["evidence"]["evidence"].as_array().unwrap();
    let brief: Vec<(&str, &str, &str, &str, &str)> = items
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap(),
                e["kind"].as_str().unwrap(),
                e["source"].as_str().unwrap(),
                e["observed_at"].as_str().unwrap(),
                e["recorded_at"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        vec![
            (
                "T1",
                "other",
                "system",
                "2026-03-02T09:10:01Z",
                "2026-03-02T09:10:01Z"
            ),
            (
                "T2",
                "human",
                "user",
                "2026-03-02T09:10:01Z",
                "2026-03-02T09:10:01Z"
            ),
            // Observed when the tool span ended, recorded when chat 2 began.
            (
                "T3",
                "other",
                "query_metrics",
                "2026-03-02T09:10:06Z",
                "2026-03-02T09:10:07Z"
            ),
        ]
    );
    let locator = items[2]["locator"].as_str().unwrap();
    assert!(
        locator.starts_with("trace 000000075a1700000000000000000001 span ")
            && locator.ends_with(" tool call call_1"),
        "{locator}"
    );
    assert_eq!(
        items[2]["summary"],
        "payments-db cpu 98% since 09:04; connections 480/500"
    );
    let v = &genai["history root-cause"]["versions"];
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["agent"], "triage");
    assert_eq!(v[0]["claim"], "payments-db-overload");
    assert_eq!(v[0]["confidence"], 0.6);
    assert_eq!(v[0]["recorded_at"], "2026-03-02T09:10:11Z");
    assert_eq!(v[0]["valid_from"], "2026-03-02T09:10:00Z");
    assert_eq!(v[0]["supported_by"], json!(["T1", "T2", "T3"]));
    assert_eq!(genai["believed 2026-03-02T09:10:10Z"]["beliefs"], json!([]));
}

#[test]
fn a_belief_tool_span_events_and_a_rules_file_give_identical_stores() {
    let dir = tempfile::tempdir().unwrap();
    let (tool, events, prose) = (
        dir.path().join("tool.db"),
        dir.path().join("events.db"),
        dir.path().join("prose.db"),
    );
    let a = import(&fixture("genai.jsonl"), &tool, &[]);
    let b = import(&fixture("span-events.jsonl"), &events, &[]);
    let rules = fixture("prose.rules.yaml");
    let c = import(
        &fixture("prose.jsonl"),
        &prose,
        &["--rules", rules.to_str().unwrap()],
    );
    assert_eq!(count(&a["assertions_by_source"], "belief tool calls"), 1);
    assert_eq!(
        count(&b["assertions_by_source"], "asof.belief span events"),
        1
    );
    assert_eq!(count(&c["assertions_by_source"], "rules"), 1);
    let expected = answers(&tool, &["root-cause"], &STEP_TIMES);
    assert_eq!(answers(&events, &["root-cause"], &STEP_TIMES), expected);
    assert_eq!(answers(&prose, &["root-cause"], &STEP_TIMES), expected);
    // Without the rules file, prose is only prose.
    let none = dir.path().join("none.db");
    let d = import(&fixture("prose.jsonl"), &none, &[]);
    assert_eq!(d["assertions"], 0);
}

#[test]
fn hex_or_base64_ids_and_numeric_or_named_enums_give_identical_stores() {
    let protobuf = std::fs::read_to_string(fixture("genai-protobuf.json")).unwrap();
    // The fixture really is in the other encoding.
    assert!(protobuf.contains("\"SPAN_KIND_CLIENT\""));
    assert!(protobuf.contains("\"traceId\": \"AAAAB1oXAAAAAAAAAAAAAQ==\""));
    let collector = std::fs::read_to_string(fixture("genai.jsonl")).unwrap();
    assert!(collector.contains("\"kind\":3"));
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    import(&fixture("genai.jsonl"), &a, &[]);
    import(&fixture("genai-protobuf.json"), &b, &[]);
    assert_eq!(
        answers(&b, &["root-cause"], &STEP_TIMES),
        answers(&a, &["root-cause"], &STEP_TIMES)
    );
}

#[test]
fn a_file_that_is_not_otlp_is_refused_saying_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let cases: [(&str, &str, &str); 4] = [
        (
            "other.json",
            r#"{"spans": [], "service": "x"}"#,
            "other.json: line 1 is not OTLP/JSON: found an object with the keys `service`, `spans` instead of `resourceSpans`",
        ),
        (
            "dataset.jsonl",
            "{\"asof\": 1, \"incident\": {\"id\": \"x\"}}\n",
            "dataset.jsonl: line 1 is an asof JSON Lines dataset, not an OTLP trace: load it with `asof load`",
        ),
        (
            "notes.txt",
            "trace of the agent, see attached",
            "notes.txt: is not OTLP/JSON: it does not start with a JSON object (found \"trace of the agent, see attached\")",
        ),
        (
            "empty.json",
            "  \n",
            "empty.json: is empty, not an OTLP/JSON trace",
        ),
    ];
    for (name, text, message) in cases {
        refused(&common::write(dir.path(), name, text), &db, message);
    }
}

/// The bundled SRE run with its rules: (store, summary, evidence id → source).
fn sre(dir: &Path) -> (PathBuf, Value, std::collections::HashMap<String, String>) {
    let db = dir.join("sre.db");
    let rules = dataset("sre-agent.rules.yaml");
    let report = import(
        &dataset("sre-agent.otlp.jsonl"),
        &db,
        &["--rules", rules.to_str().unwrap()],
    );
    let ev = stdout_json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
    let sources = ev["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_owned(),
                e["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (db, report, sources)
}

#[test]
fn the_bundled_sre_run_imports_with_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (db, report, _) = sre(dir.path());
    assert_eq!(report["records"], 30);
    assert_eq!(count(&report["read"], "spans"), 30);
    assert_eq!(count(&report["read"], "model calls"), 13);
    assert_eq!(count(&report["read"], "tool spans"), 16);
    assert_eq!(count(&report["read"], "agent spans"), 1);
    assert_eq!(
        count(&report["assertions_by_source"], "belief tool calls"),
        2
    );
    assert_eq!(count(&report["assertions_by_source"], "rules"), 4);
    // 16 tool calls less the two belief-tool calls, the system prompt, the page.
    assert_eq!(report["evidence"], 16);
    assert_eq!(report["skipped"], json!([]));
    // The kept summary is in the store and its audit report.
    let md = asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "md"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("Imported from "), "{md}");
    assert!(md.contains("13 model calls"), "{md}");
    // The hypothesis changed twice: db → network → deploy.
    let h = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let claims: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["claim"].as_str().unwrap())
        .collect();
    assert_eq!(
        claims,
        vec![
            "payments-db-overload",
            "network-partition-az-b",
            "bad-deploy-v2-31-0",
            "bad-deploy-v2-31-0"
        ]
    );
}

#[test]
fn citations_default_to_exactly_what_was_in_front_of_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _, sources) = sre(dir.path());
    let h = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let cited: Vec<Vec<&str>> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v["supported_by"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| sources[id.as_str().unwrap()].as_str())
                .collect()
        })
        .collect();
    assert_eq!(
        cited,
        vec![
            // The first hypothesis: everything the agent had seen.
            vec!["system", "user", "get_alerts"],
            // The second: only what arrived since the first — the misleading probe.
            vec!["network_check"],
            vec![
                "search_logs",
                "query_metrics",
                "get_slow_queries",
                "get_deploys"
            ],
            vec![
                "get_diff",
                "runbook_lookup",
                "rollback_deploy",
                "wait_for_rollout",
                "query_metrics",
                "query_metrics"
            ],
        ]
    );
    // A belief tool naming its support by tool call id cites that result.
    let h = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "customer-impact",
        "--format",
        "json",
    ]));
    let first = &h["versions"][0];
    assert_eq!(first["valid_from"], "2026-04-14T02:05:12Z");
    let ids: Vec<&str> = first["supported_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| sources[v.as_str().unwrap()].as_str())
        .collect();
    assert_eq!(ids, vec!["get_alerts"]);
    // The what-if on the misleading probe: without it the agent keeps its first
    // hypothesis until the deploy is found.
    let fork = dir.path().join("fork.db");
    let network = sources
        .iter()
        .find(|(_, s)| *s == "network_check")
        .map(|(id, _)| id.clone())
        .unwrap();
    let diff = stdout_json(
        asof()
            .arg("fork")
            .arg(&db)
            .args(["--without", &network, "--format", "json", "--out"])
            .arg(&fork),
    );
    assert_eq!(diff["dropped"], json!(["B3"]));
    assert_eq!(
        diff["divergence"][0]["windows"][0]["fork"],
        "payments-db-overload"
    );
}

#[test]
fn a_rules_match_keeps_a_quote_that_is_verbatim_in_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _, _) = sre(dir.path());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut stmt = conn
        .prepare("SELECT text FROM events WHERE kind = 'believe' AND topic = 'root-cause'")
        .unwrap();
    let rationales: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rationales.len(), 4);
    // The trace's model-call outputs, by span id.
    let trace = std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap();
    let mut outputs = std::collections::HashMap::new();
    for line in trace.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .unwrap()
        {
            for a in span["attributes"].as_array().unwrap() {
                if a["key"] == "gen_ai.output.messages" {
                    let messages: Value =
                        serde_json::from_str(a["value"]["stringValue"].as_str().unwrap()).unwrap();
                    outputs.insert(span["spanId"].as_str().unwrap().to_owned(), messages);
                }
            }
        }
    }
    for r in &rationales {
        let quote = r
            .split_once('“')
            .and_then(|(_, rest)| rest.split_once('”'))
            .map(|(q, _)| q)
            .unwrap_or_else(|| panic!("no quote in {r}"));
        assert!(quote.starts_with("Hypothesis: root cause is "), "{r}");
        // "… (trace T span S output message M part P)"
        let locator = r.rsplit_once("(trace ").unwrap().1;
        let words: Vec<&str> = locator.trim_end_matches(')').split(' ').collect();
        let (span, m, p) = (words[2], words[5], words[7]);
        let m: usize = m.parse().unwrap();
        let p: usize = p.parse().unwrap();
        let text = outputs[span][m]["parts"][p]["content"].as_str().unwrap();
        assert!(text.contains(quote), "{quote:?} not in {text:?}");
    }
}

/// A hand-made trace as an SDK writes span events on a model call.
fn span_events_trace(events: Value, extra_spans: Vec<Value>) -> String {
    let kv = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
    let mut spans = vec![
        json!({"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00f067aa0ba902b7",
               "name": "chat m", "kind": 3,
               "startTimeUnixNano": "1772442600000000000", "endTimeUnixNano": "1772442605000000000",
               "attributes": [kv("gen_ai.operation.name", "chat"),
                              kv("gen_ai.input.messages", r#"[{"role":"tool","parts":[{"type":"tool_call_response","id":"call_9","response":"disk full on db-2"}]}]"#),
                              kv("gen_ai.output.messages", r#"[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]"#)],
               "events": events}),
        json!({"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00f067aa0ba902b8",
               "name": "execute_tool df", "kind": 1,
               "startTimeUnixNano": "1772442590000000000", "endTimeUnixNano": "1772442595000000000",
               "attributes": [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "df"),
                              kv("gen_ai.tool.call.id", "call_9"), kv("gen_ai.tool.call.result", "disk full on db-2")]}),
    ];
    spans.extend(extra_spans);
    json!({"resourceSpans": [{"resource": {"attributes": [kv("service.name", "ops-agent")]},
                              "scopeSpans": [{"spans": spans}]}]})
    .to_string()
}

#[test]
fn span_events_retract_cite_by_tool_call_id_and_report_what_they_cannot_read() {
    let kv = |k: &str, v: Value| {
        let value = match v {
            Value::Array(items) => {
                json!({"arrayValue": {"values": items.into_iter().map(|i| json!({"stringValue": i})).collect::<Vec<_>>()}})
            }
            Value::Number(n) => json!({"doubleValue": n}),
            other => json!({"stringValue": other}),
        };
        json!({"key": k, "value": value})
    };
    let events = json!([
        {"timeUnixNano": "1772442601000000000", "name": "asof.belief", "attributes": [
            kv("asof.topic", json!("root-cause")), kv("asof.claim", json!("disk-full")),
            kv("asof.confidence", json!(0.7)), kv("asof.valid_from", json!("2026-03-02T09:00:00Z")),
            kv("asof.supported_by", json!(["call_9", "call_404"]))]},
        {"timeUnixNano": "1772442602000000000", "name": "asof.belief", "attributes": [
            kv("asof.topic", json!("root-cause")), kv("asof.confidence", json!(0.7))]},
        {"timeUnixNano": "1772442604000000000", "name": "asof.retract", "attributes": [
            kv("asof.topic", json!("root-cause")), kv("asof.reason", json!("the disk was fine"))]},
    ]);
    let bad_span = json!({"traceId": "not-an-id", "spanId": "00f067aa0ba902b9", "name": "x",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2"});
    let bad_messages = json!({"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00f067aa0ba902ba",
        "name": "chat m", "startTimeUnixNano": "1772442606000000000", "endTimeUnixNano": "1772442607000000000",
        "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": "[{broken"}}]});
    let dir = tempfile::tempdir().unwrap();
    let input = common::write(
        dir.path(),
        "trace.json",
        &span_events_trace(events, vec![bad_span, bad_messages]),
    );
    let db = dir.path().join("t.db");
    let report = import(&input, &db, &[]);
    let h = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let v = &h["versions"][0];
    assert_eq!(v["agent"], "ops-agent");
    assert_eq!(v["claim"], "disk-full");
    assert_eq!(v["supported_by"], json!(["T1"]));
    assert_eq!(v["valid_from"], "2026-03-02T09:00:00Z");
    assert_eq!(v["closed"], json!({"by": "R1", "kind": "retracted"}));
    assert_eq!(v["superseded_at"], "2026-03-02T09:10:04Z");
    let skipped = report["skipped"].to_string();
    for expected in [
        "cites call_404, which is no evidence id or tool call id of this trace: citation dropped",
        "asof.belief event: it names no asof.claim",
        "neither hex nor base64",
        "gen_ai.input.messages is not valid JSON",
        "00f067aa0ba902ba",
    ] {
        assert!(skipped.contains(expected), "{expected}: {skipped}");
    }
    assert_eq!(report["skipped"].as_array().unwrap().len(), 4, "{skipped}");
    assert_eq!(
        count(&report["assertions_by_source"], "asof.retract span events"),
        1
    );
    // The span whose messages cannot be read is no model call.
    assert_eq!(
        count(&report["defaults"], "model calls under no agent span"),
        1
    );
}

#[test]
fn a_trace_is_a_source_for_every_query_command() {
    let trace = fixture("genai.jsonl");
    let believed = stdout_json(asof().arg("believed").arg(&trace).args([
        "--at",
        "2026-03-02T09:11:00Z",
        "--format",
        "json",
    ]));
    assert_eq!(believed["beliefs"][0]["claim"], "payments-db-overload");
    asof()
        .arg("influence")
        .arg(&trace)
        .assert()
        .success()
        .stdout(predicate::str::contains("T3"));
    let dir = tempfile::tempdir().unwrap();
    let fork = dir.path().join("f.db");
    let diff = stdout_json(
        asof()
            .arg("fork")
            .arg(&trace)
            .args(["--without", "T3", "--format", "json", "--out"])
            .arg(&fork),
    );
    assert_eq!(diff["scaled"][0]["assertion"], "B1");
    asof()
        .arg("tui")
        .arg(&trace)
        .assert()
        .success()
        .stdout(predicate::str::contains("not a terminal"));
}

#[test]
fn a_generated_trace_of_100k_spans_imports() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("big.otlp.jsonl");
    asof()
        .args(["gen", "--otlp", "--events", "100000", "-o"])
        .arg(&trace)
        .assert()
        .success();
    let db = dir.path().join("big.db");
    let report = import(&trace, &db, &[]);
    assert_eq!(report["records"], 100_000);
    assert_eq!(count(&report["read"], "model calls"), 49_998);
    assert_eq!(count(&report["read"], "agent spans"), 4);
    // Every tenth step records a belief through the belief tool.
    assert_eq!(report["assertions"], 4_999);
    assert_eq!(report["skipped"], json!([]));
    asof().arg("check").arg(&db).assert().success();
}

#[test]
fn hostile_traces_fail_cleanly_or_skip_what_they_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Deep nesting and invalid UTF-8 are refused with their reason, no store.
    let deep = format!(
        "{{\"resourceSpans\":{}{}}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let cases = [
        ("deep.json", deep.into_bytes(), "recursion limit exceeded"),
        (
            "bytes.jsonl",
            b"{\"resourceSpans\":[]}\n\xff\xfe\n".to_vec(),
            "not valid UTF-8 (byte 21)",
        ),
    ];
    for (name, bytes, message) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        refused(&input, &db, message);
    }
    // A trace exported twice (an exporter's retry) and a truncated last line:
    // one copy is read, the rest is reported.
    let once = std::fs::read_to_string(fixture("genai.jsonl")).unwrap();
    let twice = format!("{once}{once}{}", &once[..once.len() / 2]);
    let input = common::write(dir.path(), "twice.jsonl", &twice);
    asof()
        .args(["import", "otlp"])
        .arg(&input)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("twice.jsonl:3: is not valid JSON"));
    let report = import(&input, &db, &["--skip-bad-lines"]);
    assert_eq!(report["bad_lines"], 1);
    assert_eq!(report["evidence"], 3);
    assert_eq!(report["assertions"], 1);
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 6, "{report}");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("is not valid JSON")
    );
    assert_eq!(skipped[0]["location"], "line 3");
    assert!(skipped[1..].iter().all(|s| s["reason"] == "exported again (same trace and span id): the copy is not read"));
}

/// SplitMix64, for deterministic mutations.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn mutated_traces_never_panic() {
    // Each fixture, cut, with bytes flipped, with slices repeated or dropped:
    // the import answers or refuses, it never panics (the fuzz target's body).
    let mut state = 7u64;
    for name in [
        "genai.jsonl",
        "genai-events.jsonl",
        "openinference.jsonl",
        "openllmetry.jsonl",
        "genai-protobuf.json",
        "genai-logs.logs.jsonl",
        "openai-v2.logs.jsonl",
        "features.jsonl",
        "recheck-openllmetry.jsonl",
    ] {
        let original = std::fs::read(fixture(name)).unwrap();
        for _ in 0..200 {
            let mut data = original.clone();
            for _ in 0..1 + next(&mut state) % 4 {
                let len = data.len().max(1) as u64;
                let at = (next(&mut state) % len) as usize;
                match next(&mut state) % 5 {
                    0 => data.truncate(at),
                    1 => {
                        if let Some(b) = data.get_mut(at) {
                            let bytes = b"{}[]\":,0aZ\\\n";
                            *b = bytes[(next(&mut state) % bytes.len() as u64) as usize];
                        }
                    }
                    2 => {
                        let end = (at + (next(&mut state) % 200) as usize).min(data.len());
                        let slice = data[at..end].to_vec();
                        data.splice(at..at, slice);
                    }
                    3 => {
                        let end = (at + (next(&mut state) % 200) as usize).min(data.len());
                        data.drain(at..end);
                    }
                    _ => {
                        // A quoted number or id replaced by something odd.
                        let odd: &[&[u8]] = &[
                            b"\"-1\"",
                            b"\"\"",
                            b"null",
                            b"\"zz\"",
                            b"18446744073709551615",
                            b"[]",
                        ];
                        let pick = odd[(next(&mut state) % odd.len() as u64) as usize];
                        let end = (at + 4).min(data.len());
                        data.splice(at..end, pick.iter().copied());
                    }
                }
            }
            asof::fuzzing::otlp(&data);
        }
    }
}

/// openai-v2 2.3b0's logs alone: each chat span's records stand for it; the
/// tool result comes from the `gen_ai.tool.message` record, cited by the
/// belief the agent then stated; the summary says the model calls were timed
/// by their records.
#[test]
fn a_logs_file_without_its_spans_imports_what_its_records_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("logs.db");
    let report = import(&fixture("genai-logs.logs.jsonl"), &db, &[]);
    assert_eq!(count(&report["read"], "model calls"), 2, "{report}");
    assert_eq!(count(&report["read"], "log records"), 8, "{report}");
    assert_eq!(
        count(
            &report["defaults"],
            "model calls known only from their log records"
        ),
        2,
        "{report}"
    );
    let evidence = stdout_json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
    let sources: Vec<&str> = evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["system", "user", "query_metrics"]);
    let history = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let text = history.to_string();
    assert!(
        text.contains("payments-db-overload") && text.contains("\"T3\""),
        "{history}"
    );
}

/// Log records that name no span cannot be joined to a model call: refused
/// with a sentence saying what is missing, and no store is written.
#[test]
fn log_records_naming_no_span_are_refused_saying_what_they_lack() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orphans.jsonl");
    let record = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"observedTimeUnixNano": "1772442601000000000", "eventName": "gen_ai.user.message",
         "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "why?"}}]}}}
    ]}]}]});
    std::fs::write(&input, format!("{record}\n")).unwrap();
    refused(
        &input,
        &dir.path().join("o.db"),
        "holds 1 log record but no span, and no record names the span it belongs to",
    );
}

/// `load`, `validate` and `tui` read a trace's logs with `--with`, as
/// `import otlp` reads several inputs; a dataset refuses it.
#[test]
fn load_and_validate_read_the_logs_beside_a_trace_with_with() {
    let dir = tempfile::tempdir().unwrap();
    let traces = fixture("genai-logs.traces.jsonl");
    let logs = fixture("genai-logs.logs.jsonl");
    let imported = dir.path().join("imported.db");
    import(&traces, &imported, &[logs.to_str().unwrap()]);
    let loaded = dir.path().join("loaded.db");
    asof()
        .arg("load")
        .arg(&traces)
        .arg("--with")
        .arg(&logs)
        .arg("--db")
        .arg(&loaded)
        .assert()
        .success();
    assert_eq!(
        answers(&loaded, &["root-cause"], &STEP_TIMES),
        answers(&imported, &["root-cause"], &STEP_TIMES)
    );
    // Without its logs the trace holds no message: the belief cites nothing.
    let bare = dir.path().join("bare.db");
    import(&traces, &bare, &[]);
    assert_ne!(
        answers(&bare, &["root-cause"], &STEP_TIMES),
        answers(&imported, &["root-cause"], &STEP_TIMES)
    );
    asof()
        .arg("validate")
        .arg(&traces)
        .arg("--with")
        .arg(&logs)
        .assert()
        .success()
        .stdout(predicate::str::contains("8 log records joined to a span"));
    asof()
        .arg("validate")
        .arg(dataset("payment-outage.yaml"))
        .arg("--with")
        .arg(&logs)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--with is for reading an OTLP trace",
        ));
}

/// The agent re-checks a node and the tool returns byte-identical output:
/// two evidence items, each cited by the model call that read it (not the
/// second folded into the first), in the GenAI, OpenInference and
/// OpenLLMetry forms — the last two with no call id on their tool spans.
#[test]
fn a_tool_returning_identical_output_twice_is_two_items_each_cited_by_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let rules = fixture("prose.rules.yaml");
    let mut all = Vec::new();
    for form in ["genai", "openinference", "openllmetry"] {
        let db = dir.path().join(format!("{form}.db"));
        let report = import(
            &fixture(&format!("recheck-{form}.jsonl")),
            &db,
            &["--rules", rules.to_str().unwrap()],
        );
        assert_eq!(report["skipped"], json!([]), "{form}: {report}");
        let evidence = stdout_json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
        let items: Vec<(String, String, Value)> = evidence["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_owned(),
                    e["locator"].as_str().unwrap().to_owned(),
                    e["cited_by"].clone(),
                )
            })
            .collect();
        let results: Vec<&(String, String, Value)> = items
            .iter()
            .filter(|(_, locator, _)| locator.contains("tool call call_r"))
            .collect();
        assert_eq!(results.len(), 2, "{form}: {items:?}");
        assert!(results[0].1.ends_with("tool call call_r1"), "{form}");
        assert!(results[1].1.ends_with("tool call call_r2"), "{form}");
        assert_eq!(
            results[0].2,
            json!(["B1"]),
            "{form}: the first read is B1's"
        );
        assert_eq!(results[1].2, json!(["B2"]), "{form}: the re-check is B2's");
        all.push((
            form,
            answers(&db, &["root-cause"], &["2026-03-02T09:20:30Z"]),
        ));
    }
    for (form, other) in &all[1..] {
        assert_eq!(other, &all[0].1, "{form} differs from the GenAI form");
    }
}

/// The value of the first span attribute `key` in an OTLP/JSON Lines file.
fn span_attribute(file: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    for line in text.lines() {
        let request: Value = serde_json::from_str(line).unwrap();
        for rs in request["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    for kv in span["attributes"].as_array().unwrap() {
                        if kv["key"] == key {
                            return kv["value"]["stringValue"].as_str().unwrap().to_owned();
                        }
                    }
                }
            }
        }
    }
    panic!("no {key} in {}", file.display())
}

/// A 20 KB page of alerts and a 30 KB tool result come back byte for byte
/// (tables keep a summary); both hypotheses the last call states at one
/// instant cite that call's new evidence, the zero-width one too.
#[test]
fn evidence_is_kept_whole_and_one_calls_assertions_share_its_new_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("whole.db");
    let trace = fixture("whole.jsonl");
    let rules = fixture("prose.rules.yaml");
    import(&trace, &db, &["--rules", rules.to_str().unwrap()]);
    let result = span_attribute(&trace, "gen_ai.tool.call.result");
    let inputs: Value =
        serde_json::from_str(&span_attribute(&trace, "gen_ai.input.messages")).unwrap();
    let page = inputs[0]["parts"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.len() >= 30_000 && page.len() >= 20_000);
    let whole = |id: &str| {
        let json = stdout_json(
            asof()
                .arg("evidence")
                .arg(&db)
                .args(["--id", id, "--format", "json"]),
        );
        let items = json["evidence"].as_array().unwrap().clone();
        assert_eq!(items.len(), 1, "{id}");
        items[0].clone()
    };
    let user = whole("T1");
    assert_eq!(user["source"], "user");
    assert_eq!(
        user["content"].as_str().unwrap(),
        page,
        "the page, byte for byte"
    );
    assert_eq!(
        user["content"]
            .as_str()
            .unwrap()
            .matches("paymentservice")
            .count(),
        page.matches("paymentservice").count()
    );
    assert_eq!(user["summary"].as_str().unwrap().chars().count(), 200);
    let tool = whole("T2");
    assert_eq!(
        tool["content"].as_str().unwrap(),
        result,
        "the result, byte for byte"
    );
    // The table form prints it whole too, after the item's row.
    let text = asof()
        .arg("evidence")
        .arg(&db)
        .args(["--id", "T2"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains(&result), "the whole text in the table form");
    // The reports carry it whole too: Markdown in a fence, HTML one click away.
    for format in ["md", "html"] {
        let out = asof()
            .arg("export")
            .arg(&db)
            .args(["--format", format])
            .output()
            .unwrap();
        let report = String::from_utf8(out.stdout).unwrap();
        let expected = if format == "html" {
            result.replace('"', "&quot;")
        } else {
            result.clone()
        };
        assert!(report.contains(&expected), "{format}: the whole result");
    }
    asof()
        .arg("evidence")
        .arg(&db)
        .args(["--id", "T9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no evidence item T9"));
    // Both hypotheses of the last call cite what that call read new.
    let history = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let mut cited: Vec<(String, Value)> = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .chain(history["events"].as_array().unwrap())
        .map(|v| {
            (
                v["assertion"]
                    .as_str()
                    .or(v["event"].as_str())
                    .unwrap_or("?")
                    .to_owned(),
                v.get("supported_by").unwrap_or(&v["cites"]).clone(),
            )
        })
        .collect();
    cited.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        cited,
        vec![
            ("B1".to_owned(), json!(["T1", "T2"])),
            ("B2".to_owned(), json!(["T1", "T2"]))
        ],
        "{history}"
    );
}

/// The newer conventions, each landing where it belongs: a memory search's
/// record and a retrieval's document are evidence (with their ids in the
/// locator) cited by the call they were fetched for; a reasoning part is read
/// by `in: reasoning` with its part locator; an MCP tool is a tool with its
/// session in the locator; evaluations show in the JSON of what they judged;
/// a memory write states a belief (`in: memory`) and its delete retracts it.
#[test]
fn memory_retrieval_reasoning_mcp_and_evaluations_each_land_where_they_belong() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("features.db");
    let rules = fixture("features.rules.yaml");
    let report = import(
        &fixture("features.jsonl"),
        &db,
        &["--rules", rules.to_str().unwrap()],
    );
    assert_eq!(report["skipped"], json!([]), "{report}");
    assert_eq!(count(&report["read"], "evaluations"), 2, "{report}");
    let evidence = stdout_json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
    let items = evidence["evidence"].as_array().unwrap();
    let by_source = |source: &str| {
        items
            .iter()
            .find(|e| e["source"] == source)
            .unwrap_or_else(|| panic!("no {source} item: {evidence}"))
    };
    let memory = by_source("memory:incidents");
    assert!(
        memory["locator"]
            .as_str()
            .unwrap()
            .ends_with("memory record mem-17")
    );
    assert!(memory["content"].as_str().unwrap().contains("INC-4410"));
    let document = by_source("retrieval");
    assert!(
        document["locator"]
            .as_str()
            .unwrap()
            .ends_with("document runbook-3")
    );
    let tool = by_source("get_pod_status");
    assert!(
        tool["locator"]
            .as_str()
            .unwrap()
            .contains("mcp session sess-42 tool call call_m1"),
        "{tool}"
    );
    assert_eq!(tool["evaluations"][0]["name"], "relevance");
    assert_eq!(tool["evaluations"][0]["score_value"], 0.9);
    assert_eq!(tool["evaluations"][0]["score_label"], "relevant");
    assert!(memory.get("evaluations").is_none(), "only what was judged");
    // The trace itself as a SOURCE (no rules, so no beliefs) keeps them too.
    let direct = stdout_json(
        asof()
            .arg("evidence")
            .arg(fixture("features.jsonl"))
            .args(["--format", "json"]),
    );
    let direct_tool = direct["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["source"] == "get_pod_status")
        .unwrap();
    assert_eq!(direct_tool["evaluations"], tool["evaluations"]);
    let history = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let versions = history["versions"].as_array().unwrap();
    // The first call's reasoning part, read with its part locator, cites
    // what was fetched for it.
    let first = &versions[0];
    assert_eq!(first["claim"], "paymentservice");
    let cites: Vec<&str> = first["supported_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for id in [&memory["id"], &document["id"]] {
        assert!(cites.contains(&id.as_str().unwrap()), "{first}");
    }
    assert!(first.get("evaluations").is_none());
    assert_eq!(versions[1]["evaluations"][0]["name"], "groundedness");
    let log = stdout_json(asof().arg("history").arg(&db).args([
        "--topic",
        "remembered-cause",
        "--format",
        "json",
    ]));
    let remembered = &log["versions"][0];
    assert_eq!(remembered["claim"], "paymentservice-pool");
    assert_eq!(remembered["closed"]["kind"], "retracted", "{log}");
    let md = asof()
        .arg("believed")
        .arg(&db)
        .args(["--at", "2026-03-02T09:40:30Z", "--format", "json"])
        .output()
        .unwrap();
    let believed = String::from_utf8(md.stdout).unwrap();
    assert!(
        !believed.contains("paymentservice-pool"),
        "deleted, retracted"
    );
    // The reasoning quote keeps its part locator; the memory write's, its record.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let rationale = |claim: &str| -> String {
        conn.query_row(
            "SELECT text FROM events WHERE kind = 'believe' AND claim = ?1 ORDER BY seq",
            [claim],
            |r| r.get(0),
        )
        .unwrap()
    };
    let reasoning = rationale("paymentservice");
    assert!(
        reasoning.starts_with("“root cause is paymentservice (50%)” (reasoning)")
            && reasoning.ends_with("output message 0 part 0)"),
        "{reasoning}"
    );
    let written = rationale("paymentservice-pool");
    assert!(
        written.contains("(memory write)") && written.ends_with("memory record mem-18)"),
        "{written}"
    );
}

/// A run whose every model call repeats its whole history (as content
/// capture records one) imports the same whether it is streamed from its
/// file a line at a time, read from text in memory, or read with its
/// requests in reverse (so no call's input continues the one read before it
/// and every input is parsed whole).
#[test]
fn a_quadratic_history_imports_alike_streamed_in_memory_and_out_of_order() {
    use asof::import::otlp;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let mut bytes = Vec::new();
    asof::synth::otlp_with(
        asof::synth::GenConfig {
            events: 400,
            topics: 5,
            agents: 2,
            seed: 7,
        },
        true,
        &mut bytes,
    )
    .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    std::fs::write(&path, &text).unwrap();
    let options = otlp::Options::default();
    let mut seen = Vec::new();
    let streamed = otlp::read_files(
        &[("history.jsonl", path.as_path())],
        &options,
        &mut |done, total| seen.push((done, total)),
    )
    .unwrap();
    assert_eq!(seen.last(), Some(&(text.len() as u64, text.len() as u64)));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "progress grows");
    let in_memory = otlp::read("history.jsonl", &text, &options).unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    let out_of_order = otlp::read("history.jsonl", &reversed, &options).unwrap();
    let shape = |d: &asof::import::Draft| format!("{:?}", d.events);
    assert!(streamed.events.len() > 300, "{}", streamed.events.len());
    assert_eq!(shape(&streamed), shape(&in_memory));
    assert_eq!(shape(&streamed), shape(&out_of_order));
    assert_eq!(streamed.report.evidence, out_of_order.report.evidence);
    // Each step's ask is one item, however many later calls repeat it.
    let pages = streamed
        .events
        .iter()
        .filter(|e| format!("{e:?}").contains("Investigate topic-"))
        .count();
    assert!(pages > 100, "each step's ask is its own item ({pages})");
}

/// A run recorded by the real openai-v2 2.3b0 instrumentation around the real
/// openai client (datasets/make-otlp-openai-v2.py): its spans carry no
/// content and its log records all of it. With the logs, every hypothesis
/// cites the tool result its call read — the re-check's identical output its
/// own item; without them, the summary says the content is missing and no
/// belief claims a citation.
#[test]
fn a_run_recorded_by_openai_v2_reads_whole_with_its_logs() {
    let dir = tempfile::tempdir().unwrap();
    let traces = fixture("openai-v2.traces.jsonl");
    let logs = fixture("openai-v2.logs.jsonl");
    let rules = fixture("openai-v2.rules.yaml");
    let db = dir.path().join("v2.db");
    let report = import(
        &traces,
        &db,
        &[logs.to_str().unwrap(), "--rules", rules.to_str().unwrap()],
    );
    assert_eq!(report["skipped"], json!([]), "{report}");
    assert_eq!(count(&report["read"], "log records joined to a span"), 15);
    let evidence = stdout_json(asof().arg("evidence").arg(&db).args(["--format", "json"]));
    let brief: Vec<(String, String, Value)> = evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"].as_str().unwrap().to_owned(),
                e["content"].as_str().unwrap().to_owned(),
                e["cited_by"].clone(),
            )
        })
        .collect();
    let node = "node-5: Ready; pods 14/14".to_owned();
    assert_eq!(
        brief[2..],
        [
            ("describe_node".to_owned(), node.clone(), json!(["B1"])),
            ("describe_node".to_owned(), node, json!(["B2"])),
        ],
        "{evidence}"
    );
    let bare = dir.path().join("bare.db");
    let report = import(&traces, &bare, &["--rules", rules.to_str().unwrap()]);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("3 of 3 model calls carry no message content"),
        "{notes}"
    );
}

/// A growing import (a followed trace, `asof serve`'s archive) reads only
/// the lines appended since its last call, and gives at every step what the
/// import of the whole text so far gives — events and summary.
#[test]
fn a_growing_import_equals_the_whole_import_at_every_line() {
    use asof::import::otlp;
    let mut text = String::new();
    for name in [
        "genai-logs.traces.jsonl",
        "genai-logs.logs.jsonl",
        "features.jsonl",
        "recheck-openllmetry.jsonl",
        "openai-v2.logs.jsonl",
        "openai-v2.traces.jsonl",
    ] {
        text.push_str(&std::fs::read_to_string(fixture(name)).unwrap());
    }
    text.push_str(&std::fs::read_to_string(dataset("sre-agent.otlp.jsonl")).unwrap());
    let rules = otlp::rules::parse(
        "features.rules.yaml",
        &std::fs::read_to_string(fixture("features.rules.yaml")).unwrap(),
    )
    .unwrap();
    let options = otlp::Options {
        rules,
        ..otlp::Options::default()
    };
    let mut growing = otlp::Growing::new("live.jsonl", &options);
    let lines: Vec<&str> = text.lines().collect();
    let mut compared = 0;
    for k in 1..=lines.len() {
        let prefix: String = lines[..k].iter().map(|l| format!("{l}\n")).collect();
        let whole = otlp::read("live.jsonl", &prefix, &options);
        let line = format!("{}\n", lines[k - 1]);
        let grown = growing.feed(line.as_bytes()).and_then(|()| growing.draft());
        match (whole, grown) {
            (Ok(w), Ok(g)) => {
                assert_eq!(
                    format!("{:?}", g.events),
                    format!("{:?}", w.events),
                    "line {k}"
                );
                assert_eq!(
                    serde_json::to_value(&g.report).unwrap(),
                    serde_json::to_value(&w.report).unwrap(),
                    "line {k}"
                );
                compared += 1;
            }
            (Err(w), Err(g)) => assert_eq!(g.to_string(), w.to_string(), "line {k}"),
            (w, g) => panic!("line {k}: whole {:?}, grown {:?}", w.is_ok(), g.is_ok()),
        }
    }
    assert!(compared >= lines.len() - 1, "{compared} of {}", lines.len());
}

/// What the importer assumed is said wherever the beliefs are: B2 of the SRE
/// agent's trace states no evidence and no valid_from, so the JSON names
/// both, and the tables and reports mark them (design.md §7).
#[test]
fn assumed_fields_are_named_and_marked_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sre.db");
    common::asof()
        .args(["import", "otlp", "datasets/sre-agent.otlp.jsonl", "--rules"])
        .arg("datasets/sre-agent.rules.yaml")
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let history = common::stdout_json(common::asof().arg("history").arg(&db).args([
        "--topic",
        "root-cause",
        "--format",
        "json",
    ]));
    let b2 = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["assertion"] == "B2")
        .unwrap();
    assert_eq!(
        b2["assumed"],
        serde_json::json!(["valid_from", "supported_by"])
    );
    // A belief stated whole through the belief tool assumes nothing.
    let impact = common::stdout_json(common::asof().arg("history").arg(&db).args([
        "--topic",
        "customer-impact",
        "--format",
        "json",
    ]));
    assert!(
        impact["versions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["assumed"] == serde_json::json!([])),
        "{impact}"
    );
    let table = common::asof()
        .arg("history")
        .arg(&db)
        .args(["--topic", "root-cause"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    let row = table.lines().find(|l| l.contains(" B2 ")).unwrap();
    assert!(row.contains("∞)*") && row.contains("T1,T2,T3*"), "{row}");
    assert!(
        table.contains("* assumed: filled in by the importer"),
        "{table}"
    );
    let md = common::asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("| assumed by the importer | valid_from of 4 assertion(s), supported_by of 4 (marked *) |"),
        "{md}"
    );
    // The ids follow from the options: the report names them.
    assert!(
        md.contains(
            "| import options | asof import otlp --rules datasets/sre-agent.rules.yaml --belief-tool record_belief --retract-tool retract_belief --valid-from trace-start (rules file SHA-256 "
        ),
        "{md}"
    );
    let b2_row = md.lines().find(|l| l.contains("| B2 |")).unwrap();
    assert!(b2_row.contains(")* |"), "valid marked: {b2_row}");
    assert!(b2_row.ends_with("* |"), "evidence marked: {b2_row}");
    let html = common::asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&html.stdout);
    assert!(html.contains(
        "assumed by the importer: valid_from of 4 assertion(s), supported_by of 4 (marked *)"
    ));
    assert!(
        html.contains(r#""assumed":["valid_from","supported_by"]"#),
        "the rows' data"
    );
    assert!(html.contains("* assumed: filled in by the importer"));
    // The demo was loaded as written: nothing assumed.
    let demo = common::asof()
        .args(["export", "--format", "md"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&demo.stdout).contains("| assumed by the importer | nothing |")
    );
}

/// A trace with one line cut in half is refused, naming the file and line,
/// as a SOURCE and by `import otlp`; with --skip-bad-lines the rest is read,
/// and the skipped line is said on standard error and in the report.
#[test]
fn a_damaged_line_is_an_error_unless_skipped_and_then_counted() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("datasets/sre-agent.otlp.jsonl").unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let half = &lines[1][..lines[1].len() / 2];
    lines[1] = half;
    let cut = dir.path().join("cut.otlp.jsonl");
    std::fs::write(&cut, lines.join("\n") + "\n").unwrap();
    let line2 = format!("{}:2: is not valid JSON", cut.display());
    asof()
        .arg("believed")
        .arg(&cut)
        .args(["--at", "2026-04-15T00:00:00Z"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(line2.as_str()))
        .stderr(predicate::str::contains("--skip-bad-lines"));
    let db = dir.path().join("cut.db");
    asof()
        .args(["import", "otlp"])
        .arg(&cut)
        .arg("--db")
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(line2.as_str()));
    assert!(!db.exists(), "no partial store");
    asof()
        .arg("believed")
        .arg(&cut)
        .args(["--skip-bad-lines", "--at", "2026-04-15T00:00:00Z"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "1 line(s) did not parse and were skipped (--skip-bad-lines): line 2",
        ));
    asof()
        .args(["import", "otlp"])
        .arg(&cut)
        .arg("--db")
        .arg(&db)
        .arg("--skip-bad-lines")
        .assert()
        .success()
        .stderr(predicate::str::contains("1 line(s) did not parse"));
    let md = asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "md"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&md.stdout).contains(
        "| input lines skipped | 1 line(s) did not parse and were skipped (--skip-bad-lines) |"
    ));
}

/// `asof calls`: each model call lists the evidence first in front of the
/// model at it — recorded at that call's start — and those lists partition
/// the evidence that reached the model; what each call said is its own.
#[test]
fn model_calls_partition_what_the_model_read() {
    let trace = "datasets/sre-agent.otlp.jsonl";
    let v = stdout_json(asof().args(["calls", trace, "--format", "json"]));
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 13);
    let evidence = stdout_json(asof().args(["evidence", trace, "--format", "json"]));
    let recorded: std::collections::HashMap<&str, &str> = evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap(),
                e["recorded_at"].as_str().unwrap(),
            )
        })
        .collect();
    let mut read = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        assert_eq!(c["n"], i + 1);
        for id in c["read_new"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            assert_eq!(
                recorded[id], c["started"],
                "{id} reached the agent at call {}'s start",
                c["n"]
            );
            read.push(id.to_owned());
        }
        for t in c["tool_calls"].as_array().unwrap() {
            assert!(t["name"].is_string());
        }
    }
    let mut sorted = read.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), read.len(), "no item read new twice");
    let starts: std::collections::HashSet<&str> = calls
        .iter()
        .map(|c| c["started"].as_str().unwrap())
        .collect();
    let reached: usize = recorded.values().filter(|t| starts.contains(*t)).count();
    assert_eq!(
        read.len(),
        reached,
        "every item that reached the model is listed"
    );
    assert_eq!(read.len(), 16);
    // What the model had read before its 3rd call: calls 1 and 2's.
    let before_third: Vec<&str> = calls[..2]
        .iter()
        .flat_map(|c| c["read_new"].as_array().unwrap())
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(before_third, ["T1", "T2", "T3"]);
    assert_eq!(calls[1]["said"], json!(["B1"]));
    assert_eq!(calls[0]["tool_calls"][0]["evidence"], "T3");
    assert_eq!(calls[0]["model"], "gpt-4.1-2025-04-14");
    // A store that is no trace has no model calls.
    asof()
        .args(["calls"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no model calls"));
}
