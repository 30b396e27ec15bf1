//! The reports, tested as a library: the Markdown audit report, the HTML
//! report, the SVG plane and the review's sections, made from the bundled
//! datasets and small logs written here. How the binary names, writes and
//! refuses them is tested at the root (`tests/integration/{export,html}.rs`).

use asof_core::dataset::{self, Format};
use asof_core::review::{Review, parse_lines};
use asof_report::export::{ExportError, Origin, Provenance, findings, html, markdown, svg};
use asof_store::query::{self, LATE};
use asof_store::store::Store;
use std::path::Path;

/// A store in memory of the dataset `text` (YAML).
fn store_of(text: &str) -> Store {
    let parsed = dataset::read_str("test.yaml", Format::Yaml, text).expect("a valid dataset");
    let replay = asof_core::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    Store::in_memory("test.yaml", &parsed.dataset, &replay).expect("a store")
}

/// A store in memory of the bundled dataset `name`.
fn bundled(name: &str) -> Store {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets")
        .join(name);
    store_of(&std::fs::read_to_string(&path).expect("the bundled dataset"))
}

fn provenance(store: &Store) -> Provenance {
    let origin = Origin {
        name: "test.yaml".into(),
        sha256: "0".repeat(64),
    };
    Provenance::of(store, origin).expect("provenance")
}

/// The lines of the Markdown section headed `heading`, up to the next `## `.
fn section<'a>(report: &'a str, heading: &str) -> Vec<&'a str> {
    report
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect()
}

/// The first cells of a Markdown table's body rows.
fn first_cells<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
        .skip(1)
        .filter_map(|l| l.split(" | ").next())
        .map(|c| c.trim_start_matches("| "))
        .collect()
}

/// The demo's report has its sections in the documented order, a section per
/// topic, every version's assertion in its topic's table, and for each
/// retraction the number of versions it closed.
#[test]
fn the_audit_report_names_every_version_and_what_each_retraction_closed() {
    let store = bundled("payment-outage.yaml");
    let report = markdown::report(&store, &provenance(&store)).expect("a report");
    let headings: Vec<&str> = report.lines().filter(|l| l.starts_with("## ")).collect();
    let at = |h: &str| {
        headings
            .iter()
            .position(|x| x.starts_with(h))
            .unwrap_or_else(|| panic!("no {h} in {headings:?}"))
    };
    assert!(at("## Agents") < at("## Topics"));
    assert!(at("## Topics") < at("## Topic `"));
    assert!(at("## Topic `") < at("## Evidence"));
    assert!(at("## Evidence") < at("## Late-arriving evidence"));
    assert!(at("## Late-arriving evidence") < at("## Retractions"));
    let header = store.header();
    let mut closed_by = std::collections::HashMap::<String, usize>::new();
    for topic in &header.topics {
        let heading = format!("## Topic `{}` — {}", topic.id, topic.question);
        let lines = section(&report, &heading);
        assert!(!lines.is_empty(), "no section {heading}");
        let text = lines.join("\n");
        let history = query::history(&store, &topic.id, None).expect("history");
        for b in &history.versions {
            assert!(
                text.contains(&format!(" | {} | ", b.version.assertion)),
                "{} missing under {heading}",
                b.version.assertion
            );
            if let Some(c) = &b.version.closed {
                *closed_by.entry(c.event.to_string()).or_default() += 1;
            }
        }
    }
    let retractions = section(&report, "## Retractions");
    let rows: Vec<&&str> = retractions
        .iter()
        .filter(|l| l.starts_with("| 20"))
        .collect();
    assert!(!rows.is_empty(), "the demo retracts");
    for row in rows {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let (id, closed) = (cells[1], cells[cells.len() - 1]);
        assert_eq!(
            closed,
            closed_by.get(id).copied().unwrap_or(0).to_string(),
            "{row}"
        );
    }
}

/// Late-arriving evidence is every item at least [`LATE`] late, longest lag
/// first; an incident without any says so.
#[test]
fn late_evidence_is_listed_longest_lag_first() {
    let store = bundled("late-arriving-log.yaml");
    let report = markdown::report(&store, &provenance(&store)).expect("a report");
    let mut late: Vec<_> = query::evidence(&store)
        .expect("evidence")
        .into_iter()
        .filter(|e| e.evidence.lag() >= LATE)
        .collect();
    assert!(!late.is_empty(), "the dataset has late evidence");
    late.sort_by_key(|e| std::cmp::Reverse(e.evidence.lag()));
    let expected: Vec<&str> = late.iter().map(|e| e.evidence.id.as_str()).collect();
    let listed = section(&report, "## Late-arriving evidence");
    assert_eq!(first_cells(&listed), expected);

    let prompt = store_of(&small_with_claim("db"));
    let report = markdown::report(&prompt, &provenance(&prompt)).expect("a report");
    assert!(
        section(&report, "## Late-arriving evidence").contains(&"None."),
        "{report}"
    );
}

/// One agent, one topic, one evidence item and one belief whose claim is
/// `claim`.
fn small_with_claim(claim: &str) -> String {
    format!(
        r#"asof: 1
incident: {{id: small, title: "Small <b>incident</b>"}}
agents: [{{id: triage, name: "Triage"}}, {{id: second, name: "Second"}}]
topics: [{{id: root-cause, question: "Why?"}}]
events:
  - evidence: {{id: E1, kind: alert, source: pd, locator: "PD-1", observed_at: 2026-03-02T09:10:00Z, recorded_at: 2026-03-02T09:14:00Z, summary: "errors & <more>"}}
  - believe: {{id: B1, agent: triage, topic: root-cause, claim: {claim:?}, confidence: 0.6, valid_from: 2026-03-02T09:05:00Z, recorded_at: 2026-03-02T09:20:00Z, supported_by: [E1]}}
"#
    )
}

/// The HTML report carries one step per event in its data, what the agent
/// said stays text (no `</script>` or `<!--` ends the data early), and the
/// data read back holds the claim exactly.
#[test]
fn the_html_report_embeds_one_step_per_event_and_keeps_markup_as_text() {
    let claim = "db </script><script>alert(1)</script> <!-- x";
    let store = store_of(&small_with_claim(claim));
    let page = html::report(&store, None, &provenance(&store)).expect("a page");
    let open = r#"<script type="application/json" id="asof-data">"#;
    let start = page.find(open).expect("the data") + open.len();
    let end = start + page[start..].find("</script>").expect("its end");
    let data: serde_json::Value = serde_json::from_str(&page[start..end]).expect("JSON");
    let steps = data["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["event"], "B1");
    assert!(steps[1]["believed"].to_string().contains("alert(1)"));
    assert_eq!(
        steps[1]["believed"]["beliefs"][0]["claim"].as_str(),
        Some(claim),
        "{}",
        steps[1]["believed"]
    );
    assert!(!page.contains("<script>alert(1)"), "markup ran");
    assert!(!page.contains("<!-- x"), "a comment opened");
    assert!(page.contains("Small &lt;b&gt;incident&lt;/b&gt;"));
    assert!(page.contains("errors &amp; &lt;more&gt;"));
}

/// More events than the page can hold steps for are refused, and the
/// sentence names the way out.
#[test]
fn an_html_report_of_too_many_events_is_refused_with_the_way_out() {
    let (log, replay) = asof_synth::log_of(asof_synth::GenConfig {
        events: html::MAX_STEPS as u64 + 1,
        topics: 3,
        agents: 2,
        seed: 1,
    });
    let store = Store::in_memory("big", &log, &replay).expect("a store");
    let error = html::report(&store, None, &provenance(&store)).unwrap_err();
    assert!(matches!(error, ExportError::Html(_)), "{error:?}");
    let said = error.to_string();
    assert!(said.contains("--format md"), "{said}");
    assert!(said.contains(&(html::MAX_STEPS + 1).to_string()), "{said}");
}

/// Every agent holding beliefs about a topic gets a plane; an agent that
/// holds none is refused by name.
#[test]
fn every_agent_holding_a_topic_gets_a_plane() {
    let store = store_of(&small_with_claim("db"));
    assert_eq!(
        svg::agents_of(&store, "root-cause").expect("agents"),
        ["triage"]
    );
    let plane = svg::plane(&store, "root-cause", Some("triage")).expect("a plane");
    let doc = roxmltree::Document::parse(&plane).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    match svg::plane(&store, "root-cause", Some("nobody")) {
        Err(e @ ExportError::UnknownAgent(..)) => assert!(e.to_string().contains("nobody")),
        other => panic!("{other:?}"),
    }
}

/// A review's section lists each finding with its reviewer and verdict, and
/// where two reviewers' latest verdicts on one item differ, both are named.
#[test]
fn the_review_section_lists_findings_and_where_reviewers_disagree() {
    let lines = [
        r#"{"id":"F1","target":{"kind":"evidence","id":"E1"},"verdict":"rejected","note":"a lull","reviewer":"ana","made_at":"2026-12-06T09:00:00Z","about":"2026-03-02T09:20:00Z"}"#,
        r#"{"id":"F2","target":{"kind":"evidence","id":"E1"},"verdict":"direct-read","reviewer":"bob","made_at":"2026-12-06T09:05:00Z","about":"2026-03-02T09:20:00Z"}"#,
    ]
    .join("\n");
    let review = Review {
        sources: Vec::new(),
        findings: parse_lines("r.jsonl", &lines)
            .expect("findings")
            .into_iter()
            .map(|(_, f)| f)
            .collect(),
    };
    let text = findings::markdown(Some(&review));
    for said in [
        "F1",
        "F2",
        "ana",
        "bob",
        "rejected",
        "direct-read",
        "a lull",
    ] {
        assert!(text.contains(said), "{said} missing: {text}");
    }
    let table = findings::disagreements(&review).expect("they disagree");
    let text = table.markdown();
    assert!(text.contains("ana") && text.contains("bob"), "{text}");
    assert!(findings::markdown(None).is_empty());
}
