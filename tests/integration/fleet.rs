//! `asof export --format parquet` and the fleet questions (docs/fleet.md):
//! a generated fleet exported, every question of docs/fleet/ run in DuckDB
//! and each answer held to what asof's own per-store JSON says; the files
//! read again by pyarrow; re-export, damaged stores and duplicates.

use crate::common::{asof, stdout_json};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The Python of the virtual environment `.ci/run` installs DuckDB and
/// pyarrow into, if both are there.
fn fleet_python() -> Option<PathBuf> {
    crate::common::venv_python("duckdb, pyarrow.dataset")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs one of tests/fleet/'s scripts and reads the JSON it prints.
fn script(python: &Path, name: &str, args: &[&Path]) -> Value {
    let out = std::process::Command::new(python)
        .arg(root().join("tests/fleet").join(name))
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// `asof gen --incidents n` into `dir/stores`; the stores, sorted.
fn fleet(dir: &Path, n: u64, events: u64) -> Vec<PathBuf> {
    let stores = dir.join("stores");
    asof()
        .args([
            "gen",
            "--incidents",
            &n.to_string(),
            "--events",
            &events.to_string(),
            "--seed",
            "11",
            "--out",
        ])
        .arg(&stores)
        .assert()
        .success();
    let mut list: Vec<PathBuf> = std::fs::read_dir(&stores)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    list.sort();
    assert_eq!(list.len() as u64, n);
    list
}

fn export(stores: &[PathBuf], out: &Path) -> assert_cmd::assert::Assert {
    asof()
        .arg("export")
        .args(stores)
        .args(["--format", "parquet", "--out"])
        .arg(out)
        .assert()
}

fn micros(v: &Value) -> Option<i64> {
    v.as_str()
        .map(|s| asof::time::parse(s).expect("an instant"))
}

/// One version as `history` prints it.
struct Stint {
    agent: String,
    claim: String,
    valid_from: i64,
    recorded_at: i64,
    superseded_at: Option<i64>,
}

/// A pair's working answer over recorded time (design.md §3), computed here
/// from `history`'s versions: at each instant a version starts or ends, the
/// held version with the greatest (valid_from, recorded_at, position) — the
/// history lists versions by id.
fn steps(versions: &[&Stint]) -> Vec<(i64, Option<String>)> {
    let mut instants: Vec<i64> = versions
        .iter()
        .flat_map(|v| [Some(v.recorded_at), v.superseded_at])
        .flatten()
        .collect();
    instants.sort_unstable();
    instants.dedup();
    let mut out: Vec<(i64, Option<String>)> = Vec::new();
    for t in instants {
        let now = versions
            .iter()
            .enumerate()
            .filter(|(_, v)| v.recorded_at <= t && v.superseded_at.is_none_or(|s| t < s))
            .max_by_key(|(i, v)| (v.valid_from, v.recorded_at, *i))
            .map(|(_, v)| v.claim.clone());
        if out.last().map(|s| &s.1) != Some(&now) {
            out.push((t, now));
        }
    }
    out
}

fn value_at(steps: &[(i64, Option<String>)], t: i64) -> Option<&str> {
    steps
        .iter()
        .rev()
        .find(|s| s.0 <= t)
        .and_then(|s| s.1.as_deref())
}

/// What the test computes, for one store, from asof's own JSON.
#[derive(Default)]
struct Reference {
    /// (source, truth shift) of every misleading item.
    misleading: Vec<(String, i64)>,
    /// Per agent: (converged_at relative to the first event, time wrong) per resolved topic held.
    outcomes: Vec<(String, Option<i64>, i64)>,
    /// The answer at the end of each resolved `one` topic someone held: right/wrong/conflicted/unanswered.
    verdicts: Vec<&'static str>,
    /// Per agent: (held at end, stale, unsupported, stale or unsupported).
    held: BTreeMap<String, [i64; 4]>,
    /// Per topic: microseconds in conflict (and whether it ever was).
    conflict: BTreeMap<String, (i64, bool)>,
}

fn reference(store: &Path) -> Reference {
    let mut r = Reference::default();
    let evidence = stdout_json(asof().arg("evidence").arg(store).args(["--format", "json"]));
    let items = evidence["evidence"].as_array().unwrap();
    let source: HashMap<&str, &str> = items
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["source"].as_str().unwrap()))
        .collect();
    // Every other event cites evidence recorded no later: the log's first event is evidence.
    let first = items
        .iter()
        .filter_map(|e| micros(&e["recorded_at"]))
        .min()
        .unwrap();

    let influence = stdout_json(
        asof()
            .arg("influence")
            .arg(store)
            .args(["--format", "json"]),
    );
    for item in influence["ranking"].as_array().unwrap() {
        let shift = item["truth_shift_ms"].as_i64().unwrap();
        if item["truth_known"] == json!(true) && shift < 0 {
            r.misleading
                .push((source[item["evidence"].as_str().unwrap()].to_owned(), shift));
        }
    }

    // The header, as the store gives it to every command.
    let header = asof::store::Store::open(store).unwrap().header().clone();
    let topics: Vec<(String, Option<String>, String)> = header
        .topics
        .iter()
        .map(|t| {
            (
                t.id.clone(),
                t.resolution.clone(),
                t.cardinality.as_str().to_owned(),
            )
        })
        .collect();
    let mut end = 0;
    for (topic, resolution, cardinality) in &topics {
        let history = stdout_json(
            asof()
                .arg("history")
                .arg(store)
                .args(["--topic", topic, "--format", "json"]),
        );
        end = micros(&history["quality_at"]).unwrap();
        let versions: Vec<Stint> = history["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| Stint {
                agent: v["agent"].as_str().unwrap().to_owned(),
                claim: v["claim"].as_str().unwrap().to_owned(),
                valid_from: micros(&v["valid_from"]).unwrap(),
                recorded_at: micros(&v["recorded_at"]).unwrap(),
                superseded_at: micros(&v["superseded_at"]),
            })
            .collect();
        let mut by_agent: BTreeMap<&str, Vec<&Stint>> = BTreeMap::new();
        for v in &versions {
            by_agent.entry(&v.agent).or_default().push(v);
        }
        let answers: BTreeMap<&str, Vec<(i64, Option<String>)>> =
            by_agent.iter().map(|(a, list)| (*a, steps(list))).collect();
        if let Some(truth) = resolution {
            for (agent, s) in &answers {
                let right = |v: Option<&str>| v == Some(truth.as_str());
                let converged = right(value_at(s, end)).then(|| {
                    let upto: Vec<_> = s.iter().filter(|x| x.0 <= end).collect();
                    let mut start = upto.last().unwrap().0;
                    for x in upto.iter().rev().skip(1) {
                        match right(x.1.as_deref()) {
                            true => start = x.0,
                            false => break,
                        }
                    }
                    start
                });
                let mut wrong = 0;
                for (i, x) in s.iter().enumerate() {
                    let to = s.get(i + 1).map_or(end, |n| n.0).min(end);
                    let from = x.0.max(first);
                    if to > from && x.1.is_some() && !right(x.1.as_deref()) {
                        wrong += to - from;
                    }
                }
                r.outcomes.push((
                    (*agent).to_owned(),
                    converged.map(|c| (c - first) / 1000),
                    wrong / 1000,
                ));
            }
            if cardinality == "one" && !answers.is_empty() {
                let answer = stdout_json(asof().arg("answer").arg(store).args([
                    "--topic",
                    topic,
                    "--at",
                    history["quality_at"].as_str().unwrap(),
                    "--format",
                    "json",
                ]));
                r.verdicts.push(match answer["status"].as_str().unwrap() {
                    "answered" if answer["claim"] == json!(truth) => "right",
                    "answered" => "wrong",
                    "conflicted" => "conflicted",
                    "none" => "unanswered",
                    other => panic!("status {other}"),
                });
            }
        }
        // Conflict: at every instant an answer changes, two agents' answers differ.
        let mut instants: Vec<i64> = answers.values().flatten().map(|s| s.0).collect();
        instants.sort_unstable();
        instants.dedup();
        let entry = r.conflict.entry(topic.clone()).or_default();
        for (i, &t) in instants.iter().enumerate() {
            let claims: BTreeSet<&str> = answers.values().filter_map(|s| value_at(s, t)).collect();
            if claims.len() > 1 {
                entry.0 += instants.get(i + 1).copied().unwrap_or(end) - t;
                entry.1 = true;
            }
        }
    }

    let at = asof::time::format(end);
    let believed = stdout_json(
        asof()
            .arg("believed")
            .arg(store)
            .args(["--at", &at, "--format", "json"]),
    );
    for b in believed["beliefs"].as_array().unwrap() {
        let counts = r
            .held
            .entry(b["agent"].as_str().unwrap().to_owned())
            .or_default();
        let stale = b["freshness"] == json!("stale");
        let unsupported = b["support"] == json!("unsupported");
        counts[0] += 1;
        counts[1] += i64::from(stale);
        counts[2] += i64::from(unsupported);
        counts[3] += i64::from(stale || unsupported);
    }
    r
}

/// Rows equal, numbers within a millionth (DuckDB's means are doubles).
fn assert_rows(question: &str, got: &Value, want: &[Value]) {
    let got = got[question]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("{question} ran"));
    assert_eq!(
        got.len(),
        want.len(),
        "{question}: {got:?}\nwanted {want:?}"
    );
    for (g, w) in got.iter().zip(want) {
        let same = g
            .as_array()
            .unwrap()
            .iter()
            .zip(w.as_array().unwrap())
            .all(|(a, b)| match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(1.0),
                _ => a == b,
            });
        assert!(same, "{question}: got {g}, wanted {w}");
    }
}

/// The acceptance test of the fleet: 100 generated incidents exported, every
/// question of docs/fleet/ run in DuckDB, each answer equal to what this test
/// computes from asof's own `evidence`, `influence`, `history`, `answer` and
/// `believed` JSON of each store.
#[test]
fn every_fleet_question_in_duckdb_equals_asof_s_own_answers() {
    let Some(python) = fleet_python() else {
        eprintln!(
            "SKIPPED: DuckDB and pyarrow are not installed in target/otel-venv (.ci/run installs them)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stores = fleet(dir.path(), 100, 150);
    let out = dir.path().join("fleet");
    export(&stores, &out).success();
    let answers = script(
        &python,
        "run_questions.py",
        &[&out, &root().join("docs/fleet")],
    );

    // Each store's reference, four at a time.
    let refs: Vec<(String, Reference)> = asof::pool::map(
        stores.len(),
        4,
        |i| {
            let store = &stores[i];
            let incident = asof::store::Store::open(store)?
                .header()
                .incident
                .id
                .clone();
            Ok::<_, asof::store::StoreError>((incident, reference(store)))
        },
        |_, _| {},
    )
    .into_iter()
    .map(|r| r.expect("every store ran").expect("every store opens"))
    .collect();

    // Which evidence sources mislead most.
    let mut sources: BTreeMap<&str, (i64, BTreeSet<&str>, i64)> = BTreeMap::new();
    for (incident, r) in &refs {
        for (source, shift) in &r.misleading {
            let e = sources.entry(source).or_default();
            e.0 += 1;
            e.1.insert(incident);
            e.2 -= shift;
        }
    }
    let mut want: Vec<_> = sources
        .iter()
        .map(|(s, (n, i, d))| (*s, *n, i.len(), *d))
        .collect();
    want.sort_by(|a, b| b.3.cmp(&a.3).then(a.0.cmp(b.0)));
    assert!(!want.is_empty(), "some item misleads somewhere");
    let want: Vec<Value> = want
        .iter()
        .map(|(s, n, i, d)| json!([s, n, i, d]))
        .collect();
    assert_rows("misleading-sources.sql", &answers, &want);

    // Time to truth and time wrong by agent.
    let mut agents: BTreeMap<&str, Vec<(Option<i64>, i64)>> = BTreeMap::new();
    for (_, r) in &refs {
        for (agent, converged, wrong) in &r.outcomes {
            agents.entry(agent).or_default().push((*converged, *wrong));
        }
    }
    let want: Vec<Value> = agents
        .iter()
        .map(|(agent, list)| {
            let converged: Vec<i64> = list.iter().filter_map(|x| x.0).collect();
            let wrong: i64 = list.iter().map(|x| x.1).sum();
            let mean = |sum: i64, n: usize| (n > 0).then(|| sum as f64 / n as f64);
            json!([
                agent,
                list.len(),
                converged.len(),
                mean(converged.iter().sum(), converged.len()),
                wrong,
                mean(wrong, list.len())
            ])
        })
        .collect();
    assert!(want.len() > 3, "the fleet has several agents");
    assert_rows("time-to-truth-by-agent.sql", &answers, &want);

    // The answer when the incident was declared.
    let verdicts: Vec<&str> = refs
        .iter()
        .flat_map(|(_, r)| r.verdicts.iter().copied())
        .collect();
    let n = |v: &str| verdicts.iter().filter(|x| **x == v).count();
    let questions = verdicts.len();
    let not_right = questions - n("right");
    let percent = (1000.0 * not_right as f64 / questions as f64).round() / 10.0;
    assert!(n("right") > 0 && n("conflicted") > 0, "{verdicts:?}");
    let want = [json!([
        questions,
        n("right"),
        n("wrong"),
        n("conflicted"),
        n("unanswered"),
        percent
    ])];
    assert_rows("wrong-at-resolution.sql", &answers, &want);

    // Stale or unsupported beliefs at the end.
    let mut held: BTreeMap<&str, [i64; 4]> = BTreeMap::new();
    for (_, r) in &refs {
        for (agent, c) in &r.held {
            let e = held.entry(agent).or_default();
            for k in 0..4 {
                e[k] += c[k];
            }
        }
    }
    assert!(
        held.values().any(|c| c[1] > 0) && held.values().any(|c| c[2] > 0),
        "{held:?}"
    );
    let want: Vec<Value> = held
        .iter()
        .map(|(a, c)| json!([a, c[0], c[1], c[2], c[3]]))
        .collect();
    assert_rows("stale-at-resolution.sql", &answers, &want);

    // Topics in conflict.
    let mut topics: BTreeMap<&str, (i64, usize)> = BTreeMap::new();
    for (_, r) in &refs {
        for (topic, (micros, ever)) in &r.conflict {
            if *ever {
                let e = topics.entry(topic).or_default();
                e.0 += micros;
                e.1 += 1;
            }
        }
    }
    let mut want: Vec<_> = topics.iter().collect();
    want.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let want: Vec<Value> = want
        .iter()
        .map(|(t, (micros, n))| json!([t, n, *micros as f64 / 1e6]))
        .collect();
    assert_rows("conflict-topics.sql", &answers, &want);
}

/// Every file (and file name) of an export directory, with its bytes' digest
/// and modification time: what a second export may not change.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let modified = e.metadata().unwrap().modified().unwrap();
                files.insert(path.clone(), (std::fs::read(&path).unwrap(), modified));
            }
        }
    }
    files
}

/// pyarrow, a second reader, reads every table with the types docs/fleet.md
/// documents, the incident from the partition, the schema version from every
/// file, and as many rows as asof's JSON has of each.
#[test]
fn pyarrow_reads_the_files_with_the_documented_types() {
    let Some(python) = fleet_python() else {
        eprintln!(
            "SKIPPED: DuckDB and pyarrow are not installed in target/otel-venv (.ci/run installs them)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stores = fleet(dir.path(), 3, 200);
    let out = dir.path().join("fleet");
    export(&stores, &out).success();
    let tables = script(&python, "read_with_pyarrow.py", &[&out]);
    let names: Vec<&str> = tables
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "agents",
            "agreement",
            "answers",
            "events",
            "evidence",
            "incidents",
            "influence",
            "outcomes",
            "topics",
            "versions"
        ]
    );
    // The types docs/fleet.md gives (a sample of each kind).
    let types = |t: &str| &tables[t]["types"];
    assert_eq!(types("versions")["recorded_at"], "timestamp[us, tz=UTC]");
    assert_eq!(types("versions")["superseded_at"], "timestamp[us, tz=UTC]");
    assert_eq!(types("versions")["valid_to"], "timestamp[us, tz=UTC]");
    assert_eq!(
        types("versions")["supported_by"],
        "list<element: string not null>"
    );
    assert_eq!(types("versions")["confidence"], "double");
    assert_eq!(types("influence")["truth_shift_ms"], "int64");
    assert_eq!(types("influence")["truth_known"], "bool");
    assert_eq!(
        types("agreement")["claims"],
        "list<element: string not null>"
    );
    assert_eq!(types("agreement")["conflicted"], "bool");
    assert_eq!(types("evidence")["verification_state"], "string");
    assert_eq!(types("outcomes")["converged_at"], "timestamp[us, tz=UTC]");
    assert_eq!(types("incidents")["schema_version"], "int64");
    for (name, t) in tables.as_object().unwrap() {
        assert_eq!(
            t["types"]["incident"], "string",
            "{name}: the partition column"
        );
        assert_eq!(t["schema_versions"], json!(["1"]), "{name}");
    }
    for store in &stores {
        let incident = asof::store::Store::open(store)
            .unwrap()
            .header()
            .incident
            .id
            .clone();
        let evidence = stdout_json(asof().arg("evidence").arg(store).args(["--format", "json"]));
        let influence = stdout_json(
            asof()
                .arg("influence")
                .arg(store)
                .args(["--format", "json"]),
        );
        let rows = |t: &str| tables[t]["rows"][&incident].as_u64().unwrap_or(0) as usize;
        assert_eq!(rows("incidents"), 1);
        assert_eq!(
            rows("evidence"),
            evidence["evidence"].as_array().unwrap().len()
        );
        assert_eq!(
            rows("influence"),
            influence["ranking"].as_array().unwrap().len()
        );
        let log = asof::store::Store::open(store).unwrap().log().unwrap();
        assert_eq!(rows("events") + rows("evidence"), log.events.len());
        assert_eq!(rows("agents"), log.header.agents.len());
        assert_eq!(rows("topics"), log.header.topics.len());
    }
}

/// A second export of unchanged stores writes nothing; a changed store's
/// files are replaced; a damaged store among good ones is named and skipped
/// (exit 2) while the others are exported.
#[test]
fn unchanged_stores_are_skipped_and_a_damaged_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = fleet(dir.path(), 4, 200);
    let out = dir.path().join("fleet");
    export(&stores, &out)
        .success()
        .stdout(predicates::str::contains("4 written, 0 unchanged"));
    let before = snapshot(&out);
    assert_eq!(before.len(), 4 * 10, "ten tables of four incidents");
    export(&stores, &out)
        .success()
        .stdout(predicates::str::contains("0 written, 4 unchanged"));
    assert!(
        snapshot(&out) == before,
        "a re-export of unchanged stores wrote something"
    );

    // One store loaded again (its bytes change): its files are replaced, the others kept.
    let dataset = dir.path().join("again.jsonl");
    std::fs::write(&dataset, {
        let mut bytes = Vec::new();
        asof::synth::fleet_incident(11, 0, 200, &mut bytes).unwrap();
        bytes
    })
    .unwrap();
    asof()
        .arg("load")
        .arg(&dataset)
        .arg("--db")
        .arg(&stores[0])
        .arg("--force")
        .assert()
        .success();
    export(&stores, &out)
        .success()
        .stdout(predicates::str::contains(
            "1 written (1 replacing an earlier export of their incident), 3 unchanged",
        ));
    let after = snapshot(&out);
    assert_eq!(
        after.len(),
        4 * 10,
        "the old files of the reloaded store are gone"
    );
    let changed = after.keys().filter(|p| !before.contains_key(*p)).count();
    assert_eq!(changed, 10);

    // A what-if fork is not the record: named, not exported.
    let fork = dir.path().join("stores/fork.db");
    let evidence = stdout_json(
        asof()
            .arg("evidence")
            .arg(&stores[2])
            .args(["--format", "json"]),
    );
    let first = evidence["evidence"][0]["id"].as_str().unwrap().to_owned();
    crate::common::fork(&stores[2], &first, &fork);

    // A damaged store and a file that is no store at all.
    let damaged = dir.path().join("stores/damaged.db");
    let bytes = std::fs::read(&stores[1]).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 3]).unwrap();
    let text = dir.path().join("stores/notes.db");
    std::fs::write(&text, "not a store\n").unwrap();
    stores.push(damaged.clone());
    stores.push(text.clone());
    // The fork in its parent's place (both would be one incident twice).
    stores[2] = fork.clone();
    let fresh = dir.path().join("fresh");
    let assert = export(&stores, &fresh).code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("damaged.db"), "{stderr}");
    assert!(stderr.contains("notes.db"), "{stderr}");
    assert!(
        stderr.contains("3 of 6 stores could not be exported"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fork.db: WHAT-IF — replay of") && stderr.contains("records only"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let written: BTreeSet<String> = std::fs::read_dir(fresh.join("incidents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written.len(), 3, "the three good stores: {written:?}");
}

/// Two stores of one incident are refused before anything is written; an
/// incident id no path can hold is escaped in its partition and read back
/// whole.
#[test]
fn two_stores_of_one_incident_are_refused_and_odd_ids_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let stores = fleet(dir.path(), 2, 100);
    let copy = dir.path().join("copy.db");
    std::fs::copy(&stores[0], &copy).unwrap();
    let out = dir.path().join("fleet");
    let assert = export(&[stores[0].clone(), stores[1].clone(), copy.clone()], &out).code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("are both incident `fleet-11-0000`"),
        "{stderr}"
    );
    assert!(stderr.contains("copy.db"), "{stderr}");
    assert!(!out.exists(), "nothing written");

    // A directory is not a store either.
    let assert = asof()
        .arg("export")
        .arg(dir.path().join("stores"))
        .args(["--format", "parquet", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("is a directory") && stderr.contains("/*.db"),
        "{stderr}"
    );

    // A dataset is not a store: said, and nothing written.
    let assert = asof()
        .arg("export")
        .arg(root().join("datasets/payment-outage.yaml"))
        .args(["--format", "parquet", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("is a dataset") && stderr.contains("asof load"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");

    let demo = std::fs::read_to_string(root().join("datasets/payment-outage.yaml")).unwrap();
    let odd = demo.replacen("  id: pay-2026-03", "  id: \"inc 7/a=b%é\"", 1);
    assert_ne!(odd, demo);
    let yaml = crate::common::write(dir.path(), "odd.yaml", &odd);
    let db = dir.path().join("odd.db");
    crate::common::load(&yaml, &db);
    export(&[db], &out).success();
    let partition = out.join("incidents/incident=inc%207%2Fa%3Db%25%C3%A9");
    assert!(
        partition.is_dir(),
        "{:?}",
        std::fs::read_dir(out.join("incidents"))
            .unwrap()
            .collect::<Vec<_>>()
    );
    if let Some(python) = fleet_python() {
        let got = std::process::Command::new(python)
            .args(["-c", "import duckdb, sys; print(duckdb.sql(\"SELECT incident = id FROM read_parquet('\" + sys.argv[1] + \"/incidents/*/*.parquet', hive_partitioning = true)\").fetchall())"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "[(True,)]");
    }
}
