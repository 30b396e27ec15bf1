//! `asof export`: the Markdown audit report (a snapshot) and the plane as SVG
//! (well-formed, one shape per version and one point per evidence item, at the
//! coordinates their times give).

use crate::common;

use common::{SMALL, asof, write};
use predicates::prelude::*;

fn stdout(cmd: &mut assert_cmd::Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

#[test]
fn the_markdown_report_of_a_small_dataset() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.yaml", SMALL);
    let report = stdout(
        asof()
            .current_dir(dir.path())
            .env("SOURCE_DATE_EPOCH", "1773835200")
            .args(["export", "small.yaml", "--format", "md"]),
    );
    insta::assert_snapshot!("small_report", report);
}

#[test]
fn a_fork_report_carries_its_lineage_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.yaml", SMALL);
    let run = |args: &[&str]| stdout(asof().current_dir(dir.path()).args(args));
    run(&["load", "small.yaml", "--db", "small.db"]);
    run(&["fork", "small.db", "--without", "E2", "--out", "fork.db"]);
    let report = run(&["export", "fork.db", "--format", "md", "-o", "report.md"]);
    assert_eq!(report, "wrote report.md\n");
    let text = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(text.contains("## Fork lineage"), "{text}");
    assert!(text.contains("| removed evidence | E2 |"), "{text}");
    assert!(text.contains("| parent | small.db |"), "{text}");
    assert!(
        text.contains("- dropped assertions (no evidence left): B2, B3"),
        "{text}"
    );
    // Without E2 the agent never moves off "db".
    assert!(
        text.contains("| triage | root-cause | 2026-03-03T10:30:00Z | — | cert | db |"),
        "{text}"
    );
    assert!(
        text.contains("| triage | root-cause | 2026-03-03T10:30:00Z | never | 1d 1h | 1d 14h |"),
        "{text}"
    );

    // A parent that changed since the fork is named, not compared.
    run(&["load", "small.yaml", "--db", "small.db", "--force"]);
    let text = run(&["export", "fork.db", "--format", "md"]);
    assert!(
        text.contains("is no longer the parent this fork was made from"),
        "{text}"
    );
}

/// Attribute `name` of `node` as a number.
fn num(node: roxmltree::Node, name: &str) -> f64 {
    node.attribute(name)
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

fn micros(text: &str) -> i64 {
    asof::time::parse(text).unwrap()
}

#[test]
fn the_plane_as_svg_matches_the_versions() {
    let dir = tempfile::tempdir().unwrap();
    let svg = stdout(asof().current_dir(dir.path()).args([
        "export",
        "--format",
        "svg",
        "--topic",
        "root-cause",
        "--agent",
        "triage",
    ]));
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let plot: Vec<f64> = root
        .attribute("data-plot")
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let (vmin, vmax) = (num(root, "data-valid-min"), num(root, "data-valid-max"));
    let (rmin, rmax) = (
        num(root, "data-recorded-min"),
        num(root, "data-recorded-max"),
    );
    let x = |t: i64| plot[0] + (t as f64 - vmin) / (vmax - vmin) * plot[2];
    let y = |t: i64| plot[1] + (rmax - t as f64) / (rmax - rmin) * plot[3];

    // One rectangle per version of triage's root-cause history.
    let history: serde_json::Value = serde_json::from_str(&stdout(asof().args([
        "history",
        "--topic",
        "root-cause",
        "--agent",
        "triage",
        "--format",
        "json",
    ])))
    .unwrap();
    let versions = history["versions"].as_array().unwrap();
    let rects: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("version"))
        .collect();
    assert_eq!(rects.len(), versions.len());
    for (rect, v) in rects.iter().zip(versions) {
        assert_eq!(rect.attribute("data-claim"), v["claim"].as_str());
        let from = micros(v["valid_from"].as_str().unwrap());
        let recorded = micros(v["recorded_at"].as_str().unwrap());
        assert!((num(*rect, "x") - x(from)).abs() < 0.01);
        let bottom = num(*rect, "y") + num(*rect, "height");
        assert!((bottom - y(recorded)).abs() < 0.01);
        let right = num(*rect, "x") + num(*rect, "width");
        match v["valid_to"].as_str() {
            Some(to) => assert!((right - x(micros(to))).abs() < 0.01),
            None => assert!(
                (right - (plot[0] + plot[2])).abs() < 0.01,
                "open end at the edge"
            ),
        }
        match v["superseded_at"].as_str() {
            Some(s) => assert!((num(*rect, "y") - y(micros(s))).abs() < 0.01),
            None => assert!(
                (num(*rect, "y") - plot[1]).abs() < 0.01,
                "still held: to the top"
            ),
        }
    }
    // One point per evidence item cited by triage on root-cause, at (observed, recorded).
    let evidence: serde_json::Value =
        serde_json::from_str(&stdout(asof().args(["evidence", "--format", "json"]))).unwrap();
    let cited: Vec<&serde_json::Value> = evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["cited_by"].as_array().unwrap().iter().any(|id| {
                versions.iter().any(|v| v["assertion"] == *id)
                    || history
                        .to_string()
                        .contains(&format!("\"{}\"", id.as_str().unwrap()))
            })
        })
        .collect();
    let points: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "circle" && n.attribute("class") == Some("evidence"))
        .collect();
    assert!(!points.is_empty());
    for p in &points {
        let id = p.attribute("data-id").unwrap();
        let e = evidence["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .unwrap();
        assert!((num(*p, "cx") - x(micros(e["observed_at"].as_str().unwrap()))).abs() < 0.01);
        assert!((num(*p, "cy") - y(micros(e["recorded_at"].as_str().unwrap()))).abs() < 0.01);
    }
    // Evidence observed off the valid axis is a marker at its edge, on its
    // recorded row: E32 (observed 01-15) does not squeeze the incident.
    let off: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("evidence off-axis"))
        .collect();
    assert_eq!(
        off.iter()
            .map(|n| n.attribute("data-id").unwrap())
            .collect::<Vec<_>>(),
        vec!["E32"]
    );
    assert!(
        vmin > micros("2026-03-01T00:00:00Z") as f64,
        "the axis starts near the incident"
    );
    let points: Vec<roxmltree::Node> = points.into_iter().chain(off).collect();
    let mut ids: Vec<&str> = points
        .iter()
        .map(|p| p.attribute("data-id").unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), points.len(), "one point per item");
    assert!(ids.contains(&"E15"), "the misleading item is drawn");
    assert!(cited.len() >= ids.len());
    assert_eq!(
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("diagonal"))
            .count(),
        1
    );
}

#[test]
fn export_refusals_name_what_is_wrong() {
    asof()
        .args(["export", "--format", "svg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name it with --topic"));
    asof()
        .args(["export", "--format", "svg", "--topic", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown topic `nope`; topics are: root-cause",
        ));
    asof()
        .args(["export", "--format", "svg", "--topic", "root-cause"])
        .args(["--agent", "nobody"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown agent `nobody`; agents are: triage, infra",
        ));
    asof()
        .args(["export", "--format", "svg", "--topic", "customer-impact"])
        .args(["--agent", "infra"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no agent infra holds beliefs about customer-impact",
        ));
}

/// The exported plane reads like the TUI's (design.md §8): without `--agent`
/// every agent holding beliefs is drawn (one plane each), the valid axis
/// fits the versions, tick labels are distinct at the axis's resolution (an
/// 8-minute trace ticks in minutes, not `09:39` three times) and carry the
/// date when the axis spans days, and every mark drawn is in the legend.
#[test]
fn the_exported_plane_draws_every_agent_on_fitted_distinct_axes() {
    let svg = stdout(asof().args(["export", "--format", "svg", "--topic", "root-cause"]));
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.attribute("data-agents"), Some("triage infra"));
    let planes: Vec<roxmltree::Node> = root
        .children()
        .filter(|n| n.tag_name().name() == "svg")
        .collect();
    assert_eq!(
        planes
            .iter()
            .map(|p| p.attribute("data-agent").unwrap())
            .collect::<Vec<_>>(),
        vec!["triage", "infra"]
    );
    for plane in &planes {
        let labels: Vec<&str> = plane
            .descendants()
            .filter(|n| n.tag_name().name() == "text" && n.attribute("class") == Some("tick"))
            .map(|n| n.text().unwrap_or_default())
            .collect();
        assert!(labels.len() >= 6, "{labels:?}");
        // Labels of one axis are distinct: collect by axis (anchor).
        for anchor in ["middle", "end"] {
            let axis: Vec<&str> = plane
                .descendants()
                .filter(|n| {
                    n.attribute("class") == Some("tick")
                        && n.attribute("text-anchor") == Some(anchor)
                })
                .map(|n| n.text().unwrap_or_default())
                .collect();
            let mut unique = axis.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), axis.len(), "{anchor}: {axis:?}");
        }
        let ticks_at: Vec<&str> = plane
            .descendants()
            .filter_map(|n| n.attribute("data-at"))
            .collect();
        assert!(
            ticks_at.iter().all(|t| t.starts_with("2026-03")),
            "no tick near E32's 01-15, the axis is the incident's: {ticks_at:?}"
        );
    }
    assert!(
        svg.contains("evidence observed off the axis"),
        "the marker is legended"
    );
    // A short trace: its ticks are distinct clock times.
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sre-agent.otlp.jsonl");
    let svg = stdout(asof().args([
        "export",
        trace,
        "--format",
        "svg",
        "--topic",
        "customer-impact",
    ]));
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    for anchor in ["middle", "end"] {
        let axis: Vec<&str> = doc
            .descendants()
            .filter(|n| {
                n.attribute("class") == Some("tick") && n.attribute("text-anchor") == Some(anchor)
            })
            .map(|n| n.text().unwrap_or_default())
            .collect();
        assert!(axis.len() >= 3, "{anchor}: {axis:?}");
        let mut unique = axis.clone();
        unique.dedup();
        assert_eq!(unique.len(), axis.len(), "{anchor}: {axis:?}");
        assert!(
            axis.iter().all(|l| !l.starts_with("20")),
            "no year on an 8-minute axis: {axis:?}"
        );
    }
}
