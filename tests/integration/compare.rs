//! `asof compare A B`: two runs side by side, on hand-built runs whose first
//! divergence, truth times and evidence matches are known, and a fork
//! against its parent, which must say what `asof diff` says.

use crate::common::{asof, fork, load_demo, stdout_json, write};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// What a run's log holds, minutes after its start.
enum Step<'a> {
    /// Evidence: id, source, the text read.
    Read(i64, &'a str, &'a str, &'a str),
    /// An assertion by `agent` on `topic`.
    Say(i64, &'a str, &'a str, &'a str),
}

/// A run (a YAML dataset) starting at `start` (RFC 3339), its agents and
/// topics as named; `root-cause` has the resolution `db` when `resolved`.
fn run(
    dir: &Path,
    name: &str,
    start: &str,
    agents: &[&str],
    steps: &[Step],
    resolved: bool,
) -> PathBuf {
    let t0 = chrono::DateTime::parse_from_rfc3339(start).expect("start");
    let at = |m: i64| {
        (t0 + chrono::Duration::minutes(m)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let mut yaml = format!("asof: 1\nincident:\n  id: {name}\n  title: \"{name}\"\nagents:\n");
    for a in agents {
        yaml.push_str(&format!("  - id: {a}\n    name: \"{a}\"\n"));
    }
    yaml.push_str("topics:\n  - id: root-cause\n    question: \"Why?\"\n");
    if resolved {
        yaml.push_str("    resolution: \"db\"\n");
    }
    yaml.push_str("  - id: impact\n    question: \"Who?\"\nevents:\n");
    for step in steps {
        match step {
            Step::Read(m, id, source, text) => yaml.push_str(&format!(
                "  - evidence:\n      id: {id}\n      kind: other\n      source: {source}\n      locator: \"{id}\"\n      observed_at: {t}\n      recorded_at: {t}\n      summary: \"{text}\"\n",
                t = at(*m)
            )),
            Step::Say(m, agent, topic, claim) => yaml.push_str(&format!(
                "  - believe:\n      agent: {agent}\n      topic: {topic}\n      claim: \"{claim}\"\n      valid_from: {t0}\n      recorded_at: {t}\n",
                t0 = at(0),
                t = at(*m)
            )),
        }
    }
    write(dir, &format!("{name}.yaml"), &yaml)
}

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Value {
    stdout_json(
        asof()
            .arg("compare")
            .arg(a)
            .arg(b)
            .args(extra)
            .args(["--format", "json"]),
    )
}

fn pair<'v>(c: &'v Value, topic: &str, agent_a: &str) -> &'v Value {
    c["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .find(|p| p["topic"] == topic && p["agent_a"] == agent_a)
        .unwrap_or_else(|| panic!("no pair {topic} {agent_a} in {c:#}"))
}

/// A found the truth (`db`), went off it to `network` on a network probe,
/// and came back; B (four hours later, another agent name) never read the
/// probe and said `db` twice.
fn two_runs(dir: &Path) -> (PathBuf, PathBuf) {
    use Step::*;
    let a = run(
        dir,
        "a",
        "2026-06-01T10:00:00Z",
        &["sre"],
        &[
            Read(0, "E1", "alerts", "cpu high"),
            Say(2, "sre", "root-cause", "db"),
            Read(5, "E2", "net", "loss 8%"),
            Say(6, "sre", "root-cause", "network"),
            Read(9, "E3", "logs", "pool exhausted"),
            Say(10, "sre", "root-cause", "db"),
        ],
        true,
    );
    let b = run(
        dir,
        "b",
        "2026-06-01T14:00:00Z",
        &["sre-b"],
        &[
            Read(0, "X1", "alerts", "cpu high"),
            Say(3, "sre-b", "root-cause", "db"),
            Read(4, "X3", "logs", "pool exhausted"),
            Say(8, "sre-b", "root-cause", "db"),
            Say(8, "sre-b", "impact", "checkout"),
        ],
        false,
    );
    (a, b)
}

/// Each alignment has its own first divergence: on their own clocks A spoke
/// first (B had no answer yet); assertion by assertion they part at the
/// second, where A had read the probe and B the logs; on one clock A spoke
/// four hours before B.
#[test]
fn the_first_divergence_under_each_alignment() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let start = compare(&a, &b, &["--align", "start"]);
    assert_eq!(start["align"], "start");
    let p = pair(&start, "root-cause", "sre");
    assert_eq!(p["agent_b"], "sre-b", "the only agent of each run");
    assert_eq!(
        p["first_divergence"],
        json!({"at": 120.0, "a": "db", "b": null, "seen_only_a": [], "seen_only_b": []})
    );
    assert_eq!(
        p["a"]["answers"],
        json!([{"at": 120.0, "claim": "db"}, {"at": 360.0, "claim": "network"}, {"at": 600.0, "claim": "db"}])
    );
    assert_eq!(p["b"]["answers"], json!([{"at": 180.0, "claim": "db"}]));
    // The truth (A's resolution) measured for both: A after 10 minutes and
    // wrong for 4; B after 3, never wrong.
    assert_eq!(p["truth"], "db");
    assert_eq!(
        (
            p["a"]["time_to_truth"].as_f64(),
            p["a"]["time_wrong"].as_f64()
        ),
        (Some(600.0), Some(240.0))
    );
    assert_eq!(
        (
            p["b"]["time_to_truth"].as_f64(),
            p["b"]["time_wrong"].as_f64()
        ),
        (Some(180.0), Some(0.0))
    );

    let step = compare(&a, &b, &["--align", "step"]);
    let p = pair(&step, "root-cause", "sre");
    assert_eq!(
        p["first_divergence"],
        json!({"at": 1, "a": "network", "b": "db", "seen_only_a": ["E2"], "seen_only_b": ["X3"]}),
        "by A's second assertion A had read the probe (B never did); by B's, B had read the logs A read later"
    );
    assert_eq!(p["b"]["answers"], json!([{"at": 0, "claim": "db"}]));

    let absolute = compare(&a, &b, &["--align", "absolute"]);
    let p = pair(&absolute, "root-cause", "sre");
    assert_eq!(p["first_divergence"]["at"], "2026-06-01T10:02:00Z");
    assert_eq!(
        (&p["first_divergence"]["a"], &p["first_divergence"]["b"]),
        (&json!("db"), &Value::Null)
    );
    // The default for two datasets is absolute.
    assert_eq!(compare(&a, &b, &[])["align"], "absolute");
}

/// A topic only B asserted is a pair with no answers on A's side; a run
/// longer than the other keeps its answers to its end.
#[test]
fn a_topic_in_one_run_only_and_runs_of_different_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let c = compare(&a, &b, &["--align", "start"]);
    let impact = pair(&c, "impact", "sre");
    assert_eq!(impact["a"]["answers"], json!([]));
    assert_eq!(
        impact["b"]["answers"],
        json!([{"at": 480.0, "claim": "checkout"}])
    );
    assert_eq!(impact["first_divergence"]["at"], 480.0);
    assert_eq!(impact["first_divergence"]["a"], Value::Null);
    assert_eq!(impact["truth"], Value::Null);
    assert_eq!(
        impact["a"]["time_wrong"],
        Value::Null,
        "no truth, nothing measured"
    );
    // Compared with itself, a run never parts from itself.
    let same = compare(&a, &a, &[]);
    assert!(
        same["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["first_divergence"].is_null())
    );
    assert_eq!(same["evidence"]["only_a"], json!([]));
}

/// Two agents each: by id they match nothing (four pairs, none shared);
/// `--agent-map` pairs them.
#[test]
fn an_agent_map_pairs_agents_named_differently() {
    use Step::*;
    let dir = tempfile::tempdir().unwrap();
    let a = run(
        dir.path(),
        "a",
        "2026-06-01T10:00:00Z",
        &["lead", "helper"],
        &[
            Say(1, "lead", "root-cause", "db"),
            Say(2, "helper", "root-cause", "network"),
        ],
        true,
    );
    let b = run(
        dir.path(),
        "b",
        "2026-06-01T10:00:00Z",
        &["lead2", "helper2"],
        &[
            Say(1, "lead2", "root-cause", "db"),
            Say(3, "helper2", "root-cause", "db"),
        ],
        true,
    );
    let unmapped = compare(&a, &b, &[]);
    assert_eq!(unmapped["pairs"].as_array().unwrap().len(), 4);
    let c = compare(&a, &b, &["--agent-map", "lead=lead2,helper=helper2"]);
    assert_eq!(c["pairs"].as_array().unwrap().len(), 2);
    assert!(pair(&c, "root-cause", "lead")["first_divergence"].is_null());
    let helper = pair(&c, "root-cause", "helper");
    assert_eq!(helper["agent_b"], "helper2");
    assert_eq!(
        (
            &helper["first_divergence"]["at"],
            &helper["first_divergence"]["a"],
            &helper["first_divergence"]["b"]
        ),
        (
            &json!("2026-06-01T10:02:00Z"),
            &json!("network"),
            &Value::Null
        )
    );
    assert_eq!(
        helper["a"]["time_to_truth"],
        Value::Null,
        "A's helper never said db"
    );
    assert_eq!(helper["b"]["time_to_truth"].as_f64(), Some(120.0));
}

/// Evidence is matched by source and whole text, not by id; two calls that
/// returned the same bytes stay two items, each matched at most once.
#[test]
fn evidence_matches_by_what_it_is_not_its_id() {
    use Step::*;
    let dir = tempfile::tempdir().unwrap();
    let a = run(
        dir.path(),
        "a",
        "2026-06-01T10:00:00Z",
        &["sre"],
        &[
            Read(0, "E1", "alerts", "cpu high"),
            Read(1, "E2", "metrics", "42"),
            Read(2, "E3", "metrics", "42"),
            Read(3, "E4", "net", "loss"),
            Read(4, "E5", "logs", "42"),
        ],
        false,
    );
    let b = run(
        dir.path(),
        "b",
        "2026-06-01T11:00:00Z",
        &["sre"],
        &[
            Read(0, "X1", "alerts", "cpu high"),
            Read(1, "X2", "metrics", "42"),
            Read(2, "X9", "logs", "pool"),
        ],
        false,
    );
    let c = compare(&a, &b, &[]);
    assert_eq!(
        c["evidence"],
        json!({"both": [["E1", "X1"], ["E2", "X2"]], "only_a": ["E3", "E4", "E5"], "only_b": ["X9"]})
    );
}

/// A fork and its parent on one clock: compare's windows and truth are
/// exactly `asof diff`'s (one code path).
#[test]
fn a_fork_against_its_parent_says_what_diff_says() {
    let dir = tempfile::tempdir().unwrap();
    let parent = load_demo(dir.path());
    for without in ["E15", "E3", "E7"] {
        let forked = dir.path().join(format!("f-{without}.db"));
        fork(&parent, without, &forked);
        let diff = stdout_json(
            asof()
                .arg("diff")
                .arg(&parent)
                .arg(&forked)
                .args(["--format", "json"]),
        );
        let c = compare(&parent, &forked, &["--align", "absolute"]);
        let mut windows = 0;
        for p in c["pairs"].as_array().unwrap() {
            let from_diff = diff["divergence"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["agent"] == p["agent_a"] && d["topic"] == p["topic"]);
            let expected: Vec<Value> = from_diff.map_or_else(Vec::new, |d| {
                d["windows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| json!({"from": w["from"], "to": w["to"], "a": w["parent"], "b": w["fork"]}))
                    .collect()
            });
            assert_eq!(
                p["windows"].as_array().unwrap(),
                &expected,
                "{without}: {p:#}"
            );
            windows += expected.len();
            assert_eq!(
                p["first_divergence"]["at"],
                expected.first().map_or(Value::Null, |w| w["from"].clone())
            );
        }
        assert_eq!(
            windows,
            diff["divergence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["windows"].as_array().unwrap().len())
                .sum::<usize>()
        );
        for t in diff["truth"].as_array().unwrap() {
            let p = pair(
                &c,
                t["topic"].as_str().unwrap(),
                t["agent"].as_str().unwrap(),
            );
            for (side, run) in [("parent", "a"), ("fork", "b")] {
                assert_eq!(
                    p[run]["converged_at"], t[side]["converged_at"],
                    "{without} {side}"
                );
                assert_eq!(
                    p[run]["time_wrong"]
                        .as_f64()
                        .map(|s| (s * 1000.0).round() as i64),
                    t[side]["time_wrong_ms"].as_i64(),
                    "{without} {side}"
                );
            }
        }
    }
}

/// A trace is compared on its own clock by default.
#[test]
fn a_trace_is_compared_from_its_start_by_default() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sre-agent.otlp.jsonl");
    let c = compare(&trace, &trace, &[]);
    assert_eq!(c["align"], "start");
    assert!(!c["pairs"].as_array().unwrap().is_empty());
    assert!(
        c["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["first_divergence"].is_null())
    );
    assert_eq!(c["evidence"]["only_a"], json!([]));
    assert_eq!(c["evidence"]["only_b"], json!([]));
}

/// Maps and truths that name nothing are refused with a sentence, exit 2.
#[test]
fn maps_that_name_nothing_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    for (args, says) in [
        (vec!["--topic-map", "nope"], "`nope` is not NAME=NAME"),
        (
            vec!["--topic-map", "ghost=root-cause"],
            "run A has no topic ghost; its topics are: root-cause, impact",
        ),
        (
            vec!["--agent-map", "sre=nobody"],
            "run B has no agent nobody; its agents are: sre-b",
        ),
        (vec!["--truth", "ghost=db"], "run A has no topic ghost"),
    ] {
        let out = asof()
            .arg("compare")
            .arg(&a)
            .arg(&b)
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// The bundled pair (README, "Compare two runs"): the rerun by another model
/// never ran the network probe. They part at +21 s, where the first run
/// turned to the network on that probe while the rerun still held the
/// database; the rerun reached the truth 19 s sooner and was wrong 19 s less.
#[test]
fn the_bundled_runs_part_where_the_readme_says() {
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let c = compare(
        &datasets.join("sre-agent.otlp.jsonl"),
        &datasets.join("sre-agent-rerun.otlp.jsonl"),
        &[
            "--rules",
            datasets.join("sre-agent.rules.yaml").to_str().unwrap(),
            "--truth",
            "root-cause=bad-deploy-v2-31-0",
        ],
    );
    assert_eq!(c["align"], "start");
    let p = pair(&c, "root-cause", "sre-agent");
    assert_eq!(
        p["first_divergence"],
        json!({
            "at": 21.0,
            "a": "network-partition-az-b",
            "b": "payments-db-overload",
            "seen_only_a": ["T4"],
            "seen_only_b": ["T4", "T5", "T6"],
        })
    );
    assert_eq!(
        (
            p["a"]["time_to_truth"].as_f64(),
            p["a"]["time_wrong"].as_f64()
        ),
        (Some(46.0), Some(36.0))
    );
    assert_eq!(
        (
            p["b"]["time_to_truth"].as_f64(),
            p["b"]["time_wrong"].as_f64()
        ),
        (Some(27.0), Some(17.0))
    );
    assert_eq!(c["evidence"]["only_a"], json!(["T4", "T5"]));
    assert_eq!(c["evidence"]["only_b"], json!([]));
    assert_eq!(c["evidence"]["both"].as_array().unwrap().len(), 14);
    // A's T4 is the probe; B's T4 is a metrics query: ids are each run's own.
    let evidence = |file: &str, id: &str| -> String {
        let e = stdout_json(asof().args([
            "evidence",
            datasets.join(file).to_str().unwrap(),
            "--format",
            "json",
        ]));
        e["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == id)
            .unwrap()["source"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(evidence("sre-agent.otlp.jsonl", "T4"), "network_check");
    assert_eq!(
        evidence("sre-agent-rerun.otlp.jsonl", "T4"),
        "query_metrics"
    );
    // The table says whose ids it lists.
    let out = asof()
        .arg("compare")
        .arg(datasets.join("sre-agent.otlp.jsonl"))
        .arg(datasets.join("sre-agent-rerun.otlp.jsonl"))
        .args([
            "--rules",
            datasets.join("sre-agent.rules.yaml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("A had seen, B had not (A's ids): T4 (network_check)"),
        "{text}"
    );
    assert!(text.contains("B had seen, A had not (B's ids): T4 (query_metrics), T5 (get_slow_queries), T6 (get_deploys)"), "{text}");
}

/// `--format html`: one self-contained file (nothing fetched) with both runs'
/// lanes per pair and where they parted; what the agents said is escaped.
#[test]
fn the_html_form_is_self_contained_and_escapes_what_agents_said() {
    use Step::*;
    let dir = tempfile::tempdir().unwrap();
    let a = run(
        dir.path(),
        "a",
        "2026-06-01T10:00:00Z",
        &["sre"],
        &[
            Read(0, "E1", "alerts", "cpu <high>"),
            Say(2, "sre", "root-cause", "<script>alert(1)</script>"),
        ],
        true,
    );
    let b = run(
        dir.path(),
        "b",
        "2026-06-01T11:00:00Z",
        &["sre"],
        &[
            Read(0, "X1", "logs", "pool"),
            Say(3, "sre", "root-cause", "db"),
        ],
        true,
    );
    let out = dir.path().join("two.html");
    asof()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--align", "start", "--format", "html", "-o"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Two runs compared"));
    assert!(!html.contains("<script>alert(1)</script>"), "escaped");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        html.contains("Parted at +120 s: A &lt;script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("A had seen, B had not (A's ids): <code>E1</code> (alerts)"),
        "{html}"
    );
    assert_eq!(
        html.matches("<svg").count(),
        1,
        "one pair, one lanes figure"
    );
    assert!(html.contains("A: never reached the truth"), "{html}");
    assert!(html.contains("B: the truth after 3m 0s"), "{html}");
    for fetch in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(fetch), "nothing fetched: {fetch}");
    }
}

/// A topic B names otherwise pairs with A's through `--topic-map`; without
/// it the two are two pairs, each in one run only.
#[test]
fn a_topic_map_pairs_topics_named_differently() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let renamed = std::fs::read_to_string(&b)
        .unwrap()
        .replace("root-cause", "cause");
    let b = write(dir.path(), "b2.yaml", &renamed);
    let unmapped = compare(&a, &b, &["--align", "start"]);
    assert!(
        unmapped["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "cause")
    );
    assert_eq!(
        pair(&unmapped, "root-cause", "sre")["b"]["answers"],
        json!([])
    );
    let c = compare(
        &a,
        &b,
        &["--align", "start", "--topic-map", "root-cause=cause"],
    );
    assert!(
        !c["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "cause")
    );
    let p = pair(&c, "root-cause", "sre");
    assert_eq!(p["topic_b"], "cause");
    assert_eq!(p["b"]["answers"], json!([{"at": 180.0, "claim": "db"}]));
    assert_eq!(p["first_divergence"]["at"], 120.0);
}

/// A comparison read apart from the command that made it says where each
/// run came from: its SHA-256 and the options (rules file and its SHA-256)
/// its ids follow from — in Markdown and in HTML.
#[test]
fn compare_reports_carry_each_runs_provenance() {
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let rules = datasets.join("sre-agent.rules.yaml");
    let rules_sha = asof::fork::sha256_hex(&std::fs::read(&rules).unwrap());
    let trace_sha =
        asof::fork::sha256_hex(&std::fs::read(datasets.join("sre-agent.otlp.jsonl")).unwrap());
    for format in ["md", "html"] {
        let out = asof()
            .arg("compare")
            .arg(datasets.join("sre-agent.otlp.jsonl"))
            .arg(datasets.join("sre-agent-rerun.otlp.jsonl"))
            .arg("--rules")
            .arg(&rules)
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("SHA-256 {trace_sha}")),
            "{format}: {text}"
        );
        assert!(
            text.contains(&format!("--rules {} ", rules.display()))
                && text.contains(&format!("(rules file SHA-256 {rules_sha})")),
            "{format}"
        );
        assert!(text.contains("B: source"), "{format}");
        assert!(text.contains(" · exported "), "{format}");
    }
}
