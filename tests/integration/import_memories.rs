//! The importers recover what a memory really held (design.md §7, §8.2).
//!
//! Each test drives a small model of the memory's own write logic, step by step:
//! an update-in-place facts table (the old row's `valid_to` and `expired_at`
//! filled in place, a new row inserted) and Graphiti's edge resolution (dedupe,
//! born-expired edges, contradicted edges, `invalid_at` moved earlier by a later,
//! older-dated edge). After every step it takes what the memory itself would
//! answer then; after importing the final table or export, `asof believed --at
//! <that step> [--about T]` must give exactly those answers.

use crate::common;

use asof::time::{self, Micros};
use common::{asof, count, import_json, stdout_json};
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

/// (topic, claim, valid_from, valid_to) — what a memory holds, in asof's words.
type Held = BTreeSet<(String, String, String, Option<String>)>;

fn at(s: &str) -> Micros {
    time::parse(s).expect("a test timestamp")
}

fn stamp(t: Micros) -> String {
    time::format(t)
}

fn run_json(args: &[&str], db: &Path) -> Value {
    stdout_json(
        asof()
            .args(&args[..1])
            .arg(db)
            .args(&args[1..])
            .args(["--format", "json"]),
    )
}

/// Every version asof says was held at `t′`, optionally about `about`.
fn asof_held(db: &Path, t: Micros, about: Option<Micros>) -> Held {
    let when = stamp(t);
    let mut args = vec!["believed", "--at", when.as_str()];
    let about = about.map(stamp);
    if let Some(a) = &about {
        args.extend(["--about", a.as_str()]);
    }
    run_json(&args, db)["beliefs"]
        .as_array()
        .expect("beliefs")
        .iter()
        .map(|v| {
            (
                v["topic"].as_str().unwrap().to_owned(),
                v["claim"].as_str().unwrap().to_owned(),
                v["valid_from"].as_str().unwrap().to_owned(),
                v["valid_to"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// Of what a memory held, the rows whose valid interval contains `about`.
fn about(held: &Held, about: Micros) -> Held {
    held.iter()
        .filter(|(_, _, from, to)| {
            at(from) <= about && to.as_deref().is_none_or(|to| about < at(to))
        })
        .cloned()
        .collect()
}

/// Checks asof's answers against the memory's own at every step and valid time.
fn agree(db: &Path, steps: &[(Micros, Held)], grid: &[Micros]) {
    for (k, (t, held)) in steps.iter().enumerate() {
        assert_eq!(
            &asof_held(db, *t, None),
            held,
            "step {} at {}: everything held",
            k + 1,
            stamp(*t)
        );
        for &v in grid {
            assert_eq!(
                asof_held(db, *t, Some(v)),
                about(held, v),
                "step {} at {} about {}",
                k + 1,
                stamp(*t),
                stamp(v)
            );
        }
    }
}

fn import(kind: &str, input: &Path, db: &Path) -> Value {
    import_json(kind, input, db, &[])
}

// ---------------------------------------------------------------------------
// An update-in-place facts memory.

/// The most common bitemporal facts memory: single-valued predicates; a new
/// value closes the current row in place (`valid_to`, `expired_at`) and adds a
/// row; an older value learned late is stored closed and expired at once; a
/// forgotten fact gets `expired_at` only.
struct FactsMemory {
    conn: Connection,
}

impl FactsMemory {
    fn create(path: &Path) -> FactsMemory {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "CREATE TABLE facts (subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL,
                valid_from TEXT NOT NULL, valid_to TEXT, ingested_at TEXT NOT NULL, expired_at TEXT,
                source TEXT, confidence REAL);",
        )
        .unwrap();
        FactsMemory { conn }
    }

    /// The current open row of (subject, predicate): (rowid, object, valid_from).
    fn current(&self, s: &str, p: &str) -> Option<(i64, String, Micros)> {
        self.conn
            .query_row(
                "SELECT rowid, object, valid_from FROM facts WHERE subject = ?1 AND predicate = ?2
                 AND expired_at IS NULL AND valid_to IS NULL",
                params![s, p],
                |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?)),
            )
            .ok()
            .map(|(id, o, from)| (id, o, at(&from)))
    }

    fn insert(&self, now: Micros, s: &str, p: &str, o: &str, from: Micros, to: Option<Micros>) {
        self.insert_expired(now, s, p, o, from, to, None);
    }

    #[allow(clippy::too_many_arguments)]
    fn insert_expired(
        &self,
        now: Micros,
        s: &str,
        p: &str,
        o: &str,
        from: Micros,
        to: Option<Micros>,
        expired: Option<Micros>,
    ) {
        self.conn
            .execute(
                "INSERT INTO facts (subject, predicate, object, valid_from, valid_to, ingested_at, expired_at, source)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![s, p, o, stamp(from), to.map(stamp), stamp(now), expired.map(stamp), format!("chat at {}", stamp(now))],
            )
            .unwrap();
    }

    /// `memory.set(subject, predicate, object, valid_from[, valid_to])`.
    fn set(&self, now: Micros, s: &str, p: &str, o: &str, from: Micros, to: Option<Micros>) {
        if to.is_some() {
            // A fact with a known end is history: stored as it is.
            return self.insert(now, s, p, o, from, to);
        }
        match self.current(s, p) {
            Some((_, object, _)) if object == o => {}
            Some((id, _, current_from)) if current_from < from => {
                self.conn
                    .execute(
                        "UPDATE facts SET valid_to = ?1, expired_at = ?2 WHERE rowid = ?3",
                        params![stamp(from), stamp(now), id],
                    )
                    .unwrap();
                self.insert(now, s, p, o, from, None);
            }
            Some(_) => {
                // An older value learned late: closed where the next known value starts.
                let next: String = self
                    .conn
                    .query_row(
                        "SELECT min(valid_from) FROM facts WHERE subject = ?1 AND predicate = ?2 AND valid_from > ?3",
                        params![s, p, stamp(from)],
                        |r| r.get(0),
                    )
                    .unwrap();
                self.insert_expired(now, s, p, o, from, Some(at(&next)), Some(now));
            }
            None => self.insert(now, s, p, o, from, None),
        }
    }

    /// `memory.end(subject, predicate, valid_to)`: the current value ended then.
    fn end(&self, now: Micros, s: &str, p: &str, to: Micros) {
        let (id, _, _) = self.current(s, p).expect("a current value to end");
        self.conn
            .execute(
                "UPDATE facts SET valid_to = ?1, expired_at = ?2 WHERE rowid = ?3",
                params![stamp(to), stamp(now), id],
            )
            .unwrap();
    }

    /// `memory.forget(subject, predicate)`: the current value is dropped.
    fn forget(&self, now: Micros, s: &str, p: &str) {
        let (id, _, _) = self.current(s, p).expect("a current value to forget");
        self.conn
            .execute(
                "UPDATE facts SET expired_at = ?1 WHERE rowid = ?2",
                params![stamp(now), id],
            )
            .unwrap();
    }

    /// The memory's own read of what it holds now: every row over its valid
    /// interval, except rows expired without an end (forgotten).
    fn held(&self) -> Held {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT subject || ' ' || predicate, object, valid_from, valid_to FROM facts
                 WHERE NOT (expired_at IS NOT NULL AND valid_to IS NULL)",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

#[test]
fn a_facts_table_edited_in_place_imports_as_what_the_memory_held_at_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let memory = FactsMemory::create(&path);
    let mut steps: Vec<(Micros, Held)> = Vec::new();
    let mut step = |now: &str, write: &dyn Fn(Micros)| {
        let now = at(now);
        write(now);
        steps.push((now, memory.held()));
    };
    // Alice on model G from 01-10: held open-ended (it becomes case 3 later).
    step("2026-01-10T09:00:00Z", &|now| {
        memory.set(now, "alice", "model", "G", at("2026-01-10"), None)
    });
    step("2026-02-01T09:00:00Z", &|now| {
        memory.set(now, "alice", "team", "payments", at("2026-02-01"), None)
    });
    // A fact stored with its end: held closed from the start (case 2).
    step("2026-03-01T09:00:00Z", &|now| {
        memory.set(
            now,
            "alice",
            "region",
            "eu-west",
            at("2026-03-01"),
            Some(at("2026-06-01")),
        )
    });
    // Q from 05-20: G's row gets valid_to and expired_at in place (case 3).
    step("2026-05-20T12:00:00Z", &|now| {
        memory.set(now, "alice", "model", "Q", at("2026-05-20"), None)
    });
    // The team is forgotten: expired without an end (case 4).
    step("2026-06-10T09:00:00Z", &|now| {
        memory.forget(now, "alice", "team")
    });
    // An older model learned late: stored closed and expired at once (case 2).
    step("2026-07-01T09:00:00Z", &|now| {
        memory.set(now, "alice", "model", "P", at("2025-12-01"), None)
    });
    step("2026-08-01T09:00:00Z", &|now| {
        memory.set(now, "bob", "model", "G", at("2026-08-01"), None)
    });
    // Bob's model ended on 09-01, learned on 09-15, with no newer row (case 3,
    // and this time the retraction has something to cut).
    step("2026-09-15T09:00:00Z", &|now| {
        memory.end(now, "bob", "model", at("2026-09-01"))
    });

    let db = dir.path().join("f.db");
    let report = import("facts", &path, &db);
    let grid: Vec<Micros> = [
        "2025-11-01",
        "2025-12-15",
        "2026-01-15",
        "2026-02-15",
        "2026-03-15",
        "2026-05-25",
        "2026-06-15",
        "2026-08-15",
        "2026-09-10",
        "2027-01-01",
    ]
    .iter()
    .map(|d| at(d))
    .collect();
    agree(&db, &steps, &grid);
    // And between the steps, nothing changes.
    let between: Vec<(Micros, Held)> = steps
        .iter()
        .map(|(t, held)| (t + 3_600_000_000, held.clone()))
        .collect();
    agree(&db, &between, &grid[..3]);

    // The three cases the issue names, spelled out.
    let april = at("2026-04-15T00:00:00Z");
    let july = at("2026-07-15T00:00:00Z");
    let g = |to: Option<&str>| {
        (
            "alice model".to_owned(),
            "G".to_owned(),
            "2026-01-10T00:00:00Z".to_owned(),
            to.map(str::to_owned),
        )
    };
    assert!(asof_held(&db, april, Some(at("2026-06-15"))).contains(&g(None)));
    assert!(
        asof_held(&db, july, Some(at("2026-03-15"))).contains(&g(Some("2026-05-20T00:00:00Z")))
    );

    // The summary counts the input.
    assert_eq!(report["records"], 6);
    assert_eq!(count(&report["read"], "rows"), 6);
    assert_eq!(report["assertions"], 6);
    assert_eq!(count(&report["assertions_by_source"], "rows"), 6);
    assert_eq!(report["evidence"], 6);
    assert_eq!(count(&report["cases"], "open rows"), 1);
    assert_eq!(count(&report["cases"], "rows stored closed"), 2);
    assert_eq!(count(&report["cases"], "rows closed in place"), 2);
    assert_eq!(count(&report["cases"], "rows expired without an end"), 1);
    assert_eq!(count(&report["defaults"], "rows without a confidence"), 6);
    // G's cut finds nothing: Q already superseded it from 05-20 on.
    assert_eq!(report["retractions"], 2);
    assert_eq!(report["noops"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["noops"][0]["location"], "row 1");
    assert_eq!(report["skipped"], json!([]));
}

// ---------------------------------------------------------------------------
// Graphiti's edge resolution.

#[derive(Clone)]
struct Edge {
    uuid: String,
    source: String,
    name: String,
    target: String,
    episodes: Vec<String>,
    created_at: Micros,
    valid_at: Option<Micros>,
    invalid_at: Option<Micros>,
    expired_at: Option<Micros>,
}

/// What one episode's extraction says: source, relation, target, dates.
struct Extracted<'a> {
    source: &'a str,
    name: &'a str,
    target: &'a str,
    valid_at: Micros,
    invalid_at: Option<Micros>,
}

/// Graphiti's write path for entity edges, as `resolve_extracted_edge` and
/// `resolve_edge_contradictions` do it: an edge with the same endpoints and
/// relation is a duplicate (the episode is appended to it); edges of the same
/// source and relation with another target are the invalidation candidates.
/// `created_at` is the extraction's clock, `expired_at` the resolution's (a few
/// seconds later), both inside the episode's processing.
#[derive(Default)]
struct Graphiti {
    edges: Vec<Edge>,
    episodes: Vec<(String, Micros)>,
}

impl Graphiti {
    fn add_episode(&mut self, at: Micros, extracted: &[Extracted]) {
        let episode = format!("ep-{}", self.episodes.len() + 1);
        self.episodes.push((episode.clone(), at));
        let extracted_at = at + 2_000_000;
        let now = at + 5_000_000;
        for x in extracted {
            if let Some(dup) = self
                .edges
                .iter_mut()
                .find(|e| e.source == x.source && e.name == x.name && e.target == x.target)
            {
                dup.episodes.push(episode.clone());
                continue;
            }
            let mut new = Edge {
                uuid: format!("edge-{}", self.edges.len() + 1),
                source: x.source.into(),
                name: x.name.into(),
                target: x.target.into(),
                episodes: vec![episode.clone()],
                created_at: extracted_at,
                valid_at: Some(x.valid_at),
                invalid_at: x.invalid_at,
                expired_at: None,
            };
            if new.invalid_at.is_some() && new.expired_at.is_none() {
                new.expired_at = Some(now);
            }
            let mut candidates: Vec<usize> = (0..self.edges.len())
                .filter(|&i| {
                    let e = &self.edges[i];
                    e.source == new.source && e.name == new.name && e.target != new.target
                })
                .collect();
            if new.expired_at.is_none() {
                candidates
                    .sort_by_key(|&i| (self.edges[i].valid_at.is_none(), self.edges[i].valid_at));
                for &i in &candidates {
                    let c = &self.edges[i];
                    if let (Some(cv), Some(nv)) = (c.valid_at, new.valid_at)
                        && cv > nv
                    {
                        // Information about more recent events: the new edge is born expired.
                        new.invalid_at = Some(cv);
                        new.expired_at = Some(now);
                        break;
                    }
                }
            }
            for &i in &candidates {
                let e = &mut self.edges[i];
                let skip = matches!((e.invalid_at, new.valid_at), (Some(ei), Some(nv)) if ei <= nv)
                    || matches!((e.valid_at, new.invalid_at), (Some(ev), Some(ni)) if ni <= ev);
                if skip {
                    continue;
                }
                if let (Some(ev), Some(nv)) = (e.valid_at, new.valid_at)
                    && ev < nv
                {
                    e.invalid_at = new.valid_at;
                    e.expired_at = e.expired_at.or(Some(now));
                }
            }
            self.edges.push(new);
        }
    }

    /// What the graph holds now: every edge as a fact over [valid_at, invalid_at).
    fn held(&self) -> Held {
        self.edges
            .iter()
            .map(|e| {
                (
                    format!("{} {}", e.source, e.name),
                    e.target.clone(),
                    stamp(e.valid_at.unwrap()),
                    e.invalid_at.map(stamp),
                )
            })
            .collect()
    }

    /// The export: entity edges, nodes and episodes as Graphiti serialises them.
    fn export(&self) -> Value {
        let node = |name: &str| format!("node-{}", name.to_lowercase());
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for e in &self.edges {
            names.insert(&e.source);
            names.insert(&e.target);
        }
        json!({
            "nodes": names.iter().map(|n| json!({"uuid": node(n), "name": n, "group_id": "hr-bot"})).collect::<Vec<_>>(),
            "episodes": self.episodes.iter().map(|(uuid, at)| json!({
                "uuid": uuid, "name": format!("message {uuid}"), "group_id": "hr-bot",
                "source": "message", "source_description": "hr chat", "content": "…",
                "valid_at": stamp(*at), "created_at": stamp(*at),
            })).collect::<Vec<_>>(),
            "edges": self.edges.iter().map(|e| json!({
                "uuid": e.uuid, "group_id": "hr-bot",
                "source_node_uuid": node(&e.source), "target_node_uuid": node(&e.target),
                "name": e.name, "fact": format!("{} {} {}", e.source, e.name, e.target),
                "episodes": e.episodes, "created_at": stamp(e.created_at),
                "valid_at": e.valid_at.map(stamp), "invalid_at": e.invalid_at.map(stamp),
                "expired_at": e.expired_at.map(stamp), "attributes": {},
            })).collect::<Vec<_>>(),
        })
    }
}

#[test]
fn graphiti_rewrites_import_as_what_the_graph_held_at_each_episode() {
    let mut g = Graphiti::default();
    let mut steps: Vec<(Micros, Held)> = Vec::new();
    let x = |source, name, target, valid: &str, invalid: Option<&str>| Extracted {
        source,
        name,
        target,
        valid_at: at(valid),
        invalid_at: invalid.map(at),
    };
    let episodes: Vec<(&str, Vec<Extracted>)> = vec![
        (
            "2024-01-01T10:00:00Z",
            vec![x("Alice", "WORKS_AT", "Acme", "2023-05-01", None)],
        ),
        // Path 1: Globex contradicts Acme from 2024-06-01.
        (
            "2024-06-01T10:00:00Z",
            vec![x("Alice", "WORKS_AT", "Globex", "2024-06-01", None)],
        ),
        // Path 2: Initech is older than Acme (born expired by a candidate), and
        // Lyon carries its own invalid_at.
        (
            "2024-07-01T10:00:00Z",
            vec![
                x("Alice", "WORKS_AT", "Initech", "2022-01-01", None),
                x(
                    "Alice",
                    "LIVES_IN",
                    "Lyon",
                    "2020-01-01",
                    Some("2024-01-01"),
                ),
            ],
        ),
        // Path 3: Hooli from 2024-01-01 moves Acme's invalid_at earlier, while
        // Acme's expired_at stays; Hooli itself is born expired by Globex.
        (
            "2024-08-01T10:00:00Z",
            vec![x("Alice", "WORKS_AT", "Hooli", "2024-01-01", None)],
        ),
        // A later episode repeats Globex: merged into the edge.
        (
            "2024-09-01T10:00:00Z",
            vec![x("Alice", "WORKS_AT", "Globex", "2024-06-01", None)],
        ),
        (
            "2024-10-01T10:00:00Z",
            vec![x("Bob", "LIVES_IN", "Paris", "2024-10-01", None)],
        ),
    ];
    for (when, extracted) in &episodes {
        g.add_episode(at(when), extracted);
        // The episode's processing is over 5 s after it began.
        steps.push((at(when) + 5_000_000, g.held()));
    }
    // The writer did what the paths say.
    let acme = &g.edges[0];
    assert_eq!(acme.invalid_at, Some(at("2024-01-01")));
    assert_eq!(acme.expired_at, Some(at("2024-06-01T10:00:05Z")));

    let dir = tempfile::tempdir().unwrap();
    let input = common::write(dir.path(), "graph.json", &g.export().to_string());
    let db = dir.path().join("g.db");
    let report = import("graphiti", &input, &db);
    let grid: Vec<Micros> = [
        "2020-06-01",
        "2022-06-01",
        "2023-06-01",
        "2024-03-01",
        "2024-05-01",
        "2024-07-01",
        "2024-11-01",
    ]
    .iter()
    .map(|d| at(d))
    .collect();
    agree(&db, &steps, &grid);

    // Born-expired edges were never held open.
    for topic in ["Alice WORKS_AT", "Alice LIVES_IN"] {
        let h = run_json(&["history", "--topic", topic], &db);
        for v in h["versions"].as_array().unwrap() {
            if ["Initech", "Lyon", "Hooli"].contains(&v["claim"].as_str().unwrap()) {
                assert!(!v["valid_to"].is_null(), "{v}");
                assert!(v["superseded_at"].is_null(), "{v}");
            }
        }
    }
    // Between the two episodes, Acme's end is the one Graphiti then had.
    let between = asof_held(&db, at("2024-07-15T00:00:00Z"), Some(at("2024-03-01")));
    assert!(
        between
            .iter()
            .any(|(_, c, _, to)| c == "Acme" && to.as_deref() == Some("2024-06-01T00:00:00Z")),
        "{between:?}"
    );
    let after = asof_held(&db, at("2024-08-15T00:00:00Z"), Some(at("2024-03-01")));
    assert!(after.iter().all(|(_, c, _, _)| c != "Acme"), "{after:?}");

    // The summary counts the input and names each path.
    assert_eq!(report["records"], 6);
    assert_eq!(count(&report["read"], "edges"), 6);
    assert_eq!(count(&report["read"], "episodes"), 6);
    assert_eq!(report["evidence"], 6);
    assert_eq!(count(&report["assertions_by_source"], "edges"), 6);
    assert_eq!(count(&report["assertions_by_source"], "episodes merged"), 1);
    assert_eq!(report["assertions"], 7);
    assert_eq!(count(&report["cases"], "edges still valid"), 2);
    assert_eq!(count(&report["cases"], "born-expired edges"), 3);
    assert_eq!(
        count(&report["cases"], "edges whose invalid_at was rewritten"),
        1
    );
    assert_eq!(count(&report["cases"], "contradicted edges"), 0);
    assert_eq!(report["retractions"], 2);
    assert_eq!(report["noops"], json!([]));
    assert!(
        report["defaults"].as_array().unwrap().is_empty(),
        "{report}"
    );
}

#[test]
fn a_contradicted_edge_is_held_open_until_its_expiry() {
    let mut g = Graphiti::default();
    let mut steps = Vec::new();
    for (when, target, valid) in [
        ("2024-01-01T10:00:00Z", "Acme", "2023-05-01"),
        ("2024-06-01T10:00:00Z", "Globex", "2024-06-01"),
    ] {
        g.add_episode(
            at(when),
            &[Extracted {
                source: "Alice",
                name: "WORKS_AT",
                target,
                valid_at: at(valid),
                invalid_at: None,
            }],
        );
        steps.push((at(when) + 5_000_000, g.held()));
    }
    let dir = tempfile::tempdir().unwrap();
    let input = common::write(dir.path(), "graph.json", &g.export().to_string());
    let db = dir.path().join("g.db");
    let report = import("graphiti", &input, &db);
    agree(&db, &steps, &[at("2023-06-01"), at("2024-07-01")]);
    assert_eq!(count(&report["cases"], "contradicted edges"), 1);
}

#[test]
fn a_missing_valid_at_falls_back_through_the_reference_times() {
    let dir = tempfile::tempdir().unwrap();
    let edge = |uuid: &str, valid: Value, reference: Value, episode: &str| {
        json!({"uuid": uuid, "source_node_uuid": "a", "target_node_uuid": uuid, "name": "R",
               "source_name": "A", "target_name": uuid, "fact": "", "episodes": [episode],
               "created_at": "2024-05-01T00:00:00Z", "valid_at": valid, "reference_time": reference})
    };
    let export = json!({
        "episodes": [
            {"uuid": "ep-ref", "created_at": "2024-05-01T00:00:00Z", "valid_at": "2024-02-01T00:00:00Z"},
            {"uuid": "ep-none", "created_at": "2024-05-01T00:00:00Z"}
        ],
        "edges": [
            edge("stated", json!("2024-01-01T00:00:00Z"), json!("2024-03-01T00:00:00Z"), "ep-ref"),
            edge("reference", Value::Null, json!("2024-03-01T00:00:00Z"), "ep-ref"),
            edge("episode", Value::Null, Value::Null, "ep-ref"),
            edge("created", Value::Null, Value::Null, "ep-none"),
        ]
    });
    let input = common::write(dir.path(), "graph.json", &export.to_string());
    let db = dir.path().join("g.db");
    let report = import("graphiti", &input, &db);
    let h = run_json(&["history", "--topic", "A R"], &db);
    let from: BTreeSet<(String, String)> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["claim"].as_str().unwrap().to_owned(),
                v["valid_from"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("stated", "2024-01-01T00:00:00Z"),
        ("reference", "2024-03-01T00:00:00Z"),
        ("episode", "2024-02-01T00:00:00Z"),
        ("created", "2024-05-01T00:00:00Z"),
    ]
    .iter()
    .map(|(c, t)| ((*c).to_owned(), (*t).to_owned()))
    .collect();
    assert_eq!(from, expected);
    for what in [
        "edges without valid_at: the edge's reference_time",
        "edges without valid_at: the first cited episode's",
        "edges without valid_at or a reference time",
    ] {
        assert_eq!(count(&report["defaults"], what), 1, "{what}: {report}");
    }
}

#[test]
fn the_audit_report_says_how_an_imported_store_was_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let memory = FactsMemory::create(&path);
    memory.set(
        at("2026-01-10T09:00:00Z"),
        "alice",
        "model",
        "G",
        at("2026-01-10"),
        None,
    );
    memory.set(
        at("2026-05-20T09:00:00Z"),
        "alice",
        "model",
        "Q",
        at("2026-05-20"),
        None,
    );
    let db = dir.path().join("f.db");
    import("facts", &path, &db);
    let out = asof()
        .arg("export")
        .arg(&db)
        .args(["--format", "md"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    let section = md
        .split("## How this store was made\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the section");
    assert!(section.contains("with `asof import facts`: 2 records → 2 evidence, 2 assertions, 0 retractions; 1 agents, 1 topics"), "{section}");
    assert!(section.contains("- read: 2 rows"), "{section}");
    assert!(section.contains("1 open rows"), "{section}");
    assert!(section.contains("1 rows closed in place"), "{section}");
    assert!(
        section.contains("- defaults: 2 rows without a confidence: 1"),
        "{section}"
    );
    assert!(section.contains("**no-ops (1):**"), "{section}");
    assert!(
        section.contains("| row 1 | retraction X1 finds nothing held to retract"),
        "{section}"
    );
    assert!(section.contains("skipped: none"), "{section}");
}
