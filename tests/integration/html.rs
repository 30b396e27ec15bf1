//! `asof export --format html` (design.md §8): one self-contained file whose
//! embedded data is, at every event, exactly what `asof believed --at` that
//! instant prints; opened in a real headless Chromium, the slider at three
//! instants shows those rows. Chromium comes from the system's packages
//! (`.ci/run` installs it); where there is none, the browser test says so
//! and is skipped — only then.

use crate::common;

use common::asof;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn export(dir: &Path, args: &[&str]) -> String {
    let file = dir.join("report.html");
    asof()
        .args(["export", "--format", "html", "-o"])
        .arg(&file)
        .args(args)
        .assert()
        .success();
    std::fs::read_to_string(&file).unwrap()
}

/// The JSON the report embeds.
fn embedded(html: &str) -> Value {
    let start = r#"<script type="application/json" id="asof-data">"#;
    let from = html.find(start).expect("the data element") + start.len();
    let to = from + html[from..].find("</script>").expect("its end");
    serde_json::from_str(&html[from..to]).expect("the data is JSON")
}

fn believed_at(at: &str) -> Value {
    let out = asof()
        .args(["believed", "--at", at, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_embedded_data_is_believed_at_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let html = export(dir.path(), &[]);
    let data = embedded(&html);
    let steps = data["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 85, "one step per event of the demo");
    for step in steps {
        let at = step["at"].as_str().unwrap();
        assert_eq!(
            step["believed"],
            believed_at(at),
            "at {at} ({})",
            step["event"]
        );
    }
    let mut ats: Vec<&str> = steps.iter().map(|s| s["at"].as_str().unwrap()).collect();
    assert!(ats.is_sorted(), "in recorded order");
    ats.dedup();
    assert!(ats.len() > 40);
}

#[test]
fn the_report_is_self_contained_small_and_printable() {
    let dir = tempfile::tempdir().unwrap();
    let html = export(dir.path(), &[]);
    assert!(html.len() < 2 << 20, "under 2 MB: {} bytes", html.len());
    let outside = html
        .replace("http://www.w3.org/2000/svg", "")
        .to_lowercase();
    // An address in the agent's text (E7's locator in a tooltip) is text; an
    // attribute or a style that points at one would be fetched.
    for fetch in [
        "=\"http", "='http", "<link", "@import", " src=", "url(http", "url(//", "//cdn",
    ] {
        assert!(
            !outside.contains(fetch),
            "the report fetches something: {fetch}"
        );
    }
    assert!(html.contains("@media print"));
    assert!(html.contains(r#"<input id="step" type="range" min="0" max="84""#));
    // Every topic's plane, one per agent holding beliefs (infra's root cause
    // too), with the geometry the pointer reading needs.
    assert!(html.contains(r#"data-topic="root-cause" data-agent="infra""#));
    for topic in [
        "root-cause",
        "customer-impact",
        "severity",
        "affected-regions",
    ] {
        assert!(
            html.contains(&format!(r#"data-topic="{topic}""#)),
            "{topic}"
        );
    }
    assert!(html.contains("data-plot="));
    // The evidence with its lags.
    assert!(html.contains("<td>E15</td>"));
}

#[test]
fn with_a_fork_the_report_adds_divergence_and_time_to_truth() {
    let dir = tempfile::tempdir().unwrap();
    let fork = dir.path().join("fork.db");
    asof()
        .args(["fork", "--without", "E15", "--out"])
        .arg(&fork)
        .assert()
        .success();
    let html = export(dir.path(), &["--fork", fork.to_str().unwrap()]);
    let diff: Value = serde_json::from_slice(
        &asof()
            .args(["diff", "demo"])
            .arg(&fork)
            .args(["--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(html.contains("without E15"));
    for pair in diff["divergence"].as_array().unwrap() {
        for w in pair["windows"].as_array().unwrap() {
            let row = format!(
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                pair["agent"].as_str().unwrap(),
                pair["topic"].as_str().unwrap(),
                w["from"].as_str().unwrap(),
                w["to"].as_str().unwrap()
            );
            assert!(html.contains(&row), "divergence row {row}");
        }
    }
    assert!(
        html.contains("<td>2026-03-05T09:15:00Z</td><td>1d 21h</td><td>2026-03-03T10:30:00Z</td>"),
        "time to truth"
    );
    // --fork belongs to the HTML report only.
    asof()
        .args(["export", "--format", "md", "--fork"])
        .arg(&fork)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--fork adds a fork's divergence to the HTML report",
        ));
}

#[test]
fn a_store_too_big_to_embed_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    asof()
        .args(["gen", "--events", "6000", "--topics", "3", "-o"])
        .arg(&big)
        .assert()
        .success();
    asof()
        .args(["export"])
        .arg(&big)
        .args(["--format", "html", "-o"])
        .arg(dir.path().join("big.html"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "(the most is 5000); `--format md` writes the whole report",
        ));
    assert!(!dir.path().join("big.html").exists());
}

/// Debian's Chromium (`chromium`), or `$ASOF_CHROMIUM`.
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("ASOF_CHROMIUM").map(PathBuf::from);
    named
        .into_iter()
        .chain(
            [
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
                "/usr/bin/google-chrome",
            ]
            .map(PathBuf::from),
        )
        .find(|p| p.exists())
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The `data-*` of each belief row a rendered page shows.
fn rows_shown(dom: &str) -> Vec<(String, String, String, String)> {
    let attr = |tag: &str, name: &str| -> String {
        let key = format!(r#"{name}=""#);
        let from = tag.find(&key).map(|i| i + key.len()).unwrap_or(0);
        let to = from + tag[from..].find('"').unwrap_or(0);
        tag[from..to]
            .replace("&amp;", "&")
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
    };
    dom.match_indices(r#"<tr class="belief"#)
        .map(|(i, _)| {
            let tag = &dom[i..i + dom[i..].find('>').unwrap()];
            (
                attr(tag, "data-topic"),
                attr(tag, "data-agent"),
                attr(tag, "data-claim"),
                attr(tag, "data-assertion"),
            )
        })
        .collect()
}

#[test]
fn in_a_real_browser_the_slider_shows_believed_at_three_instants() {
    let Some(browser) = chromium() else {
        eprintln!(
            "SKIPPED: no Chromium here (/usr/bin/chromium); `apt-get install chromium` (as .ci/run does) runs this test"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = export(dir.path(), &[]);
    let data = embedded(&html);
    let page = dir.path().join("report.html");
    // `#step=N` opens event N, counted from 1 as the slider's label counts.
    for step in [4usize, 41, 85] {
        let at = data["steps"][step - 1]["at"].as_str().unwrap().to_owned();
        let out = headless(&browser, &dir.path().join("profile"))
            .arg("--dump-dom")
            .arg(format!("file://{}#step={step}", page.display()))
            .output()
            .expect("chromium runs");
        let dom = String::from_utf8_lossy(&out.stdout);
        assert!(
            dom.contains(&format!("{at} · event {step}/85")),
            "the slider shows step {step} at {at}: {}",
            &dom[..dom.len().min(2000)]
        );
        let want: Vec<(String, String, String, String)> = believed_at(&at)["beliefs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let s = |k: &str| b[k].as_str().unwrap().to_owned();
                (s("topic"), s("agent"), s("claim"), s("assertion"))
            })
            .collect();
        assert!(!want.is_empty());
        assert_eq!(rows_shown(&dom), want, "rows at {at}");
    }
    // At V2 (the reviewer rejects E15), the rows citing E15 say so, and the
    // verifications in force are listed; one event earlier, not yet.
    let v2 = data["steps"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["event"] == "V2")
        .unwrap()
        + 1;
    let dom_at = |step: usize| {
        let out = headless(&browser, &dir.path().join("profile"))
            .arg("--dump-dom")
            .arg(format!("file://{}#step={step}", page.display()))
            .output()
            .expect("chromium runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dom = dom_at(v2);
    assert!(
        dom.contains(&format!(" · event {v2}/85 (V2, verify)")),
        "{dom}"
    );
    let rows: Vec<&str> = dom
        .split(r#"<tr class="belief"#)
        .skip(1)
        .map(|r| &r[..r.find("</tr>").unwrap()])
        .filter(|r| r.contains(">E15") || r.contains(" E15"))
        .collect();
    assert!(!rows.is_empty(), "some row cites E15 at V2");
    for row in &rows {
        assert!(row.contains("E15 (rejected)"), "{row}");
    }
    assert!(
        rows.iter()
            .any(|r| r.contains("unsupported (E15 rejected)")),
        "{rows:?}"
    );
    assert!(dom.contains("E15 rejected since 2026-03-04T09:40:00Z by reviewer (V2)"));
    assert!(
        dom.contains("E7 conflicted since"),
        "the conflicted E7 listed"
    );
    let before = dom_at(v2 - 1);
    assert!(!before.contains("E15 (rejected)"));
    // A screenshot renders (assets/report.png is one, made the same way).
    let shot = dir.path().join("shot.png");
    let out = headless(&browser, &dir.path().join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,1600")
        .arg(format!("file://{}#step=30", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "{} bytes",
        png.len()
    );
}

/// An agent's text is data, never markup: a claim that tries to end the
/// script element or inject a tag stays inside the embedded JSON.
#[test]
fn markup_in_the_agents_text_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/payment-outage.yaml"
    ))
    .unwrap()
    .replace(
        "Payments DB primary overloaded",
        "</script><script>alert(1)</script><!--<script> & \\\"quotes\\\"",
    );
    let file = dir.path().join("hostile.yaml");
    std::fs::write(&file, yaml).unwrap();
    let html = export(dir.path(), &[file.to_str().unwrap()]);
    assert!(!html.contains("<script>alert(1)"), "markup got through");
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "only the page's own script elements end"
    );
    let data = embedded(&html);
    let claims = data.to_string();
    assert!(
        claims.contains("</script><script>alert(1)</script><!--<script> &"),
        "the claim survives as text"
    );
}
