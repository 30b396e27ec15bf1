//! The review record (docs/review.md) through the real binary: findings kept
//! apart from the agent's log and recorded when made, announced wherever they
//! are read, listed, compared, exchanged as OpenTelemetry evaluations, turned
//! into a what-if — and secrets redacted before anything leaves.

use crate::common;

use asof::tui::action::Action;
use common::{asof, stdout_json as json, write};
use serde_json::Value;
use std::path::Path;

/// Two findings of ana's and one of bob's, who disagrees about E15.
const REVIEW: &str = concat!(
    r#"{"id":"F1","target":{"kind":"evidence","id":"E15"},"verdict":"rejected","note":"a traffic lull, not the rollback","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-03T12:10:00Z"}"#,
    "\n",
    r#"{"id":"F2","target":{"kind":"version","id":"B19","agent":"triage","topic":"root-cause"},"verdict":"misleading","note":"rested on E15 alone","reviewer":"ana","made_at":"2026-12-06T09:14:30Z","about":"2026-03-03T12:10:00Z"}"#,
    "\n",
);
const BOBS: &str = concat!(
    r#"{"id":"F3","target":{"kind":"evidence","id":"E15"},"verdict":"direct-read","note":"the dip is real","reviewer":"bob","made_at":"2026-12-06T10:00:00Z","about":"2026-03-03T12:10:00Z"}"#,
    "\n",
);

fn stderr(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().expect("asof runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn item<'a>(evidence: &'a Value, id: &str) -> &'a Value {
    evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {evidence}"))
}

/// `asof load --review` keeps the findings in the store's review table, not
/// its log: an as-of answer at the instant the finding is about still says
/// what the agent knew; `--with-review` shows the verdict beside it, with
/// when it was made; the report's "nothing was assumed" stays true.
#[test]
fn a_loaded_review_stays_out_of_the_log_and_is_shown_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let review = write(dir.path(), "ana.review.jsonl", REVIEW);
    let db = dir.path().join("reviewed.db");
    let out = asof()
        .args(["load", "datasets/payment-outage.yaml", "--db"])
        .arg(&db)
        .arg("--review")
        .arg(&review)
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("with 2 review findings from") && said.contains("not in its log"),
        "{said}"
    );
    asof().arg("check").arg(&db).assert().success();
    let at = "2026-03-03T12:10:00Z";
    // As of 12:10, E15 is what the agent knew: a candidate.
    let mut cmd = asof();
    cmd.arg("evidence")
        .arg(&db)
        .args(["--at", at, "--format", "json"]);
    let plain = json(&mut cmd);
    assert_eq!(item(&plain, "E15")["verification"]["state"], "candidate");
    assert!(item(&plain, "E15").get("review").is_none());
    let announced = stderr(&mut cmd);
    assert!(
        announced.contains("review: ")
            && announced.contains("reviewed.db's review table (loaded from")
            && announced.contains("2 findings by ana, last 2026-12-06 09:14")
            && announced.contains("(shown with --with-review)"),
        "{announced}"
    );
    // The log has no event the review made.
    let log = json(asof().arg("changes").arg(&db).args([
        "--after",
        "2026-03-01",
        "--until",
        "2026-12-31",
        "--format",
        "json",
    ]));
    assert!(!log.to_string().contains("F1"), "{log}");
    // Beside it, with --with-review: the verdict, made at its own time.
    let mut cmd = asof();
    cmd.arg("evidence")
        .arg(&db)
        .args(["--at", at, "--with-review", "--format", "json"]);
    let reviewed = json(&mut cmd);
    let e15 = item(&reviewed, "E15");
    assert_eq!(e15["verification"]["state"], "candidate");
    assert_eq!(e15["review"][0]["verdict"], "rejected");
    assert_eq!(e15["review"][0]["made_at"], "2026-12-06T09:12:00Z");
    assert_eq!(e15["review"][0]["about"], at);
    assert_eq!(e15["review"][0]["reviewer"], "ana");
    // The table has a column of its own, said to be the review's.
    let table = asof()
        .arg("evidence")
        .arg(&db)
        .args(["--at", at, "--with-review"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let e15 = table.lines().find(|l| l.starts_with("E15 ")).unwrap();
    assert!(
        e15.contains("candidate") && e15.contains("rejected F1 ana"),
        "{e15}"
    );
    assert!(
        table.contains("REVIEW: the review's latest verdict"),
        "{table}"
    );
    // A version's verdict, beside the belief.
    let believed = json(asof().arg("believed").arg(&db).args([
        "--at",
        at,
        "--topic",
        "root-cause",
        "--agent",
        "triage",
        "--with-review",
        "--format",
        "json",
    ]));
    let b19 = &believed["beliefs"][0];
    assert_eq!(b19["assertion"], "B19");
    assert_eq!(b19["support"], "ok");
    assert_eq!(b19["review"][0]["verdict"], "misleading");
    // The report: the log as the dataset wrote it, and the findings apart.
    let md = asof()
        .args(["export"])
        .arg(&db)
        .args(["--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(md.contains("nothing was assumed"), "{md}");
    assert!(!md.contains("RV1"));
}

/// Bad review files are refused with each line's sentence, and nothing is written.
#[test]
fn a_broken_review_file_is_refused_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.review.jsonl",
        concat!(
            r#"{"id":"F1","target":{"kind":"evidence","id":"E99"},"verdict":"rejected","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-04T11:00:00Z"}"#,
            "\n",
            r#"{"id":"F2","target":{"kind":"evidence","id":"E24"},"verdict":"rejected","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-04T11:00:00Z"}"#,
            "\n",
            r#"{"id":"F3","target":{"kind":"evidence","id":"E1"},"verdict":"wrong","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-04T11:00:00Z"}"#,
            "\n",
            r#"{"verify": {"id": "RV1", "evidence": "E1", "state": "rejected", "recorded_at": "2026-03-04T11:00:00Z"}}"#,
            "\n",
        ),
    );
    // Loaded with the demo: exit 2, its sentences, and no partial store.
    let out = dir.path().join("bad.db");
    let refused = |review: &Path| -> String {
        let assert = asof()
            .args(["load", "datasets/payment-outage.yaml", "--db"])
            .arg(&out)
            .arg("--review")
            .arg(review)
            .assert()
            .code(2);
        assert!(!out.exists(), "no partial store");
        String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
    };
    let err = refused(&bad);
    assert!(
        err.contains("bad.review.jsonl:3: verdict `wrong` is not one for a finding about evidence"),
        "{err}"
    );
    assert!(
        err.contains("bad.review.jsonl:4: this is a `verify` event of an older asof's review file"),
        "{err}"
    );
    // Lines that parse but name what the log lacks, or an instant before it.
    let bad = write(
        dir.path(),
        "bad2.review.jsonl",
        &REVIEW.replace("\"E15\"", "\"E99\"").replace(
            "\"about\":\"2026-03-03T12:10:00Z\"}",
            "\"about\":\"2026-03-01T00:00:00Z\"}",
        ),
    );
    let err = refused(&bad);
    assert!(
        err.contains("bad2.review.jsonl:1: event F1: evidence `E99` is not in the log"),
        "{err}"
    );
    assert!(
        err.contains(
            "bad2.review.jsonl:2: event F2: is about 2026-03-01T00:00:00Z, before B19 was recorded"
        ),
        "{err}"
    );
}

/// The review beside the bundled demo (in the working directory) is read by
/// every command that reads the demo and said on standard error; one under
/// another name is not read.
#[test]
fn a_review_beside_the_demo_is_announced_and_another_name_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "other.review.jsonl", REVIEW);
    let run = |args: &[&str]| {
        let mut cmd = asof();
        cmd.current_dir(dir.path()).args(args);
        stderr(&mut cmd)
    };
    let commands: [&[&str]; 5] = [
        &["evidence"],
        &["believed", "--at", "end"],
        &["history", "--topic", "root-cause"],
        &["export", "--format", "md"],
        &[
            "review",
            "--format",
            "json",
            "--review",
            "other.review.jsonl",
        ],
    ];
    for args in &commands[..4] {
        assert!(!run(args).contains("review:"), "{args:?} read a review");
    }
    write(dir.path(), "payment-outage.review.jsonl", REVIEW);
    for args in commands {
        let said = run(args);
        let name = if args.contains(&"other.review.jsonl") {
            "other.review.jsonl"
        } else {
            "payment-outage.review.jsonl"
        };
        assert!(
            said.contains(&format!(
                "review: {name} — 2 findings by ana, last 2026-12-06 09:14"
            )),
            "{args:?}: {said}"
        );
    }
}

/// md and html reports of a reviewed store have a "Review findings" section
/// after the summary — who, when made, about which instant, what, the note —
/// and their provenance names the review file and its SHA-256.
#[test]
fn reports_have_a_review_findings_section() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let review = write(dir.path(), "demo.review.jsonl", REVIEW);
    let sha = common::bytes(&review);
    let sha = asof::fork::sha256_hex(&sha);
    for format in ["md", "html"] {
        let out = asof()
            .arg("export")
            .arg(&db)
            .args(["--format", format, "--review"])
            .arg(&review)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let section = text
            .find("Review findings")
            .unwrap_or_else(|| panic!("{format}: no section\n{text}"));
        let agents = text
            .find(if format == "md" {
                "## Agents"
            } else {
                "id=\"believed\""
            })
            .unwrap();
        assert!(
            section < agents,
            "{format}: the findings come after the summary"
        );
        for said in [
            "ana",
            "2026-12-06T09:12:00Z",
            "2026-12-06T09:14:30Z",
            "2026-03-03T12:10:00Z",
            "E15",
            "B19 (triage · root-cause)",
            "misleading",
            "a traffic lull, not the rollback",
        ] {
            assert!(text[section..].contains(said), "{format}: {said}");
        }
        assert!(text.contains(&sha), "{format}: the review's SHA-256");
    }
}

/// `asof review` lists the findings, adds one from a script (made now, about
/// the instant named), and shows two reviewers' files side by side.
#[test]
fn review_lists_adds_and_shows_where_reviewers_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let ana = write(dir.path(), "ana.review.jsonl", REVIEW);
    let bob = write(dir.path(), "bob.review.jsonl", BOBS);
    let both = json(
        asof()
            .arg("review")
            .arg(&db)
            .arg("--review")
            .arg(&ana)
            .arg("--review")
            .arg(&bob)
            .args(["--format", "json"]),
    );
    assert_eq!(both["findings"].as_array().unwrap().len(), 3);
    let d = &both["disagreements"];
    assert_eq!(d.as_array().unwrap().len(), 1, "{d}");
    assert_eq!(
        d[0]["target"],
        serde_json::json!({"kind": "evidence", "id": "E15"})
    );
    assert_eq!(d[0]["verdicts"][0]["reviewer"], "ana");
    assert_eq!(d[0]["verdicts"][0]["verdict"], "rejected");
    assert_eq!(d[0]["verdicts"][1]["reviewer"], "bob");
    assert_eq!(d[0]["verdicts"][1]["verdict"], "direct-read");
    let table = asof()
        .arg("review")
        .arg(&db)
        .arg("--review")
        .arg(&ana)
        .arg("--review")
        .arg(&bob)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.contains("WHERE REVIEWERS DISAGREE"), "{table}");
    assert!(
        table.contains("ana rejected (F1); bob direct-read (F3)"),
        "{table}"
    );

    // --add appends to the file beside the store, made now.
    let before = asof::time::now();
    let added = asof()
        .arg("review")
        .arg(&db)
        .args([
            "--add",
            "topic:root-cause@triage",
            "--verdict",
            "note",
            "--note",
            "converged 3 days late",
            "--about",
            "2026-03-06",
            "--reviewer",
            "cy",
        ])
        .assert()
        .success();
    // How the date was read is said once.
    let said = String::from_utf8_lossy(&added.get_output().stderr).into_owned();
    assert_eq!(
        said.matches("2026-03-06T23:59:59.999999Z").count(),
        1,
        "{said}"
    );
    let beside = dir.path().join("demo.review.jsonl");
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&beside).unwrap().trim()).unwrap();
    assert_eq!(line["id"], "F1");
    assert_eq!(
        line["target"],
        serde_json::json!({"kind": "topic", "topic": "root-cause", "agent": "triage"})
    );
    assert_eq!(line["about"], "2026-03-06T23:59:59.999999Z");
    let made = asof::time::parse(line["made_at"].as_str().unwrap()).unwrap();
    assert!(made >= before && made <= asof::time::now());
    // A verdict that does not fit its target, or a target the log lacks: exit 2, nothing written.
    for (target, verdict) in [
        ("E15", "wrong"),
        ("E99", "rejected"),
        ("version:E15", "right"),
    ] {
        asof()
            .arg("review")
            .arg(&db)
            .args(["--add", target, "--verdict", verdict])
            .assert()
            .code(2);
    }
    assert_eq!(std::fs::read_to_string(&beside).unwrap().lines().count(), 1);
    // Without --about, the instant the finding is about is said.
    asof()
        .arg("review")
        .arg(&db)
        .args(["--add", "E15", "--verdict", "rejected"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "--about not given: the finding is about 2026-03-16T10:10:00Z (the log's last event)",
        ));
}

/// `review --format otlp` writes OTLP/JSON logs that the OpenTelemetry
/// protobuf definitions parse: one `gen_ai.evaluation.result` per finding,
/// linked to the target's trace and span when the source was a trace; read
/// back with `--review` it gives the same findings.
#[test]
fn findings_round_trip_through_opentelemetry_evaluations() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    let dir = tempfile::tempdir().unwrap();
    let trace = Path::new("datasets/sre-agent.otlp.jsonl");
    let copy = dir.path().join("sre-agent.otlp.jsonl");
    std::fs::copy(trace, &copy).unwrap();
    // A finding on the trace's first evidence item and one on its first assertion.
    for (target, verdict, note) in [
        ("T3", "rejected", "the status page lagged"),
        ("version:B1", "wrong", "12% was a sampling artefact"),
        ("instant", "note", "the run ended without a root cause"),
    ] {
        asof()
            .arg("review")
            .arg(&copy)
            .args(["--add", target, "--verdict", verdict, "--note", note])
            .args(["--reviewer", "ana", "--about", "end"])
            .assert()
            .success();
    }
    let exported = dir.path().join("findings.otlp.json");
    asof()
        .arg("review")
        .arg(&copy)
        .args(["--format", "otlp", "-o"])
        .arg(&exported)
        .assert()
        .success();
    let text = std::fs::read_to_string(&exported).unwrap();
    let request: ExportLogsServiceRequest =
        serde_json::from_str(&text).expect("OTLP/JSON the protobuf definitions read");
    let records: Vec<_> = request
        .resource_logs
        .iter()
        .flat_map(|r| &r.scope_logs)
        .flat_map(|s| &s.log_records)
        .collect();
    assert_eq!(records.len(), 3);
    let attr = |r: &opentelemetry_proto::tonic::logs::v1::LogRecord, key: &str| {
        r.attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| match &v.value {
                Some(Any::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
    };
    for r in &records {
        assert_eq!(r.event_name, "gen_ai.evaluation.result");
        assert_eq!(
            attr(r, "gen_ai.evaluation.name").as_deref(),
            Some("asof.review")
        );
        assert_eq!(attr(r, "asof.review.reviewer").as_deref(), Some("ana"));
        assert!(attr(r, "asof.review.made_at").is_some());
        assert!(attr(r, "asof.review.about").is_some());
    }
    assert_eq!(
        attr(records[0], "gen_ai.evaluation.score.label").as_deref(),
        Some("rejected")
    );
    assert_eq!(
        attr(records[0], "gen_ai.evaluation.explanation").as_deref(),
        Some("the status page lagged")
    );
    // The evidence and the assertion carry their trace and span; the instant none.
    let calls = json(asof().arg("calls").arg(&copy).args(["--format", "json"]));
    let b1 = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["said"].as_array().unwrap().iter().any(|a| a == "B1"))
        .unwrap();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(hex(&records[1].trace_id), b1["trace"].as_str().unwrap());
    assert_eq!(hex(&records[1].span_id), b1["span"].as_str().unwrap());
    let t3 = json(
        asof()
            .arg("evidence")
            .arg(&copy)
            .args(["--id", "T3", "--format", "json"]),
    );
    let locator = item(&t3, "T3")["locator"].as_str().unwrap().to_owned();
    assert!(locator.contains(&hex(&records[0].span_id)), "{locator}");
    assert!(records[2].trace_id.is_empty());

    // Read back: the same findings.
    let original = json(asof().arg("review").arg(&copy).args(["--format", "json"]));
    let back = json(
        asof()
            .arg("review")
            .arg(&copy)
            .arg("--review")
            .arg(&exported)
            .args(["--format", "json"]),
    );
    assert_eq!(original["findings"], back["findings"]);
    assert_eq!(back["findings"].as_array().unwrap().len(), 3);
    // A trace loaded with them keeps them in its review table, and says so.
    let loaded = dir.path().join("reviewed.db");
    asof()
        .arg("load")
        .arg(&copy)
        .arg("--db")
        .arg(&loaded)
        .arg("--review")
        .arg(&exported)
        .assert()
        .success()
        .stderr(predicates::str::contains("with 3 review finding(s) from"));
    let table = json(asof().arg("review").arg(&loaded).args(["--format", "json"]));
    assert_eq!(table["findings"], original["findings"]);

    // A trace that carries them is not read as if the run had judged itself:
    // the importer skips them and says so.
    let logs: Value = serde_json::from_str(&text).unwrap();
    let mixed = dir.path().join("mixed.otlp.jsonl");
    std::fs::write(
        &mixed,
        format!("{}{logs}\n", std::fs::read_to_string(trace).unwrap()),
    )
    .unwrap();
    let summary = json(
        asof()
            .args(["import", "otlp"])
            .arg(&mixed)
            .arg("--db")
            .arg(dir.path().join("mixed.db"))
            .args(["--format", "json"]),
    );
    assert!(
        summary["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["reason"]
                .as_str()
                .unwrap_or("")
                .contains("an asof review finding")),
        "{summary}"
    );
    assert!(
        summary["evaluations"]
            .as_object()
            .is_none_or(|e| e.is_empty()),
        "{summary}"
    );
}

/// `asof fork --without-rejected-by REVIEW` replays without what the review
/// rejected, and says it is a what-if of that review.
#[test]
fn a_fork_without_what_the_review_rejected_is_labelled_as_the_reviews() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let ana = write(dir.path(), "ana.review.jsonl", REVIEW);
    let fork = dir.path().join("f.db");
    let out = json(
        asof()
            .arg("fork")
            .arg(&db)
            .arg("--without-rejected-by")
            .arg(&ana)
            .arg("--out")
            .arg(&fork)
            .args(["--format", "json"]),
    );
    assert_eq!(out["removed"], serde_json::json!(["E15"]));
    assert_eq!(out["rejected"][0]["verification"], "F1");
    assert_eq!(out["rejected"][0]["by"], "ana");
    assert!(out["review"].as_str().unwrap().contains("ana.review.jsonl"));
    // The same replay as removing E15 by hand.
    let by_hand = dir.path().join("h.db");
    common::fork(&db, "E15", &by_hand);
    let answer = |store: &Path| {
        let mut v = json(
            asof()
                .arg("believed")
                .arg(store)
                .args(["--at", "end", "--format", "json"]),
        );
        v.as_object_mut().unwrap().remove("what_if");
        v
    };
    assert_eq!(answer(&fork), answer(&by_hand));
    let table = asof()
        .arg("believed")
        .arg(&fork)
        .args(["--at", "end"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        table.starts_with("WHAT-IF of review ")
            && table.contains("ana.review.jsonl — replay of")
            && table.contains("without E15 (what the review rejected;"),
        "{table}"
    );
    // A review that rejects nothing is refused.
    let bob = write(dir.path(), "bob.review.jsonl", BOBS);
    asof()
        .arg("fork")
        .arg(&db)
        .arg("--without-rejected-by")
        .arg(&bob)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("rejects no evidence"));
}

/// One secret of each built-in kind (made up, each in its kind's shape), and
/// a piece of each that must not survive redaction anywhere.
const SECRETS: [(&str, &str, &str); 9] = [
    (
        "api-key",
        "sk-proj-4f9Qb2LmZx8RtY6uVw3N",
        "4f9Qb2LmZx8RtY6uVw3N",
    ),
    ("aws-key", "AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    (
        "github-token",
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    (
        "bearer",
        "Bearer abc123def456ghi789jkl",
        "abc123def456ghi789jkl",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLWhlcmU",
        "c2lnbmF0dXJlLWhlcmU",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xQz\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7xQz",
    ),
    ("email", "ana.oncall@example.com", "ana.oncall@example.com"),
    ("ip", "10.20.30.40", "10.20.30.40"),
    ("ip", "2001:db8::8a2e:370:7334", "2001:db8::8a2e:370:7334"),
];

/// Every secret in one text, in a field named `field` (so each field's is its own).
fn seeded(field: &str) -> String {
    let all: Vec<String> = SECRETS
        .iter()
        .map(|(_, secret, _)| secret.to_string())
        .collect();
    format!("{field}: {}", all.join(" ; "))
}

/// A dataset with every secret in every text field: evidence summary, whole
/// content, source and locator; claims and rationales; a retraction's reason;
/// a verification's note; and a review finding's note.
fn secret_dataset(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let q = |s: String| serde_json::to_string(&s).unwrap();
    let yaml = format!(
        r#"asof: 1
incident: {{id: leak, title: "A run that read secrets"}}
agents: [{{id: agent}}]
topics:
  - {{id: cause, question: "What broke?"}}
events:
  - evidence:
      id: E1
      kind: log
      source: {source}
      locator: {locator}
      observed_at: 2026-05-04T09:00:00Z
      recorded_at: 2026-05-04T09:01:00Z
      summary: {summary}
      content: {content}
  - believe:
      id: B1
      agent: agent
      topic: cause
      claim: {claim}
      confidence: 0.8
      valid_from: 2026-05-04T09:00:00Z
      recorded_at: 2026-05-04T09:02:00Z
      supported_by: [E1]
      rationale: {rationale}
  - evidence:
      id: E2
      kind: log
      source: shell
      locator: "cmd 2"
      observed_at: 2026-05-04T09:10:00Z
      recorded_at: 2026-05-04T09:11:00Z
      summary: "the key was rotated"
  - verify:
      evidence: E1
      state: rejected
      by: reviewer
      recorded_at: 2026-05-04T09:12:00Z
      note: {note}
  - retract:
      id: R1
      agent: agent
      topic: cause
      valid_from: 2026-05-04T09:00:00Z
      recorded_at: 2026-05-04T09:13:00Z
      because: [E2]
      reason: {reason}
  - believe:
      id: B2
      agent: agent
      topic: cause
      claim: {claim2}
      confidence: 0.9
      valid_from: 2026-05-04T09:00:00Z
      recorded_at: 2026-05-04T09:14:00Z
      supported_by: [E2]
"#,
        source = q(seeded("source")),
        locator = q(seeded("locator")),
        summary = q(seeded("summary")),
        content = q(seeded("content")),
        claim = q(seeded("claim")),
        rationale = q(seeded("rationale")),
        note = q(seeded("note")),
        reason = q(seeded("reason")),
        claim2 = q(seeded("second claim")),
    );
    let dataset = write(dir, "leak.yaml", &yaml);
    let db = dir.join("leak.db");
    common::load(&dataset, &db);
    let finding = serde_json::json!({
        "id": "F1", "target": {"kind": "evidence", "id": "E1"}, "verdict": "rejected",
        "note": seeded("finding"), "reviewer": "ana",
        "made_at": "2026-12-06T09:12:00Z", "about": "2026-05-04T09:05:00Z",
    });
    write(dir, "leak.review.jsonl", &format!("{finding}\n"));
    (dataset, db)
}

/// Every string of every row of the Parquet files under `dir`.
fn parquet_text(dir: &Path) -> String {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let mut out = String::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                let reader =
                    SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
                for row in reader.get_row_iter(None).unwrap() {
                    out.push_str(&row.unwrap().to_string());
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// With `--redact`, no secret of any built-in kind survives in any export —
/// md, html, svg, json or parquet — and each shows as `[redacted:KIND]`;
/// without it, every one is there. The store is unchanged.
#[test]
fn redact_leaves_no_secret_in_any_export() {
    let dir = tempfile::tempdir().unwrap();
    let (_, db) = secret_dataset(dir.path());
    let store_before = common::bytes(&db);
    let output = |args: &[&str], redact: bool| -> String {
        let mut cmd = asof();
        cmd.args(args);
        if redact {
            cmd.arg("--redact");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let db_s = db.to_str().unwrap();
    let exports: Vec<(&str, Vec<&str>)> = vec![
        ("md", vec!["export", db_s, "--format", "md"]),
        ("html", vec!["export", db_s, "--format", "html"]),
        (
            "svg",
            vec!["export", db_s, "--format", "svg", "--topic", "cause"],
        ),
        (
            "evidence json",
            vec!["evidence", db_s, "--with-review", "--format", "json"],
        ),
        ("history json", vec!["history", db_s, "--format", "json"]),
        (
            "believed json",
            vec![
                "believed",
                db_s,
                "--at",
                "2026-05-04T09:05:00Z",
                "--format",
                "json",
            ],
        ),
        ("review json", vec!["review", db_s, "--format", "json"]),
        ("review otlp", vec!["review", db_s, "--format", "otlp"]),
        ("compare md", vec!["compare", db_s, db_s, "--format", "md"]),
    ];
    for (name, args) in &exports {
        let plain = output(args, false);
        let redacted = output(args, true);
        for (kind, secret, piece) in SECRETS {
            // The SVG draws claims, cut to fit: there, one whole secret is enough.
            if *name != "svg" {
                let shown = if *name == "html" || name.ends_with("json") || name.ends_with("otlp") {
                    piece
                } else {
                    secret.split('\n').next().unwrap_or(secret)
                };
                assert!(
                    plain.contains(shown),
                    "{name}: without --redact, {kind} is there"
                );
            }
            assert!(
                !redacted.contains(piece),
                "{name}: with --redact, {kind} ({piece}) survived:\n{redacted}"
            );
        }
        if *name == "svg" {
            assert!(
                plain.contains("ana.oncall@example.com"),
                "svg shows a claim"
            );
        }
        if *name == "md" {
            for (kind, _, _) in SECRETS {
                assert!(
                    redacted.contains(&format!("[redacted:{kind}]")),
                    "md: {kind}"
                );
            }
            assert!(
                redacted.contains("the source's SHA-256 is of the unredacted input"),
                "md: provenance"
            );
        }
    }
    // Parquet: every table, every string.
    let plain = dir.path().join("plain");
    let redacted = dir.path().join("redacted");
    for (out, redact) in [(&plain, false), (&redacted, true)] {
        let mut cmd = asof();
        cmd.args(["export", db_s, "--format", "parquet", "--out"])
            .arg(out);
        if redact {
            cmd.arg("--redact");
        }
        cmd.assert().success();
    }
    let (plain, redacted) = (parquet_text(&plain), parquet_text(&redacted));
    for (kind, _, piece) in SECRETS {
        assert!(
            plain.contains(piece),
            "parquet: without --redact, {kind} is there"
        );
        assert!(
            !redacted.contains(piece),
            "parquet: with --redact, {kind} survived"
        );
    }
    assert!(redacted.contains("[redacted:jwt]"));
    assert_eq!(
        common::bytes(&db),
        store_before,
        "--redact never changes a store"
    );
}

/// `--redact-pattern` adds a pattern of its own; a bad one is one sentence, exit 2.
#[test]
fn a_redact_pattern_is_its_own_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = common::load_demo(dir.path());
    let out = asof()
        .arg("evidence")
        .arg(&db)
        .args([
            "--redact-pattern",
            "checkout-service v[0-9.]+",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("checkout-service v4.12"));
    assert!(text.contains("[redacted:pattern]"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("redacted (distinct values, each shown as [redacted:KIND]): pattern 1 (1 --redact-pattern given)"));
    asof()
        .arg("evidence")
        .arg(&db)
        .args(["--redact-pattern", "(unclosed"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--redact-pattern `(unclosed` is not a regular expression",
        ));
}

/// The TUI as `asof tui SOURCE` opens it: a review file beside its source
/// (SOURCE's name, `.review.jsonl`) is read and announced on the first frame; one under another name is not read; a
/// broken one is refused with its line.
#[test]
fn a_review_beside_the_source_is_announced_on_the_first_frame() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = dir.path().join("payment-outage.yaml");
    std::fs::copy("datasets/payment-outage.yaml", &dataset).unwrap();
    let finding = r#"{"id":"F1","target":{"kind":"evidence","id":"E17"},"verdict":"rejected","note":"misread span","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-04T10:00:00Z"}"#;
    // Under another name: not read.
    std::fs::write(
        dir.path().join("other.review.jsonl"),
        format!("{finding}\n"),
    )
    .unwrap();
    let app = asof::cli::tui_app(Some(&dataset), None).unwrap();
    let screen = asof::tui::ui::screen(&app);
    assert!(!screen.contains("⚑ review"), "{screen}");
    assert!(app.timeline.review.findings.is_empty());

    // Beside it: read, and said on the first frame.
    let beside = dir.path().join("payment-outage.review.jsonl");
    std::fs::write(&beside, format!("{finding}\n")).unwrap();
    let mut app = asof::cli::tui_app(Some(&dataset), None).unwrap();
    app.update(Action::Resize(160, 45));
    let screen = asof::tui::ui::screen(&app);
    assert!(
        screen.contains(
            "⚑ review: 1 finding by ana, last 2026-12-06 09:12 · payment-outage.review.jsonl"
        ),
        "{screen}"
    );
    assert_eq!(app.review.as_deref(), Some(beside.as_path()));
    // A live source's refresh re-reads the log; the review stays beside it.
    let again =
        asof::query::timeline::Timeline::load(asof::cli::source::open(Some(&dataset)).unwrap())
            .unwrap();
    app.refresh(again);
    assert_eq!(app.timeline.review.findings.len(), 1);
    assert!(asof::tui::ui::screen(&app).contains("⚑ review: 1 finding by ana"));

    // A new finding takes the next id.
    app.seek(asof::time::parse("2026-03-04T12:00:00Z").unwrap());
    while app.focus != asof::tui::app::Focus::Evidence {
        app.update(Action::FocusNext);
    }
    let e16 = app
        .evidence
        .list
        .items()
        .iter()
        .position(|&i| app.timeline.evidence_item(i).evidence.id == "E16")
        .unwrap();
    app.update(Action::Top);
    for _ in 0..e16 {
        app.update(Action::Down);
    }
    app.update(Action::Mark);
    for c in "direct".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    assert!(app.popup.is_none(), "{:?}", app.popup);
    let text_now = std::fs::read_to_string(&beside).unwrap();
    let last: serde_json::Value = serde_json::from_str(text_now.lines().last().unwrap()).unwrap();
    assert_eq!(last["id"], "F2");
    assert_eq!(last["verdict"], "direct-read");

    // Broken: refused with its line, nothing opened.
    std::fs::write(
        &beside,
        concat!(
            r#"{"id":"F1","target":{"kind":"evidence","id":"E99"},"verdict":"rejected","reviewer":"ana","made_at":"2026-12-06T09:12:00Z","about":"2026-03-04T10:00:00Z"}"#,
            "\n"
        ),
    )
    .unwrap();
    let error = asof::cli::tui_app(Some(&dataset), None)
        .err()
        .map(|e| e.message().to_owned())
        .unwrap_or_default();
    assert!(error.contains("payment-outage.review.jsonl:1"), "{error}");
    assert!(error.contains("E99"), "{error}");
}
